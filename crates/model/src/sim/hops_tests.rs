//! A packet's settled hops (`Packet::hops`, `Fabric::settled_hops`) are the forwarding engine's own
//! choices, found once per flow and direction: every slot they hold is what `Node::route` chooses at that
//! switch, and a run whose packets carry them ends with the flow table, counters and per-port bytes of one
//! whose packets ask the engine at every switch.
use crate::config::LoadBalancing;
use crate::packet::{settled_hop, HOP_BITS};
use crate::sim::Sim;

/// The fold's tests' flows across a k = 4 fat tree (three into host 15, so its edge queues fill: FH drops
/// with 24 KB buffers, DIBS detours, DeTail pauses), with a retrieval workload among all hosts beside them
/// and `extra` (faults) in the scenario.
fn scenario(preset: &str, buffer: &str, extra: serde_json::Value) -> String {
    let mut sc: serde_json::Value = serde_json::from_str(&crate::sim::fold::tests::scenario_with(preset, buffer)).unwrap();
    sc["run"]["seed"] = 3.into();
    sc["run"]["drain"] = "50ms".into();
    sc["workload"].as_array_mut().unwrap().push(serde_json::json!({"kind": "retrieval", "rate": 20000, "sizes": ["2KB", "16KB"], "priority": 0}));
    if let serde_json::Value::Object(m) = extra {
        sc.as_object_mut().unwrap().extend(m);
    }
    sc.to_string()
}

/// Each slot of `hops` from host `src` to `dst` (flow hash `hash`), switch by switch along the path the
/// engine takes: the engine's choice where a slot holds one (asked of a copy of the switch, so nothing
/// is drawn from the run's); the number of switches whose choice the slots held.
fn check_path(sim: &Sim, src: u32, dst: u32, hash: u32) -> u32 {
    let fab = &sim.fab;
    let mut hops = fab.settled_hops(src, dst, hash, sim.scheme.load_balancing);
    let (mut port, mut held, mut scratch) = (fab.nodes[src as usize].port_base, 0, Vec::new());
    for _ in 0..fab.nodes.len() {
        let node = fab.ports[port as usize].peer_node;
        if !fab.nodes[node as usize].is_switch {
            assert_eq!(node, dst);
            break;
        }
        let mut copy = fab.nodes[node as usize].clone();
        let (up, drain) = (|p: u32| fab.ports[p as usize].up, |p: u32| fab.ports[p as usize].eg.drain_bytes(0));
        let asked = copy.route(node, &fab.routes, dst, hash, sim.scheme.load_balancing, &sim.scheme.alb, up, drain, &mut scratch).unwrap();
        if let Some(lp) = settled_hop(hops) {
            assert_eq!(fab.nodes[node as usize].port_base + lp, asked, "{src} -> {dst} at node {node}");
            held += 1;
        }
        hops >>= HOP_BITS;
        port = asked;
    }
    assert_eq!(hops, 0, "{src} -> {dst}: slots left beyond the destination");
    held
}

#[test]
fn settled_hops_are_the_forwarding_engines_choices() {
    for preset in ["fh", "lps", "detail"] {
        for k in [4, 8] {
            let json = format!(
                r#"{{"run": {{"duration": "1us"}}, "topology": {{"kind": "fattree", "k": {k}}}, "scheme": {{"preset": "{preset}"}},
                    "workload": [{{"kind": "flows", "rows": [{{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}}]}}]}}"#
            );
            let sim = Sim::from_json(&json).unwrap();
            assert!(sim.hops_on);
            let hosts = sim.fab.hosts.clone();
            let per_edge = k / 2;
            for (i, &src) in hosts.iter().enumerate() {
                for (j, &dst) in hosts.iter().enumerate().filter(|&(j, _)| j != i) {
                    for hash in [7u32, 0x9e37_79b9, (i * 131 + j) as u32] {
                        let held = check_path(&sim, src, dst, hash);
                        let switches = if i / per_edge == j / per_edge {
                            1
                        } else if i / (per_edge * per_edge) == j / (per_edge * per_edge) {
                            3
                        } else {
                            5
                        };
                        // flow hashing settles every switch; scatter and ALB only the edge switch's port to a
                        // host of its own (their first switch to choose among several stops the slots)
                        let want = match sim.scheme.load_balancing {
                            LoadBalancing::FlowHash => switches,
                            _ => (switches == 1) as u32,
                        };
                        assert_eq!(held, want, "{preset} k = {k}: {i} -> {j}");
                    }
                }
            }
        }
    }
}

/// What a run did: flow starts and ends, traversals, drops, detours, pauses, and each port's bytes sent.
fn outcome(s: &Sim) -> (Vec<u64>, Vec<u64>, u64, u64, u64, u64, Vec<u64>) {
    let (f, c) = (&s.rec.flows, &s.rec.counters);
    let ports = (0..s.fab.ports.len()).map(|p| s.fab.tx_count[p].bytes).collect();
    (f.start_ps.clone(), f.end_ps.clone(), c.link_traversals, c.drops.iter().sum(), c.detours, c.pfc_pause_frames, ports)
}

/// A walk along the routes reads the links' state only once one is down (`Fabric::links_down`): a link
/// taken down ends the settled hops before it, the slots before it as they were.
#[test]
fn a_link_taken_down_ends_the_settled_hops_before_it() {
    let json = r#"{"run": {"duration": "1us"}, "topology": {"kind": "fattree", "k": 4}, "scheme": {"preset": "fh"},
        "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]}"#;
    let mut sim = Sim::from_json(json).unwrap();
    let (src, dst) = (sim.fab.hosts[0], *sim.fab.hosts.last().unwrap());
    let slot = |hops: u32, i: u32| (hops >> (HOP_BITS * i)) & ((1 << HOP_BITS) - 1);
    let all = sim.fab.settled_hops(src, dst, 7, LoadBalancing::FlowHash);
    // across pods: edge, aggregation, core, aggregation, edge, every choice settled by the hash or the route
    assert!((0..5).all(|i| slot(all, i) != 0), "{all:#x}");
    assert_eq!(sim.fab.links_down, 0);
    // the destination's own link goes down: the last switch's slot is empty, the four before it held as before
    let link = sim.fab.wiring.port_link[sim.fab.nodes[dst as usize].port_base as usize];
    sim.link_down(link);
    assert_eq!(sim.fab.links_down, 1);
    let cut = sim.fab.settled_hops(src, dst, 7, LoadBalancing::FlowHash);
    assert_eq!(slot(cut, 4), 0, "{cut:#x}");
    assert_eq!(cut, all & ((1 << (4 * HOP_BITS)) - 1));
}

/// A transfer's two walks side by side (`Fabric::settled_hops_pair`) find what each finds alone, for
/// every pair of walks on a k = 4 fat tree under each kind of choice (flow hashing settles the whole
/// path, scatter and ALB stop at their first choice, so the two walks end at different switches), and
/// with a link down (one walk cut short, the other not); a source out of range finds nothing, as alone.
#[test]
fn two_walks_side_by_side_find_what_each_finds_alone() {
    for preset in ["fh", "lps", "detail"] {
        let json = format!(
            r#"{{"run": {{"duration": "1us"}}, "topology": {{"kind": "fattree", "k": 4}}, "scheme": {{"preset": "{preset}"}},
                "workload": [{{"kind": "flows", "rows": [{{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}}]}}]}}"#
        );
        let mut sim = Sim::from_json(&json).unwrap();
        let lb = sim.scheme.load_balancing;
        let hosts = sim.fab.hosts.clone();
        for down in [false, true] {
            if down {
                let link = sim.fab.wiring.port_link[sim.fab.nodes[*hosts.last().unwrap() as usize].port_base as usize];
                sim.link_down(link);
            }
            let fab = &sim.fab;
            let (mut differ, mut lengths) = (0, std::collections::BTreeSet::new());
            for (i, &a) in hosts.iter().enumerate() {
                for (j, &b) in hosts.iter().enumerate().filter(|&(j, _)| j != i) {
                    let (ha, hb) = ((i * 31 + j) as u32, (j * 17 + i) as u32 ^ 0x5bd1_e995);
                    let alone = (fab.settled_hops(a, b, ha, lb), fab.settled_hops(b, a, hb, lb));
                    assert_eq!(fab.settled_hops_pair((a, b, ha), (b, a, hb), lb), alone, "{preset} {i} <-> {j}, link down {down}");
                    // and with a third host's walk beside it, of another length
                    let c = hosts[(j + 5) % hosts.len()];
                    let third = fab.settled_hops(c, a, 11, lb);
                    assert_eq!(fab.settled_hops_pair((a, b, ha), (c, a, 11), lb), (alone.0, third), "{preset} {i} {j}");
                    let held = |h: u32| (0..crate::packet::HOPS_HELD).filter(|&s| (h >> (HOP_BITS * s)) & ((1 << HOP_BITS) - 1) != 0).count();
                    differ += (held(alone.0) != held(alone.1)) as u32;
                    lengths.insert(held(alone.0));
                }
            }
            // the cases the interleaving has to get right were there: walks of several lengths, and the two of a
            // pair ending at different switches (a link down cuts one way only)
            assert!(lengths.len() >= 2, "{preset}: {lengths:?}");
            if down {
                assert!(differ > 0, "{preset}");
            }
        }
        let out = sim.fab.hosts.len() as u32 + sim.fab.nodes.len() as u32;
        assert_eq!(sim.fab.settled_hops_pair((out, 0, 1), (hosts[0], hosts[1], 1), lb), (0, sim.fab.settled_hops(hosts[0], hosts[1], 1, lb)));
    }
}

#[test]
fn packets_carrying_their_hops_run_as_packets_that_ask_at_every_switch() {
    let cases = [("fh", "128KB"), ("fh", "24KB"), ("dibs", "24KB"), ("lps", "24KB"), ("detail", "24KB"), ("dctcp", "64KB")];
    for (preset, buffer) in cases {
        let json = scenario(preset, buffer, serde_json::Value::Null);
        let mut carried = Sim::from_json(&json).unwrap();
        let mut asked = Sim::from_json(&json).unwrap();
        asked.hops_on = false;
        carried.run();
        asked.run();
        let o = outcome(&asked);
        assert!(asked.rec.counters.flows_completed > 20, "{preset}");
        assert_eq!(outcome(&carried), o, "{preset} {buffer}");
        // the small buffers drop (FH), detour (DIBS) or pause (DeTail)
        match (preset, buffer) {
            ("fh", "24KB") => assert!(o.3 > 10, "{preset}: {} drops", o.3),
            ("dibs", _) => assert!(o.4 > 10, "{preset}: {} detours", o.4),
            ("detail", _) => assert!(o.5 > 10, "{preset}: {} pauses", o.5),
            _ => {}
        }
        // the carried run's transfers found their hops (under flow hashing, every one a path's worth)
        let found: Vec<u32> = (0..carried.hosts.transfers.len() as u32).map(|t| carried.hosts.transfers.get(t).hops_fwd).collect();
        assert!(found.iter().any(|&h| h != 0 && h != crate::sim::hosts::HOPS_UNSET), "{preset}: no transfer found its hops");
    }
}

#[test]
fn a_run_whose_links_go_down_asks_at_every_switch() {
    for (kind, on) in [("link_down", false), ("degrade", true)] {
        let mut fault = serde_json::json!({"kind": kind, "link": "agg_core#0", "at": "100us"});
        if kind == "degrade" {
            fault["rate"] = "100Mbps".into();
        }
        let mut sim = Sim::from_json(&scenario("fh", "128KB", serde_json::json!({"fault": [fault]}))).unwrap();
        assert_eq!(sim.hops_on, on, "{kind}");
        sim.run();
        let kept = (0..sim.hosts.transfers.len() as u32).map(|t| sim.hosts.transfers.get(t).hops_fwd).any(|h| h != 0 && h != crate::sim::hosts::HOPS_UNSET);
        assert_eq!(kept, on, "{kind}");
    }
}

#[test]
fn the_largest_frames_the_knobs_allow_fit_the_packet_s_sixteen_bits() {
    // the largest MSS (9,000 B) with the most framing (1,000 B): 10,040 B on the wire, in `Packet::wire`
    let json = r#"{"run": {"duration": "1ms", "drain": "50ms"}, "topology": {"kind": "fattree", "k": 4, "mtu": "9040B", "frame_overhead": "1000B", "min_frame": "1500B"},
        "scheme": {"preset": "fh", "tcp": {"mss": 9000}},
        "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 15, "size_bytes": 90000, "start_s": 0.0}]}]}"#;
    let mut sim = Sim::from_json(json).unwrap();
    sim.run();
    assert_eq!(sim.rec.counters.flows_completed, 1);
    assert_eq!(sim.fab.framing.wire(9000 + crate::packet::HEADERS), 10_040);
    assert_eq!(crate::packet::wire16(10_040), 10_040);
}
