//! RoCEv2 with DCQCN (`cc = "dcqcn"`, the `dcqcn` preset) in whole runs: lossless under PFC, the incast's
//! bytes at the line rate, two flows sharing a bottleneck fairly, go-back-N repairing losses without PFC.
use super::*;

/// `n` senders, `bytes` each to host 0 of one switch at `rate` with `buffer`s, under `scheme` (a JSON object).
fn incast(n: u32, bytes: u64, rate: &str, buffer: &str, scheme: &str, duration: &str) -> String {
    let rows: Vec<String> = (1..=n).map(|i| format!(r#"{{"src": {i}, "dst": 0, "size_bytes": {bytes}, "start_s": 0.0}}"#)).collect();
    format!(
        r#"{{"run": {{"duration": "{duration}"}}, "topology": {{"kind": "single_switch", "hosts": {}, "link_rate": "{rate}", "buffer": "{buffer}"}},
             "scheme": {scheme}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        n + 1,
        rows.join(",")
    )
}

fn run(json: &str) -> Sim {
    let mut sim = Sim::from_json(json).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    sim
}

#[test]
fn a_dcqcn_incast_is_lossless_marks_and_ends_at_the_line_rate() {
    let sim = run(&incast(16, 1_000_000, "25Gbps", "2MB", r#"{"preset": "dcqcn"}"#, "30ms"));
    let c = &sim.rec.counters;
    assert_eq!((c.flows_completed, c.dropped(), c.retransmits, c.lossless_drops), (16, 0, 0, 0));
    assert!(c.ecn_marks > 100, "the queue passed K_min: {} CE marks", c.ecn_marks);
    // 16 MB into one 25 Gbps port: the last flow ends within 2% of 16 MB x 1530 / 1460 at 25 Gbps
    let last = sim.rec.flows.end_ps.iter().max().copied().unwrap() as f64 / 1e12;
    let ideal = 16e6 * 1530.0 / 1460.0 * 8.0 / 25e9;
    assert!(last > ideal && last < 1.02 * ideal, "{last} s against {ideal} s");
}

#[test]
fn two_dcqcn_flows_share_a_bottleneck_fairly() {
    // two long flows from two hosts to one (a 25 Gbps bottleneck), measured over 10-30 ms
    let sim = run(r#"{"run": {"duration": "30ms", "measure_from": "10ms", "measure_to": "30ms"},
            "topology": {"kind": "single_switch", "hosts": 3, "link_rate": "25Gbps", "buffer": "2MB"},
            "scheme": {"preset": "dcqcn"},
            "workload": [{"kind": "flows", "rows": [{"src": 1, "dst": 0, "size_bytes": 1000000000, "start_s": 0.0},
                                                    {"src": 2, "dst": 0, "size_bytes": 1000000000, "start_s": 0.0}]}]}"#);
    let w: Vec<f64> = sim.rec.flows.window_bytes.iter().map(|&b| b as f64).collect();
    let (a, b) = (w[0], w[1]);
    let total = (a + b) * 8.0 / 0.02;
    assert!(total > 0.9 * 25e9 * 1460.0 / 1530.0, "the bottleneck is used: {total} bit/s");
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    assert!(jain > 0.95, "Jain's index {jain} ({a} / {b} B)");
    assert_eq!(sim.rec.counters.dropped(), 0);
}

#[test]
fn go_back_n_repairs_losses_without_pfc() {
    // DCQCN without PFC on small tail-drop buffers: losses, NACKs, the rest resent; every flow completes
    let sim = run(&incast(8, 200_000, "10Gbps", "64KB", r#"{"preset": "dcqcn", "flow_control": "tail_drop"}"#, "100ms"));
    let c = &sim.rec.counters;
    assert_eq!(c.flows_completed, 8);
    assert!(c.dropped() > 0 && c.retransmits >= c.dropped(), "{} drops, {} resent", c.dropped(), c.retransmits);
}

#[test]
fn hpcc_keeps_the_incast_queue_short_and_pauses_nothing() {
    let json = |preset: &str| incast(16, 1_000_000, "25Gbps", "2MB", &format!(r#"{{"preset": "{preset}"}}"#), "30ms");
    let (hpcc, dcqcn) = (run(&json("hpcc")), run(&json("dcqcn")));
    let hot = |s: &Sim| {
        (0..s.fab.ports.len()).find(|&p| s.fab.nodes[s.fab.ports[p].node as usize].is_switch && s.node_name(s.fab.ports[p].peer_node) == "h0").unwrap()
    };
    let mean = |s: &Sim| s.fab.ports[hot(s)].eg.mean_total(s.now);
    assert_eq!((hpcc.rec.counters.flows_completed, hpcc.rec.counters.dropped(), hpcc.rec.counters.pfc_pause_frames), (16, 0, 0));
    // the queue HPCC keeps is a small fraction of DCQCN's (which PFC had to hold)
    assert!(mean(&hpcc) < 0.1 * mean(&dcqcn), "mean queue {} B against {} B", mean(&hpcc), mean(&dcqcn));
    assert!(dcqcn.rec.counters.pfc_pause_frames > 0);
    // and the link runs at about eta = 95%: 16 MB end within 0.95 - 0.99 of the line rate's time
    let last = hpcc.rec.flows.end_ps.iter().max().copied().unwrap() as f64 / 1e12;
    let ideal = 16e6 * 1530.0 / 1460.0 * 8.0 / 25e9;
    assert!(last > ideal / 0.99 && last < ideal / 0.93, "{last} s against {ideal} s at line rate");
}

#[test]
fn hpcc_reads_every_switch_hop_and_shares_fairly() {
    // two long flows across pods of a k = 4 fat tree (five switch egresses each) into one host
    let mut sim = Sim::from_json(
        r#"{"run": {"duration": "10ms", "measure_from": "4ms", "measure_to": "10ms"},
            "topology": {"kind": "fattree", "k": 4, "link_rate": "25Gbps", "buffer": "2MB"},
            "scheme": {"preset": "hpcc"},
            "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 15, "size_bytes": 1000000000, "start_s": 0.0},
                                                    {"src": 4, "dst": 15, "size_bytes": 1000000000, "start_s": 0.0}]}]}"#,
    )
    .unwrap();
    sim.run_until(Time::from_ms(10));
    let hops: Vec<usize> = sim.hosts.transfers.slots().iter().filter(|t| t.alive).filter_map(|t| t.snd.cc.hpcc().map(|h| h.hops())).collect();
    assert_eq!(hops, vec![5, 5], "ToR, aggregation, core, aggregation, ToR");
    sim.run();
    let w: Vec<f64> = sim.rec.flows.window_bytes.iter().map(|&b| b as f64).collect();
    let jain = (w[0] + w[1]).powi(2) / (2.0 * (w[0] * w[0] + w[1] * w[1]));
    assert!(jain > 0.95, "Jain's index {jain} ({w:?})");
    assert_eq!(sim.rec.counters.dropped(), 0);
}

#[test]
fn the_summary_counts_cnps_nacks_and_rate_cuts_of_the_roce_schemes_only() {
    let json = |preset: &str| incast(8, 500_000, "25Gbps", "2MB", &format!(r#"{{"preset": "{preset}"}}"#), "20ms");
    let d = run(&json("dcqcn"));
    let s: serde_json::Value = serde_json::from_str(&d.summary_json()).unwrap();
    let (cnps, cuts) = (s["roce"]["cnps"].as_u64().unwrap(), s["roce"]["rate_cuts"].as_u64().unwrap());
    // CNPs reached the senders and cut their rates; no more cuts than CNPs (a check applies what came since)
    assert!(cnps > 8 && cuts > 8 && cuts <= cnps, "{cnps} CNPs, {cuts} cuts");
    assert_eq!(s["roce"]["nacks"], 0, "lossless: nothing out of order");
    let t: serde_json::Value = serde_json::from_str(&run(&json("dctcp")).summary_json()).unwrap();
    assert!(t.get("roce").is_none());
}

#[test]
fn timely_cuts_its_rate_as_the_incast_queue_grows_and_loses_nothing() {
    // 16 senders from the line rate into one 25 Gbps port, lossless (the dcqcn preset's PFC), no ECN: only
    // the RTT tells TIMELY to slow down
    let scheme = r#"{"preset": "dcqcn", "ecn_marking": "none", "tcp": {"congestion_control": "timely"}}"#;
    let sim = run(&incast(16, 1_000_000, "25Gbps", "2MB", scheme, "40ms"));
    let c = &sim.rec.counters;
    assert_eq!((c.flows_completed, c.dropped(), c.ecn_marks), (16, 0, 0));
    assert!(c.rate_cuts >= 16, "every sender slowed down at least once: {} cuts", c.rate_cuts);
    let rates: Vec<f64> = sim.hosts.transfers.slots().iter().filter_map(|t| t.snd.cc.timely().map(|x| x.rate)).collect();
    assert!(!rates.is_empty() && rates.iter().all(|&r| r < 25e9), "a rate below the line rate by the end: {rates:?}");
    let summary: serde_json::Value = serde_json::from_str(&sim.summary_json()).unwrap();
    assert_eq!(summary["mechanisms"]["timely"]["rate_cuts"], serde_json::json!(c.rate_cuts));
}
