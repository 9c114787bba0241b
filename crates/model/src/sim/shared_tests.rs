//! Shared-buffer switches (`[topology.shared_buffer]`, `mechanisms::mmu`) in whole runs: lossless under PFC,
//! lossy queues held at the dynamic threshold, every scheme preset runnable, the MMU's books balanced.
use super::*;
use crate::stats::DropCause;

/// `n` senders, 200 KB each to host 0 of one 10 Gbps switch at t = 0, on a shared buffer `pool`.
fn incast(n: u32, pool: &str, scheme: &str, extra: &str) -> Sim {
    let rows: Vec<String> = (1..=n).map(|i| format!(r#"{{"src": {i}, "dst": 0, "size_bytes": 200000, "start_s": 0.0}}"#)).collect();
    Sim::from_json(&format!(
        r#"{{"run": {{"duration": "20ms"}}, "topology": {{"kind": "single_switch", "hosts": {}, "link_rate": "10Gbps",
             "shared_buffer": {{"size": "{pool}"{extra}}}}}, "scheme": {scheme}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
        n + 1,
        rows.join(",")
    ))
    .unwrap()
}

/// The egress port of the switch towards host node `h`.
fn port_to(sim: &Sim, h: &str) -> u32 {
    (0..sim.fab.ports.len() as u32)
        .find(|&p| sim.fab.nodes[sim.fab.ports[p as usize].node as usize].is_switch && sim.node_name(sim.fab.ports[p as usize].peer_node) == h)
        .unwrap()
}

#[test]
fn a_shared_buffer_incast_under_pfc_pauses_and_loses_nothing() {
    // DeTail with priority 0 lossless: 16 x 200 KB into one port through a 600 KB pool
    let mut sim = incast(16, "600KB", r#"{"preset": "detail", "pfc": {"priorities": [0]}}"#, "");
    sim.run();
    let c = &sim.rec.counters;
    assert_eq!((c.flows_completed, c.dropped(), c.lossless_drops), (16, 0, 0));
    let pauses: u64 = sim.fab.pfc.iter().map(|p| p.ingress.pauses_sent[0]).sum();
    assert!(pauses >= 16, "every sender is paused at least once ({pauses} PAUSEs)");
    let m = sim.fab.mmu.iter().flatten().next().unwrap();
    // the pool was used well beyond one port's share, never past its size, and is empty at the end
    assert!(m.peak > 300_000 && m.peak <= 600 * 1024, "peak {} B", m.peak);
    assert_eq!((m.in_use, m.shared_used), (0, 0));
    sim.check_shared().unwrap();
    // and the same incast on 8 lossless priorities needs a pool for eight headrooms per port: refused, naming
    // the field; by default only the priority the flows use is lossless, and the pool holds its headroom
    let rows = r#"[{"src": 1, "dst": 0, "size_bytes": 1000, "start_s": 0.0}]"#;
    let build = |pfc: &str| {
        Sim::from_json(&format!(
            r#"{{"topology": {{"kind": "single_switch", "hosts": 17, "link_rate": "10Gbps", "shared_buffer": {{"size": "600KB"}}}},
                 "scheme": {{"preset": "detail"{pfc}}}, "workload": [{{"kind": "flows", "rows": {rows}}}]}}"#
        ))
    };
    let e = build(r#", "pfc": {"priorities": [0, 1, 2, 3, 4, 5, 6, 7]}"#).err().expect("refused");
    assert!(e.field == "topology.shared_buffer.size" && e.msg.contains("leave no shared pool"), "{e}");
    assert_eq!(build("").unwrap().scheme.pfc.priorities, 0b1);
}

#[test]
fn lossy_queues_stop_at_alpha_times_the_free_pool() {
    for (alpha, share) in [(1.0, 0.5), (2.0, 2.0 / 3.0)] {
        // TCP (no PFC, no ECN): the incast's port may hold up to alpha x free, free = pool - what it holds
        let mut sim = incast(16, "300KB", r#"{"preset": "tcp"}"#, &format!(r#", "alpha": {alpha}"#));
        let hot = port_to(&sim, "h0");
        let (mut most, mut us) = (0u64, 0u64);
        while !sim.run_until(Time::from_us(us)) {
            most = most.max(sim.fab.ports[hot as usize].eg.total);
            sim.check_shared().unwrap();
            us += 1;
        }
        let pool = 300.0 * 1024.0;
        // an arrival of s bytes enters while q + s <= alpha (pool - q - other queues), so after it the queue
        // holds q' = q + s <= alpha (pool + s) / (1 + alpha): share x (pool + a frame)
        assert!(most as f64 <= share * (pool + 1530.0), "alpha {alpha}: {most} B queued");
        assert!(most as f64 > share * pool - 3.0 * 1530.0, "alpha {alpha}: the threshold is reached ({most} B)");
        assert!(sim.rec.counters.drops[DropCause::IngressBuffer as usize] > 0 && sim.rec.counters.flows_completed == 16);
    }
}

#[test]
fn every_scheme_preset_runs_on_shared_buffers_with_its_books_balanced() {
    for p in crate::PRESETS {
        let pfc = matches!(p.name, "lps" | "detail" | "pfc_only" | "detail_pias" | "dcqcn" | "hpcc");
        let json = format!(
            r#"{{"run": {{"duration": "3ms", "drain": "50ms", "seed": 7}}, "topology": {{"kind": "fattree", "k": 4, "shared_buffer": {{"size": "{}"}}}},
                "scheme": {{"preset": "{}"{}}},
                "workload": [{{"kind": "retrieval", "rate": 4000, "sizes": ["2KB", "32KB"]}}, {{"kind": "background", "size": "256KB", "priority": 1}}]}}"#,
            if pfc { "1MB" } else { "128KB" },
            p.name,
            if pfc { r#", "pfc": {"priorities": [0, 1]}"# } else { "" }
        );
        let mut sim = Sim::from_json(&json).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        sim.run();
        sim.check_conservation().unwrap();
        sim.check_shared().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(sim.rec.counters.flows_completed > 50, "{}: {} flows done", p.name, sim.rec.counters.flows_completed);
        if pfc {
            assert_eq!(sim.rec.counters.lossless_drops, 0, "{}", p.name);
        }
        // every byte charged was released with its packet
        let in_use: u64 = sim.fab.mmu.iter().flatten().map(|m| m.in_use).sum();
        let queued: u64 = sim.fab.ports.iter().enumerate().filter(|(_, pt)| sim.fab.nodes[pt.node as usize].is_switch).map(|(_, pt)| pt.eg.total).sum();
        assert_eq!(in_use, queued, "{}", p.name);
    }
}

#[test]
fn a_queue_limit_is_drop_tail_on_a_shared_buffer_and_refused_under_pfc() {
    // a large pool, each egress queue capped at 20 full frames: an output-queued drop-tail switch
    let mut sim = incast(8, "16MB", r#"{"preset": "tcp", "queue_limit": "30600B"}"#, "");
    let hot = port_to(&sim, "h0");
    let (mut most, mut us) = (0u64, 0u64);
    while !sim.run_until(Time::from_us(us)) {
        most = most.max(sim.fab.ports[hot as usize].eg.total);
        us += 1;
    }
    assert!(most <= 30_600 && most > 30_600 - 3060, "{most} B queued");
    assert!(sim.rec.counters.drops[DropCause::IngressBuffer as usize] > 0 && sim.rec.counters.flows_completed == 8);
    sim.check_shared().unwrap();
    let e = Sim::from_json(
        r#"{"topology": {"kind": "single_switch", "hosts": 3, "shared_buffer": {"size": "4MB"}},
            "scheme": {"preset": "detail", "queue_limit": "64KB"}, "workload": [{"kind": "flows", "rows": [{"src": 1, "dst": 0, "size_bytes": 1000, "start_s": 0.0}]}]}"#,
    )
    .err()
    .expect("refused");
    assert!(e.field == "scheme.queue_limit" && e.msg.contains("lossless"), "{e}");
}
