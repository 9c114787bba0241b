//! The switch's control flow, written once for the simulator and the live forwarder and for both buffer
//! models (`BufferModel`): an arrival taken into the switch's buffer (`Switch::arrive`: a CIOQ ingress, or a
//! shared-buffer switch's MMU and egress), and for CIOQ a packet entering an ingress (PFC's checks), the
//! crossbar's arbiter (which head of an ingress crosses next: strict
//! priority; a head whose egress is full or whose egress side is busy waits among that egress's waiters;
//! who goes when an egress frees: the waiters, highest blocked priority first, in arrival order) and the end
//! of a transfer. The steps that change state are `fabric::pipeline`'s (CIOQ) and `fabric::shared`'s (the
//! shared buffer's MMU, DIBS's detour port); the driver supplies the effects:
//! where a head goes (`Switch::head`, after its own checks: a dead route, pFabric's admission), what a
//! started transfer or a busy egress side means to it (an event, or a poll deadline), how a PFC frame
//! leaves, what entering an egress does (marking, the transmitter), and what becomes of an arrival the
//! buffer refuses (a detour, a drop).

use super::{BufferModel, Fabric};
use crate::mechanisms::crossbar::Waiters;
use crate::mechanisms::pfc::{DataCheck, PfcFrame};
use crate::mechanisms::queue::Links;
use crate::packet::PacketId;
use detailsim_engine::Time;

/// What the driver finds at the head of an ingress queue.
pub enum Head {
    /// It crosses into egress `out`, `wire` bytes.
    Cross { out: u32, wire: u64 },
    /// The driver took it off the ingress (dropped it): look at the queue again.
    Removed,
}

/// Why a switch's buffer refused an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A CIOQ ingress has no room (or, under PFC, a lossy priority is past the lossy limit).
    Ingress,
    /// A shared-buffer switch's MMU (or the egress queue's own bound) refused it.
    Shared(crate::mechanisms::mmu::Refusal),
}

/// A driver of the switch (the simulator, the live forwarder): its control flow is the provided
/// methods; the rest are the effects they ask for (schedule, transmit, drop, pause).
pub trait Switch {
    type Links: Links;
    /// An arrival's head joins behind an egress's waiters instead of taking a free egress first (outside a
    /// round of retries): the live forwarder's, whose rounds run at polls, not the moment the egress frees.
    const WAITERS_FIRST: bool;
    fn now(&self) -> Time;
    fn fab(&mut self) -> &mut Fabric;
    /// The network and the links its queues thread their packets through, borrowed together.
    fn net(&mut self) -> (&mut Fabric, &mut Self::Links);
    /// PFC is on (the scheme's flow control), and the count of data frames a paused priority may still
    /// bring before its sender counts as ignoring the pause.
    fn pfc_on(&self) -> bool;
    fn ignore_limit(&self) -> u32;
    /// Put PFC frame `f`, already recorded by ingress `port`'s component, on its way to the peer.
    fn send_pfc(&mut self, port: u32, f: PfcFrame);
    /// The peer of ingress `port` keeps sending priority `prio`, paused, past the limit.
    fn pfc_ignored(&mut self, port: u32, prio: u8);
    /// The egress and bytes of a packet that has crossed (or is crossing) the crossbar.
    fn crossed(&self, pid: PacketId) -> (u32, u8, u64);
    /// Packet `pid` (`prio`, `wire` bytes, its room reserved) has crossed into egress `out`: it joins the
    /// queue as the egress's marker says, and the transmitter may start it.
    fn enter_egress(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64);
    /// Where the head `pid` (priority `prio`) of ingress `inp` goes.
    fn head(&mut self, inp: u32, prio: u8, pid: PacketId) -> Head;
    /// A transfer out of `inp` started: it ends at `done`.
    fn crossing(&mut self, inp: u32, pid: PacketId, done: Time);
    /// Heads wait for egress `out`'s crossbar side, which frees at `at`: let them retry then.
    fn retry_at(&mut self, out: u32, at: Time);
    /// A CIOQ ingress `port` has no room for `wire` bytes of `prio`: the driver may make some (priority
    /// eviction) before admission is decided.
    fn make_room(&mut self, port: u32, prio: u8, wire: u64);
    /// An arrival that enters its egress at once (a shared-buffer switch), `wire` bytes bound to `out`: the
    /// egress's own admission (pFabric's); false when the driver dropped it.
    fn admit_at(&mut self, port: u32, out: u32, pid: PacketId, wire: u64) -> bool;
    /// Packet `pid` entered the switch at ingress `port` (a shared-buffer switch charges it there until it
    /// leaves; the driver keeps that with the packet).
    fn entered_by(&mut self, pid: PacketId, port: u32);
    /// The buffer refused packet `pid` (`prio`, `wire` bytes, in at `port`, bound to `out`): the driver
    /// detours or drops it. `Some(d)`: at a shared-buffer switch, it enters egress `d` instead (its MMU
    /// admits it there); None: the driver disposed of it.
    fn refused(&mut self, port: u32, pid: PacketId, out: u32, prio: u8, wire: u64, why: Refused) -> Option<u32>;

    /// Packet `pid` (`prio`, `wire` bytes) arrived at switch port `port`, routed to egress `out`: it enters the
    /// switch's buffer as the buffer model says (a CIOQ ingress queue, or a shared-buffer switch's egress at
    /// once), or the driver detours or drops it (`refused`).
    #[inline(always)]
    fn arrive(&mut self, port: u32, pid: PacketId, out: u32, prio: u8, wire: u64) {
        if self.fab().model() == BufferModel::Shared {
            self.shared_arrive(port, pid, out, prio, wire);
            return;
        }
        if !self.fab().ports[port as usize].ing.has_room(wire) {
            self.make_room(port, prio, wire);
        }
        let pfc = self.pfc_on();
        if !self.fab().ingress_admits(port, prio, wire, pfc) {
            self.refused(port, pid, out, prio, wire, Refused::Ingress);
            return;
        }
        self.ingress_push(port, prio, pid, wire);
    }

    /// A shared-buffer switch: the arrival enters egress `out` at once if the switch's MMU admits it,
    /// charged to ingress `port` and priority `prio` and to the egress (under PFC the ingress may PAUSE);
    /// one it refuses is the driver's to detour (to an egress the MMU admits it to) or drop.
    #[inline(never)]
    fn shared_arrive(&mut self, port: u32, pid: PacketId, mut out: u32, prio: u8, wire: u64) {
        if !self.admit_at(port, out, pid, wire) {
            return;
        }
        self.entered_by(pid, port);
        if let Err(r) = self.fab().shared_admits(port, out, prio, wire) {
            match self.refused(port, pid, out, prio, wire, Refused::Shared(r)) {
                Some(d) => out = d,
                None => return,
            }
        }
        let (now, pfc) = (self.now(), self.pfc_on());
        if let Some(f) = self.fab().shared_charge(now, port, out, prio, wire, pfc) {
            self.send_pfc(port, f);
        }
        self.fab().reserve_egress(now, out, prio, wire);
        self.enter_egress(out, pid, prio, wire);
    }

    /// A shared-buffer switch: a packet that came in at `inp_lp` (its ingress's index on the switch; `prio`,
    /// `wire` bytes) left egress `out` (sent or dropped there): its bytes leave the MMU, and the ingress may
    /// resume.
    #[inline]
    fn shared_left(&mut self, inp_lp: u32, out: u32, prio: u8, wire: u64) {
        let (now, pfc) = (self.now(), self.pfc_on());
        if let Some((inp, f)) = self.fab().shared_release(now, inp_lp, out, prio, wire, pfc) {
            self.send_pfc(inp, f);
        }
    }

    /// The ingress bytes of switch port `port` changed: send PAUSE / UNPAUSE as the thresholds say.
    #[inline(always)]
    fn pfc_check(&mut self, port: u32) {
        if !self.pfc_on() {
            return;
        }
        let now = self.now();
        if let Some(f) = self.fab().pfc_check(now, port) {
            self.send_pfc(port, f);
        }
    }

    /// A data frame of priority `prio` arrived at switch ingress `port`: under PFC, one of a priority this
    /// ingress has paused is checked against the pause (resend it, or the sender ignores it).
    #[inline(always)]
    fn pfc_arrival(&mut self, port: u32, prio: u8) {
        if !self.pfc_on() || !self.fab().pfc[port as usize].ingress.enabled {
            return;
        }
        let (now, limit) = (self.now(), self.ignore_limit());
        match self.fab().pfc[port as usize].ingress.on_data(now, prio, limit) {
            DataCheck::Fine | DataCheck::Reported => {}
            DataCheck::Resend(f) => self.send_pfc(port, f),
            DataCheck::Ignoring => self.pfc_ignored(port, prio),
        }
    }

    /// Packet `pid` (`prio`, `wire` bytes), admitted, joins ingress `port`: PFC checks the ingress, and the
    /// crossbar may take it.
    #[inline(always)]
    fn ingress_push(&mut self, port: u32, prio: u8, pid: PacketId, wire: u64) {
        let (fab, links) = self.net();
        fab.ports[port as usize].ing.push(prio, pid, wire, links);
        self.pfc_check(port);
        self.xbar_try(port);
    }

    /// The transfer out of ingress `inp` ended: its bytes leave the ingress (PFC may resume), the packet
    /// enters its egress, and the arbiter goes on.
    #[inline]
    fn xbar_done(&mut self, inp: u32) {
        let pid = self.fab().ports[inp as usize].xbar.in_pkt;
        let (out, prio, wire) = self.crossed(pid);
        self.ingress_end(inp, prio, wire);
        self.fab().ports[out as usize].eg.crossing -= 1;
        self.enter_egress(out, pid, prio, wire);
        let waiting = self.fab().ports[out as usize].waiting;
        self.transfer_ended(inp, out, waiting);
    }

    /// The transfer out of ingress `inp` (a packet of `prio`, `wire` bytes) ended on its ingress side: its
    /// bytes leave the ingress, and PFC may resume its sender. (Its packet's side is the driver's: the
    /// simulator's folded transfers, `sim/fold.rs`, end here alone.)
    #[inline(always)]
    fn ingress_end(&mut self, inp: u32, prio: u8, wire: u64) {
        self.fab().xbar_end(inp, prio, wire);
        self.pfc_check(inp);
    }

    /// Start moving the highest-priority movable head of ingress `inp` across the crossbar. About half the
    /// calls find its side busy or nothing queued: that test is inlined into the caller, the rest is a call.
    #[inline(always)]
    fn xbar_try(&mut self, inp: u32) {
        let p = &self.fab().ports[inp as usize];
        if p.xbar.in_busy || p.ing.nonempty == 0 {
            return;
        }
        self.xbar_try_heads(inp);
    }

    /// `xbar_try` past its idle test: try the heads of `inp`'s priorities, highest first.
    #[inline(never)]
    fn xbar_try_heads(&mut self, inp: u32) {
        let now = self.now();
        let mut mask = self.fab().ports[inp as usize].ing.nonempty;
        while mask != 0 {
            let prio = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            let pid = self.fab().ports[inp as usize].ing.head(prio).expect("non-empty priority");
            let Head::Cross { out, wire } = self.head(inp, prio, pid) else {
                mask = self.fab().ports[inp as usize].ing.nonempty;
                continue;
            };
            let (fab, links) = self.net();
            let e = &mut fab.ports[out as usize];
            let fits = e.eg.fits(prio, wire);
            let behind = Self::WAITERS_FIRST && e.waiting && fab.round_of != Some(out);
            if fits && !behind && e.xbar.out_free(now) {
                let done = fab.xbar_start(now, inp, out, prio, pid, wire, &*links);
                self.crossing(inp, pid, done);
                return;
            }
            // the egress side is busy with another transfer: retry when it frees (when that is also when the
            // transfer's end comes, as with equal port rates, that end lets the waiters retry)
            let wake = if fits && !behind { e.xbar.wake_at() } else { None };
            fab.wait(out, prio, inp);
            if let Some(at) = wake {
                self.retry_at(out, at);
            }
        }
    }

    /// Room opened in egress `port`, or its crossbar side freed: let the blocked ingress ports retry, those
    /// whose blocked head has the highest priority first (the crossbar arbiter honours strict priority), ties
    /// in arrival order. Once a transfer into `port` has started its egress side is busy, and the rest would
    /// only fail and register again: they stay in the list, in order, untried.
    fn wake_waiters(&mut self, port: u32) {
        let now = self.now();
        let fab = self.fab();
        let pt = &mut fab.ports[port as usize];
        if !pt.xbar.out_free(now) {
            // a transfer into this egress is under way: nobody can start now; make sure they retry when its
            // side frees (with its transfer's end, or a wake-up of its own)
            if let Some(at) = pt.xbar.wake_at() {
                self.retry_at(port, at);
            }
            return;
        }
        // the waiting list moves out for a round of retries (a scratch vector takes its place, so no
        // allocation per wake); the arbiter orders it
        let mut round = std::mem::take(&mut fab.round);
        fab.take_round(port, &mut round);
        let outer = fab.round_of.replace(port);
        while let Some(w) = Waiters::next_of(&mut round) {
            self.xbar_try(w);
            if !self.fab().ports[port as usize].xbar.out_free(now) {
                break;
            }
        }
        // those that tried and registered again come first; the untried follow in their order (their heads
        // did not change meanwhile; one that no longer waits for `port` just retries when woken)
        let fab = self.fab();
        fab.round_of = outer;
        fab.end_round(port, &mut round);
        fab.round = round;
    }

    /// Egress `out` took a packet (or its side's wake-up came): if its side is free, its waiters go.
    #[inline]
    fn egress_freed(&mut self, out: u32) {
        let now = self.now();
        let pt = &self.fab().ports[out as usize];
        if pt.waiting && pt.xbar.out_free(now) {
            self.wake_waiters(out);
        }
    }

    /// The transfer out of ingress `inp` into egress `out` ended (the packet is in the egress): the arbiter
    /// picks the next transfer into `out` among the ingresses waiting for it and this one (highest blocked
    /// priority first, this ingress last on ties), then this ingress moves what it can. `waiting`: whether
    /// ingresses wait for `out` (`Port::waiting`, or the fabric's bit of it where the caller has not read
    /// the egress's line: `Fabric::waiting_far`).
    #[inline]
    fn transfer_ended(&mut self, inp: u32, out: u32, waiting: bool) {
        let now = self.now();
        let fab = self.fab();
        debug_assert_eq!(waiting, fab.ports[out as usize].waiting);
        if waiting && fab.ports[out as usize].xbar.out_free(now) {
            // this ingress competes too, behind the others of its priority (it may have no head for `out`:
            // then its try moves whatever it can and it stays out of the list)
            let ing = &fab.ports[inp as usize].ing;
            if ing.nonempty != 0 {
                let prio = ing.nonempty.trailing_zeros() as u8;
                fab.wait(out, prio, inp);
            }
            self.wake_waiters(out);
        }
        self.xbar_try(inp);
    }
}
