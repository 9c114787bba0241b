//! The CIOQ pipeline's steps, written once and driven by both the simulator (`sim/switch.rs`, which turns
//! what they return into events) and the live forwarder (`live/fabric.rs`, which turns it into frames and
//! poll deadlines). Each step takes `now` and its input, changes the network's state, and returns what the
//! caller has to do: a PFC frame to send, when a crossbar transfer ends, the marker's verdict.
//!
//! ```text
//!   arrival ─► ingress_admits ─► (push) ─► pfc_check ─► xbar_start ══ transfer ══► xbar_end ─► pfc_check
//!                                                                         └─► mark (egress) ─► enlist ─► dequeue
//!   PFC frame at an egress ─► pfc_receive
//! ```
//!
//! When each step runs (an arrival's, the crossbar arbiter's, a transfer's end) is `fabric::switch`'s.

use super::Fabric;
use crate::mechanisms::ecn::{Occupancy, Verdict};
use crate::mechanisms::pfc::PfcFrame;
use crate::mechanisms::queue::Links;
use crate::packet::PacketId;
use detailsim_engine::Time;

impl Fabric {
    /// Whether switch ingress `port` can take `wire` bytes of priority `prio`: room in its buffer (or in its priority's part of it) and, under
    /// PFC (`pfc_on`), a lossy priority only up to the ingress's lossy limit.
    #[inline(always)]
    pub fn ingress_admits(&self, port: u32, prio: u8, wire: u64, pfc_on: bool) -> bool {
        let ing = &self.ports[port as usize].ing;
        if !ing.fits(prio, wire) {
            return false;
        }
        if pfc_on {
            let st = &self.pfc[port as usize].ingress;
            if st.lossy(prio) && ing.total + wire > st.lossy_limit {
                return false;
            }
        }
        true
    }

    /// The ingress bytes of switch port `port` changed: the PFC frame to send now (PAUSE / UNPAUSE, as the
    /// thresholds say), already recorded by the port's component; None: nothing to send. Call with PFC on.
    #[inline(always)]
    pub fn pfc_check(&mut self, now: Time, port: u32) -> Option<PfcFrame> {
        let f = self.pfc[port as usize].ingress.check(self.ports[port as usize].ing.bytes())?;
        Some(self.pfc_record(now, port, f))
    }

    #[cold]
    #[inline(never)]
    fn pfc_record(&mut self, now: Time, port: u32, f: PfcFrame) -> PfcFrame {
        self.pfc[port as usize].ingress.send(now, f)
    }

    /// Start moving `pid` (`prio`, `wire` bytes), the head of ingress `inp` at that priority, across the
    /// crossbar into egress `out`, whose queue has room and whose crossbar side is free: the egress holds its
    /// room from now, both crossbar sides are taken, and the packet leaves the ingress queue (its bytes stay
    /// counted there until `xbar_end`). Returns when the transfer ends on the ingress side.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // the packet's fields, which the caller has read anyway
    pub fn xbar_start(&mut self, now: Time, inp: u32, out: u32, prio: u8, pid: PacketId, wire: u64, links: &impl Links) -> Time {
        let e = &mut self.ports[out as usize];
        e.eg.advance(now);
        e.eg.reserve(prio, wire);
        e.eg.crossing += 1;
        let out_time = e.xbar_time(wire);
        e.xbar.start_out(now, out_time);
        let ip = &mut self.ports[inp as usize];
        ip.ing.pop(prio, links);
        let in_time = ip.xbar_time(wire);
        let done = ip.xbar.start_in(now, pid, in_time);
        self.ports[out as usize].xbar.ends_with(done);
        done
    }

    /// The transfer out of ingress `inp` (a packet of `prio`, `wire` bytes) ended: its bytes leave the
    /// ingress (check PFC next). The packet that crossed.
    #[inline(always)]
    pub fn xbar_end(&mut self, inp: u32, prio: u8, wire: u64) -> PacketId {
        let ip = &mut self.ports[inp as usize];
        let pid = ip.xbar.finish();
        ip.ing.release(prio, wire);
        pid
    }

    /// The marker of egress (or NIC) queue `port` on a packet of priority `prio`, ECN bits `ecn` and `wire`
    /// bytes that the queue already counts (reserved or pushed): pass, mark CE, or drop (only at a switch,
    /// and never a `lossless` packet).
    #[inline]
    pub fn mark(&mut self, port: u32, prio: u8, ecn: u8, wire: u64, lossless: bool) -> Verdict {
        let pt = &self.ports[port as usize];
        let node = pt.node as usize;
        let occ = Occupancy { prio_bytes: pt.eg.prio_bytes(prio), total: pt.eg.total, pkts: pt.eg.pkts };
        // a host NIC only marks, and under PFC a lossless priority is never dropped by the AQM either
        let may_drop = self.nodes[node].is_switch && !lossless;
        let nodes = &mut self.nodes;
        let v = self.markers[port as usize].on_enqueue(occ, wire, ecn, may_drop, || nodes[node].rng.uniform());
        if v == Verdict::Mark {
            if let Some(c) = self.port_ctr.get_mut(port as usize) {
                c.ecn_marks += 1;
            }
        }
        v
    }

    /// The transmitter of `port` takes its next frame: the highest priority that is queued and not paused
    /// (by the scheduler of the egress queue), `wire(pid)` bytes, whose bytes leave the queue now. The frame,
    /// its priority, bytes and serialisation time at the port's rate; None: nothing may go.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Time, port: u32, links: &impl Links, wire: impl Fn(PacketId) -> u64) -> Option<(PacketId, u8, u64, Time)> {
        let pt = &mut self.ports[port as usize];
        let (prio, pid) = pt.eg.pop_next(!pt.paused, links)?;
        let w = wire(pid);
        pt.eg.advance(now);
        pt.eg.release(prio, w);
        Some((pid, prio, w, pt.ser(w)))
    }

    /// PFC frame `f` reached egress `port`: its pause state and the transmitter's copy of the mask follow.
    /// How many priorities became paused minus how many resumed.
    #[inline]
    pub fn pfc_receive(&mut self, now: Time, port: u32, f: PfcFrame) -> i32 {
        // without PFC there is no pause state (an `ignore_pause` fault still lifts "any pause": none)
        let Some(st) = self.pfc.get_mut(port as usize) else { return 0 };
        let e = &mut st.egress;
        let delta = e.on_frame(now, f);
        // the transmitter's copy (in the port's first cache line)
        self.ports[port as usize].paused = e.paused;
        delta
    }
}
