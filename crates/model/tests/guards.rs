//! Guards on runaway runs: `run.max_events` and `run.max_wall` end a run early, marked incomplete, with
//! the packets still in flight accounted for.

use detailsim_model::Sim;

fn scenario(run_extra: &str) -> String {
    format!(
        r#"{{"run": {{"duration": "50ms", "seed": 3 {run_extra}}},
            "topology": {{"kind": "fattree", "k": 4}},
            "workload": [{{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}}]}}"#
    )
}

/// A limit set after construction (as the schema fuzz test does) is enforced too: the loop compares
/// against a threshold computed when the run was built, which the setter lowers.
#[test]
fn a_limit_set_after_construction_ends_the_run() {
    let mut cut = Sim::from_json(&scenario("")).unwrap();
    cut.set_max_events(3000).unwrap();
    cut.run();
    assert_eq!(cut.rec.counters.events, 3000);
    assert!(cut.guard.incomplete.as_deref().is_some_and(|w| w.starts_with("run.max_events (3000)")));
    cut.check_conservation().unwrap();
}

#[test]
fn max_events_ends_the_run_at_exactly_that_many_events() {
    let mut full = Sim::from_json(&scenario("")).unwrap();
    full.run();
    assert!(full.guard.incomplete.is_none());
    let all = full.rec.counters.events;
    let mut cut = Sim::from_json(&scenario(r#", "max_events": 5000"#)).unwrap();
    cut.run();
    assert!(all > 5000, "the full run has more events than the cap ({all})");
    assert_eq!(cut.rec.counters.events, 5000);
    let why = cut.guard.incomplete.clone().expect("marked incomplete");
    assert!(why.starts_with("run.max_events (5000) reached at "), "{why}");
    assert!(cut.now < full.now, "stopped early");
    cut.check_conservation().unwrap();
    let summary: serde_json::Value = serde_json::from_str(&cut.summary_json()).unwrap();
    assert_eq!(summary["incomplete"].as_str(), Some(why.as_str()));
}

#[test]
fn max_wall_ends_a_long_run() {
    // 10 s of simulated time would take minutes; 50 ms of wall clock stops it
    let json = scenario(r#", "max_wall": "50ms""#).replace(r#""duration": "50ms""#, r#""duration": "10s""#);
    let mut sim = Sim::from_json(&json).unwrap();
    let t0 = std::time::Instant::now();
    sim.run();
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "stopped promptly: {:?}", t0.elapsed());
    let why = sim.guard.incomplete.clone().expect("marked incomplete");
    assert!(why.starts_with("run.max_wall"), "{why}");
    sim.check_conservation().unwrap();
}
