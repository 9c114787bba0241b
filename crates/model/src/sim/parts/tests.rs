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

/// Each part holds the state of its own ports only, numbered locally in global order, and shares the
/// topology and wiring: the parts' port tables add up to the fabric's once, a peer in another part is
/// named by its global index tagged `REMOTE` (and its node is that part's), and the joined run numbers every
/// port globally again with the one-part run's peers. Transfers and flows: each part stores its own and the
/// copies it holds, not a slot for every index of the run.
#[test]
fn a_part_holds_its_own_ports_numbered_locally_and_the_join_numbers_them_globally() {
    use crate::fabric::REMOTE;
    let json = r#"{"run": {"duration": "5ms", "seed": 3, "event_order": "node"},
        "topology": {"kind": "fattree", "k": 4},
        "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}]}"#;
    let whole = crate::Sim::from_json(json).unwrap();
    let total = whole.fab.ports.len();
    let mut sim = super::build_in_parts(json, 3, super::Drive::Turns).unwrap();
    sim.run_until(detailsim_engine::Time::from_us(2000));
    {
        let others = &sim.split.parts.as_ref().expect("split").others;
        let parts: Vec<&crate::Sim> = std::iter::once(&sim).chain(others.iter()).collect();
        let of = &sim.split.part.as_ref().expect("a part").of;
        assert_eq!(parts.iter().map(|p| p.fab.ports.len()).sum::<usize>(), total, "every port held once");
        for (k, p) in parts.iter().enumerate() {
            let f = &p.fab;
            assert!(f.is_local() && f.ports.len() < total && (f.pfc.len() == f.ports.len() || f.pfc.is_empty()));
            let t = &p.hosts.transfers;
            assert!(t.capacity_used() > 0 && t.capacity_used() < t.len(), "part {k}: {} transfers stored of {} indices", t.capacity_used(), t.len());
            assert!(std::sync::Arc::ptr_eq(&sim.fab.topo, &f.topo) && std::sync::Arc::ptr_eq(&sim.fab.wiring, &f.wiring));
            assert_eq!((f.port_ctr.len(), f.tx_count.len()), (f.ports.len(), f.ports.len()));
            for (l, pt) in f.ports.iter().enumerate() {
                let g = f.gid(l as u32);
                assert_eq!((f.lid(g), of[pt.node as usize] as usize), (Some(l as u32), k));
                assert_eq!(f.gid(pt.peer), whole.fab.ports[g as usize].peer, "port {g}'s peer");
                let remote = pt.peer & REMOTE != 0;
                assert_eq!(remote, of[pt.peer_node as usize] as usize != k, "port {g}: a peer in another part is tagged");
            }
        }
    }
    sim.run();
    assert!(!sim.fab.is_local() && sim.fab.ports.len() == total);
    for (a, b) in sim.fab.ports.iter().zip(&whole.fab.ports) {
        assert_eq!((a.node, a.peer, a.link), (b.node, b.peer, b.link));
    }
    assert!(sim.fab.nodes.iter().zip(&whole.fab.nodes).all(|(a, b)| a.port_base == b.port_base));
}
