//! Folded crossbar transfers (issue 51's sanctioned change of tie order): a transfer whose egress nothing
//! can touch before it ends does at its start what its end would do, and its ingress end gets an event
//! only if a packet arrives at that ingress before it.
//!
//! ```text
//!   unfolded:  Arrive ─► xbar_start ══ transfer ══► XbarDone: ingress bytes go, packet enters egress ─► …
//!   folded:    Arrive ─► xbar_start ─► idle egress: frame on the wire from `done`, Arrive (peer) scheduled
//!                                  └─► busy egress (its frame outlasts `done`): packet queued now
//!              ingress end: lazy; the next arrival there settles it (ended: as `XbarDone` would have,
//!              before the arrival queues; not yet: an `XbarEnd` event), as do samples and the run's end
//! ```
//!
//! A transfer folds when nothing can enter, leave or hold its egress before it ends and nothing waits
//! behind it: no other transfer into the egress is under way and none can start before `done` (its
//! crossbar side stays taken until then), no ingress waits for the egress and no round of its waiters'
//! retries is under way (they are out of its list for the round), the ingress holds nothing else and has
//! no PAUSE out. Into an idle egress (its transmitter free by `done`, nothing queued) no PAUSE may
//! be able to hold the frame (`Port::fold_idle`: every priority towards a host, which sends no PAUSE;
//! towards a switch the lossy priorities, and under ALB the lossless ones too when no PAUSE is in force or
//! on its way to land by `done`, `Sim::fold_alb_idle`), and ALB, which reads the egress's drain bytes
//! meanwhile, finds the frame's bytes there until `done` (`Fold::held`); into a busy one (its frame on the wire
//! past `done`) nothing leaves the queue before `done` either. Either way the packet is marked as it
//! would have been (the queue holds the same bytes at the start as at the end), takes the same place, and
//! its frame starts when it would have; the time-averaged occupancy counts its bytes to `done`
//! (`PrioQueue::release_at`), samples see them there (`sampled_egress`), the trace records the frame at
//! its start. Ingresses that wait for the egress meanwhile get a wake-up of its side (the end that would
//! have woken them has no event). What changes is the order of events that tie with the folded ones (an
//! arrival pushed earlier comes out earlier among equal times, `EventQueue`): a run in which no two
//! events tie gives the unfolded run's results exactly (`fold_tests.rs`), with fewer events.
//!
//! Not folded: RED (its marker draws random numbers and ages its average by time), pFabric (its admission
//! may evict from the egress), DIBS (detours enter egresses outside the crossbar's turns), faults (a link
//! may die before the transfer ends), HPCC's telemetry and a shared buffer's MMU (the egress's tx hooks).

use crate::fabric::switch::Switch;
use crate::packet::PacketId;
use crate::sim::{Ev, Sim};
use detailsim_engine::Time;

/// A folded transfer out of an ingress: it ends at `end`, when the `wire` bytes of priority `prio` leave
/// the ingress buffer; its packet went to egress `out`, whose transmitter was busy until `prev_busy`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Folded {
    pub end: Time,
    pub prev_busy: Time,
    pub out: u32,
    pub wire: u16,
    pub prio: u8,
    /// Its frame started on the wire at `end` (into an idle egress; else it joined a busy egress's queue).
    pub started: bool,
    /// Its bytes have left the ingress (`settle_all_in`: a sample or a pause of the run came after its
    /// end); what else its end does waits for the next arrival at the ingress all the same.
    pub bytes_gone: bool,
}

/// The run's folding: whether it folds, towards which egresses, and the folded transfers' records.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fold {
    /// The scheme allows folding (`Sim::fold_allowed`).
    pub on: bool,
    /// Per (local) port: the folded transfer out of its ingress, valid while its crossbar side is busy
    /// with `in_pkt == PacketId::MAX`.
    pub ins: Vec<Folded>,
    /// Per (local) port, with time-series samples only: the last folded frame's start and bytes (a sample
    /// before its start counts them in the egress, where the unfolded transfer would still be).
    pub frames: Vec<(Time, u32)>,
    /// Transfers folded: into an idle egress (their frame started), into a busy one (their packet queued).
    pub folded: [u64; 2],
    /// ALB reads the egresses' drain bytes (`Sim::fold_alb_idle`).
    pub alb: bool,
    /// `Sim::alb_fold_margin`, worked out from the whole fabric (None: under ALB no transfer towards a
    /// switch on a lossless priority folds).
    pub margin: Option<Time>,
    /// With a margin, every switch's egress towards a switch (of this part) runs PFC on its ingress, so its
    /// stop delay is one the margin was worked out from: longer than twice any transfer, and `fold_alb_idle`
    /// need not read it (the port's PFC state, which at k = 32 missed the cache at nearly every such fold).
    pub stops_longer: bool,
    /// Under ALB, transfers into idle egresses towards switches: folded, and not folded because a PAUSE
    /// held their priority or one on its way could.
    pub alb_folds: [u64; 2],
    /// Per (local) port, the bytes of a folded frame into it that the egress still holds as the unfolded
    /// transfer would (until its end; `drain_bytes` no longer counts them).
    pub held: Vec<Held>,
    /// Under ALB with PFC: the PFC frames on their way to this part's egresses (port, when it lands).
    pub pfc_way: Vec<(u32, Time)>,
}

impl Fold {
    /// A PFC frame landed at egress `port` now: no longer on its way (every one was listed when it was
    /// sent, or delivered from another part).
    pub(crate) fn pfc_landed(&mut self, port: u32, now: Time) {
        let i = self.pfc_way.iter().position(|&w| w == (port, now));
        debug_assert!(i.is_some(), "a PFC frame to port {port} at {} ps that was not on its way", now.0);
        if let Some(i) = i {
            self.pfc_way.swap_remove(i);
        }
    }
}

/// Bytes of a folded frame into an idle egress still in that egress until `until` (ALB's drain bytes).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Held {
    pub until: Time,
    pub wire: u32,
    pub prio: u8,
}

impl Sim {
    /// Whether this run's scheme and scenario let transfers fold (see the module's list).
    pub(crate) fn fold_allowed(&self) -> bool {
        use crate::config::{EcnMarking, Scheduling};
        self.fab.model() == crate::fabric::BufferModel::Cioq
            && self.scheme.ecn_marking != EcnMarking::Red
            && self.scheme.scheduling != Scheduling::Pfabric
            && !self.scheme.dibs.enabled
            && !self.int_on
            && self.faults.is_empty()
    }

    /// The records fit the ports (a part's are its own; called before a stretch of the run), and each
    /// egress knows the priorities that may fold into it idle (`Port::fold_idle`).
    #[cold]
    pub(crate) fn fold_ready(&mut self) {
        let n = self.fab.ports.len();
        let lossless = if self.pfc_on() { self.scheme.pfc.priorities } else { 0 };
        // under ALB every priority towards a switch too, a lossless one when no PAUSE can hold the frame and
        // with its bytes held for ALB to read (`Sim::fold_alb_idle`)
        self.fold.alb = self.scheme.load_balancing == crate::config::LoadBalancing::Adaptive;
        let mut stops_longer = self.fold.margin.is_some();
        for i in 0..n {
            let to_host = !self.fab.nodes[self.fab.ports[i].peer_node as usize].is_switch;
            self.fab.ports[i].fold_idle = if to_host || self.fold.alb { u8::MAX } else { !lossless };
            self.fab.ports[i].fold_alb = self.fold.alb && !to_host;
            // (a transfer folds into a switch's egress: a host's NIC is never one)
            let in_switch = self.fab.nodes[self.fab.ports[i].node as usize].is_switch;
            stops_longer &= !(self.fab.ports[i].fold_alb && in_switch) || self.fab.pfc.get(i).is_some_and(|f| f.ingress.enabled);
        }
        self.fold.stops_longer = stops_longer;
        if self.fold.alb {
            self.fold.held.resize(n, Held::default());
        }
        self.fold.ins.resize(n, Folded::default());
        if self.rec.sample_every.is_some() {
            self.fold.frames.resize(n, (Time::ZERO, 0));
        }
    }

    /// A transfer of `pid` out of ingress `inp` started and ends at `done`: fold it if its egress is idle
    /// until then (see the module). True: folded (no `XbarDone`).
    #[inline]
    pub(crate) fn try_fold(&mut self, inp: u32, pid: PacketId, done: Time) -> bool {
        let p = self.pkts.get(pid);
        let (out, prio, wire) = (p.out_port, p.prio, p.wire as u64);
        // the ingress end needs no event: nothing waits behind the transfer, and no PAUSE of this
        // ingress waits for its bytes to go (else the fold would only trade one event for another)
        if self.fab.ports[inp as usize].ing.nonempty != 0 || (self.pfc_on() && self.fab.pfc[inp as usize].ingress.sent != 0) {
            return false;
        }
        let e = &self.fab.ports[out as usize];
        // no other transfer into the egress is under way, none can start before `done` (its crossbar side
        // is taken until then), and nobody waits for it (nor is a round of its waiters under way: they are
        // out of its list meanwhile, `Switch::wake_waiters`)
        if e.eg.crossing != 1 || e.xbar.out_free_at < done || e.waiting || !e.up || e.tx_hooks || self.fab.round_of == Some(out) {
            return false;
        }
        let (e_idle, prev_busy) = (e.tx_busy_until <= done, e.tx_busy_until);
        if !e_idle {
            // the frame on the wire outlasts the transfer: nothing leaves the queue before `done` either, so
            // the packet joins it now as it would then (same marking, same place)
            self.fab.ports[out as usize].eg.crossing = 0;
            self.fold.folded[1] += 1;
            self.enter_egress_at(out, pid, prio, wire);
        } else if e.eg.pkts == 1 {
            // an idle egress: its frame goes on the wire as of `done`, unless a PAUSE could hold it or a
            // forwarding choice reads the egress's bytes meanwhile (`Port::fold_idle`)
            if e.fold_idle & (1 << prio) == 0 {
                return false;
            }
            if e.fold_alb && !self.fold_alb_idle(out, prio, wire, done) {
                return false;
            }
            self.fab.ports[out as usize].eg.crossing = 0;
            self.fold.folded[0] += 1;
            self.start_folded(out, pid, prio, wire, done);
        } else {
            // queued frames go before `done`: the packet's place among them is decided then
            return false;
        }
        // no transfer's end will let the waiters that come meanwhile retry: a wake-up of the side will
        self.fab.ports[out as usize].xbar.out_frees_with_done = false;
        self.fold_ingress(inp, out, prio, wire, done, e_idle, prev_busy);
        true
    }

    /// Under ALB, a transfer into idle egress `out` towards a switch folds only if no PAUSE can hold its
    /// frame at `done`: its priority is not paused now, no PFC frame on its way to the egress lands by
    /// `done`, and one the peer sends from now on lands after it (the transfer is shorter than the link's
    /// stop delay, the same at both ends). A split run sees the same frames: a window is shorter than a
    /// stop delay less the longest transfer (`Sim::least_reach`), so a frame from another part that lands
    /// by `done` was sent before the window and has been delivered. The frame's bytes stay in the egress's
    /// drain counter until `done`, as ALB would read them (`held`).
    #[inline]
    fn fold_alb_idle(&mut self, out: u32, prio: u8, wire: u64, done: Time) -> bool {
        let e = &self.fab.ports[out as usize];
        // only egresses towards switches are checked (`Port::fold_alb`): towards a host nothing reads the bytes
        debug_assert!(self.fab.nodes[e.peer_node as usize].is_switch);
        if self.pfc_on() && self.scheme.pfc.priorities & (1 << prio) != 0 {
            // (the transfer is no longer than the margin, which is less than half of every stop delay it was
            // worked out from: `Fold::stops_longer`)
            debug_assert!(!self.fold.stops_longer || done.0 - self.now.0 < self.fab.pfc[out as usize].ingress.stop_delay.0);
            if !self.fold.stops_longer && (self.fold.margin.is_none() || done.0 - self.now.0 >= self.fab.pfc[out as usize].ingress.stop_delay.0) {
                return false;
            }
            if e.paused & (1 << prio) != 0 || self.fold.pfc_way.iter().any(|&(p, at)| p == out && at <= done) {
                self.fold.alb_folds[1] += 1;
                return false;
            }
        }
        self.fold.alb_folds[0] += 1;
        self.fold.held[out as usize] = Held { until: done, wire: wire as u32, prio };
        true
    }

    /// The longest crossbar transfer of a full frame where transfers into idle egresses towards switches
    /// fold under ALB with PFC (`fold_alb_idle`): a split run's windows are shorter than a stop delay by
    /// it. None where they do not fold so, or where a stop delay is no more than twice that transfer (then
    /// those on lossless priorities do not fold: a window would be too short).
    pub(crate) fn alb_fold_margin(&self) -> Option<Time> {
        if !(self.fold_allowed() && self.pfc_on() && self.scheme.load_balancing == crate::config::LoadBalancing::Adaptive) {
            return None;
        }
        let frame = self.fab.framing.full_frame() as u64;
        let longest = self.fab.ports.iter().map(|p| p.xbar_time(frame)).max()?;
        let shortest_stop = (0..self.fab.ports.len())
            .filter(|&p| self.fab.nodes[self.fab.ports[p].node as usize].is_switch && self.fab.pfc[p].ingress.enabled)
            .map(|p| self.fab.pfc[p].ingress.stop_delay)
            .min()?;
        (shortest_stop.0 > 2 * longest.0).then_some(longest)
    }

    /// The folded frame of `pid` (`prio`, `wire` bytes, reserved in idle egress `out`) starts on the wire
    /// at `done`: marked as on entering the queue then, its bytes in the queue's occupancy until `done`,
    /// the transmitter busy from `done`, its arrival at the peer scheduled.
    #[inline(never)]
    fn start_folded(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64, done: Time) {
        let kept = self.mark_ecn(out, pid, wire);
        debug_assert!(kept, "only RED drops at the egress, and RED folds nothing");
        let now = self.now;
        let pt = &mut self.fab.ports[out as usize];
        pt.eg.release_at(now, done, prio, wire);
        let ser = pt.ser(wire);
        pt.tx_busy_ps += ser.0;
        pt.tx_busy_until = done + ser;
        let (arrive, peer) = (pt.tx_busy_until + pt.arrive_after, pt.peer);
        self.rec.counters.link_traversals += 1;
        let c = &mut self.fab.tx_count[out as usize];
        c.bytes += wire;
        c.packets += 1;
        if let Some(f) = self.fold.frames.get_mut(out as usize) {
            *f = (done, wire as u32);
        }
        if self.rec.trace.is_some() {
            self.trace_packet_at(out, pid, done);
        }
        self.schedule_inline(arrive, Ev::Arrive { port: peer, pkt: pid });
    }

    /// The ingress side of a folded transfer out of `inp` into `out` (`prio`, `wire` bytes), ending at
    /// `done`: lazy (its end comes with the next arrival at `inp`, `settle_in`).
    #[inline]
    #[allow(clippy::too_many_arguments)] // the transfer's fields, which the caller has read anyway
    fn fold_ingress(&mut self, inp: u32, out: u32, prio: u8, wire: u64, done: Time, started: bool, prev_busy: Time) {
        self.fold.ins[inp as usize] = Folded { end: done, prev_busy, out, wire: wire as u16, prio, started, bytes_gone: false };
        let ip = &mut self.fab.ports[inp as usize];
        ip.xbar.in_pkt = PacketId::MAX;
        ip.xbar.in_lazy = true;
    }

    /// A packet arrives at ingress `port`, whose folded transfer has no event for its end: if the transfer
    /// has ended, it ends now as at its event (the arrival queues behind what its end does: the egress's
    /// waiters go first); if not, its end gets its event.
    #[cold]
    #[inline(never)]
    pub(crate) fn settle_in(&mut self, port: u32) {
        let f = self.fold.ins[port as usize];
        if self.now >= f.end {
            self.xbar_end_folded(port);
        } else {
            self.fab.ports[port as usize].xbar.in_lazy = false;
            self.schedule(f.end, Ev::XbarEnd { port });
        }
    }

    /// Every ingress whose lazy transfer has ended by now (`before`: before now) lets its bytes go: before a
    /// sample, at the end of the run, and when the run pauses (its state may be read from outside). The
    /// rest of its end (its egress's waiters' turn before the next arrival's head) still comes with that
    /// arrival (`settle_in`), so a run that pauses or samples goes on as one that does not.
    #[cold]
    pub(crate) fn settle_all_in(&mut self, before: bool) {
        if self.fold.ins.is_empty() {
            return;
        }
        for p in 0..self.fab.ports.len() {
            if self.fab.ports[p].xbar.in_lazy {
                let f = self.fold.ins[p];
                if !f.bytes_gone && (f.end < self.now || (!before && f.end == self.now)) {
                    self.fold.ins[p].bytes_gone = true;
                    self.ingress_end(p as u32, f.prio, f.wire as u64);
                }
            }
        }
    }

    /// The run is over (`now`): lazy ingress ends that came by now settle, and a folded frame that would
    /// have started after now never did (the run ended first: it finished sooner than its end limit), so
    /// what its fold counted ahead is taken back: the traversal, the port's bytes and busy time, the
    /// egress's occupancy beyond now (its packet is still crossing, as an unfolded run leaves it). Called
    /// once the run has ended (and for each part of a split run before their ports are joined).
    #[cold]
    pub(crate) fn fold_finish(&mut self) {
        self.settle_all_in(false);
        // (transfers still crossing keep their ingress bytes, as an unfolded run leaves them; a split run's
        // joined ports come without records)
        for pt in self.fab.ports.iter_mut() {
            pt.xbar.in_lazy = false;
        }
        let now = self.now;
        for p in 0..self.fold.ins.len().min(self.fab.ports.len()) {
            let f = self.fold.ins[p];
            if !f.started || f.end <= now {
                continue;
            }
            self.fold.ins[p].started = false;
            let wire = f.wire as u64;
            self.rec.counters.link_traversals -= 1;
            let c = &mut self.fab.tx_count[f.out as usize];
            c.bytes -= wire;
            c.packets -= 1;
            let pt = &mut self.fab.ports[f.out as usize];
            pt.tx_busy_ps -= pt.ser(wire).0;
            pt.tx_busy_until = f.prev_busy;
            pt.eg.area -= wire as u128 * (f.end.0 - now.0) as u128;
        }
    }

    /// The end of a folded transfer out of ingress `inp` (`Ev::XbarEnd`): its bytes leave the ingress, and
    /// the arbiter goes on as at any transfer's end.
    pub(crate) fn xbar_end_folded(&mut self, inp: u32) {
        let f = self.fold.ins[inp as usize];
        self.fab.ports[inp as usize].xbar.in_lazy = false;
        if !f.bytes_gone {
            self.ingress_end(inp, f.prio, f.wire as u64);
        }
        // as the frame's start then would have: the egress's waiters go before this ingress competes (the
        // egress's bit rather than its line: this end comes with the next arrival at the ingress, when in a
        // large fabric that line has often left the cache)
        let mut waiting = self.fab.waiting_far(f.out);
        if f.started && waiting {
            self.wake_waiters(f.out);
            waiting = self.fab.ports[f.out as usize].waiting;
        }
        self.transfer_ended(inp, f.out, waiting);
    }

    /// The priority and bytes of the transfer under way out of ingress `port` (its crossbar side busy).
    pub(crate) fn in_transit(&self, port: u32) -> (u8, u64) {
        let x = &self.fab.ports[port as usize].xbar;
        if x.in_pkt == PacketId::MAX {
            let f = self.fold.ins[port as usize];
            (f.prio, f.wire as u64)
        } else {
            let p = self.pkts.get(x.in_pkt);
            (p.prio, p.wire as u64)
        }
    }

    /// Egress bytes of `port` as a sample at `now` sees them: a folded frame that has not started yet is
    /// still in the egress (or crossing into it).
    pub(crate) fn sampled_egress(&self, port: usize) -> u64 {
        let total = self.fab.ports[port].eg.total;
        match self.fold.frames.get(port) {
            Some(&(start, wire)) if start >= self.now && wire > 0 => total + wire as u64,
            _ => total,
        }
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
pub(crate) mod tests;
