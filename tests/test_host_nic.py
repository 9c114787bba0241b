"""The host NIC is a port like a switch egress: the scheme's ECN marking applies there, and its buffer is
bounded with back-pressure to the sender."""

from __future__ import annotations

import polars as pl

import detailsim
from conftest import assert_invariants


def elephant_and_mice(scheme: str, **extra):
    # one host sends a 50 MB flow and, from 2 ms on, a 10 KB flow every 0.5 ms to another host, all at the
    # same priority, on one 10 Gbps switch, with a 16 MB receive window (the PIAS scenarios' setting)
    mice = [{"src": 0, "dst": 1, "size_bytes": 10_000, "start_s": 0.002 + 0.0005 * i} for i in range(60)]
    sc = {"run": {"duration": "40ms", "drain": "1s"},
          "topology": {"kind": "single_switch", "hosts": 2, "link_rate": "10Gbps", "link_delay": "1us", "buffer": "1MB",
                       **extra.pop("topology", {})},
          "scheme": {"preset": scheme, "tcp": {"rwnd": "16MB"}, **extra},
          "workload": [{"kind": "flows", "class": "elephant", "rows": [{"src": 0, "dst": 1, "size_bytes": 50_000_000, "start_s": 0.0}]},
                       {"kind": "flows", "class": "mouse", "rows": mice}]}
    return detailsim.run(sc)


def test_a_dctcp_elephant_does_not_park_its_window_in_its_own_nic():
    r = elephant_and_mice("dctcp")
    s = r.summary
    nic = r.ports.filter(pl.col("node") == "h0")
    print(f"mice p99 {s['fct']['mouse']['p99_ms']:.3f} ms, elephant {s['fct']['elephant']['mean_ms']:.1f} ms, "
          f"NIC max {nic['max_egress_bytes'][0]} B, NIC marks {nic['ecn_marks'][0]}")
    assert s["fct"]["mouse"]["count"] == 60
    assert s["fct"]["mouse"]["p99_ms"] < 0.5
    assert nic["ecn_marks"][0] > 0, "the NIC marks like a switch port"
    # the elephant still runs near line rate: 50 MB at 10 Gbps is 40 ms
    assert s["fct"]["elephant"]["mean_ms"] < 50
    assert_invariants(s)


def test_the_nic_buffer_pushes_back_instead_of_dropping():
    # NewReno without ECN fills whatever it is given: the NIC holds at most its buffer, nothing is lost
    r = elephant_and_mice("tcp", topology={"host_buffer": "256KB"})
    s = r.summary
    nic = r.ports.filter(pl.col("node") == "h0")
    print(f"NIC max {nic['max_egress_bytes'][0]} B, back-pressure {s['nic_backpressure']}, mice p99 {s['fct']['mouse']['p99_ms']:.3f} ms")
    assert nic["max_egress_bytes"][0] <= 256 * 1024
    assert s["nic_backpressure"] > 0
    assert s["drops"]["host_buffer"] == 0 and s["retransmits"] == 0 and s["timeouts"] == 0
    # a mouse waits behind at most the NIC buffer (256 KB at 10 Gbps is 0.21 ms), not the 16 MB window
    assert s["fct"]["mouse"]["p99_ms"] < 0.5
    assert s["flows"]["completed"] == 61
    assert_invariants(s)
