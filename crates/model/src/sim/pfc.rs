//! PFC in the simulator: drives the per-port components of `mechanisms::pfc` (thresholds derived from
//! each link, PAUSE frames delivered after the stop delay), the watchdog and PFC-deadlock detection.
//!
//! ```text
//!   upstream egress U ══ link ══► downstream ingress D (switch)
//!        ▲                              │ PfcIngress::on_occupancy after every change of D's bytes
//!        └──── Ev::PfcFrame after the stop delay ──► PfcEgress::on_frame; the transmitter's pause mask
//! ```
//! The upstream stops *starting* frames of a paused priority; a frame on the wire finishes.
//!
//! The watchdog and the deadlock check run in a periodic sweep (every `deadlock_check`, at most a quarter
//! of `watchdog_timeout`) that does nothing while no port is paused.
//!
//! Robustness (the paper's Section 7): a priority paused longer than `watchdog_timeout` is reported; a
//! neighbour that keeps sending a paused priority after the reaction window is re-sent PAUSE and, after
//! `ignore_limit` such strikes, reported; with `watchdog_action = "shutdown"` the link is shut down and
//! routing excludes it. A periodic check looks for a cycle of egress ports each paused by the next (a
//! PFC deadlock) and reports the ports when the same cycle persists across two checks.

use crate::config::{ConfigError, WatchdogAction};
use crate::fabric::switch::Switch as _;
use crate::mechanisms::pfc::{PfcFrame, Thresholds};
use crate::sim::{Ev, Sim};
use detailsim_engine::{Rate, Time};
use serde::Serialize;

/// A watchdog or deadlock report.
#[derive(Debug, Clone, Serialize)]
pub struct PfcEvent {
    pub time_s: f64,
    /// `paused_too_long`, `ignores_pause` or `deadlock`.
    pub kind: &'static str,
    /// The link as "upstream->downstream" node names (for a deadlock: every link of the cycle).
    pub ports: Vec<String>,
    pub priority: Option<u8>,
    /// `report` or `shutdown`.
    pub action: &'static str,
    /// Where the report stands in the run (time in ps, 0 for the sweep's watchdog, 1 for its deadlock
    /// check, 2 for a packet's; the port): the order a split run's reports are joined in.
    #[serde(skip)]
    pub(crate) order: (u64, u8, u32),
}

#[derive(Debug, Clone, Default)]
pub struct DeadlockState {
    last: Vec<u32>,
    reported: Vec<Vec<u32>>,
}

impl Sim {
    /// Whether priority `prio` is lossless (PFC on, and the priority among `scheme.pfc.priorities`).
    #[inline]
    pub(crate) fn lossless_prio(&self, prio: u8) -> bool {
        self.pfc_on() && self.scheme.pfc.priorities & (1 << prio) != 0
    }

    /// PFC thresholds and delays of switch ingress `port` when its link runs at `rate`.
    pub(crate) fn pfc_derive(&self, port: u32, rate: Rate) -> Result<Thresholds, ConfigError> {
        self.fab.pfc_derive(&self.scheme.pfc, port, rate)
    }

    /// Send a PFC frame from switch ingress `port` now: its component records it, and it is put on its way
    /// to the peer's egress (effect after the stop delay). (Tests script frames with it.)
    #[cfg(test)]
    pub(crate) fn pfc_send(&mut self, port: u32, pause: u8, unpause: u8) {
        let f = self.fab.pfc[port as usize].ingress.send(self.now, PfcFrame { pause, unpause });
        self.pfc_emit(port, f);
    }

    /// Put frame `f`, already recorded by ingress `port`, on its way to the peer's egress.
    pub(crate) fn pfc_emit(&mut self, port: u32, f: PfcFrame) {
        let at = self.now + self.fab.pfc[port as usize].ingress.stop_delay;
        self.rec.counters.pfc_pause_frames += 1;
        self.rec.counters.pfc_pauses += f.pause.count_ones() as u64;
        let up = self.fab.ports[port as usize].peer;
        if self.rec.trace.is_some() {
            self.trace_pfc(port, f.pause, f.unpause);
        }
        if self.fold.alb && up & crate::fabric::REMOTE == 0 {
            self.fold.pfc_way.push((up, at));
        }
        self.schedule(at, Ev::PfcFrame { port: up, pause: f.pause, unpause: f.unpause });
    }

    /// A PFC frame takes effect at egress `port`.
    #[inline(never)]
    pub(crate) fn pfc_apply(&mut self, port: u32, pause: u8, unpause: u8) {
        if self.fold.alb {
            self.fold.pfc_landed(port, self.now);
        }
        if !self.fab.ports[port as usize].up {
            // the link went down while the frame was on its way: a dead link has no pause state
            return;
        }
        let delta = self.fab.pfc_receive(self.now, port, PfcFrame { pause, unpause });
        self.pfc_paused = (self.pfc_paused as i64 + delta as i64) as u64;
        if unpause != 0 {
            self.tx_try(port);
        }
    }

    /// The link out of egress `egress` (global index; the port may be another part's: its ends from the
    /// wiring every part keeps).
    fn link_name(&self, egress: u32) -> String {
        let w = &self.fab.wiring;
        format!("{}->{}", self.node_name(w.port_node[egress as usize]), self.node_name(w.peer_node[egress as usize]))
    }

    /// (`egress`: a local index, or another part's port tagged `REMOTE`.)
    pub(crate) fn watchdog_act(&mut self, kind: &'static str, egress: u32, prio: u8) {
        let egress = self.fab.gid(egress);
        let action = self.scheme.pfc.watchdog_action;
        self.rec.pfc_events.push(PfcEvent {
            time_s: self.now.as_secs_f64(),
            kind,
            ports: vec![self.link_name(egress)],
            priority: Some(prio),
            action: if action == WatchdogAction::Shutdown { "shutdown" } else { "report" },
            order: (self.now.0, if kind == "paused_too_long" { 0 } else { 2 }, egress),
        });
        if action == WatchdogAction::Shutdown {
            let link = self.fab.wiring.port_link[egress as usize];
            self.link_down(link);
        }
    }

    /// The watchdog's sweep over switch egress ports: report priorities paused longer than the timeout,
    /// once per pause episode. With `shutdown`, at most one link is shut per sweep, so the fabric can react
    /// (pauses release as rerouted traffic drains) before the next port is judged.
    fn pfc_watchdog_sweep(&mut self) {
        let timeout = self.scheme.pfc.watchdog_timeout;
        let shutdown = self.scheme.pfc.watchdog_action == WatchdogAction::Shutdown;
        let now = self.now;
        let mut hits = Vec::new();
        for e in 0..self.fab.pfc.len() {
            let pt = &self.fab.ports[e];
            if !pt.up || !self.fab.nodes[pt.node as usize].is_switch {
                continue;
            }
            let mut m = self.fab.pfc[e].egress.overdue(now, timeout, shutdown);
            while m != 0 {
                hits.push((e as u32, m.trailing_zeros() as u8));
                m &= m - 1;
            }
            if shutdown && !hits.is_empty() {
                break;
            }
        }
        for (e, q) in hits {
            if self.fab.ports[e as usize].up {
                self.watchdog_act("paused_too_long", e, q);
            }
        }
    }

    /// A congestion drop of a lossless-priority packet counted at switch port `port`. Exempt when the link
    /// into `port` has an upstream transmitter that ignores PAUSE (an `ignore_pause` fault in force): then
    /// the loss is the fault's, not PFC's.
    pub(crate) fn lossless_drop(&mut self, port: u32) {
        let pt = &self.fab.ports[port as usize];
        // the upstream of an ingress is its peer's egress; of an egress, the node's own ingresses feed it
        let exempt = self.fab.ignoring_pause.contains(&self.fab.gid(pt.peer));
        if exempt {
            self.rec.counters.lossless_exempt_drops += 1;
        } else {
            self.rec.counters.lossless_drops += 1;
            self.fab.port_ctr[port as usize].lossless_drops += 1;
        }
    }

    /// The lossless invariant: under PFC, no switch drops a packet of a lossless priority for lack of
    /// buffer, except on links whose upstream transmitter a fault made ignore pauses.
    pub fn lossless_ok(&self) -> bool {
        self.rec.counters.lossless_drops == 0
    }

    /// Links with congestion drops under PFC, as ("upstream->downstream", drops).
    pub fn lossless_violations(&self) -> Vec<(String, u64)> {
        self.fab
            .ports
            .iter()
            .zip(&self.fab.port_ctr)
            .filter(|(_, c)| c.lossless_drops > 0)
            .map(|(p, c)| (format!("{}->{}", self.node_name(p.peer_node), self.node_name(p.node)), c.lossless_drops))
            .collect()
    }

    /// Egress ports in a cycle of pauses, if any: an edge E → E' when E is paused, its peer's ingress holds
    /// a head packet bound for E', and E' is paused for that packet's priority.
    pub fn find_pause_cycle(&self) -> Option<Vec<u32>> {
        let g = self.pause_graph();
        pause_cycle(self.fab.wiring.port_node.len(), &g)
    }

    /// The pause graph's pieces at this fabric's ports (a part of a split run: its own), by global index:
    /// the paused egresses (up, some priority paused), and for each ingress its candidate edges (E → E', E
    /// its peer egress: its head of priority p is bound for E', paused for p), in priority order.
    pub(crate) fn pause_graph(&self) -> PauseGraph {
        let mut g = PauseGraph::default();
        for (l, pt) in self.fab.ports.iter().enumerate() {
            let i = self.fab.gid(l as u32);
            if pt.paused != 0 && pt.up {
                g.paused.push(i);
            }
            let mut mask = pt.ing.nonempty;
            while mask != 0 {
                let p = mask.trailing_zeros() as u8;
                mask &= mask - 1;
                let head = pt.ing.head(p).expect("non-empty priority");
                let e2 = self.pkts.get(head).out_port;
                if e2 != crate::sim::NO && self.fab.ports[e2 as usize].paused & (1 << p) != 0 {
                    g.edges.push((i, self.fab.gid(pt.peer), self.fab.gid(e2)));
                }
            }
        }
        g
    }
}

/// Pieces of the pause graph (`Sim::pause_graph`): the egress ports paused, and the edges (ingress port,
/// E, E') in the order of their ingress ports.
#[derive(Debug, Clone, Default)]
pub struct PauseGraph {
    pub paused: Vec<u32>,
    pub edges: Vec<(u32, u32, u32)>,
}

impl PauseGraph {
    /// Join the pieces of a split run's parts (each holds its own ports) into the whole fabric's graph,
    /// in the order the ordinary run makes it (by port; a port's edges are one part's, in its order).
    pub fn join(pieces: &[&PauseGraph]) -> PauseGraph {
        let mut g = PauseGraph::default();
        for p in pieces {
            g.paused.extend(&p.paused);
            g.edges.extend(&p.edges);
        }
        g.paused.sort_unstable();
        g.edges.sort_by_key(|e| e.0);
        g
    }
}

/// A cycle of egress ports each paused by the next, from the pause graph of `n` ports: an edge E → E' when
/// E is paused and its peer's ingress holds a head bound for E', paused for that head's priority.
pub fn pause_cycle(n: usize, g: &PauseGraph) -> Option<Vec<u32>> {
    let mut paused = vec![false; n];
    for &e in &g.paused {
        paused[e as usize] = true;
    }
    let mut next: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut any = false;
    for &(_, e, e2) in &g.edges {
        if paused[e as usize] && !next[e as usize].contains(&e2) {
            next[e as usize].push(e2);
            any = true;
        }
    }
    if !any {
        return None;
    }
    // iterative DFS with colours
    let mut colour = vec![0u8; n];
    let mut parent = vec![u32::MAX; n];
    for s in 0..n {
        if colour[s] != 0 || next[s].is_empty() {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(s as u32, 0)];
        colour[s] = 1;
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if *i < next[u as usize].len() {
                let v = next[u as usize][*i];
                *i += 1;
                match colour[v as usize] {
                    0 => {
                        colour[v as usize] = 1;
                        parent[v as usize] = u;
                        stack.push((v, 0));
                    }
                    1 => {
                        let mut cyc = vec![v];
                        let mut w = u;
                        while w != v {
                            cyc.push(w);
                            w = parent[w as usize];
                        }
                        cyc.reverse();
                        return Some(cyc);
                    }
                    _ => {}
                }
            } else {
                colour[u as usize] = 2;
                stack.pop();
            }
        }
    }
    None
}

impl Sim {
    /// Periodic PFC sweep: the watchdog, then the deadlock check. Costs nothing while no port is paused.
    /// (In a part of a split run: the fabric's pauses and its cycle come from the barrier before the sweep,
    /// `parts::Sweep`; the watchdog judges this part's ports.)
    #[inline(never)]
    pub(crate) fn pfc_sweep(&mut self) {
        let dt = self.pfc_sweep_interval();
        let sweep = self.part_sweep(dt);
        let paused = sweep.as_ref().map_or(self.pfc_paused, |s| s.paused);
        if paused > 0 {
            self.pfc_watchdog_sweep();
            if self.scheme.pfc.deadlock_check > Time::ZERO {
                let cycle = match sweep {
                    Some(s) => s.cycle,
                    None => self.find_pause_cycle(),
                };
                self.deadlock_check(cycle);
            }
        } else {
            self.pfc_deadlock.last.clear();
        }
        if !self.clock.finished {
            let dt = self.pfc_sweep_interval();
            self.schedule_timer(self.now + dt, Ev::PfcSweep);
        }
    }

    pub(crate) fn pfc_sweep_interval(&self) -> Time {
        let p = &self.scheme.pfc;
        let w = Time((p.watchdog_timeout.0 / 4).max(1));
        if p.deadlock_check > Time::ZERO {
            p.deadlock_check.min(w)
        } else {
            w
        }
    }

    fn deadlock_check(&mut self, cyc: Option<Vec<u32>>) {
        let mut key = cyc.clone().unwrap_or_default();
        key.sort_unstable();
        if !key.is_empty() && key == self.pfc_deadlock.last && !self.pfc_deadlock.reported.contains(&key) {
            // (both parts of a split run keep this state; the first reports)
            if self.lead_part() {
                let ports = cyc.unwrap().iter().map(|&e| self.link_name(e)).collect();
                self.rec.pfc_events.push(PfcEvent {
                    time_s: self.now.as_secs_f64(),
                    kind: "deadlock",
                    ports,
                    priority: None,
                    action: "report",
                    order: (self.now.0, 1, 0),
                });
            }
            self.pfc_deadlock.reported.push(key.clone());
        }
        self.pfc_deadlock.last = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::DropCause;

    /// The parts' pieces of the pause graph joined give the graph the whole fabric's ports give, in its
    /// order (by ingress port; a port's edges are one part's, in that part's order), whichever part comes
    /// first: the cycle search then visits edges alike in every split.
    #[test]
    fn joined_pieces_are_the_whole_graph_in_port_order() {
        let whole = PauseGraph { paused: vec![1, 4, 6], edges: vec![(0, 1, 4), (3, 4, 6), (3, 4, 1), (5, 6, 1)] };
        let a = PauseGraph { paused: vec![4], edges: vec![(3, 4, 6), (3, 4, 1)] };
        let b = PauseGraph { paused: vec![1, 6], edges: vec![(0, 1, 4), (5, 6, 1)] };
        for pieces in [[&a, &b], [&b, &a]] {
            let g = PauseGraph::join(&pieces);
            assert_eq!((&g.paused, &g.edges), (&whole.paused, &whole.edges));
            assert_eq!(pause_cycle(8, &g), pause_cycle(8, &whole));
        }
        assert!(pause_cycle(8, &whole).is_some(), "1 -> 4 -> 6 -> 1 (and 4 -> 1)");
    }

    /// `n` senders each send 256 KB at priority 0 to host 0 of one switch with 32 KB buffers, under `scheme`
    /// (a JSON object), plus faults.
    fn incast(n: u32, scheme: &str, faults: &str) -> Sim {
        let rows: Vec<String> = (1..=n).map(|i| format!(r#"{{"src": {i}, "dst": 0, "size_bytes": 262144, "start_s": 0.0}}"#)).collect();
        let json = format!(
            r#"{{"run": {{"duration": "1ms", "drain": "2s"}},
                "topology": {{"kind": "single_switch", "hosts": {}, "buffer": "32KB"}},
                "scheme": {scheme}, "fault": [{faults}],
                "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
            n + 1,
            rows.join(",")
        );
        Sim::from_json(&json).unwrap()
    }

    fn port_between(sim: &Sim, a: &str, b: &str) -> u32 {
        (0..sim.fab.ports.len() as u32)
            .find(|&p| sim.node_name(sim.fab.ports[p as usize].node) == a && sim.node_name(sim.fab.ports[p as usize].peer_node) == b)
            .unwrap()
    }

    #[test]
    fn a_congestion_drop_under_pfc_is_reported_per_link_not_a_panic() {
        let mut sim = incast(8, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, "");
        // break PFC on the switch ingress from h3: it never pauses
        let ing = port_between(&sim, "sw", "h3");
        sim.fab.pfc[ing as usize].ingress.pause_th = u64::MAX;
        sim.run();
        assert!(sim.rec.counters.drops[DropCause::IngressBuffer as usize] > 0);
        assert!(!sim.lossless_ok());
        let v = sim.lossless_violations();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].0, "h3->sw");
        assert_eq!(v[0].1, sim.fab.port_ctr[ing as usize].lossless_drops);
        let summary: serde_json::Value = serde_json::from_str(&sim.summary_json()).unwrap();
        assert_eq!(summary["invariants"]["lossless"], false);
        assert_eq!(summary["invariants"]["lossless_violations"][0]["link"], "h3->sw");
        assert!(summary["invariants"]["lossless_drops"].as_u64().unwrap() > 0);
    }

    #[test]
    fn an_ignore_pause_fault_exempts_only_its_own_link() {
        // h3 ignores pauses: its drops are the fault's; h5's broken thresholds are still a violation
        let mut sim = incast(8, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, r#"{"kind": "ignore_pause", "link": ["h3", "sw"]}"#);
        let ing5 = port_between(&sim, "sw", "h5");
        sim.fab.pfc[ing5 as usize].ingress.pause_th = u64::MAX;
        sim.run();
        assert!(sim.rec.counters.lossless_exempt_drops > 0, "h3's drops are counted as exempt");
        let v = sim.lossless_violations();
        assert_eq!(v.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), vec!["h5->sw"]);
        assert!(!sim.lossless_ok());
        // without the broken port the same fault leaves the invariant intact
        let mut ok = incast(8, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, r#"{"kind": "ignore_pause", "link": ["h3", "sw"]}"#);
        ok.run();
        assert!(ok.rec.counters.lossless_exempt_drops > 0);
        assert!(ok.lossless_ok());
    }

    #[test]
    fn without_pfc_there_is_no_pfc_state_and_every_fault_still_runs() {
        // tail drop keeps no per-port PFC records (448 B a port); faults that touch them find none
        for fault in [
            r#"{"kind": "ignore_pause", "link": ["h3", "sw"], "at": "10us"}"#,
            r#"{"kind": "degrade", "link": ["h2", "sw"], "rate": "100Mbps", "at": "10us"}"#,
            r#"{"kind": "link_down", "link": ["h4", "sw"], "at": "10us"}"#,
        ] {
            let mut sim = incast(4, r#"{"preset": "fh"}"#, fault);
            assert!(sim.fab.pfc.is_empty(), "{fault}");
            sim.run();
            assert!(sim.rec.counters.flows_completed >= 3, "{fault}");
            assert!(sim.lossless_ok(), "{fault}");
        }
        assert_eq!(incast(4, r#"{"preset": "lps"}"#, "").fab.pfc.len(), incast(4, r#"{"preset": "fh"}"#, "").fab.ports.len());
    }

    #[test]
    fn a_pause_in_flight_on_a_link_that_goes_down_pauses_nothing() {
        let mut sim = incast(2, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, "");
        let ing = port_between(&sim, "sw", "h1");
        let link = sim.fab.ports[ing as usize].link;
        let up = sim.fab.ports[ing as usize].peer;
        sim.pfc_send(ing, 1, 0); // PAUSE(0) to h1, in flight for the stop delay
        sim.link_down(link);
        sim.run();
        assert_eq!(sim.fab.ports[up as usize].paused, 0);
        assert_eq!(sim.fab.pfc[up as usize].egress.paused_total(sim.now), Time::ZERO, "a dead link accrues no paused time");
        assert_eq!(sim.pfc_paused, 0);
    }

    #[test]
    fn degrading_a_link_rederives_its_pfc_thresholds() {
        let scheme = r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#;
        let mut sim = incast(2, scheme, r#"{"kind": "degrade", "link": ["h1", "sw"], "rate": "100Mbps", "at": "10us"}"#);
        let ing = port_between(&sim, "sw", "h1");
        let before = (sim.fab.pfc[ing as usize].ingress.unpause_th, sim.fab.pfc[ing as usize].ingress.stop_delay);
        let want = sim.pfc_derive(ing, Rate(100_000_000)).unwrap();
        sim.run_until(Time::from_us(20));
        let st = &sim.fab.pfc[ing as usize].ingress;
        assert_eq!((st.pause_th, st.unpause_th, st.stop_delay, st.grace), (want.pause, want.unpause, want.stop_delay, want.grace));
        assert!(st.unpause_th < before.0, "fewer bytes arrive in the reaction window at 100 Mbps");
        assert!(st.stop_delay > before.1, "frames take longer on the slower link");
        sim.run();
        assert!(sim.lossless_ok());
    }

    #[test]
    fn a_degrade_that_would_make_pfc_lossy_is_refused_when_the_scenario_is_built() {
        // 40 KB ingress buffers are lossless at 1 Gbps with these thresholds, not at 100 Gbps
        let rows = r#"{"src": 1, "dst": 0, "size_bytes": 1000, "start_s": 0.0}"#;
        let json = |fault: &str| {
            format!(
                r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": 2, "buffer": "40KB"}},
                    "scheme": {{"preset": "lps", "pfc": {{"priorities": [0], "pause_threshold": "20KB", "unpause_threshold": "10KB"}}}},
                    "fault": [{fault}], "workload": [{{"kind": "flows", "rows": [{rows}]}}]}}"#
            )
        };
        assert!(Sim::from_json(&json("")).is_ok());
        let e = Sim::from_json(&json(r#"{"kind": "degrade", "link": ["h1", "sw"], "rate": "100Gbps", "at": "1ms"}"#)).err().unwrap();
        assert_eq!(e.field, "fault[0].rate");
        assert!(e.msg.contains("too high for lossless PFC"), "{}", e.msg);
    }
}
