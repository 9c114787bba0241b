//! Folding changes when events run, never what happens: where no two events tie, a run that folds ends
//! with the flow table, counters, per-port bytes and occupancy, samples and packet trace of one that does
//! not, with fewer events.
use crate::sim::trace::TraceSpec;
use crate::sim::Sim;
use detailsim_engine::Time;

/// Flows across a k = 4 fat tree at irregular start times (no two events tie), three of them into host
/// 15 (its edge egress queues: transfers into a busy transmitter), sampled every 50 us, the frames of one
/// aggregation switch traced; with 24 KB buffers DeTail's ingresses pause and FH's drop.
fn scenario(preset: &str) -> String {
    scenario_with(preset, "128KB")
}

pub(crate) fn scenario_with(preset: &str, buffer: &str) -> String {
    let rows = [
        (0, 15, 200_000, 0.0),
        (4, 15, 150_000, 3.1e-6),
        (8, 15, 90_000, 17.3e-6),
        (1, 6, 64_000, 41.9e-6),
        (12, 2, 300_000, 59.3e-6),
        (5, 10, 30_000, 71.7e-6),
    ];
    let rows: Vec<String> = rows.iter().map(|(s, d, b, t)| format!(r#"{{"src": {s}, "dst": {d}, "size_bytes": {b}, "start_s": {t:e}}}"#)).collect();
    format!(
        r#"{{"run": {{"duration": "1ms", "drain": "20ms", "sample": "50us"}}, "topology": {{"kind": "fattree", "k": 4, "buffer": "{buffer}"}},
            "scheme": {{"preset": "{preset}"}}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        rows.join(",")
    )
}

/// The run of `json`, folding or not, to its end in one go or (`pause_every`) in steps, as the Python API
/// runs it (the state readable between them); `traced`: the frames of aggregation switch agg0_0.
fn run_to_end(json: &str, fold: bool, pause_every: Option<Time>, traced: bool) -> Sim {
    let mut sim = Sim::from_json(json).unwrap();
    sim.fold.on &= fold;
    if traced {
        sim.set_trace(&TraceSpec { nodes: vec!["agg0_0".into()], ..Default::default() }).unwrap();
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
type Outcome = (Vec<u64>, Vec<u64>, u64, Vec<(u64, u64)>, Vec<u64>, Vec<(u64, u64)>, Vec<(u64, u32, u64)>);

/// The first difference between two outcomes, named (None: the same).
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
        .or_else(|| first("port bytes sent, most ingress bytes", &a.3, &b.3))
        .or_else(|| first("mean egress bytes", &a.4, &b.4))
        .or_else(|| first("samples (ingress, egress)", &a.5, &b.5))
        .or_else(|| first("trace (t, port, seq)", &a.6, &b.6))
}

fn outcome(s: &Sim) -> Outcome {
    let f = &s.rec.flows;
    let ports = (0..s.fab.ports.len()).map(|p| (s.fab.tx_count[p].bytes, s.fab.ports[p].ing.max_total())).collect();
    let mean = (0..s.fab.ports.len()).map(|p| (s.fab.ports[p].eg.mean_total(s.now) * 1e3) as u64).collect();
    let sm = &s.rec.samples;
    let samples = sm.ingress.iter().zip(&sm.egress).map(|(&i, &e)| (i, e)).collect();
    let t = s.rec.trace.as_ref().unwrap();
    let trace = (0..t.t_ps.len()).map(|i| (t.t_ps[i], t.port[i], t.seq[i])).collect();
    (f.start_ps.clone(), f.end_ps.clone(), s.rec.counters.link_traversals, ports, mean, samples, trace)
}

#[test]
fn a_folded_run_does_what_an_unfolded_one_does_with_fewer_events() {
    for (preset, buffer) in [("fh", "128KB"), ("detail", "128KB"), ("dctcp", "128KB"), ("detail", "24KB"), ("fh", "24KB")] {
        let json = scenario_with(preset, buffer);
        let (folded, plain) = (run_to_end(&json, true, None, true), run_to_end(&json, false, None, true));
        assert_eq!(plain.rec.counters.flows_completed, 6, "{preset}");
        // the small buffers pause (DeTail's PFC) or drop (FH)
        let c = &plain.rec.counters;
        assert!(buffer != "24KB" || (if preset == "detail" { c.pfc_pause_frames } else { c.drops.iter().sum::<u64>() }) > 10, "{preset} {buffer}");
        assert!(folded.fold.on && !plain.fold.on);
        assert_eq!(plain.fold.folded, [0, 0]);
        // both kinds of fold happen (into an idle egress towards a host, under every scheme; into a busy one)
        assert!(folded.fold.folded[0] > 100 && folded.fold.folded[1] > 100, "{preset}: {:?}", folded.fold.folded);
        assert_eq!(differ(&outcome(&folded), &outcome(&plain)), None, "{preset}");
        assert!(!outcome(&plain).6.is_empty() && outcome(&plain).5.iter().any(|&(_, e)| e > 0), "{preset}: the trace and samples see frames");
        // a fold saves its transfer's end (a head waiting behind it in the ingress still gets one, and a
        // waiter of its egress a wake-up)
        let (a, b, n) = (folded.rec.counters.events, plain.rec.counters.events, folded.fold.folded.iter().sum::<u64>());
        assert!(a < b && a + n >= b && b - a > n / 2, "{preset}: {a} events folding {n} transfers, {b} not folding");
        // the lazy ingress ends settle the same whenever the run pauses
        let paused = run_to_end(&json, true, Some(Time(7_300_000)), true);
        assert_eq!(differ(&outcome(&paused), &outcome(&folded)), None, "{preset}");
    }
}

#[test]
fn red_pfabric_dibs_telemetry_and_faults_fold_nothing() {
    // (dcqcn marks with RED, hpcc's switches add telemetry as frames leave)
    for (preset, fault) in [("dcqcn", false), ("pfabric", false), ("dibs", false), ("hpcc", false), ("fh", true)] {
        let mut sc: serde_json::Value = serde_json::from_str(&scenario(preset)).unwrap();
        if fault {
            sc["fault"] = serde_json::json!([{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps", "at": "1ms"}]);
        }
        let s = run_to_end(&sc.to_string(), true, None, true);
        assert!(!s.fold.on && s.fold.folded == [0, 0], "{preset}");
    }
}

/// A loaded fabric: the k = 8 fat tree at 10 Gbps under paper/steady's retrievals and background for 5 ms
/// (1,221 flows, about 235,000 link traversals), FH and DeTail. No two of its events tie, so folding keeps
/// its flow table exactly, with more than a third fewer events, also when the run pauses
/// every 37 us (its lazy ingress ends settle then, `settle_all_in`). (A change of the model that
/// makes events of this run tie would make the two differ in their order; this test then needs a case
/// without ties.)
#[test]
fn a_loaded_fat_tree_keeps_its_flow_table_with_fewer_events() {
    for (preset, fewer) in [("fh", 0.35), ("detail", 0.35)] {
        let json = format!(
            r#"{{"run": {{"duration": "5ms", "seed": 1, "drain": "1s"}},
                "topology": {{"kind": "fattree", "k": 8, "link_rate": "10Gbps", "link_delay": "5.476us", "buffer": "1MB", "forwarding_delay": "4.224us", "speedup": 4}},
                "scheme": {{"preset": "{preset}", "egress_sharing": "in_use", "ingress_sharing": "eighths", "tcp": {{"handshake": true, "initial_window": 1, "rto_formula": "rfc6298"}}}},
                "workload": [{{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB", "32KB"], "priority": 0, "request_size": "10B"}},
                             {{"kind": "background", "rate": 10, "size": "1MB", "priority": 1}}]}}"#
        );
        let go = |fold: bool, pause: Option<Time>| run_to_end(&json, fold, pause, false);
        let (folded, plain, paused) = (go(true, None), go(false, None), go(true, Some(Time(37_000_000))));
        let f = |s: &Sim| (s.rec.flows.start_ps.clone(), s.rec.flows.end_ps.clone(), s.rec.counters.link_traversals, s.now);
        assert!(plain.rec.counters.flows_completed > 1000 && plain.rec.counters.link_traversals > 200_000, "{preset}");
        assert!(f(&folded) == f(&plain), "{preset}: the folded run's flow table differs");
        assert!(f(&paused) == f(&plain), "{preset}: the folded run paused every 37 us differs");
        let (a, b) = (folded.rec.counters.events as f64, plain.rec.counters.events as f64);
        assert!(a < (1.0 - fewer) * b, "{preset}: {a} events folded against {b}");
    }
}

/// Poisson arrivals of one-segment flows from 128 senders to one host of a switch at 90% load (the
/// M/D/1 case of tests/test_validation.py): the egress to the receiver queues, its transfers fold into it
/// while its crossbar side is busy with waiters taking turns (a transfer started in a round of retries must
/// not fold: its egress's waiters are out of the list for the round). No two events tie, so every flow
/// keeps its completion time.
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
    let json = format!(
        r#"{{"run": {{"duration": "{:.9}s", "drain": "0.1s"}}, "topology": {{"kind": "single_switch", "hosts": {}, "buffer": "64MB"}},
            "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        t + 1e-6,
        senders + 1,
        rows.join(",")
    );
    let go = |fold: bool| run_to_end(&json, fold, None, false);
    let (folded, plain) = (go(true), go(false));
    let f = |s: &Sim| (s.rec.flows.start_ps.clone(), s.rec.flows.end_ps.clone());
    assert_eq!(plain.rec.counters.flows_completed, n as u64);
    assert!(folded.fold.folded[1] > 1000, "transfers fold into the busy egress: {:?}", folded.fold.folded);
    assert!(f(&folded) == f(&plain), "a folded run's flow completion times differ");
    assert!(folded.rec.counters.events < plain.rec.counters.events);
}

/// Under DeTail (ALB, PFC) transfers into idle egresses towards switches fold too: the k = 4 flows with
/// 24 KB buffers, whose ingresses pause, fold hundreds of them and hold some back for a PAUSE on its way
/// or in force, and keep the unfolded run's flow table (`a_folded_run_does_what_an_unfolded_one_does_with_fewer_events`
/// checks everything else); also with ALB's thresholds below one frame and two, where the bytes a folded
/// frame holds in its egress until its transfer's end decide ALB's choices. A split run folds as one
/// thread does: a PAUSE from another part that could hold a fold lands after its window
/// (`Sim::least_reach`), so 2, 3 and 4 parts give the flow table and the events of one thread. No fold
/// reads a stop delay: the margin is less than half of each (`Fold::stops_longer`).
#[test]
fn alb_folds_towards_switches_see_every_pause_on_one_thread_and_in_parts() {
    for alb in ["", r#", "alb": {"t1": "1000B", "t2": "2000B"}"#] {
        let json = scenario_with("detail", "24KB").replace(r#""preset": "detail""#, &format!(r#""preset": "detail"{alb}"#));
        let (folded, plain) = (run_to_end(&json, true, None, false), run_to_end(&json, false, None, false));
        assert!(plain.rec.counters.pfc_pause_frames > 10, "{alb}");
        let [folds, held] = folded.fold.alb_folds;
        assert!(folds > 100 && held > 0, "{alb}: {folds} folded towards switches, {held} held back for a PAUSE");
        // every switch's egress towards a switch runs PFC on its ingress: no fold reads its stop delay (a debug
        // build asserts at every fold that the test skipped would have passed)
        assert!(folded.fold.margin.is_some() && folded.fold.stops_longer, "{alb}");
        let table = |s: &Sim| (s.rec.flows.start_ps.clone(), s.rec.flows.end_ps.clone(), s.rec.counters.link_traversals, s.rec.counters.pfc_pause_frames);
        assert!(table(&folded) == table(&plain), "{alb}: folding towards switches changed the flow table");
        for n in [2u8, 3, 4] {
            let mut parts = crate::sim::parts::build_in_parts(&json, n, crate::sim::parts::Drive::Turns).unwrap();
            parts.run();
            assert!(table(&parts) == table(&folded), "{alb}: {n} parts differ from one thread");
            assert_eq!(parts.rec.counters.events, folded.rec.counters.events, "{alb}: {n} parts");
        }
    }
}

/// Where a PAUSE takes effect sooner than a frame reaches the next switch (10 Gbps links of 5.476 us and
/// 4.224 us of forwarding: a stop delay of about 7 us against 9.7 us), the stop delay sets a split run's
/// window; folding towards switches under ALB shortens it by the longest transfer, so that a PAUSE sent in
/// another part during a window lands after every fold of the window could end (`Sim::fold_alb_idle`).
#[test]
fn a_split_run_s_window_leaves_alb_folds_room_before_a_pause_lands() {
    let json = |preset: &str| {
        format!(
            r#"{{"run": {{"duration": "1ms", "drain": "20ms"}},
                "topology": {{"kind": "fattree", "k": 4, "link_rate": "10Gbps", "link_delay": "5.476us", "forwarding_delay": "4.224us", "speedup": 4, "buffer": "128KB"}},
                "scheme": {{"preset": "{preset}"}}, "workload": [{{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}}]}}"#
        )
    };
    let one = Sim::from_json(&json("detail")).unwrap();
    let margin = one.alb_fold_margin().expect("DeTail folds towards switches");
    let stop =
        (0..one.fab.ports.len()).filter(|&p| one.fab.nodes[one.fab.ports[p].node as usize].is_switch).map(|p| one.fab.pfc[p].ingress.stop_delay).min().unwrap();
    assert!(margin.0 > 0 && stop < one.fab.ports[0].arrive_after, "the stop delay is the shorter reach");
    let parts = crate::sim::parts::build_in_parts(&json("detail"), 2, crate::sim::parts::Drive::Turns).unwrap();
    assert_eq!(parts.split_window(), Some(stop - margin));
    // without ALB nothing folds so, and the window is the stop delay
    let lps = crate::sim::parts::build_in_parts(&json("lps"), 2, crate::sim::parts::Drive::Turns).unwrap();
    assert!(lps.alb_fold_margin().is_none());
    assert_eq!(lps.split_window(), Some(stop));
}
