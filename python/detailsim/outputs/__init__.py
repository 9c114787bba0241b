"""What a run or a sweep is shown as: plots (`plots`), the HTML report (`report`), packet captures (`pcap`)."""
