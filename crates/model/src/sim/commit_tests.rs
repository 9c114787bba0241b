//! Committing changes when events run, never what happens: where no two events tie, a run that commits
//! ends with the flow table, counters, per-port bytes and occupancy, samples and packet trace of one that
//! does not, with fewer events.
use crate::sim::trace::TraceSpec;
use crate::sim::Sim;
use detailsim_engine::Time;

/// Flows across a k = 4 fat tree at irregular start times, of priority 0 and 1 (the fold's tests' flows),
/// sampled every 50 us, the frames of one aggregation switch traced.
fn scenario(preset: &str, buffer: &str, low: &str) -> String {
    scenario_nic(preset, buffer, low, "inf")
}

/// The same with host NIC queues of `nic` bytes (senders wait for room in a small one).
fn scenario_nic(preset: &str, buffer: &str, low: &str, nic: &str) -> String {
    let rows = [
        (0, 15, 200_000, 0.0, 0),
        (4, 15, 150_000, 3.1e-6, 1),
        (8, 15, 90_000, 17.3e-6, 0),
        (1, 6, 64_000, 41.9e-6, 1),
        (12, 2, 300_000, 59.3e-6, 0),
        (5, 10, 30_000, 71.7e-6, 1),
        (9, 15, 120_000, 83.9e-6, 0),
    ];
    let rows: Vec<String> = rows
        .iter()
        .map(|(s, d, b, t, p)| format!(r#"{{"src": {s}, "dst": {d}, "size_bytes": {b}, "start_s": {t:e}, "priority": {}}}"#, if *p == 1 { low } else { "0" }))
        .collect();
    format!(
        r#"{{"run": {{"duration": "1ms", "drain": "20ms", "sample": "50us"}}, "topology": {{"kind": "fattree", "k": 4, "buffer": "{buffer}", "host_buffer": "{nic}"}},
            "scheme": {{"preset": "{preset}"}}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        rows.join(",")
    )
}

fn run_to_end(json: &str, commit: bool, pause_every: Option<Time>, traced: bool) -> Sim {
    let mut sim = Sim::from_json(json).unwrap();
    sim.commit.on &= commit;
    if traced {
        sim.set_trace(&TraceSpec { nodes: vec!["agg0_0".into(), "tor3_1".into()], ..Default::default() }).unwrap();
    }
    match pause_every {
        None => sim.run(),
        Some(dt) => {
            let mut t = Time::ZERO;
            while !sim.run_until(t) {
                t += dt;
            }
        }
    }
    sim
}

/// What a run did, everything but its events.
type Outcome = (Vec<u64>, Vec<u64>, u64, Vec<(u64, u64, u64)>, Vec<u64>, Vec<(u64, u64)>, Vec<(u64, u32, u64)>);

fn differ(a: &Outcome, b: &Outcome) -> Option<String> {
    fn first<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        if a.len() != b.len() {
            return Some(format!("{what}: {} against {} entries", a.len(), b.len()));
        }
        let i = (0..a.len()).find(|&i| a[i] != b[i])?;
        Some(format!("{what}[{i}]: {:?} against {:?}", a[i], b[i]))
    }
    first("flow start", &a.0, &b.0)
        .or_else(|| first("flow end", &a.1, &b.1))
        .or_else(|| (a.2 != b.2).then(|| format!("traversals {} against {}", a.2, b.2)))
        .or_else(|| first("port bytes sent, most egress bytes, busy time", &a.3, &b.3))
        .or_else(|| first("mean egress bytes", &a.4, &b.4))
        .or_else(|| first("samples (ingress, egress)", &a.5, &b.5))
        .or_else(|| first("trace (t, port, seq)", &a.6, &b.6))
}

fn outcome(s: &Sim) -> Outcome {
    let f = &s.rec.flows;
    let ports = (0..s.fab.ports.len()).map(|p| (s.fab.tx_count[p].bytes, s.fab.ports[p].eg.max_total, s.fab.ports[p].tx_busy_ps)).collect();
    let mean = (0..s.fab.ports.len()).map(|p| (s.fab.ports[p].eg.mean_total(s.now) * 1e3) as u64).collect();
    let sm = &s.rec.samples;
    let samples = sm.ingress.iter().zip(&sm.egress).map(|(&i, &e)| (i, e)).collect();
    let trace = match s.rec.trace.as_ref() {
        Some(t) => (0..t.t_ps.len()).map(|i| (t.t_ps[i], t.port[i], t.seq[i])).collect(),
        None => Vec::new(),
    };
    (f.start_ps.clone(), f.end_ps.clone(), s.rec.counters.link_traversals, ports, mean, samples, trace)
}

#[test]
fn a_committing_run_does_what_an_uncommitting_one_does_with_fewer_events() {
    let cases = [
        ("fh", "128KB", "1", "inf"),
        ("fh", "24KB", "1", "inf"),
        ("dctcp", "128KB", "1", "inf"),
        ("fh", "128KB", "0", "inf"),
        ("fh", "128KB", "1", "12KB"),
        ("detail", "128KB", "1", "inf"),
    ];
    for (preset, buffer, low, nic) in cases {
        let json = scenario_nic(preset, buffer, low, nic);
        let (with, plain) = (run_to_end(&json, true, None, true), run_to_end(&json, false, None, true));
        assert_eq!(plain.rec.counters.flows_completed, 7, "{preset}");
        assert_eq!(plain.commit.frames, 0);
        assert_eq!(differ(&outcome(&with), &outcome(&plain)), None, "{preset} {buffer} {low}");
        if preset == "detail" {
            // priority 0 is lossless under DeTail: nothing commits
            assert!(with.commit.frames == 0 && with.rec.counters.events == plain.rec.counters.events);
            continue;
        }
        assert!(with.commit.frames > 100, "{preset} {buffer}: {} frames committed", with.commit.frames);
        if nic != "inf" {
            // senders wait for room in their NICs, which committed frames leave as they start
            assert!(
                plain.rec.counters.nic_blocked > 10 && with.commit.wakes > 10,
                "{nic}: {} blocked, {} wakes",
                plain.rec.counters.nic_blocked,
                with.commit.wakes
            );
        }
        if buffer == "24KB" {
            // FH's small buffers drop, and ingresses wait for egresses whose frames are committed
            assert!(plain.rec.counters.drops.iter().sum::<u64>() > 10 && with.commit.wakes > 10, "{preset} {buffer}: {} wakes", with.commit.wakes);
        }
        let (a, b) = (with.rec.counters.events, plain.rec.counters.events);
        assert!(a < b, "{preset}: {a} events committing, {b} not");
        let paused = run_to_end(&json, true, Some(Time(7_300_000)), true);
        assert_eq!(differ(&outcome(&paused), &outcome(&with)), None, "{preset} paused");
    }
}

/// A loaded fabric: the k = 8 fat tree at 10 Gbps under paper/steady's retrievals (priority 0) and
/// background (priority 1) for 5 ms (1,221 flows, about 235,000 link traversals), FH.
#[test]
fn a_loaded_fat_tree_keeps_its_flow_table_with_fewer_events() {
    let json = r#"{"run": {"duration": "5ms", "seed": 1, "drain": "1s"},
        "topology": {"kind": "fattree", "k": 8, "link_rate": "10Gbps", "link_delay": "5.476us", "buffer": "1MB", "forwarding_delay": "4.224us", "speedup": 4},
        "scheme": {"preset": "fh", "egress_sharing": "in_use", "ingress_sharing": "eighths", "tcp": {"handshake": true, "initial_window": 1, "rto_formula": "rfc6298"}},
        "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB", "32KB"], "priority": 0, "request_size": "10B"},
                     {"kind": "background", "rate": 10, "size": "1MB", "priority": 1}]}"#;
    let (with, plain) = (run_to_end(json, true, None, false), run_to_end(json, false, None, false));
    assert!(plain.rec.counters.flows_completed > 1000 && plain.rec.counters.link_traversals > 200_000);
    assert_eq!(differ(&outcome(&with), &outcome(&plain)), None);
    let paused = run_to_end(json, true, Some(Time(37_000_000)), false);
    assert_eq!(differ(&outcome(&paused), &outcome(&with)), None);
    let (a, b) = (with.rec.counters.events as f64, plain.rec.counters.events as f64);
    assert!(a < b, "{a} events committing against {b}");
    eprintln!("events {a} against {b}, {} frames committed", with.commit.frames);
}

/// Poisson arrivals of one-segment flows from 128 senders to one host of a switch at 90% load (the M/D/1
/// case of tests/test_validation.py): the egress to the receiver queues deep, every frame behind the first
/// of a busy period is committed, and ingresses wait for it. No two events tie, so every flow keeps its
/// completion time.
#[test]
fn poisson_arrivals_into_one_egress_keep_every_completion_time() {
    let (senders, n, load) = (128u32, 20_000usize, 0.9f64);
    let ser = 1530.0 * 8.0 / 1e9;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut t = 0.0f64;
    let rows: Vec<String> = (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            t += -u.ln() * ser / load;
            format!(r#"{{"src": {}, "dst": 0, "size_bytes": 1460, "start_s": {t:e}}}"#, 1 + i as u32 % senders)
        })
        .collect();
    for buffer in ["64MB", "16KB"] {
        let json = format!(
            r#"{{"run": {{"duration": "{:.9}s", "drain": "0.1s"}}, "topology": {{"kind": "single_switch", "hosts": {}, "buffer": "{buffer}"}},
                "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
            t + 1e-6,
            senders + 1,
            rows.join(",")
        );
        let (with, plain) = (run_to_end(&json, true, None, false), run_to_end(&json, false, None, false));
        assert_eq!(plain.rec.counters.flows_completed, n as u64);
        assert!(with.commit.frames > 10_000, "{buffer}: {} frames committed", with.commit.frames);
        // with 16 KB egresses the ingresses wait for room the committed frames leave as they start
        assert!(buffer != "16KB" || with.commit.wakes > 1000, "{buffer}: {} wakes", with.commit.wakes);
        assert_eq!(differ(&outcome(&with), &outcome(&plain)), None, "{buffer}");
        assert!(with.rec.counters.events < plain.rec.counters.events);
    }
}
