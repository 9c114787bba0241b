//! Memory must not grow with simulated time beyond the per-flow result columns: the packet, transfer and
//! flow arenas are bounded by what is in flight, so running four times longer must not grow them fourfold.

use detailsim_model::Sim;

fn run(duration: &str) -> (usize, usize, usize, usize) {
    let json = format!(
        r#"{{"run": {{"duration": "{duration}", "seed": 5}},
            "topology": {{"kind": "fattree", "k": 4}},
            "workload": [{{"kind": "retrieval", "rate": 3000, "sizes": ["2KB", "32KB"]}},
                         {{"kind": "background", "size": "256KB"}}]}}"#
    );
    let mut sim = Sim::from_json(&json).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    (sim.pkts.capacity_used(), sim.hosts.transfers.capacity_used(), sim.hosts.apps.capacity_used(), sim.rec.flows.len())
}

#[test]
fn arenas_are_bounded_by_what_is_in_flight() {
    let (p1, t1, a1, f1) = run("20ms");
    let (p4, t4, a4, f4) = run("80ms");
    assert!(f4 > 3 * f1, "four times the flows were recorded ({f1} -> {f4})");
    for (name, short, long) in [("packets", p1, p4), ("transfers", t1, t4), ("flows", a1, a4)] {
        assert!(long < 2 * short + 64, "{name} arena grew with simulated time: {short} -> {long}");
    }
}
