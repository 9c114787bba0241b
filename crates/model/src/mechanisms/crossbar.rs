//! The crossbar of a CIOQ switch: per port, its ingress side (one transfer out at a time) and its egress
//! side (transfers in one after another, each taking frame / (speedup x the egress line rate)), and the
//! arbiter's list of ingresses blocked on an egress.
//!
//! ```text
//!   ingress i ──(frame / (S x rate_i))──► egress e      at most one transfer out of i, one into e
//!   blocked: i joins e's waiters with the priority of its head; when e frees, the first of the highest
//!            blocked priority goes first (those that tried and blocked again keep their place ahead of
//!            the untried)
//! ```
//! A transfer: `start_out` on the egress, `start_in` on the ingress (the same port may be both), then
//! `ends_with` on the egress. The component keeps the state and the policy; the caller says what a frame's crossing takes on each
//! side (it knows the rates and packets) and turns the answers into events: the end of a transfer on the
//! ingress side, and a wake-up of an egress's waiters when its side frees and no transfer end will do it.

use crate::packet::PacketId;
use detailsim_engine::Time;

/// Both sides of one port's crossbar connection. 16 bytes, kept in the port's first cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Crossbar {
    /// Egress side: busy with the last transfer into this egress until then.
    pub out_free_at: Time,
    /// Ingress side: the packet crossing (valid while `in_busy`).
    pub in_pkt: PacketId,
    pub in_busy: bool,
    /// Egress side: a wake-up of the waiters is scheduled.
    pub out_wake_pending: bool,
    /// Egress side: it frees exactly when the last transfer into it ends on its ingress side, whose end
    /// lets the waiters retry (no wake-up needed).
    pub out_frees_with_done: bool,
    /// Ingress side: the transfer under way is folded (`sim/fold.rs`: its packet is on its way to the
    /// next hop, `in_pkt` is `PacketId::MAX`) and no event ends it: the next arrival at this ingress does.
    pub in_lazy: bool,
}

const _: () = assert!(std::mem::size_of::<Crossbar>() == 16);

impl Default for Crossbar {
    fn default() -> Self {
        Crossbar { out_free_at: Time::ZERO, in_pkt: PacketId::MAX, in_busy: false, out_wake_pending: false, out_frees_with_done: true, in_lazy: false }
    }
}

impl Crossbar {
    /// The egress side can take a transfer now.
    #[inline(always)]
    pub fn out_free(&self, now: Time) -> bool {
        now >= self.out_free_at
    }
    /// A transfer into this egress side starts now and holds it for `out_time`.
    #[inline]
    pub fn start_out(&mut self, now: Time, out_time: Time) {
        debug_assert!(self.out_free(now));
        self.out_free_at = now + out_time;
    }
    /// A transfer into this egress side with no ingress side (a DIBS detour the forwarding engine writes
    /// from a full ingress): it starts when the side is free, now or after the transfers already under way,
    /// and holds it for `out_time`. When it ends (the caller's event, which lets the waiters retry).
    #[inline]
    pub fn queue_out(&mut self, now: Time, out_time: Time) -> Time {
        let end = self.out_free_at.max(now) + out_time;
        self.out_free_at = end;
        self.out_frees_with_done = true;
        end
    }
    /// This ingress side starts moving `pkt` now for `in_time`: when the transfer ends (the caller's event).
    #[inline]
    pub fn start_in(&mut self, now: Time, pkt: PacketId, in_time: Time) -> Time {
        debug_assert!(!self.in_busy);
        self.in_busy = true;
        self.in_pkt = pkt;
        now + in_time
    }
    /// The transfer that started into this egress side ends on its ingress side at `done` (then that end
    /// lets the waiters retry, if this side is free by then).
    #[inline]
    pub fn ends_with(&mut self, done: Time) {
        self.out_frees_with_done = self.out_free_at == done;
    }
    /// The transfer out of this ingress side ended: the packet that crossed.
    #[inline]
    pub fn finish(&mut self) -> PacketId {
        debug_assert!(self.in_busy);
        self.in_busy = false;
        std::mem::replace(&mut self.in_pkt, PacketId::MAX)
    }
    /// An ingress is blocked on this egress side while a transfer into it is under way: when to wake the
    /// waiters, unless a wake-up is already scheduled or the transfer's end will do it.
    #[inline]
    pub fn wake_at(&mut self) -> Option<Time> {
        if self.out_wake_pending || self.out_frees_with_done {
            return None;
        }
        self.out_wake_pending = true;
        Some(self.out_free_at)
    }
    /// The scheduled wake-up fired.
    #[inline]
    pub fn woken(&mut self) {
        self.out_wake_pending = false;
    }
}

/// Ingresses blocked on one egress, with the priority of their highest head blocked on it.
#[derive(Debug, Clone, Default)]
pub struct Waiters(Vec<(u8, u32)>);

impl Waiters {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Ingress `inp` waits with a head of priority `prio` (one already waiting keeps its place, with the
    /// higher of the two priorities).
    #[inline]
    pub fn add(&mut self, prio: u8, inp: u32) {
        match self.0.iter_mut().find(|w| w.1 == inp) {
            Some(w) => w.0 = w.0.min(prio),
            None => self.0.push((prio, inp)),
        }
    }
    /// Take the list out for a round of retries (`round` must be empty; it keeps its capacity).
    pub fn take_round(&mut self, round: &mut Vec<(u8, u32)>) {
        debug_assert!(round.is_empty());
        std::mem::swap(&mut self.0, round);
    }
    /// The next ingress of a round to retry: the first of the highest blocked priority.
    pub fn next_of(round: &mut Vec<(u8, u32)>) -> Option<u32> {
        let i = (0..round.len()).min_by_key(|&i| round[i].0)?;
        Some(round.remove(i).1)
    }
    /// End a round: those that tried and blocked again (already back in the list) come first; the untried
    /// follow in their order. `round` is left empty.
    pub fn end_round(&mut self, round: &mut Vec<(u8, u32)>) {
        let k = self.0.len();
        for &(p, w) in round.iter() {
            match self.0[..k].iter_mut().find(|x| x.1 == w) {
                Some(x) => x.0 = x.0.min(p),
                None => self.0.push((p, w)),
            }
        }
        round.clear();
    }
    /// Everyone waiting, in order (the list is emptied).
    pub fn drain(&mut self) -> Vec<(u8, u32)> {
        std::mem::take(&mut self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_holds_both_sides_and_the_egress_side_frees_after_its_own_time() {
        let (mut i, mut e) = (Crossbar::default(), Crossbar::default());
        let now = Time(1_000);
        assert!(e.out_free(now));
        // 4x speedup on a 10 Gbps ingress, into a 1 Gbps egress: the egress side is the slower one
        e.start_out(now, Time(3_000));
        let done = i.start_in(now, 7, Time(300));
        e.ends_with(done);
        assert_eq!((done, i.in_busy, i.in_pkt), (Time(1_300), true, 7));
        assert!(!e.out_free(Time(3_999)) && e.out_free(Time(4_000)));
        assert!(!e.out_frees_with_done, "its side outlasts the transfer's end");
        // a blocked ingress needs a wake-up at 4000, once
        assert_eq!(e.wake_at(), Some(Time(4_000)));
        assert_eq!(e.wake_at(), None, "already scheduled");
        e.woken();
        assert_eq!(i.finish(), 7);
        assert!(!i.in_busy);
    }

    #[test]
    fn equal_sides_need_no_wake_up_beyond_the_transfer_end() {
        let (mut i, mut e) = (Crossbar::default(), Crossbar::default());
        e.start_out(Time(0), Time(300));
        let done = i.start_in(Time(0), 1, Time(300));
        e.ends_with(done);
        assert_eq!(done, Time(300));
        assert!(e.out_frees_with_done);
        assert_eq!(e.wake_at(), None, "the transfer's end wakes the waiters");
    }

    #[test]
    fn the_arbiter_serves_the_highest_blocked_priority_first_and_keeps_retried_ones_ahead() {
        let mut w = Waiters::default();
        w.add(3, 10);
        w.add(1, 11);
        w.add(1, 12);
        w.add(5, 10); // already waiting at 3: stays at 3
        w.add(0, 12); // raises 12 to priority 0
        let mut round = Vec::new();
        w.take_round(&mut round);
        assert!(w.is_empty());
        assert_eq!(Waiters::next_of(&mut round), Some(12));
        // 12 blocked again (on its next head, priority 2) while 11 and 10 were not tried
        w.add(2, 12);
        w.end_round(&mut round);
        assert!(round.is_empty());
        assert_eq!(w.drain(), vec![(2, 12), (3, 10), (1, 11)]);
    }
}
