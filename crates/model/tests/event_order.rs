//! The node order (the only event order): a node's events come in an order that does not depend on how other nodes'
//! events interleave with them, and nodes act on each other only through events at least a grid interval
//! later, so a run split in two parts (each half of the fabric a window at a time, here taking turns on
//! one thread: `parts::Drive::Turns`) ends as the ordinary run does.

use detailsim_engine::Time;
use detailsim_model::Sim;

fn scenario(scheme: &str, workload: &str, order: &str) -> String {
    format!(
        r#"{{"run": {{"duration": "20ms", "seed": 5, "event_order": "{order}"}},
            "topology": {{"kind": "fattree", "k": 4, "buffer": "128KB"}},
            "scheme": {scheme},
            "workload": [{workload}]}}"#
    )
}

const RETRIEVALS: &str = r#"{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB", "32KB"]}"#;
/// Retrievals and closed-loop background flows (each sender starts its next flow when its last one ends).
const MIXED: &str = r#"{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB", "32KB"]},
    {"kind": "background", "flows_per_server": 1, "size": "50KB", "priority": 1}"#;

fn run(json: &str, split: bool) -> Sim {
    if split {
        return detailsim_model::sim::parts::run_in_parts(json, 2, detailsim_model::sim::parts::Drive::Turns).unwrap();
    }
    let mut sim = Sim::from_json(json).unwrap();
    sim.run_until(Time::MAX);
    sim
}

#[test]
fn the_split_schedule_ends_as_the_ordinary_run_does() {
    for scheme in [r#"{"preset": "fh"}"#, r#"{"preset": "detail"}"#, r#"{"preset": "dctcp"}"#, r#"{"preset": "pfabric"}"#] {
        let json = scenario(scheme, MIXED, "node");
        let (a, b) = (run(&json, false), run(&json, true));
        assert!(a.rec.counters.flows_completed > 300, "{scheme}: a busy enough run");
        assert_eq!(a.outcome_digest(), b.outcome_digest(), "{scheme}");
        assert_eq!(a.now, b.now, "{scheme}: the same end");
        assert_eq!(a.rec.counters.pkts_delivered, b.rec.counters.pkts_delivered, "{scheme}");
    }
}

#[test]
fn node_order_runs_end_at_the_end_of_a_grid_interval() {
    let a = run(&scenario(r#"{"preset": "detail"}"#, RETRIEVALS, "node"), false);
    // detail's fat tree k = 4: the grid is the host links' 5.476 us (shorter than a switch's link plus
    // forwarding delay and than a PAUSE's stop delay)
    assert_eq!(a.clock.grid.0, 5_476_000);
    assert_eq!((a.now.0 + 1) % a.clock.grid.0, 0);
}

#[test]
fn node_order_is_reproducible_and_push_order_is_refused() {
    let node = scenario(r#"{"preset": "fh"}"#, RETRIEVALS, "node");
    let (a, b) = (run(&node, false), run(&node, false));
    assert_eq!(a.outcome_digest(), b.outcome_digest());
    // the field may be left out (the node order is the only one) and gives the same run
    let plain = run(&node.replace(r#", "event_order": "node""#, ""), false);
    assert_eq!(plain.outcome_digest(), a.outcome_digest());
    let e = Sim::from_json(&scenario(r#"{"preset": "fh"}"#, RETRIEVALS, "push")).err().expect("push order is refused");
    assert_eq!(e.field, "run.event_order");
    assert!(e.msg.contains("removed") && e.msg.contains("node"), "{}", e.msg);
}

#[test]
fn node_order_credits_every_retransmission_to_a_flow() {
    // every flow measured and finished: the senders' timeouts and retransmissions all reach the flow
    // table, whether a sender closed before its flow completed, after, or is still open at the end
    let json = scenario(r#"{"preset": "fh", "tcp": {"rto_min": "1ms"}}"#, MIXED, "node").replace(r#""buffer": "128KB""#, r#""buffer": "16KB""#);
    let a = run(&json, false);
    let c = &a.rec.counters;
    assert!(c.retransmits > 100 && c.timeouts > 0, "a lossy run: {} retransmits, {} timeouts", c.retransmits, c.timeouts);
    assert_eq!(a.rec.flows.retransmits.iter().map(|&r| r as u64).sum::<u64>(), c.retransmits);
    assert_eq!(a.rec.flows.timeouts.iter().map(|&r| r as u64).sum::<u64>(), c.timeouts);
}
