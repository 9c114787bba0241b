//! The simulator's switch driver (both buffer models: `fabric::switch`) and the transmit side shared with
//! host NICs.
//!
//! Arrival: forwarding engine picks the output port (flow hash or packet scatter over the acceptable
//! ports) → ingress queue of the arrival port (tail drop when its buffer is full) → crossbar: one packet
//! at a time out of each ingress at `speedup` × its line rate, and into each egress at most `speedup` × the
//! egress's line rate (a transfer occupies the egress side for frame / (speedup × rate)), only when the
//! egress queue has room (otherwise the head of that priority waits: head-of-line blocking) → egress
//! queue (optional ECN marking) → link. A shared-buffer switch skips the ingress queue and the crossbar: its
//! MMU admits the arrival straight into the egress queue (`fabric/shared.rs`).

use crate::config::{EcnMarking, Scheduling};
use crate::fabric::switch::{Head, Refused, Switch};
use crate::mechanisms::dibs::{self, Decision};
use crate::mechanisms::ecn::Verdict;
use crate::mechanisms::mmu::Refusal;
use crate::packet::{PacketId, ECN_CE};
use crate::sim::{Ev, Sim};
use crate::stats::DropCause;
use detailsim_engine::Time;

/// The simulator drives the switch's control flow (`fabric::switch`) with events: a started transfer ends with
/// `XbarDone`, a busy egress side wakes its waiters with `XbarOutFree`, a PFC frame takes effect at the peer
/// after the stop delay (`Ev::PfcFrame`).
impl Switch for Sim {
    type Links = detailsim_engine::Arena<crate::packet::Packet>;
    const WAITERS_FIRST: bool = false;
    #[inline(always)]
    fn now(&self) -> Time {
        self.now
    }
    #[inline(always)]
    fn fab(&mut self) -> &mut crate::fabric::Fabric {
        &mut self.fab
    }
    #[inline(always)]
    fn net(&mut self) -> (&mut crate::fabric::Fabric, &mut Self::Links) {
        (&mut self.fab, &mut self.pkts)
    }
    #[inline(always)]
    fn pfc_on(&self) -> bool {
        self.scheme.flow_control == crate::config::FlowControl::Pfc
    }
    fn ignore_limit(&self) -> u32 {
        self.scheme.pfc.ignore_limit
    }
    fn send_pfc(&mut self, port: u32, f: crate::mechanisms::pfc::PfcFrame) {
        self.pfc_emit(port, f);
    }
    fn pfc_ignored(&mut self, port: u32, prio: u8) {
        let up = self.fab.ports[port as usize].peer;
        self.watchdog_act("ignores_pause", up, prio);
    }
    /// The head's chosen egress, asked again of the forwarding engine if that port died while the packet
    /// waited (dropped when no route is left), and pFabric's admission there (dropped when the arrival ranks
    /// no better than everything queued).
    #[inline(always)]
    fn head(&mut self, inp: u32, prio: u8, pid: PacketId) -> Head {
        let (mut out, wire) = {
            let p = self.pkts.get(pid);
            (p.out_port, p.wire as u64)
        };
        if !self.fab.ports[out as usize].up {
            let node = self.fab.ports[inp as usize].node;
            match self.route(node, pid) {
                Some(o) => {
                    out = o;
                    self.pkts.get_mut(pid).out_port = o;
                }
                None => {
                    self.fab.ports[inp as usize].ing.pop(prio, &self.pkts);
                    self.discard(inp, false, prio, pid, DropCause::NoRoute, inp);
                    self.pfc_check(inp);
                    return Head::Removed;
                }
            }
        }
        if self.scheme.scheduling == Scheduling::Pfabric && !self.pfabric_admit(out, pid, wire) {
            self.fab.ports[inp as usize].ing.pop(prio, &self.pkts);
            self.discard(inp, false, prio, pid, DropCause::Priority, out);
            return Head::Removed;
        }
        Head::Cross { out, wire }
    }
    #[inline(always)]
    fn crossing(&mut self, inp: u32, pid: PacketId, done: Time) {
        if self.fold.on && self.try_fold(inp, pid, done) {
            return;
        }
        self.schedule(done, Ev::XbarDone { port: inp, pkt: pid });
    }
    #[inline]
    fn retry_at(&mut self, out: u32, at: Time) {
        self.schedule(at, Ev::XbarOutFree { port: out });
    }
    #[inline(always)]
    fn crossed(&self, pid: PacketId) -> (u32, u8, u64) {
        let p = self.pkts.get(pid);
        (p.out_port, p.prio, p.wire as u64)
    }
    #[inline(always)]
    fn enter_egress(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64) {
        self.enter_egress_at(out, pid, prio, wire);
    }
    #[inline(always)]
    fn make_room(&mut self, port: u32, prio: u8, wire: u64) {
        if self.scheme.priority_eviction {
            self.evict_for(port, prio, wire);
        }
    }
    /// pFabric's admission at the egress (dropped when the arrival ranks no better than everything queued).
    fn admit_at(&mut self, port: u32, out: u32, pid: PacketId, wire: u64) -> bool {
        if self.scheme.scheduling == Scheduling::Pfabric && !self.pfabric_admit(out, pid, wire) {
            self.drop_packet(pid, DropCause::Priority, Some(port));
            return false;
        }
        true
    }
    fn entered_by(&mut self, pid: PacketId, port: u32) {
        let base = self.fab.nodes[self.fab.ports[port as usize].node as usize].port_base;
        self.pkts.get_mut(pid).in_lp = (port - base) as u16;
    }
    /// DIBS detours what a full buffer refuses (at a CIOQ ingress: across the crossbar into another egress,
    /// `dibs_overflow_detour`); otherwise it is dropped.
    fn refused(&mut self, port: u32, pid: PacketId, out: u32, prio: u8, wire: u64, why: Refused) -> Option<u32> {
        let node = self.fab.ports[port as usize].node;
        let cause = match why {
            Refused::Ingress if self.scheme.dibs.enabled => self.dibs_overflow_detour(node, pid, out, prio, wire).err(),
            Refused::Ingress => Some(DropCause::IngressBuffer),
            Refused::Shared(r) => match self.shared_refused(node, pid, out, prio, wire, r) {
                Ok(d) => {
                    self.pkts.get_mut(pid).out_port = d;
                    return Some(d);
                }
                Err(cause) => Some(cause),
            },
        };
        if let Some(cause) = cause {
            self.drop_packet(pid, cause, Some(port));
        }
        None
    }
}

impl Sim {
    /// Choose the output port (global index) of packet `pid` at switch `node`: the edge switch's port to
    /// the destination host, or the forwarding engine's choice among the acceptable ports.
    #[inline]
    pub(crate) fn route(&mut self, node: u32, pid: PacketId) -> Option<u32> {
        let (dst, hash, prio, hops) = {
            let p = self.pkts.get(pid);
            (p.dst, p.hash, p.prio, p.hops)
        };
        if let Some(lp) = crate::packet::settled_hop(hops) {
            // what the forwarding engine would choose here, found when the flow's first packet was sent
            return Some(self.fab.nodes[node as usize].port_base + lp);
        }
        self.route_asked(node, dst, hash, prio)
    }

    /// `route` where the packet's hops do not settle the choice: the forwarding engine's.
    #[inline]
    fn route_asked(&mut self, node: u32, dst: u32, hash: u32, prio: u8) -> Option<u32> {
        let crate::fabric::Fabric { routes, nodes, ports, .. } = &mut self.fab;
        let (held, now) = (&self.fold.held, self.now);
        let held = |p: u32| match held.get(p as usize) {
            Some(h) if now < h.until && h.prio <= prio => h.wire as u64,
            _ => 0,
        };
        let (up, drain) = (|p: u32| ports[p as usize].up, |p: u32| ports[p as usize].eg.drain_bytes(prio) + held(p));
        nodes[node as usize].route(node, routes, dst, hash, self.scheme.load_balancing, &self.scheme.alb, up, drain, &mut self.fwd_ports)
    }

    /// DIBS: a detour port for packet `pid` at switch `node` (`Fabric::detour_port`), counted on the packet.
    fn dibs_pick(&mut self, node: u32, pid: PacketId, out: u32, wire: u64) -> Option<u32> {
        let (prio, inp) = (self.pkts.get(pid).prio, self.pkts.get(pid).in_lp as usize);
        let pick = self.fab.detour_port(node, inp, out, prio, wire);
        if pick.is_some() {
            self.rec.counters.detours += 1;
            let pk = self.pkts.get_mut(pid);
            pk.detours = pk.detours.saturating_add(1);
            // off its path: the forwarding engine chooses at every switch from here
            pk.hops = 0;
        }
        pick
    }

    /// Whether packet `pid` at switch `node` may be detoured now.
    fn dibs_decide(&mut self, node: u32, pid: PacketId, prio: u8) -> Decision {
        let detours = self.pkts.get(pid).detours;
        dibs::decide(&self.scheme.dibs, prio, detours, &mut self.fab.nodes[node as usize].rng)
    }

    /// DIBS with a threshold (the spec's variant for CIOQ / shared-buffer switches): when the chosen egress
    /// holds more than the threshold, the packet is forwarded towards a random other switch port instead.
    /// None: the packet reached the detour cap (drop it). Out of line: only threshold DIBS calls it.
    #[inline(never)]
    fn dibs_threshold_detour(&mut self, node: u32, pid: PacketId, out: u32, prio: u8, wire: u64, threshold: u64) -> Option<u32> {
        if !dibs::over_threshold(self.fab.ports[out as usize].eg.total, wire, threshold) {
            return Some(out);
        }
        match self.dibs_decide(node, pid, prio) {
            Decision::Cap => None,
            Decision::No => Some(out),
            Decision::Yes => Some(self.dibs_pick(node, pid, out, wire).unwrap_or(out)),
        }
    }

    /// DIBS at the buffer that overflows: the arrival port's ingress buffer cannot hold packet `pid`, so
    /// instead of dropping it the forwarding engine writes it across the crossbar into the egress queue of
    /// a random other switch-facing port with room (the output-buffered view of the DIBS paper: the packet
    /// never needed the full ingress buffer). The egress holds its room from now; the transfer takes that
    /// egress's crossbar side for the frame's crossing time once the transfers into it under way have
    /// ended (so no more than speedup x its rate enters it), and the packet joins the egress queue when it
    /// has crossed (`detour_done`). `Err(cause)` when the packet must be dropped after all.
    #[cold]
    #[inline(never)]
    fn dibs_overflow_detour(&mut self, node: u32, pid: PacketId, out: u32, prio: u8, wire: u64) -> Result<(), DropCause> {
        match self.dibs_decide(node, pid, prio) {
            Decision::Cap => return Err(DropCause::DetourLimit),
            Decision::No => return Err(DropCause::IngressBuffer),
            Decision::Yes => {}
        }
        let Some(d) = self.dibs_pick(node, pid, out, wire) else { return Err(DropCause::IngressBuffer) };
        self.pkts.get_mut(pid).out_port = d;
        let now = self.now;
        let e = &mut self.fab.ports[d as usize];
        e.eg.advance(now);
        e.eg.reserve(prio, wire);
        let out_time = e.xbar_time(wire);
        let done = e.xbar.queue_out(now, out_time);
        self.schedule(done, Ev::DetourDone { port: d, pkt: pid });
        Ok(())
    }

    /// A packet detoured at a full ingress (`dibs_overflow_detour`) has crossed into egress `out`: it joins
    /// the queue (marked as any arrival there is), and the egress side's waiters may go.
    pub(crate) fn detour_done(&mut self, out: u32, pid: PacketId) {
        let (prio, wire) = {
            let p = self.pkts.get(pid);
            (p.prio, p.wire as u64)
        };
        self.enter_egress_at(out, pid, prio, wire);
        self.egress_freed(out);
    }

    /// Packet `pid` (`prio`, `wire` bytes, its room reserved) has crossed into egress `out`: it joins the
    /// queue, marked as the egress's marker says, and the transmitter may start it; dropped if the marker
    /// drops it or the link went down while it crossed.
    #[inline(always)]
    pub(crate) fn enter_egress_at(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64) {
        if !self.fab.ports[out as usize].up {
            self.discard(out, true, prio, pid, DropCause::LinkDown, out);
        } else if self.mark_ecn(out, pid, wire) {
            self.fab.ports[out as usize].eg.enlist_packet(pid, &mut self.pkts);
            self.tx_try(out);
        } else {
            self.discard(out, true, prio, pid, DropCause::Red, out);
        }
    }

    pub(crate) fn drop_packet(&mut self, pid: PacketId, cause: DropCause, port: Option<u32>) {
        if let Some(p) = port {
            if cause.is_congestion() && self.fab.nodes[self.fab.ports[p as usize].node as usize].is_switch && self.lossless_prio(self.pkts.get(pid).prio) {
                self.lossless_drop(p);
            }
        }
        self.rec.counters.drop(cause);
        if let Some(p) = port {
            self.fab.port_ctr[p as usize].drops += 1;
        }
        self.pkts.release(pid);
    }

    /// A packet has arrived at switch port `port` and passed the forwarding engine.
    pub(crate) fn switch_arrive(&mut self, port: u32, pid: PacketId) {
        if self.fab.ports[port as usize].xbar.in_lazy {
            self.settle_in(port);
        }
        let node = self.fab.ports[port as usize].node;
        let (prio, wire) = {
            let p = self.pkts.get(pid);
            (p.prio, p.wire as u64)
        };
        self.pfc_arrival(port, prio);
        let Some(out) = self.route(node, pid) else {
            self.drop_packet(pid, DropCause::NoRoute, Some(port));
            return;
        };
        let out = match self.scheme.dibs.threshold {
            Some(t) if self.scheme.dibs.enabled => match self.dibs_threshold_detour(node, pid, out, prio, wire, t) {
                Some(o) => o,
                None => {
                    self.drop_packet(pid, DropCause::DetourLimit, Some(port));
                    return;
                }
            },
            _ => out,
        };
        let pk = self.pkts.get_mut(pid);
        pk.out_port = out;
        pk.hops >>= crate::packet::HOP_BITS;
        self.arrive(port, pid, out, prio, wire);
    }

    /// Priority eviction (`scheme.priority_eviction`): a full ingress buffer makes room for an arrival of
    /// `prio`, `wire` bytes, by dropping lower-priority packets, if that makes enough room (a packet crossing
    /// the crossbar cannot be evicted).
    fn evict_for(&mut self, port: u32, prio: u8, wire: u64) {
        let transit = match self.fab.ports[port as usize].xbar.in_busy {
            true => match self.in_transit(port) {
                (p, wire) if p > prio => wire,
                _ => 0,
            },
            false => 0,
        };
        let mut victims = std::mem::take(&mut self.victims);
        let pkts = &self.pkts;
        self.fab.ports[port as usize].ing.evict_lower_for(prio, wire, transit, pkts, |v| pkts.get(v).wire as u64, &mut victims);
        for &(p, victim) in &victims {
            self.discard(port, false, p, victim, DropCause::Priority, port);
        }
        self.victims = victims;
    }

    /// A shared-buffer switch's MMU refused packet `pid` (arrived at `port`, routed to `out`): a lossy
    /// arrival refused at its egress is detoured under DIBS (to a random other switch port the MMU admits it
    /// to: `Ok(d)`), otherwise dropped (`ingress_buffer`: the switch's buffer refused it); a lossless one
    /// refused (its headroom full) is a lossless violation.
    #[inline(never)]
    fn shared_refused(&mut self, node: u32, pid: PacketId, out: u32, prio: u8, wire: u64, r: Refusal) -> Result<u32, DropCause> {
        if r != Refusal::Egress || !self.scheme.dibs.enabled {
            return Err(DropCause::IngressBuffer);
        }
        match self.dibs_decide(node, pid, prio) {
            Decision::Cap => Err(DropCause::DetourLimit),
            Decision::No => Err(DropCause::IngressBuffer),
            Decision::Yes => self.dibs_pick(node, pid, out, wire).ok_or(DropCause::IngressBuffer),
        }
    }

    /// A shared-buffer switch: packet `pid` (`prio`, `wire` bytes) left egress `out` (sent or dropped
    /// there): its bytes leave the MMU, and the ingress it came in on may resume.
    #[inline(never)]
    pub(crate) fn shared_release(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64) {
        self.shared_left(self.pkts.get(pid).in_lp as u32, out, prio, wire);
    }

    /// pFabric admission at egress `out`: while the packet does not fit, evict the queued packet of the
    /// highest rank if it ranks strictly worse than the arrival. False: no room can be made (drop it).
    fn pfabric_admit(&mut self, out: u32, pid: PacketId, wire: u64) -> bool {
        let (rank, prio) = (self.pkts.get(pid).rank, self.pkts.get(pid).prio);
        while !self.fab.ports[out as usize].eg.fits(prio, wire) {
            let Some((p, victim)) = self.fab.ports[out as usize].eg.evict_worse(rank) else { return false };
            self.discard(out, true, p, victim, DropCause::Priority, out);
        }
        true
    }

    /// Drop packet `pid` of priority `prio`, already taken off the ingress (or egress) queue of `port`:
    /// its bytes leave the buffer and the drop is counted at port `at`.
    fn discard(&mut self, port: u32, egress: bool, prio: u8, pid: PacketId, cause: DropCause, at: u32) {
        let (now, wire) = (self.now, self.pkts.get(pid).wire as u64);
        let pt = &mut self.fab.ports[port as usize];
        if egress {
            pt.eg.advance(now);
            pt.eg.release(prio, wire);
            if self.fab.shared() {
                self.shared_release(port, pid, prio, wire);
            }
        } else {
            pt.ing.release(prio, wire);
        }
        self.drop_packet(pid, cause, Some(at));
    }

    /// ECN marking at egress enqueue (switch egress or host NIC), after the packet's bytes were reserved.
    /// Step marking: CE when the queue (or port) already holds more than K, not counting the arriving
    /// packet. RED: CE for an ECN-capable packet RED finds congested; false when RED drops a packet that
    /// is not ECN-capable (at a switch; a host NIC only marks).
    #[inline(always)]
    pub(crate) fn mark_ecn(&mut self, port: u32, pid: PacketId, wire: u64) -> bool {
        self.scheme.ecn_marking == EcnMarking::None || self.mark_ecn_on(port, pid, wire)
    }

    #[inline(never)]
    fn mark_ecn_on(&mut self, port: u32, pid: PacketId, wire: u64) -> bool {
        let (ecn, prio) = {
            let p = self.pkts.get(pid);
            (p.ecn, p.prio)
        };
        match self.fab.mark(port, prio, ecn, wire, self.lossless_prio(prio)) {
            Verdict::Pass => true,
            Verdict::Mark => {
                self.pkts.get_mut(pid).ecn = ECN_CE;
                self.rec.counters.ecn_marks += 1;
                true
            }
            Verdict::Drop => false,
        }
    }

    /// Start the next frame on `port` if the transmitter is idle. A `TxDone` event is scheduled only when
    /// a frame is waiting for the transmitter, so a lightly loaded link costs one event per frame.
    pub(crate) fn tx_try(&mut self, port: u32) {
        let now = self.now;
        let pt = &mut self.fab.ports[port as usize];
        if !pt.up {
            return;
        }
        let mask = pt.eg.nonempty & !pt.paused;
        if mask == 0 {
            return;
        }
        if now < pt.tx_busy_until {
            if !pt.tx_event {
                pt.tx_event = true;
                let at = pt.tx_busy_until;
                let pkt = pt.eg.next_hint(!pt.paused).unwrap_or(0);
                self.schedule(at, Ev::TxDone { port, pkt });
            }
            return;
        }
        let pkts = &self.pkts;
        let (pid, prio, wire, ser) = self.fab.dequeue(now, port, pkts, |p| pkts.get(p).wire as u64).expect("non-empty");
        let pt = &mut self.fab.ports[port as usize];
        let hooks = pt.tx_hooks;
        pt.tx_busy_ps += ser.0;
        pt.tx_busy_until = now + ser;
        let arrive = pt.tx_busy_until + pt.arrive_after;
        let peer = pt.peer;
        let has_waiters = pt.waiting;
        let nic_blocked = pt.nic_blocked;
        if pt.eg.nonempty & !pt.paused != 0 && !pt.tx_event {
            pt.tx_event = true;
            let at = pt.tx_busy_until;
            let pkt = pt.eg.next_hint(!pt.paused).unwrap_or(0);
            self.schedule(at, Ev::TxDone { port, pkt });
        }
        self.rec.counters.link_traversals += 1;
        let c = &mut self.fab.tx_count[port as usize];
        c.bytes += wire;
        c.packets += 1;
        if hooks {
            self.tx_hooks(port, pid, prio, wire);
        }
        if self.rec.trace.is_some() {
            self.trace_packet(port, pid);
        }
        self.schedule(arrive, Ev::Arrive { port: peer, pkt: pid });
        if has_waiters {
            self.wake_waiters(port);
        }
        if nic_blocked {
            self.nic_wake(port);
        }
    }

    /// What sees a frame switch port `port` sends (`Port::tx_hooks`): a shared-buffer switch's MMU releases
    /// its bytes, and HPCC's telemetry records the egress.
    #[inline(never)]
    fn tx_hooks(&mut self, port: u32, pid: PacketId, prio: u8, wire: u64) {
        if self.fab.shared() {
            self.shared_release(port, pid, prio, wire);
        }
        if self.int_on {
            self.int_record(port, pid);
        }
    }

    /// HPCC: a data packet leaving switch egress `port` gets the egress's record: the bytes queued behind
    /// it, the bytes the port has sent (this packet included), the time and the line rate.
    #[inline(never)]
    fn int_record(&mut self, port: u32, pid: PacketId) {
        let pt = &self.fab.ports[port as usize];
        if !self.fab.nodes[pt.node as usize].is_switch || self.pkts.get(pid).kind != crate::transport::tcp::SegKind::Data {
            return;
        }
        let h = crate::transport::cc::hpcc::IntHop { qlen: pt.eg.total, tx_bytes: self.fab.tx_count[port as usize].bytes, ts: self.now.0, rate: pt.rate.0 };
        self.int_at(pid).push(h);
    }

    /// Serialization time of `bytes` on `port`.
    pub fn ser_time(&self, port: u32, bytes: u64) -> Time {
        self.fab.ports[port as usize].ser(bytes)
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Sim;
    use detailsim_engine::Time;

    /// `n` hosts each start a 64 KB flow to host 0 of one switch (1 Gbps, speedup `speedup`) at t = 0.
    fn burst(n: u32, speedup: f64) -> Sim {
        let rows: Vec<String> = (1..=n).map(|i| format!(r#"{{"src": {i}, "dst": 0, "size_bytes": 65536, "start_s": 0.0}}"#)).collect();
        Sim::from_json(&format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": {}, "buffer": "1MB", "speedup": {speedup}}},
                "scheme": {{"preset": "fh"}}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
            n + 1,
            rows.join(",")
        ))
        .unwrap()
    }

    #[test]
    fn an_n_to_1_burst_enters_the_egress_at_most_at_speedup_times_its_line_rate() {
        for speedup in [1.0, 4.0] {
            let mut sim = burst(16, speedup);
            let eg = (0..sim.fab.ports.len() as u32).find(|&p| sim.node_name(sim.fab.ports[p as usize].peer_node) == "h0").unwrap();
            // bytes that have entered the egress (queued, crossing the crossbar, or sent), every microsecond
            let mut entered = Vec::new();
            for us in 0..300 {
                sim.run_until(Time::from_us(us));
                let p = &sim.fab.ports[eg as usize];
                entered.push(sim.fab.tx_count[eg as usize].bytes + p.eg.total);
            }
            let frame = sim.fab.framing.full_frame() as u64; // the largest frame: bytes count when a transfer starts
            let mut peak = 0.0f64;
            for w in [10usize, 50, 100] {
                for t in w..entered.len() {
                    let bytes = entered[t] - entered[t - w];
                    let bound = speedup * 1e9 / 8.0 * (w as f64) * 1e-6 + frame as f64;
                    assert!(bytes as f64 <= bound, "speedup {speedup}: {bytes} B entered in {w} us (bound {bound})");
                    peak = peak.max(bytes as f64 * 8.0 / (w as f64 * 1e-6));
                }
            }
            // 16 senders at 1 Gbps offer 16 Gbps: the crossbar, not the senders, is the limit
            assert!(peak > 0.9 * speedup * 1e9, "speedup {speedup}: peak {peak} bit/s into the egress");
        }
    }

    #[test]
    fn slow_ingresses_share_a_fast_egress_side_by_side() {
        // 8 hosts at 1 Gbps into a 10 Gbps bottleneck: transfers out of the 1 Gbps ingresses take 4 Gbps each
        // and overlap, the egress side taking one every frame / 40 Gbps, so the bottleneck carries all 8 Gbps
        // on the left switch; on the right one the 10 Gbps ingress feeds 8 egresses at 1 Gbps side by side
        let rows: Vec<String> = (0..8).map(|i| format!(r#"{{"src": {i}, "dst": {}, "size_bytes": 2000000, "start_s": 0.0}}"#, 8 + i)).collect();
        let mut sim = Sim::from_json(&format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "dumbbell", "left": 8, "right": 8, "link_rate": "1Gbps",
                 "bottleneck_rate": "10Gbps", "buffer": "1MB"}},
                "scheme": {{"preset": "fh", "tcp": {{"initial_window": 100, "rwnd": "1MB"}}}}, "workload": [{{"kind": "flows", "rows": [{}]}}]}}"#,
            rows.join(",")
        ))
        .unwrap();
        // one end of the bottleneck link (the data goes out of whichever end faces the receiver)
        let b = (0..sim.fab.ports.len() as u32).find(|&p| sim.fab.topo.links[sim.fab.ports[p as usize].link as usize].tier == "bottleneck").unwrap();
        sim.run_until(Time::from_us(200));
        let t0 = (sim.fab.tx_count[b as usize].bytes, sim.fab.tx_count[sim.fab.ports[b as usize].peer as usize].bytes);
        sim.run_until(Time::from_us(1200));
        let t1 = (sim.fab.tx_count[b as usize].bytes, sim.fab.tx_count[sim.fab.ports[b as usize].peer as usize].bytes);
        let gbps = ((t1.0 - t0.0).max(t1.1 - t0.1)) as f64 * 8.0 / 1e-3 / 1e9;
        assert!(gbps > 7.5, "the bottleneck carried {gbps:.2} Gbit/s of the 8 offered");
        let delivered: u64 = (0..sim.fab.ports.len())
            .filter(|&p| sim.node_name(sim.fab.ports[p].node) == "right" && sim.fab.topo.links[sim.fab.ports[p].link as usize].tier == "host")
            .map(|p| sim.fab.tx_count[p].bytes)
            .sum();
        let out_gbps = delivered as f64 * 8.0 / 1.2e-3 / 1e9;
        assert!(out_gbps > 6.5, "the right switch delivered {out_gbps:.2} Gbit/s to its 8 hosts");
    }
}
