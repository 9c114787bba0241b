//! A run split in parts (`detailsim_model::sim::parts::run_in_parts`): N simulators, one per part of the
//! fabric, exchanging what crosses the cuts at a barrier after every window, on one thread or N, end as the
//! ordinary run does.

use detailsim_model::sim::parts::{run_in_parts, Drive};
use detailsim_model::Sim;

/// Every way of running the parts: 2, 3 and 4 parts, taking turns, a thread each, and handing over between
/// them every few rounds.
const DRIVES: [(u8, Drive); 8] = [
    (2, Drive::Turns),
    (2, Drive::Threads),
    (2, Drive::Alternate(3)),
    (3, Drive::Turns),
    (3, Drive::Threads),
    (4, Drive::Turns),
    (4, Drive::Threads),
    (4, Drive::Alternate(3)),
];

fn scenario(scheme: &str, workload: &str, extra_run: &str) -> String {
    format!(
        r#"{{"run": {{"duration": "20ms", "seed": 7, "event_order": "node"{extra_run}}},
            "topology": {{"kind": "fattree", "k": 4, "buffer": "128KB"}},
            "scheme": {scheme},
            "workload": [{workload}]}}"#
    )
}

/// Retrievals (a flow's two ends in different halves for about half of them) and closed-loop one-way
/// background flows.
const MIXED: &str = r#"{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB", "32KB"]},
    {"kind": "background", "flows_per_server": 1, "size": "50KB", "priority": 1}"#;

/// The flow tables are the same, column by column, row by row (ids and order included).
fn same_table(a: &Sim, b: &Sim, what: &str) {
    let (x, y) = (&a.rec.flows, &b.rec.flows);
    assert_eq!(x.len(), y.len(), "{what}: rows");
    assert_eq!(x.id, y.id, "{what}: ids");
    assert_eq!((&x.start_ps, &x.end_ps, &x.src, &x.dst, &x.size), (&y.start_ps, &y.end_ps, &y.src, &y.dst, &y.size), "{what}");
    assert_eq!((&x.class, &x.priority, &x.timeouts, &x.retransmits), (&y.class, &y.priority, &y.timeouts, &y.retransmits), "{what}");
    assert_eq!((&x.ideal_ps, &x.bytes_delivered, &x.window_bytes), (&y.ideal_ps, &y.bytes_delivered, &y.window_bytes), "{what}");
    let mut ids = x.id.clone();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), x.len(), "{what}: every row its own id");
}

fn ordinary(json: &str) -> Sim {
    let mut sim = Sim::from_json(json).unwrap();
    sim.run();
    sim
}

#[test]
fn the_rounds_do_not_depend_on_who_runs_them() {
    // the windows are decided alike from the parts' reports: taking turns, a thread each, or handing over
    let json = scenario(r#"{"preset": "fh"}"#, MIXED, "");
    let rounds: Vec<u64> = DRIVES.iter().filter(|d| d.0 == 2).map(|&(n, d)| run_in_parts(&json, n, d).unwrap().split_rounds()).collect();
    assert!(rounds[0] > 10, "{rounds:?}");
    assert!(rounds.iter().all(|&r| r == rounds[0]), "{rounds:?}");
    assert_eq!(ordinary(&json).split_rounds(), 0);
}

#[test]
fn a_run_in_parts_ends_as_the_ordinary_run_does() {
    // pFabric breaks rank ties by the transfer's incarnation number: the check fails when that number
    // depends on how the parts interleave
    for scheme in [r#"{"preset": "fh"}"#, r#"{"preset": "dctcp"}"#, r#"{"preset": "pfabric"}"#, r#"{"preset": "las"}"#] {
        let json = scenario(scheme, MIXED, "");
        let a = ordinary(&json);
        assert!(a.rec.counters.flows_completed > 300, "{scheme}: a busy run");
        for threads in DRIVES {
            let b = run_in_parts(&json, threads.0, threads.1).unwrap();
            let what = format!("{scheme}, {threads:?}");
            assert_eq!(a.outcome_digest(), b.outcome_digest(), "{what}");
            assert_eq!(a.now, b.now, "{what}: the same end");
            assert_eq!(a.rec.counters.pkts_delivered, b.rec.counters.pkts_delivered, "{what}");
            assert_eq!(a.rec.counters.link_traversals, b.rec.counters.link_traversals, "{what}");
            assert_eq!(a.rec.counters.dropped(), b.rec.counters.dropped(), "{what}");
            assert_eq!(a.packets_in_flight(), b.packets_in_flight(), "{what}: packets left in the network");
            // joined from the parts' samples and the corrections for the packets that crossed a cut
            assert_eq!(a.rec.counters.max_packets_in_flight, b.rec.counters.max_packets_in_flight, "{what}: the peak in flight");
            // each port's state comes from the part that ran it
            let (pa, pb) = (a.port_stats(), b.port_stats());
            for (x, y) in pa.iter().zip(&pb) {
                assert_eq!(
                    (x.tx_bytes, x.tx_packets, x.max_egress_bytes, x.drops),
                    (y.tx_bytes, y.tx_packets, y.max_egress_bytes, y.drops),
                    "{what}: port {}:{}",
                    x.node,
                    x.port
                );
            }
            same_table(&a, &b, &what);
        }
    }
}

#[test]
fn unfinished_flows_and_their_counts_are_joined_from_every_part() {
    // a run cut short: flows still running at the end get rows whose delivered bytes come from the
    // receiver's part and whose retransmissions come from the sender's
    let json = scenario(r#"{"preset": "fh", "tcp": {"rto_min": "1ms"}}"#, MIXED, r#", "drain": "0s""#).replace(r#""buffer": "128KB""#, r#""buffer": "16KB""#);
    let a = ordinary(&json);
    let unfinished = a.rec.flows.end_ps.iter().filter(|&&e| e == u64::MAX).count();
    assert!(unfinished > 0, "flows still running at the end");
    assert!(a.rec.flows.retransmits.iter().sum::<u32>() > 0, "retransmissions to credit");
    for threads in DRIVES {
        let b = run_in_parts(&json, threads.0, threads.1).unwrap();
        assert_eq!(a.outcome_digest(), b.outcome_digest(), "{threads:?}");
        same_table(&a, &b, "unfinished flows");
    }
}

#[test]
fn what_a_split_run_does_not_support_yet_is_refused_naming_the_field() {
    let field = |json: &str| run_in_parts(json, 2, Drive::Turns).err().map(|e| e.field);
    let base = scenario(r#"{"preset": "fh"}"#, MIXED, "");
    assert_eq!(field(&base), None);
    assert_eq!(field(&scenario(r#"{"preset": "detail", "pfc": {"watchdog_action": "shutdown"}}"#, MIXED, "")).as_deref(), Some("scheme.pfc.watchdog_action"));
    assert_eq!(field(&scenario(r#"{"preset": "fh"}"#, MIXED, r#", "max_events": 1000"#)).as_deref(), Some("run.max_events"));
}

fn flows(rows: &[(u32, u32, u64, f64)]) -> String {
    let rows: Vec<String> = rows.iter().map(|&(s, d, b, t)| format!(r#"{{"src": {s}, "dst": {d}, "size_bytes": {b}, "start_s": {t}}}"#)).collect();
    format!(
        r#"{{"run": {{"duration": "2ms", "seed": 3, "event_order": "node"}},
            "topology": {{"kind": "fattree", "k": 4, "buffer": "128KB"}},
            "scheme": {{"preset": "fh"}},
            "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        rows.join(",")
    )
}

fn same_as_ordinary(json: &str) -> Sim {
    let a = ordinary(json);
    for threads in DRIVES {
        let b = run_in_parts(json, threads.0, threads.1).unwrap();
        assert_eq!((a.outcome_digest(), a.now, a.rec.counters.events > 0), (b.outcome_digest(), b.now, b.rec.counters.events > 0), "{threads:?}");
        assert_eq!(a.rec.counters.pkts_delivered, b.rec.counters.pkts_delivered);
        same_table(&a, &b, "flows");
    }
    a
}

#[test]
fn a_part_with_nothing_to_do_holds_while_the_other_runs_to_the_end() {
    // hosts 0-7 are the first half of k = 4: the second part is done when arrivals end, the first runs on
    // for milliseconds (its last flow ends well after the arrivals)
    let a = same_as_ordinary(&flows(&[(0, 1, 2_000_000, 0.0), (2, 5, 50_000, 0.0019)]));
    assert!(a.now.0 > 10_000_000_000, "the run goes on well past the arrivals: {}", a.now);
}

#[test]
fn a_part_that_held_runs_on_when_a_flow_that_completes_in_it_arrives() {
    // one-way flows from the first half into the second start just before the arrivals end: when the
    // arrivals end the second part has counted none of them yet (their copies arrive at the next barrier),
    // so it holds, and then runs on when they arrive; the run ends when the last of them completes
    let rows: Vec<(u32, u32, u64, f64)> = (0..8).map(|i| (i, 8 + i, 30_000 + 1_000 * i as u64, 0.001999 + 1e-7 * i as f64)).collect();
    let a = same_as_ordinary(&flows(&rows));
    assert_eq!(a.rec.counters.flows_completed, 8);
}

#[test]
fn pfc_pauses_across_the_cut_and_the_sweep_sees_the_whole_fabric() {
    // DeTail on small buffers: PAUSE frames on links across the cut, the watchdog and the deadlock check
    // run while ports are paused (the sweep every 50 us, windows ending there)
    let heavy = r#"{"kind": "retrieval", "rate": 6000, "sizes": ["64KB", "128KB"]},
        {"kind": "background", "flows_per_server": 2, "size": "200KB", "priority": 1}"#;
    let json = scenario(r#"{"preset": "detail", "pfc": {"watchdog_timeout": "100us", "deadlock_check": "50us"}}"#, heavy, "")
        .replace(r#""buffer": "128KB""#, r#""buffer": "96KB""#);
    let a = ordinary(&json);
    assert!(a.rec.counters.pfc_pause_frames > 100, "pauses: {}", a.rec.counters.pfc_pause_frames);
    assert!(a.lossless_ok());
    let summary = |s: &Sim| {
        let v: serde_json::Value = serde_json::from_str(&s.summary_json()).unwrap();
        v["pfc"].to_string()
    };
    assert!(summary(&a).contains("paused_too_long"), "the watchdog reported: {}", summary(&a));
    for threads in DRIVES {
        let b = run_in_parts(&json, threads.0, threads.1).unwrap();
        assert_eq!(a.outcome_digest(), b.outcome_digest(), "{threads:?}");
        same_table(&a, &b, "pfc");
        assert_eq!((a.now, a.rec.counters.pfc_pause_frames, a.rec.counters.pfc_pauses), (b.now, b.rec.counters.pfc_pause_frames, b.rec.counters.pfc_pauses));
        assert_eq!(summary(&a), summary(&b), "PFC frames, paused time, watchdog and deadlock reports");
        for (x, y) in a.port_stats().iter().zip(&b.port_stats()) {
            assert_eq!((x.pfc_frames_sent, x.pfc_frames_received, x.pfc_paused_s), (y.pfc_frames_sent, y.pfc_frames_received, y.pfc_paused_s));
        }
    }
}

#[test]
fn run_threads_2_splits_the_run_and_stepping_it_changes_nothing() {
    let json = scenario(r#"{"preset": "detail"}"#, MIXED, "");
    let a = ordinary(&json);
    let two = json.replace(r#""event_order": "node""#, r#""event_order": "node", "threads": 2"#);
    let mut b = Sim::from_json(&two).unwrap();
    b.run();
    assert_eq!((a.outcome_digest(), a.now), (b.outcome_digest(), b.now));
    // advanced in steps, as the Python front end does (the run pauses between windows)
    let mut c = Sim::from_json(&two).unwrap();
    let mut t = detailsim_engine::Time::ZERO;
    let mut steps = 0;
    while !c.run_until(t) {
        t += detailsim_engine::Time::from_us(137);
        steps += 1;
    }
    assert!(steps > 100 && c.clock.finished);
    assert_eq!((a.outcome_digest(), a.now, a.rec.counters.events > 0), (c.outcome_digest(), c.now, true));
    same_table(&a, &b, "run.threads = 2");
    same_table(&a, &c, "in steps");
}

#[test]
fn run_threads_is_checked() {
    let base = scenario(r#"{"preset": "fh"}"#, MIXED, "");
    let err = |j: String| Sim::from_json(&j).err().map(|e| (e.field, e.msg));
    for bad in ["0", "65"] {
        let (f, m) = err(base.replace(r#""event_order": "node""#, &format!(r#""event_order": "node", "threads": {bad}"#))).unwrap();
        assert_eq!(f, "run.threads");
        assert!(m.contains("1 to 64 or \"auto\""), "{m}");
    }
    let (f, m) = err(base.replace(r#""event_order": "node""#, r#""event_order": "node", "threads": "many""#)).unwrap();
    assert_eq!(f, "run.threads");
    assert!(m.contains("expected a number of threads (1 to 64) or \"auto\""), "{m}");
    // more parts than the fabric has hosts (k = 4: 16)
    let (f, m) = err(base.replace(r#""event_order": "node""#, r#""threads": 17"#)).unwrap();
    assert_eq!(f, "run.threads");
    assert!(m.contains("17 parts need at least 17 hosts; the fabric has 16"), "{m}");
    // a guard set on a split run after construction is refused, not a run that never ends
    let mut split = Sim::from_json(&base.replace(r#""event_order": "node""#, r#""threads": 2"#)).unwrap();
    assert!(split.set_max_events(1000).unwrap_err().starts_with("run.max_events"));
    // "auto" runs what a split run refuses on one thread instead of refusing it
    assert!(err(base.replace(r#""event_order": "node""#, r#""threads": "auto", "max_events": 1000"#)).is_none());
    for n in [2, 3, 16] {
        assert!(err(base.replace(r#""event_order": "node""#, &format!(r#""threads": {n}"#))).is_none(), "{n} threads");
    }
    let (f, _) = err(base.replace(r#""event_order": "node""#, r#""event_order": "node", "threads": 2, "max_events": 1000"#)).unwrap();
    assert_eq!(f, "run.max_events");
}

/// `scenario` with three faults at the times `at`: a link down inside a part (routes change in every part,
/// packets queued on it dropped in its part), a link across the cut down (its ends in different parts; the
/// cores alternate between the parts), an edge link degraded to 100 Mbps (PFC thresholds re-derived).
fn with_faults(scheme: &str, extra_run: &str, at: [&str; 3]) -> String {
    let faults = format!(
        r#""fault": [{{"kind": "link_down", "link": ["tor2_1", "agg2_1"], "at": "{}"}},
            {{"kind": "link_down", "link": ["agg0_0", "core1"], "at": "{}"}},
            {{"kind": "degrade", "link": ["h9", "tor2_0"], "rate": "100Mbps", "at": "{}"}}],"#,
        at[0], at[1], at[2]
    );
    scenario(scheme, MIXED, extra_run).replace(r#""workload""#, &format!(r#"{faults} "workload""#))
}

#[test]
fn faults_during_the_run_and_the_measurement_window_end_as_one_thread_does() {
    // the faults 5, 6 and 8 ms in, a measurement window across all
    for scheme in [r#"{"preset": "fh"}"#, r#"{"preset": "detail"}"#] {
        let json = with_faults(scheme, r#", "measure_from": "3ms", "measure_to": "12ms""#, ["5ms", "6ms", "8ms"]);
        let a = ordinary(&json);
        assert!(a.rec.counters.drops[detailsim_model::stats::DropCause::LinkDown as usize] > 0, "{scheme}: the fault dropped packets");
        assert!(a.rec.flows.window_bytes.iter().any(|&b| b > 0), "{scheme}: window goodput");
        for threads in DRIVES {
            let b = run_in_parts(&json, threads.0, threads.1).unwrap();
            assert_eq!(a.outcome_digest(), b.outcome_digest(), "{scheme}, {threads:?}");
            same_table(&a, &b, scheme);
            assert_eq!(a.rec.counters.dropped(), b.rec.counters.dropped());
        }
    }
}

#[test]
fn faults_from_the_start_act_in_every_part_as_one_thread_does() {
    // links down and degraded at t = 0: the later parts share the first part's topology, routes and link
    // states as built, before its faults, and then take the faults as the first did (sharing them after
    // would leave a later part's end of the dead link up)
    for scheme in [r#"{"preset": "fh"}"#, r#"{"preset": "detail"}"#] {
        let json = with_faults(scheme, "", ["0s", "0s", "0s"]);
        let a = ordinary(&json);
        for threads in DRIVES {
            let b = run_in_parts(&json, threads.0, threads.1).unwrap();
            assert_eq!(a.outcome_digest(), b.outcome_digest(), "{scheme}, {threads:?}");
            same_table(&a, &b, scheme);
            let down = |s: &Sim| s.fab.ports.iter().filter(|p| !p.up).count();
            assert_eq!((down(&a), down(&b)), (4, 4), "{scheme}, {threads:?}: both ends of both links down");
        }
    }
}

#[test]
fn samples_are_the_one_thread_run_s() {
    // every 50 us: each port's bytes and each measured flow's delivered bytes, also flows a moment old
    // whose copy has not reached the receiver's part yet
    for scheme in [r#"{"preset": "fh"}"#, r#"{"preset": "detail"}"#] {
        let json = scenario(scheme, MIXED, r#", "sample": "50us""#);
        let a = ordinary(&json);
        assert!(a.rec.samples.flow.len() > 10_000 && a.rec.samples.port.len() > 10_000);
        for threads in DRIVES {
            let b = run_in_parts(&json, threads.0, threads.1).unwrap();
            same_table(&a, &b, scheme);
            let (x, y) = (&a.rec.samples, &b.rec.samples);
            assert_eq!((&x.port_t, &x.port, &x.ingress, &x.egress), (&y.port_t, &y.port, &y.ingress, &y.egress), "{scheme}: port samples");
            assert_eq!((&x.flow_t, &x.flow, &x.delivered), (&y.flow_t, &y.flow, &y.delivered), "{scheme}: flow samples");
        }
    }
}

#[test]
fn a_fault_that_shortens_the_lookahead_is_within_the_windows_from_the_start() {
    // every agg-core link made ten times faster at t = 0 (DeTail, 512 KB buffers, a 4 MB incast): a PAUSE
    // on a faster link takes effect sooner, so the cut's lookahead after the fault is shorter than before
    // it; windows sized by the links as built let a PAUSE through within a window (issue 35)
    let faults: Vec<String> = (0..16).map(|i| format!(r#"{{"kind": "degrade", "link": "agg_core#{i}", "rate": "10Gbps"}}"#)).collect();
    let json = format!(
        r#"{{"run": {{"duration": "5ms", "event_order": "node"}},
            "topology": {{"kind": "fattree", "k": 4, "buffer": "512KB"}},
            "scheme": {{"preset": "detail"}},
            "fault": [{}],
            "workload": [{{"kind": "incast", "total": "4MB"}}]}}"#,
        faults.join(",")
    );
    let a = same_as_ordinary(&json);
    assert!(a.rec.counters.pfc_pause_frames > 0, "PAUSE frames across the faster links");
    assert_eq!(a.rec.counters.flows_completed, 16);
}

#[test]
fn a_split_run_on_shared_buffers_keeps_each_switch_mmu_with_its_queues() {
    // background flows still queued at the end: each switch's MMU books must come from the part that ran
    // it (they were part 0's, empty for the other part's switches, and the end-of-run check failed)
    for preset in ["detail", "dcqcn", "hpcc"] {
        let json = scenario(&format!(r#"{{"preset": "{preset}"}}"#), MIXED, "")
            .replace(r#""buffer": "128KB""#, r#""buffer": "128KB", "shared_buffer": {"size": "1MB"}"#);
        let a = ordinary(&json);
        assert!(a.packets_in_flight() > 0, "{preset}: packets left in the network");
        a.check_shared().unwrap();
        for threads in DRIVES {
            let b = run_in_parts(&json, threads.0, threads.1).unwrap();
            let what = format!("{preset}, {threads:?}");
            assert_eq!(a.outcome_digest(), b.outcome_digest(), "{what}");
            b.check_shared().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(a.fab.mmu, b.fab.mmu, "{what}: every MMU's books");
        }
    }
}
