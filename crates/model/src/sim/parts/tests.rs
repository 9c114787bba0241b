//! Unit tests of `parts` (a file of their own to keep the module short).
use super::merge::peak;

/// The peak of packets in flight joined from two parts' samples counts a packet that crossed the cut once:
/// part 0 holds 5 packets at multiples 1 and 2 and lets one go to part 1 after multiple 2 (it holds 4 from
/// 3 on); part 1, behind, takes it in at a barrier before it has counted multiple 2 (so its store counts it
/// from 2: 3 packets), which the correction (+1 from 3, -1 from 2) takes back: 7 at every multiple, not 8.
#[test]
fn a_packet_that_crosses_the_cut_counts_once() {
    let p0: &[(u64, u64)] = &[(1, 5), (3, 4)];
    let p1: &[(u64, u64)] = &[(1, 2), (2, 3)];
    let moves: &[(u64, i64)] = &[(3, 1), (2, -1)];
    assert_eq!(peak(&[(p0, moves), (p1, &[])], &[3, 3]), 7);
    // without the correction the sum at multiple 2 would be 8
    assert_eq!(peak(&[(p0, &[]), (p1, &[])], &[3, 3]), 8);
    // samples past the last multiple either part counted at are not the run's
    let late: &[(u64, u64)] = &[(1, 2), (9, 50)];
    assert_eq!(peak(&[(p0, &[]), (late, &[])], &[3, 4]), 7);
}

/// The parts of a split run share one copy of the routes (computed once; a fault that changes them gives
/// each part its own).
#[test]
fn the_parts_share_the_routes() {
    let json = r#"{"run": {"duration": "5ms", "seed": 3, "event_order": "node"},
        "topology": {"kind": "fattree", "k": 4},
        "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}]}"#;
    let sim = super::build_in_parts(json, 3, super::Drive::Turns).unwrap();
    let others = &sim.split.parts.as_ref().expect("split").others;
    assert_eq!(others.len(), 2);
    for o in others {
        assert!(std::sync::Arc::ptr_eq(&sim.fab.routes, &o.fab.routes));
    }
}
