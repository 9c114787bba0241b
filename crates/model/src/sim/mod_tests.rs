//! Unit tests of `mod` (a file of their own to keep the module short).
use super::*;

/// Dropping cancelled timers (`compact_timers`) removes only events that would have done nothing: the
/// flow table and every counter are those of a run that never compacts (a cancelled timer that is popped
/// is not counted as an event either).
#[test]
fn compacting_the_timer_lane_changes_nothing() {
    // FH: a 10 ms RTO, so in 40 ms the timers of finished retrievals would have fired (and done nothing)
    let json = r#"{"run": {"duration": "40ms", "seed": 5}, "topology": {"kind": "fattree", "k": 4, "buffer": "32KB"},
        "scheme": {"preset": "fh"},
        "workload": [{"kind": "retrieval", "rate": 3000, "sizes": ["2KB", "8KB", "32KB"]},
                     {"kind": "background", "size": "256KB", "priority": 1}]}"#;
    let run = |compact_at: usize| {
        let mut sim = Sim::from_json(json).unwrap();
        sim.clock.timer_compact.at = compact_at;
        sim.clock.timer_compact.min = compact_at;
        sim.run();
        sim
    };
    let (never, often) = (run(usize::MAX), run(8));
    let f = |s: &Sim| (s.rec.flows.start_ps.clone(), s.rec.flows.end_ps.clone(), s.rec.flows.timeouts.clone(), s.rec.flows.retransmits.clone());
    assert!(never.rec.counters.flows_completed > 500, "{}", never.rec.counters.flows_completed);
    assert_eq!(f(&never), f(&often));
    assert_eq!(never.rec.counters.link_traversals, often.rec.counters.link_traversals);
    assert_eq!(never.rec.counters.timeouts, often.rec.counters.timeouts);
    assert!(never.rec.counters.timeouts > 0, "the run exercises live retransmission timers");
    assert_eq!(never.now, often.now);
    assert_eq!(often.rec.counters.events, never.rec.counters.events, "the event count does not depend on compaction");
    // (and compaction does drop cancelled timers: halfway through, the lane of the run that never compacts
    // shrinks when compacted)
    let mut half = Sim::from_json(json).unwrap();
    half.clock.timer_compact.at = usize::MAX;
    half.run_until(Time::from_ms(20));
    let before = half.q.timers_len();
    half.compact_timers();
    assert!(half.q.timers_len() < before, "{} -> {}", before, half.q.timers_len());
}

/// `Port::waiting` mirrors "waiters not empty" through a congested run (ingresses blocked on full egress
/// queues and busy crossbar sides), stepped a microsecond at a time, and so do the fabric's bits of it where
/// it keeps them (`Fabric::far_waiting`, on here in a fabric that would not keep them), with the same
/// results; and `tx_count` adds up to what the transmitters sent.
#[test]
fn the_waiting_flag_mirrors_the_waiters_and_tx_counts_add_up() {
    let json = r#"{"run": {"duration": "2ms", "seed": 3}, "topology": {"kind": "fattree", "k": 4, "buffer": "16KB"},
        "scheme": {"preset": "fh"},
        "workload": [{"kind": "retrieval", "rate": 20000, "sizes": ["32KB"]},
                     {"kind": "background", "size": "256KB", "priority": 1}]}"#;
    let mut ends = Vec::new();
    for far in [false, true] {
        let mut sim = Sim::from_json(json).unwrap();
        assert!(!sim.clock.deep_prefetch, "a small fabric keeps no bits of its own accord");
        sim.fab.far_waiting(far);
        let (mut seen_waiting, mut us) = (0u64, 0u64);
        while !sim.run_until(Time::from_us(us)) {
            for (i, p) in sim.fab.ports.iter().enumerate() {
                assert_eq!(p.waiting, !p.waiters.is_empty(), "at {us} us");
                assert_eq!(sim.fab.waiting_far(i as u32), p.waiting, "at {us} us (bits kept: {far})");
                seen_waiting += p.waiting as u64;
            }
            us += 1;
        }
        assert!(seen_waiting > 100, "the run blocks ingresses on egresses ({seen_waiting} port-microseconds)");
        let sent: u64 = sim.fab.tx_count.iter().map(|c| c.packets).sum();
        assert_eq!(sent, sim.rec.counters.link_traversals);
        let stats = sim.port_stats();
        assert!(stats.iter().zip(&sim.fab.tx_count).all(|(s, c)| s.tx_bytes == c.bytes && s.tx_packets == c.packets));
        ends.push((sim.rec.flows.end_ps.clone(), sim.rec.counters.events));
    }
    assert_eq!(ends[0], ends[1], "the bits change no result");
}

/// Utilisation counts the time a link spent sending within the run: a frame still on the wire when the
/// run ends counts up to its end (found by the randomised invariant test: a bottleneck busy from the
/// start reported 1.000094 when whole frames were counted at their start).
#[test]
fn utilisation_never_exceeds_one_with_a_frame_on_the_wire_at_the_end() {
    let json = r#"{"run": {"duration": "1ms", "drain": "100ms", "seed": 0},
        "topology": {"kind": "dumbbell", "left": 1, "right": 2, "bottleneck_rate": "100Mbps", "buffer": "128KB"},
        "scheme": {"preset": "fh", "tcp": {"handshake": false, "initial_window": 1}},
        "workload": [{"kind": "retrieval", "rate": 10000, "sizes": ["1KB", "1B", "300KB", "1B"]}]}"#;
    let mut sim = Sim::from_json(json).unwrap();
    sim.run();
    let stats = sim.port_stats();
    let top = stats.iter().map(|p| p.utilisation).fold(0.0, f64::max);
    assert!(top <= 1.0, "utilisation {top}");
    assert!(top > 0.99, "the bottleneck was busy nearly all run: {top}");
    assert!(sim.fab.ports.iter().any(|p| p.tx_busy_until > sim.now), "a frame is on the wire at the end");
}

/// DIBS at a full ingress buffer: the detoured packet crosses the crossbar like any transfer (it holds the
/// detour egress's crossbar side for its crossing time, after the transfers into it under way, and joins
/// that egress queue only when it has crossed, `Ev::DetourDone`). Once, the forwarding engine wrote it
/// straight into the egress queue.
#[test]
fn a_detour_at_a_full_ingress_crosses_the_crossbar() {
    use crate::packet::Packet;
    use crate::transport::tcp::SegKind;
    let json = r#"{"run": {"duration": "1ms"}, "topology": {"kind": "fattree", "k": 4, "buffer": "16KB"},
        "scheme": {"preset": "dibs"},
        "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0009}]}]}"#;
    let mut sim = Sim::from_json(json).unwrap();
    sim.run_until(Time::from_us(1));
    let node = (0..sim.fab.nodes.len()).find(|&n| sim.fab.nodes[n].is_switch).unwrap() as u32;
    let (base, n) = (sim.fab.nodes[node as usize].port_base, sim.fab.nodes[node as usize].nports);
    let ports: Vec<u32> = (base..base + n).collect();
    let to_host = |s: &Sim, p: u32| !s.fab.nodes[s.fab.ports[p as usize].peer_node as usize].is_switch;
    let inp = *ports.iter().find(|&&p| to_host(&sim, p)).unwrap();
    let uplinks: Vec<u32> = ports.iter().copied().filter(|&p| !to_host(&sim, p)).collect();
    assert_eq!(uplinks.len(), 2);
    let far = *sim.fab.hosts.last().unwrap();
    let src = sim.fab.ports[inp as usize].peer_node;
    let wire = sim.fab.framing.wire(1500);
    let packet = Packet {
        qnext: crate::mechanisms::queue::NIL,
        out_port: 0,
        wire: crate::packet::wire16(wire),
        dst: far,
        hash: 7,
        hops: 0,
        prio: 0,
        ecn: 0,
        detours: 0,
        kind: SegKind::Data,
        tr: 0,
        tr_uid: u32::MAX,
        src,
        len: 1460,
        sport: 1,
        dport: 80,
        flags: 0,
        retx: false,
        in_lp: 0,
        seq: 0,
        ts: 0,
        ts_echo: 0,
        rank: 0,
    };
    // fill the ingress the packets arrive at
    while sim.fab.ports[inp as usize].ing.has_room(wire as u64) {
        let pid = sim.pkts.alloc(packet);
        sim.fab.ports[inp as usize].ing.push(0, pid, wire as u64, &mut sim.pkts);
    }
    let now = sim.now;
    let cross = sim.fab.ports[uplinks[0] as usize].xbar_time(wire as u64);
    // three arrivals at once: each detoured to an uplink, transfers into one egress one after another
    let mut ends = std::collections::HashMap::<u32, Vec<Time>>::new();
    for k in 0..3 {
        let pid = sim.pkts.alloc(packet);
        sim.switch_arrive(inp, pid);
        assert_eq!(sim.rec.counters.detours, k + 1);
        let d = sim.pkts.get(pid).out_port;
        assert!(uplinks.contains(&d));
        ends.entry(d).or_default().push(sim.fab.ports[d as usize].xbar.out_free_at);
    }
    for (&d, e) in &ends {
        // the egress side is held for one crossing per detour, back to back
        let want: Vec<Time> = (1..=e.len() as u64).map(|i| now + Time(cross.0 * i)).collect();
        assert_eq!(e, &want, "egress {d}");
        let p = &sim.fab.ports[d as usize];
        assert_eq!(p.eg.total, e.len() as u64 * wire as u64, "their bytes are reserved");
        assert_eq!(p.eg.nonempty, 0, "but none has joined the queue yet");
        assert_eq!(sim.fab.tx_count[d as usize].packets, 0);
    }
    assert_eq!(sim.rec.counters.dropped(), 0);
    // when a packet has crossed, it goes out of its egress
    sim.run_until(now + cross);
    let sent: u64 = ends.keys().map(|&d| sim.fab.tx_count[d as usize].packets).sum();
    assert_eq!(sent, ends.len() as u64, "the first detour into each egress is on its way");
}

/// The prefetch's guess of an arrival's output port (`Sim::settled_out`) is the port the route takes:
/// for every arrival at a switch pending in the current bucket of a k = 4 fat tree, stopped every
/// microsecond. Under flow hashing every switch arrival is guessed; under scatter and ALB only those with
/// one acceptable port or to the edge switch's host (the rest draw or read queues), which the route
/// then takes without a draw.
#[test]
fn the_prefetched_output_port_is_the_one_the_route_takes() {
    for (preset, all) in [("fh", true), ("lps", false), ("detail", false)] {
        let json = format!(
            r#"{{"run": {{"duration": "300us", "seed": 4}}, "topology": {{"kind": "fattree", "k": 4, "buffer": "64KB"}},
            "scheme": {{"preset": "{preset}"}},
            "workload": [{{"kind": "retrieval", "rate": 40000, "sizes": ["16KB"]}},
                         {{"kind": "background", "size": "128KB", "priority": 1}}]}}"#
        );
        let mut sim = Sim::from_json(&json).unwrap();
        let (mut guessed, mut not, mut us) = (0u64, 0u64, 0u64);
        while !sim.run_until(Time::from_us(us)) {
            for k in 0..32 {
                let Some(&ev) = (if k == 0 { sim.q.peek() } else { sim.q.peek_ahead(k) }) else { break };
                let Ev::Arrive { port, pkt } = ev else { continue };
                let node = sim.fab.ports[port as usize].node;
                if !sim.fab.nodes[node as usize].is_switch {
                    assert_eq!(sim.settled_out(ev), None);
                    continue;
                }
                match sim.settled_out(ev) {
                    // (a settled choice draws nothing, so asking the route changes no state)
                    Some(out) => {
                        assert_eq!(sim.route(node, pkt), Some(out), "{preset} at {us} us");
                        guessed += 1;
                    }
                    None => not += 1,
                }
            }
            us += 1;
        }
        assert!(guessed > 200, "{preset}: {guessed} guessed");
        if all {
            assert_eq!(not, 0, "{preset}: every switch arrival is guessed");
        } else {
            assert!(not > 50, "{preset}: {not} multi-path arrivals left to the route");
        }
    }
}

#[test]
fn the_prefetch_stages_start_where_the_ports_outgrow_the_l2() {
    use crate::sim::prefetch::{deep_prefetch_ports, L2_UNKNOWN};
    // one port per 256 bytes of the L2: 2,048 on a 512 KB L2 (also where the kernel does not say), 8,192 on 2 MB
    assert_eq!(deep_prefetch_ports(None), deep_prefetch_ports(Some(L2_UNKNOWN)));
    assert_eq!(deep_prefetch_ports(Some(512 << 10)), 2048);
    assert_eq!(deep_prefetch_ports(Some(2 << 20)), 8192);
    // k = 8 (768 ports) is below it on either, k = 32 (49,152) above; k = 16 (6,144) only on the smaller L2
    // a k-ary fat tree's ports: its k^3 / 4 hosts' and its 5 k^2 / 4 switches' k each
    let ports = |k: usize| k * k * k / 4 + 5 * k * k / 4 * k;
    assert_eq!((ports(8), ports(16), ports(32)), (768, 6144, 49152));
    for (l2, k16) in [(512u64 << 10, true), (2 << 20, false)] {
        let at = deep_prefetch_ports(Some(l2));
        assert!(ports(8) < at && ports(32) >= at);
        assert_eq!(ports(16) >= at, k16, "L2 {l2}");
    }
    assert_eq!(deep_prefetch_ports(Some(u64::MAX)), (u64::MAX / 256) as usize);
    // the first stage from one port per 2,048 bytes: 256 ports on a 512 KB L2 (every fabric measured there
    // prefetches), 1,024 on 2 MB (paper/steady's 448 and k = 8's 768 do not, k = 12's 2,592 does)
    use crate::sim::prefetch::prefetch_ports;
    assert_eq!(prefetch_ports(None), prefetch_ports(Some(L2_UNKNOWN)));
    assert_eq!((prefetch_ports(Some(512 << 10)), prefetch_ports(Some(2 << 20))), (256, 1024));
    let k12 = ports(12);
    assert_eq!(k12, 2592);
    // paper/steady's fabric (DeTail's 128 hosts) has 448 ports
    let steady = Sim::from_json(
        r#"{"run": {"duration": "1us"}, "topology": {"kind": "detail128"}, "scheme": {"preset": "fh"},
            "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]}"#,
    )
    .unwrap();
    let steady = steady.fab.ports.len();
    assert_eq!(steady, 448);
    assert!(steady >= prefetch_ports(Some(512 << 10)) && steady < prefetch_ports(Some(2 << 20)));
    assert!(ports(8) >= prefetch_ports(Some(512 << 10)) && ports(8) < prefetch_ports(Some(2 << 20)) && k12 >= prefetch_ports(Some(2 << 20)));
    for l2 in [64u64 << 10, 512 << 10, 2 << 20, 32 << 20, u64::MAX] {
        assert!(prefetch_ports(Some(l2)) <= deep_prefetch_ports(Some(l2)), "the deep stages only where the first runs");
    }
    // a simulation takes the rules with this machine's L2 (k = 16 sits between a 512 KB and a 2 MB L2's
    // deep thresholds and k = 8 between their first ones, so a fixed count fails here on one of the two;
    // k = 4 is below both)
    let at = deep_prefetch_ports(detailsim_engine::probe::l2_bytes());
    let first = prefetch_ports(detailsim_engine::probe::l2_bytes());
    for k in [4usize, 8, 16] {
        let json = format!(
            r#"{{"run": {{"duration": "1us"}}, "topology": {{"kind": "fattree", "k": {k}}}, "scheme": {{"preset": "fh"}},
               "workload": [{{"kind": "flows", "rows": [{{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}}]}}]}}"#
        );
        let sim = Sim::from_json(&json).unwrap();
        assert_eq!(sim.fab.ports.len(), ports(k));
        assert_eq!(sim.clock.deep_prefetch, ports(k) >= at, "k = {k}, threshold {at}");
        assert_eq!(sim.clock.prefetch, ports(k) >= first, "k = {k}, first stage's threshold {first}");
    }
}

#[test]
fn the_path_walk_takes_the_first_acceptable_port_of_every_switch() {
    // `Fabric::path_ports` (and with it `one_way`, `ideal_transfer`) reads the (switch, group) port lists:
    // the same path as the rows of bits give, hop by hop, healthy and with an uplink down
    let reference = |sim: &Sim, src: u32, dst: u32| -> Vec<u32> {
        let (fab, r) = (&sim.fab, &sim.fab.routes);
        let mut port = fab.wiring.port_base[src as usize];
        let mut out = vec![];
        loop {
            out.push(port);
            let node = fab.wiring.peer_node[port as usize];
            if !fab.nodes[node as usize].is_switch {
                return if node == dst { out } else { vec![] };
            }
            port = if r.edge[dst as usize] == node {
                r.edge_port[dst as usize]
            } else {
                let row = r.row(node, dst);
                let Some((i, w)) = row.iter().enumerate().find(|(_, w)| **w != 0) else { return vec![] };
                fab.wiring.port_base[node as usize] + i as u32 * 64 + w.trailing_zeros()
            };
        }
    };
    for (topo, fault) in [(r#"{"kind": "fattree", "k": 4}"#, false), (r#"{"kind": "detail128"}"#, false), (r#"{"kind": "fattree", "k": 4}"#, true)] {
        let faults = if fault { r#", "fault": [{"kind": "link_down", "link": "agg_core#0", "at": "1us"}]"# } else { "" };
        let json = format!(
            r#"{{"run": {{"duration": "5us"}}, "topology": {topo}, "scheme": {{"preset": "fh"}},
               "workload": [{{"kind": "flows", "rows": [{{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}}]}}]{faults}}}"#
        );
        let mut sim = Sim::from_json(&json).unwrap();
        if fault {
            sim.run_until(detailsim_engine::Time::from_us(2));
            let down = sim.fab.link_up.iter().filter(|&&u| !u).count();
            assert_eq!(down, 1, "one link down");
        }
        let hosts = sim.fab.hosts.clone();
        let (mut path, mut walked) = (vec![], 0);
        for &a in &hosts {
            for &b in hosts.iter().filter(|&&b| b != a) {
                sim.fab.path_ports(a, b, &mut path);
                assert_eq!(path, reference(&sim, a, b), "{topo} fault {fault}: {a} -> {b}");
                walked += !path.is_empty() as usize;
            }
        }
        assert_eq!(walked, hosts.len() * (hosts.len() - 1), "{topo}: every pair has a path");
    }
}

/// `Fabric::path_hops` takes a path's length from the routes where every link has the same rate and delay:
/// `one_way` and `ideal_transfer` give what the walk through the route tables gives, for every pair of hosts,
/// healthy, with a link down and with one degraded (which leaves the current rates unequal), and uniform
/// fabrics take the short way.
#[test]
fn a_uniform_fabric_s_paths_are_its_walks() {
    let cases = [
        (r#"{"kind": "fattree", "k": 4}"#, "", true),
        (r#"{"kind": "detail128"}"#, "", true),
        (r#"{"kind": "single_switch", "hosts": 5}"#, "", true),
        (r#"{"kind": "dumbbell", "left": 3, "right": 2}"#, "", true),
        (r#"{"kind": "dumbbell", "left": 3, "right": 2, "bottleneck_rate": "100Mbps"}"#, "", false),
        (r#"{"kind": "leaf_spine", "leaves": 3, "spines": 2, "hosts_per_leaf": 2, "host_rate": "1Gbps", "uplink_rate": "10Gbps"}"#, "", false),
        (r#"{"kind": "fattree", "k": 4}"#, r#"{"kind": "link_down", "link": "agg_core#0", "at": "1us"}"#, true),
        (r#"{"kind": "fattree", "k": 4}"#, r#"{"kind": "degrade", "link": "tor_agg#0", "rate": "100Mbps", "at": "1us"}"#, true),
    ];
    for (topo, fault, uniform) in cases {
        let faults = if fault.is_empty() { String::new() } else { format!(r#", "fault": [{fault}]"#) };
        let json = format!(
            r#"{{"run": {{"duration": "5us"}}, "topology": {topo}, "scheme": {{"preset": "fh"}},
               "workload": [{{"kind": "flows", "rows": [{{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}}]}}]{faults}}}"#
        );
        let mut sim = Sim::from_json(&json).unwrap();
        assert_eq!(sim.fab.uniform.is_some(), uniform, "{topo}");
        if !fault.is_empty() {
            sim.run_until(detailsim_engine::Time::from_us(2));
            assert_eq!(sim.fab.degraded, fault.contains("degrade"), "{topo} {fault}");
        }
        let mut walked = sim.fab.clone();
        walked.uniform = None;
        let hosts = sim.fab.hosts.clone();
        for &a in &hosts {
            for &b in hosts.iter().filter(|&&b| b != a) {
                for bytes in [0u64, 1, 1460] {
                    assert_eq!(sim.fab.one_way(a, b, bytes), walked.one_way(a, b, bytes), "{topo} {fault}: one_way {a} -> {b}, {bytes} B");
                }
                for (size, multipath) in [(1u64, false), (1460, false), (1461, true), (100_000, false), (100_000, true)] {
                    let (x, y) = (sim.fab.ideal_transfer(a, b, 1460, size, multipath), walked.ideal_transfer(a, b, 1460, size, multipath));
                    assert!(x.is_some() && x == y, "{topo} {fault}: ideal {a} -> {b}, {size} B: {x:?} against {y:?}");
                }
            }
        }
    }
}

/// `Sim::schedule` carries every event through two words (`Ev::words`, `Ev::from_words`): each kind comes
/// back as it went, its fields at their widest and at zero, and the first word's low byte is the tag
/// `repr(u8)` stores.
#[test]
fn every_event_comes_back_from_its_two_words() {
    let mut evs = Vec::new();
    for (a, b) in [(0u32, 0u32), (u32::MAX, u32::MAX), (0x0102_0304, 0x0a0b_0c0d)] {
        evs.extend([
            Ev::Arrive { port: a, pkt: b },
            Ev::TxDone { port: a, pkt: b },
            Ev::XbarEnd { port: a },
            Ev::XbarDone { port: a, pkt: b },
            Ev::XbarOutFree { port: a },
            Ev::DetourDone { port: a, pkt: b },
            Ev::RtxTimer { tr: a, token: b },
            Ev::DelAckTimer { tr: a, token: b },
            Ev::Workload { w: a, i: b },
            Ev::ArrivalsEnd,
            Ev::PfcFrame { port: a, pause: b as u8, unpause: (b >> 8) as u8 },
            Ev::PfcFrame { port: b, pause: 0xff, unpause: 0 },
            Ev::PfcSweep,
            Ev::Fault { i: a },
            Ev::Window { close: a % 2 == 1 },
            Ev::Window { close: a % 2 == 0 },
            Ev::Sample,
            Ev::Fin { tr: a, uid: b },
            Ev::Respond { app: a, uid: b },
        ]);
    }
    let kinds: std::collections::HashSet<_> = evs.iter().map(std::mem::discriminant).collect();
    assert_eq!(kinds.len(), 17, "every kind of event");
    for ev in evs {
        let (w0, w1) = ev.words();
        // SAFETY: the words are `words`'
        assert_eq!(unsafe { Ev::from_words(w0, w1) }, ev, "{ev:?} through {w0:#x}, {w1:#x}");
        // SAFETY: `repr(u8)`: the tag is the event's first byte
        let tag = unsafe { *(&ev as *const Ev).cast::<u8>() };
        assert_eq!(w0 as u8, tag, "{ev:?}");
    }
}

/// A part of a run split in N holds about 1/N of the load, so where the load sets the wheel's bucket width
/// (buckets of about 16 events at full load) a part's buckets are N times wider, in N times fewer of them;
/// where the horizon sets it they stay. The split run's parts take that shape.
#[test]
fn a_part_s_wheel_is_shaped_for_its_share_of_the_load() {
    let json = r#"{"run": {"duration": "1ms", "seed": 1}, "topology": {"kind": "fattree", "k": 4, "link_rate": "1Gbps"},
        "scheme": {"preset": "fh"}, "workload": [{"kind": "background", "size": "64KB"}]}"#;
    let sim = Sim::from_json(json).unwrap();
    let frame = sim.fab.framing.full_frame() as u64;
    let shape = |n| wheel_shape(&sim.fab.ports, frame, n);
    let (one, two, four) = (shape(1), shape(2), shape(4));
    assert_eq!(sim.clock.wheel, one, "a whole run's shape");
    // (the wheel keeps at least 64 buckets)
    assert_eq!((two.0, two.1), (one.0 + 1, (one.1 - 1).max(6)), "{one:?} -> {two:?}");
    assert_eq!((four.0, four.1), (one.0 + 2, (one.1 - 2).max(6)), "{one:?} -> {four:?}");
    // a 10 Gbps k = 8 fat tree's buckets are set by the horizon: two parts keep them
    let k8 = json.replace(r#""k": 4, "link_rate": "1Gbps""#, r#""k": 8, "link_rate": "10Gbps""#);
    let sim8 = Sim::from_json(&k8).unwrap();
    let frame8 = sim8.fab.framing.full_frame() as u64;
    assert_eq!(wheel_shape(&sim8.fab.ports, frame8, 2), sim8.clock.wheel);
    assert_ne!(wheel_shape(&sim8.fab.ports, frame8, 4), sim8.clock.wheel, "four parts' share is the load's to set");
    // a split run's first part takes its share's shape (and the others take the first's)
    let sc = crate::config::parse_scenario(&json.replace(r#""seed": 1"#, r#""seed": 1, "event_order": "node""#)).unwrap();
    let split = parts::split(&sc, 2, parts::Drive::Turns).unwrap();
    assert_eq!(split.clock.wheel, two);
}
