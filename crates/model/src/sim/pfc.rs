//! Priority flow control (IEEE 802.1Qbb) as DeTail uses it, its watchdog and PFC-deadlock detection.
//!
//! ```text
//!   upstream egress U ══ link ══► downstream ingress D (switch)
//!        ▲                              │ drain-byte counter of priority p > pause threshold
//!        └──── PFC frame (pause/unpause bits), never queued or dropped, effect after the stop delay
//! ```
//!
//! The downstream ingress watches its drain-byte counters after every change; crossing the pause
//! threshold upwards sends PAUSE(p), falling below the unpause threshold sends UNPAUSE(p) (on/off, no
//! quanta). The upstream stops *starting* frames of a paused priority; a frame on the wire finishes.
//!
//! Thresholds default to the paper's derivation, per port: with R the bytes that may still arrive during
//! the reaction window, unpause = R and pause = midpoint of [R, (buffer − 8R)/8]; at 1 Gbps, 5.476 µs
//! links and 128 KB buffers that is 4557 / 8192 B, exactly the paper's values.
//!
//! The watchdog and the deadlock check run in a periodic sweep (every `deadlock_check`, at most a quarter
//! of `watchdog_timeout`) that does nothing while no port is paused.
//!
//! Robustness (the paper's Section 7): a priority paused longer than `watchdog_timeout` is reported; a
//! neighbour that keeps sending a paused priority after the reaction window is re-sent PAUSE and, after
//! `ignore_limit` such strikes, reported; with `watchdog_action = "shutdown"` the link is shut down and
//! routing excludes it. A periodic check looks for a cycle of egress ports each paused by the next (a
//! PFC deadlock) and reports the ports when the same cycle persists across two checks.

use crate::config::{ConfigError, FlowControl, WatchdogAction};
use crate::sim::{Ev, Sim};
use detailsim_engine::{Rate, Time};
use serde::Serialize;

/// On-wire size of a PFC frame (64 B MAC control frame, preamble and inter-frame gap).
pub const PFC_FRAME_WIRE: u64 = 84;
/// Processing time in the paper's 36.456 µs worst-case window beyond two maximum frames, the PFC frame
/// and two link delays at 1 GbE (36.456 − 24.48 − 0.672 − 10.952 µs).
pub const PFC_PROCESSING: Time = Time(352_000);

#[derive(Debug, Clone, Default)]
pub struct PfcPort {
    pub enabled: bool,
    pub pause_th: u64,
    pub unpause_th: u64,
    /// Time from generating a PFC frame until the upstream transmitter obeys it.
    pub stop_delay: Time,
    /// After a PAUSE, data of that priority arriving later than this is the neighbour ignoring it.
    pub grace: Time,
    /// Lossless priorities (bit p) and the ingress bytes lossy packets may use (the rest is headroom).
    pub mask: u8,
    pub lossy_limit: u64,
    /// Ingress side: priorities this port has asked its peer to pause, and when.
    pub sent: u8,
    pub sent_at: [Time; 8],
    pub strikes: [u32; 8],
    pub last_strike: [Time; 8],
    pub ignore_reported: u8,
    /// Egress side: the peer's pauses.
    pub paused_since: [Time; 8],
    pub paused_ps: u64,
    pub paused_prio_ps: [u64; 8],
    /// Pause episodes the watchdog has already reported (bit per priority; cleared on unpause).
    pub watchdog_reported: u8,
    pub ignores_pause: bool,
    pub frames_sent: u64,
    pub frames_received: u64,
    /// PAUSE requests this port's ingress sent, per priority.
    pub pauses_sent: [u64; 8],
}

impl PfcPort {
    /// Paused time accumulated so far (open pauses counted up to `now`), over all priorities.
    /// Paused time per priority so far (open pauses counted up to `now`). Exact per priority because
    /// the accumulated total is split as it accrues.
    pub fn paused_by_prio(&self, now: Time) -> [Time; 8] {
        let mut out = [Time::ZERO; 8];
        for (q, o) in out.iter_mut().enumerate() {
            *o = Time(self.paused_prio_ps[q]);
            if self.paused_since[q] != Time::MAX {
                *o += now.saturating_sub(self.paused_since[q]);
            }
        }
        out
    }

    pub fn paused_total(&self, now: Time) -> Time {
        Time(self.paused_ps)
            + (0..8).filter(|&q| self.paused_since[q] != Time::MAX).map(|q| now.saturating_sub(self.paused_since[q])).fold(Time::ZERO, |a, b| a + b)
    }
}

/// PFC parameters derived for one switch ingress from its link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfcDerived {
    pub pause: u64,
    pub unpause: u64,
    pub stop_delay: Time,
    pub grace: Time,
    pub lossy_limit: u64,
}

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
}

#[derive(Debug, Clone, Default)]
pub struct DeadlockState {
    last: Vec<u32>,
    reported: Vec<Vec<u32>>,
}

/// Bytes that may still arrive at a port during the reaction window of a link.
pub fn reaction_bytes(rate: Rate, window: Time) -> u64 {
    ((window.0 as u128 * rate.0 as u128).div_ceil(8 * 1_000_000_000_000u128)) as u64
}

impl Sim {
    pub(crate) fn pfc_on(&self) -> bool {
        self.scheme.flow_control == FlowControl::Pfc
    }

    /// Whether priority `prio` is lossless (PFC on, and the priority among `scheme.pfc.priorities`).
    #[inline]
    pub(crate) fn lossless_prio(&self, prio: u8) -> bool {
        self.pfc_on() && self.scheme.pfc.priorities & (1 << prio) != 0
    }

    /// Derive per-port thresholds and delays; check that PFC can be lossless with them, also at the rates
    /// that `degrade` faults will give links later.
    pub(crate) fn pfc_setup(&mut self) -> Result<(), ConfigError> {
        let n = self.ports.len();
        self.pfc = vec![PfcPort { paused_since: [Time::MAX; 8], ..Default::default() }; n];
        if !self.pfc_on() {
            return Ok(());
        }
        for i in 0..n {
            if !self.nodes[self.ports[i].node as usize].is_switch {
                continue; // a host's receive side holds nothing: only switch ingresses send PAUSE
            }
            let rate = self.ports[i].rate;
            let d = self.pfc_derive(i as u32, rate)?;
            self.pfc_install(i as u32, d);
        }
        for (fi, f) in self.faults.iter().enumerate() {
            if let crate::sim::faults::FaultKind::Degrade(rate) = f.kind {
                for p in self.link_ports(f.link) {
                    if self.nodes[self.ports[p as usize].node as usize].is_switch {
                        self.pfc_derive(p, rate).map_err(|e| ConfigError { field: format!("fault[{fi}].rate"), msg: format!("at {} bit/s: {}", rate.0, e.msg) })?;
                    }
                }
            }
        }
        Ok(())
    }

    /// PFC thresholds and delays of switch ingress `port` when its link runs at `rate` (the paper's
    /// derivation, or the configured values checked against the buffer).
    pub(crate) fn pfc_derive(&self, port: u32, rate: Rate) -> Result<PfcDerived, ConfigError> {
        let p = &self.scheme.pfc;
        let max_frame = self.framing.wire(self.framing.mtu) as u64;
        let fwd = self.topo.forwarding_delay;
        let pt = &self.ports[port as usize];
        let delay = pt.delay;
        let window = p.reaction_time.unwrap_or(
            rate.tx_time(max_frame) + rate.tx_time(max_frame) + rate.tx_time(PFC_FRAME_WIRE) + delay + delay + PFC_PROCESSING,
        );
        let r = reaction_bytes(rate, window);
        let buf = pt.ing.cap;
        let n = p.priorities.count_ones() as u64;
        let max_pause = (buf.saturating_sub(n * r)) / n;
        let unpause = p.unpause_threshold.unwrap_or(r);
        // lossless bound: per priority at most pause + one frame + what arrives during the reaction window
        // and the forwarding delay; a derived threshold stays within it
        let in_flight = r + reaction_bytes(rate, fwd);
        let lossless_max = (buf / n).saturating_sub(max_frame + in_flight);
        let pause = p.pause_threshold.unwrap_or(((r + max_pause) / 2).min(lossless_max));
        let name = format!("{}->{}", self.node_name(pt.peer_node), self.node_name(pt.node));
        if p.pause_threshold.is_none() && pause <= unpause {
            let need = n * (unpause + 1 + max_frame + in_flight);
            return crate::config::err(
                "scheme.pfc",
                format!("ingress buffer of {name} ({buf} B) is too small for lossless PFC: each of the {n} lossless priorities needs room for a pause threshold above the unpause threshold ({unpause} B), a frame ({max_frame} B) and the {in_flight} B that arrive before a PAUSE takes effect, {need} B in all; raise the buffer, make fewer priorities lossless (scheme.pfc.priorities), or set pause_threshold/unpause_threshold"),
            );
        }
        if unpause >= pause {
            return crate::config::err("scheme.pfc.unpause_threshold", format!("must be below the pause threshold ({pause} B) on {name}"));
        }
        let per_prio = pause + max_frame + in_flight;
        if n * per_prio > buf {
            return crate::config::err(
                "scheme.pfc.pause_threshold",
                format!("{pause} B is too high for lossless PFC on {name}: {n} x ({pause} + {max_frame} + {in_flight} B in flight) exceeds the {buf} B ingress buffer"),
            );
        }
        let stop_delay = window.saturating_sub(rate.tx_time(max_frame) + delay);
        Ok(PfcDerived {
            pause,
            unpause,
            stop_delay,
            grace: stop_delay + rate.tx_time(max_frame) + delay + fwd + Time(1),
            lossy_limit: if p.priorities == 0xff { buf } else { buf - n * per_prio },
        })
    }

    pub(crate) fn pfc_install(&mut self, port: u32, d: PfcDerived) {
        let mask = self.scheme.pfc.priorities;
        let st = &mut self.pfc[port as usize];
        st.enabled = true;
        st.pause_th = d.pause;
        st.unpause_th = d.unpause;
        st.stop_delay = d.stop_delay;
        st.grace = d.grace;
        st.mask = mask;
        st.lossy_limit = d.lossy_limit;
    }

    /// The ingress bytes of switch port `port` changed: send PAUSE / UNPAUSE as the thresholds say.
    #[inline]
    pub(crate) fn pfc_check(&mut self, port: u32) {
        let st = &self.pfc[port as usize];
        if !st.enabled {
            return;
        }
        let ing = &self.ports[port as usize].ing;
        let (mut pause, mut unpause) = (0u8, 0u8);
        let mut acc = 0u64;
        for q in 0..8 {
            acc += ing.bytes[q];
            let bit = 1u8 << q;
            if st.mask & bit == 0 {
                continue;
            }
            if st.sent & bit == 0 {
                if acc > st.pause_th {
                    pause |= bit;
                }
            } else if acc < st.unpause_th {
                unpause |= bit;
            }
        }
        if pause | unpause != 0 {
            self.pfc_send(port, pause, unpause);
        }
    }

    fn pfc_send(&mut self, port: u32, pause: u8, unpause: u8) {
        let now = self.now;
        let st = &mut self.pfc[port as usize];
        st.sent = (st.sent | pause) & !unpause;
        for q in 0..8 {
            if pause & (1 << q) != 0 {
                st.sent_at[q] = now;
                st.pauses_sent[q] += 1;
            }
            if unpause & (1 << q) != 0 {
                st.strikes[q] = 0;
            }
        }
        st.frames_sent += 1;
        let at = now + st.stop_delay;
        self.counters.pfc_pause_frames += 1;
        self.counters.pfc_pauses += pause.count_ones() as u64;
        let up = self.ports[port as usize].peer;
        if self.trace.is_some() {
            self.trace_pfc(port, pause, unpause);
        }
        self.q.push(at, Ev::PfcFrame { port: up, pause, unpause });
    }

    /// A PFC frame takes effect at egress `port`.
    pub(crate) fn pfc_apply(&mut self, port: u32, pause: u8, unpause: u8) {
        if !self.ports[port as usize].up {
            // the link went down while the frame was on its way: a dead link has no pause state
            return;
        }
        let now = self.now;
        let st = &mut self.pfc[port as usize];
        st.frames_received += 1;
        let pause = if st.ignores_pause { 0 } else { pause };
        let pt = &mut self.ports[port as usize];
        for q in 0..8 {
            let bit = 1u8 << q;
            if pause & bit != 0 && pt.paused & bit == 0 {
                st.paused_since[q] = now;
                self.pfc_paused += 1;
            }
            if unpause & bit != 0 && pt.paused & bit != 0 {
                st.paused_ps += (now - st.paused_since[q]).0;
                st.paused_prio_ps[q] += (now - st.paused_since[q]).0;
                st.paused_since[q] = Time::MAX;
                st.watchdog_reported &= !bit;
                self.pfc_paused -= 1;
            }
        }
        pt.paused = (pt.paused | pause) & !unpause;
        if unpause != 0 {
            self.tx_try(port);
        }
    }

    fn link_name(&self, egress: u32) -> String {
        let p = &self.ports[egress as usize];
        format!("{}->{}", self.node_name(p.node), self.node_name(p.peer_node))
    }

    fn watchdog_act(&mut self, kind: &'static str, egress: u32, prio: u8) {
        let action = self.scheme.pfc.watchdog_action;
        self.pfc_events.push(PfcEvent {
            time_s: self.now.as_secs_f64(),
            kind,
            ports: vec![self.link_name(egress)],
            priority: Some(prio),
            action: if action == WatchdogAction::Shutdown { "shutdown" } else { "report" },
        });
        if action == WatchdogAction::Shutdown {
            let link = self.ports[egress as usize].link;
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
        'ports: for e in 0..self.pfc.len() {
            let pt = &self.ports[e];
            if !pt.up || !self.nodes[pt.node as usize].is_switch {
                continue;
            }
            let st = &mut self.pfc[e];
            for q in 0..8 {
                let since = st.paused_since[q];
                if since != Time::MAX && now >= since + timeout && st.watchdog_reported & (1 << q) == 0 {
                    st.watchdog_reported |= 1 << q;
                    hits.push((e as u32, q as u8));
                    if shutdown {
                        break 'ports;
                    }
                }
            }
        }
        for (e, q) in hits {
            if self.ports[e as usize].up {
                self.watchdog_act("paused_too_long", e, q);
            }
        }
    }

    /// Data of priority `prio` arrived at switch ingress `port`: is the upstream ignoring our PAUSE?
    #[inline]
    pub(crate) fn pfc_arrival(&mut self, port: u32, prio: u8) {
        let now = self.now;
        let limit = self.scheme.pfc.ignore_limit;
        let st = &mut self.pfc[port as usize];
        let q = prio as usize;
        if st.sent & (1 << prio) == 0 || now <= st.sent_at[q] + st.grace || now <= st.last_strike[q] + st.grace {
            return;
        }
        st.strikes[q] += 1;
        st.last_strike[q] = now;
        if st.strikes[q] >= limit {
            if st.ignore_reported & (1 << prio) == 0 {
                st.ignore_reported |= 1 << prio;
                let up = self.ports[port as usize].peer;
                self.watchdog_act("ignores_pause", up, prio);
            }
        } else {
            // resend the PAUSE
            st.sent_at[q] = now;
            self.pfc_send(port, 1 << prio, 0);
        }
    }

    /// A congestion drop of a lossless-priority packet counted at switch port `port`. Exempt when the link
    /// into `port` has an upstream transmitter that ignores PAUSE (an `ignore_pause` fault in force): then
    /// the loss is the fault's, not PFC's.
    pub(crate) fn lossless_drop(&mut self, port: u32) {
        let pt = &self.ports[port as usize];
        // the upstream of an ingress is its peer's egress; of an egress, the node's own ingresses feed it
        let exempt = self.pfc[pt.peer as usize].ignores_pause;
        if exempt {
            self.counters.lossless_exempt_drops += 1;
        } else {
            self.counters.lossless_drops += 1;
            self.port_ctr[port as usize].lossless_drops += 1;
        }
    }

    /// The lossless invariant: under PFC, no switch drops a packet of a lossless priority for lack of
    /// buffer, except on links whose upstream transmitter a fault made ignore pauses.
    pub fn lossless_ok(&self) -> bool {
        self.counters.lossless_drops == 0
    }

    /// Links with congestion drops under PFC, as ("upstream->downstream", drops).
    pub fn lossless_violations(&self) -> Vec<(String, u64)> {
        self.ports
            .iter()
            .zip(&self.port_ctr)
            .filter(|(_, c)| c.lossless_drops > 0)
            .map(|(p, c)| (format!("{}->{}", self.node_name(p.peer_node), self.node_name(p.node)), c.lossless_drops))
            .collect()
    }

    /// Egress ports in a cycle of pauses, if any: an edge E → E' when E is paused, its peer's ingress holds
    /// a head packet bound for E', and E' is paused for that packet's priority.
    pub fn find_pause_cycle(&self) -> Option<Vec<u32>> {
        let n = self.ports.len();
        let mut next: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut any = false;
        for (e, pt) in self.ports.iter().enumerate() {
            if pt.paused == 0 || !pt.up {
                continue;
            }
            let d = &self.ports[pt.peer as usize];
            let mut mask = d.ing.nonempty;
            while mask != 0 {
                let p = mask.trailing_zeros() as u8;
                mask &= mask - 1;
                let head = d.ing.head(p).expect("non-empty priority");
                let e2 = self.pkts.get(head).out_port;
                if e2 != crate::sim::NO && self.ports[e2 as usize].paused & (1 << p) != 0 && !next[e].contains(&e2) {
                    next[e].push(e2);
                    any = true;
                }
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

    /// Periodic PFC sweep: the watchdog, then the deadlock check. Costs nothing while no port is paused.
    pub(crate) fn pfc_sweep(&mut self) {
        if self.pfc_paused > 0 {
            self.pfc_watchdog_sweep();
            if self.scheme.pfc.deadlock_check > Time::ZERO {
                self.deadlock_check();
            }
        } else {
            self.deadlock.last.clear();
        }
        if !self.finished {
            let dt = self.pfc_sweep_interval();
            self.q.push_timer(self.now + dt, Ev::PfcSweep);
        }
    }

    pub(crate) fn pfc_sweep_interval(&self) -> Time {
        let p = &self.scheme.pfc;
        let w = Time((p.watchdog_timeout.0 / 4).max(1));
        if p.deadlock_check > Time::ZERO { p.deadlock_check.min(w) } else { w }
    }

    fn deadlock_check(&mut self) {
        let cyc = self.find_pause_cycle();
        let mut key = cyc.clone().unwrap_or_default();
        key.sort_unstable();
        if !key.is_empty() && key == self.deadlock.last && !self.deadlock.reported.contains(&key) {
            let ports = cyc.unwrap().iter().map(|&e| self.link_name(e)).collect();
            self.pfc_events.push(PfcEvent { time_s: self.now.as_secs_f64(), kind: "deadlock", ports, priority: None, action: "report" });
            self.deadlock.reported.push(key.clone());
        }
        self.deadlock.last = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::DropCause;

    /// `n` senders each send 256 KB at priority 0 to host 0 of one switch with 32 KB buffers, under `scheme`
    /// (a JSON object), plus faults.
    fn incast(n: u32, scheme: &str, faults: &str) -> Sim {
        let rows: Vec<String> =
            (1..=n).map(|i| format!(r#"{{"src": {i}, "dst": 0, "size_bytes": 262144, "start_s": 0.0}}"#)).collect();
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
        (0..sim.ports.len() as u32)
            .find(|&p| sim.node_name(sim.ports[p as usize].node) == a && sim.node_name(sim.ports[p as usize].peer_node) == b)
            .unwrap()
    }

    #[test]
    fn a_congestion_drop_under_pfc_is_reported_per_link_not_a_panic() {
        let mut sim = incast(8, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, "");
        // break PFC on the switch ingress from h3: it never pauses
        let ing = port_between(&sim, "sw", "h3");
        sim.pfc[ing as usize].pause_th = u64::MAX;
        sim.run();
        assert!(sim.counters.drops[DropCause::IngressBuffer as usize] > 0);
        assert!(!sim.lossless_ok());
        let v = sim.lossless_violations();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].0, "h3->sw");
        assert_eq!(v[0].1, sim.port_ctr[ing as usize].lossless_drops);
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
        sim.pfc[ing5 as usize].pause_th = u64::MAX;
        sim.run();
        assert!(sim.counters.lossless_exempt_drops > 0, "h3's drops are counted as exempt");
        let v = sim.lossless_violations();
        assert_eq!(v.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), vec!["h5->sw"]);
        assert!(!sim.lossless_ok());
        // without the broken port the same fault leaves the invariant intact
        let mut ok = incast(8, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, r#"{"kind": "ignore_pause", "link": ["h3", "sw"]}"#);
        ok.run();
        assert!(ok.counters.lossless_exempt_drops > 0);
        assert!(ok.lossless_ok());
    }

    #[test]
    fn a_pause_in_flight_on_a_link_that_goes_down_pauses_nothing() {
        let mut sim = incast(2, r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#, "");
        let ing = port_between(&sim, "sw", "h1");
        let link = sim.ports[ing as usize].link;
        let up = sim.ports[ing as usize].peer;
        sim.pfc_send(ing, 1, 0); // PAUSE(0) to h1, in flight for the stop delay
        sim.link_down(link);
        sim.run();
        assert_eq!(sim.ports[up as usize].paused, 0);
        assert_eq!(sim.pfc[up as usize].paused_total(sim.now), Time::ZERO, "a dead link accrues no paused time");
        assert_eq!(sim.pfc_paused, 0);
    }

    #[test]
    fn degrading_a_link_rederives_its_pfc_thresholds() {
        let scheme = r#"{"preset": "lps", "pfc": {"priorities": [0]}}"#;
        let mut sim = incast(2, scheme, r#"{"kind": "degrade", "link": ["h1", "sw"], "rate": "100Mbps", "at": "10us"}"#);
        let ing = port_between(&sim, "sw", "h1");
        let before = (sim.pfc[ing as usize].unpause_th, sim.pfc[ing as usize].stop_delay);
        let want = sim.pfc_derive(ing, Rate(100_000_000)).unwrap();
        sim.run_until(Time::from_us(20));
        let st = &sim.pfc[ing as usize];
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
