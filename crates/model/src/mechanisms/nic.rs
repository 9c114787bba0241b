//! The host NIC's admission and back-pressure: how much data a sender may hand the NIC queue now, and
//! which senders wait for room, resumed highest priority first as frames leave.
//!
//! ```text
//!   sender ── data ──► NIC queue (8 priorities, bounded; `headroom` bytes kept for control segments)
//!     room(queue) = full frames that fit beside the headroom  → the sender sends no more than that
//!     sender stopped for lack of room → Backlog::block(priority, sender)
//!     a frame left the NIC → while a full frame fits: Backlog::next() → resume that sender
//! ```
//! Linux's TCP sees the same: a full qdisc pushes back on the socket, no data is lost at the host. The
//! component knows senders only as (slot, incarnation) pairs; the caller resumes them.

use crate::mechanisms::queue::{Order, PrioQueue};

/// Admission limits of one NIC.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    /// Bytes kept free for control segments (ACKs, handshakes), which never wait.
    pub headroom: u64,
    /// A full-size frame on the wire.
    pub frame: u64,
}

impl Admission {
    /// Full-size data frames the queue takes now.
    #[inline]
    pub fn room<O: Order>(&self, q: &PrioQueue<O>) -> u64 {
        q.cap().saturating_sub(q.total + self.headroom) / self.frame
    }
    /// Whether `wire` more bytes of data fit now.
    #[inline]
    pub fn admits<O: Order>(&self, q: &PrioQueue<O>, wire: u64) -> bool {
        q.total + wire + self.headroom <= q.cap()
    }
}

/// Senders waiting for room in one NIC: (priority, sender slot, sender incarnation).
#[derive(Debug, Clone, Default)]
pub struct Backlog {
    waiting: Vec<(u8, u32, u32)>,
}

impl Backlog {
    /// Sender (`slot`, `uid`) of priority `prio` waits for room; false if it was already waiting.
    pub fn block(&mut self, prio: u8, slot: u32, uid: u32) -> bool {
        if self.waiting.iter().any(|x| x.1 == slot && x.2 == uid) {
            return false;
        }
        self.waiting.push((prio, slot, uid));
        true
    }
    /// The next sender to resume: the highest priority (lowest number), the earliest blocked within it.
    pub fn take_next(&mut self) -> Option<(u32, u32)> {
        let i = (0..self.waiting.len()).min_by_key(|&i| self.waiting[i].0)?;
        let (_, slot, uid) = self.waiting.remove(i);
        Some((slot, uid))
    }
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::queue::EgressQueue;
    use crate::mechanisms::queue::Scheduling;

    #[test]
    fn room_counts_whole_frames_beside_the_headroom() {
        let a = Admission { headroom: 3000, frame: 1500 };
        let mut q = EgressQueue::new(15_000, Scheduling::StrictPriority);
        let mut links = Vec::new();
        assert_eq!(a.room(&q), 8);
        q.push(0, 1, 7000, &mut links);
        // 15000 - 7000 - 3000 = 5000 B: three frames
        assert_eq!(a.room(&q), 3);
        assert!(a.admits(&q, 5000) && !a.admits(&q, 5001));
        q.push(0, 2, 5000, &mut links);
        assert_eq!(a.room(&q), 0, "the headroom is for control segments only");
    }

    #[test]
    fn the_backlog_resumes_the_highest_priority_first_in_blocking_order() {
        let mut b = Backlog::default();
        assert!(b.block(3, 10, 1));
        assert!(b.block(1, 11, 1));
        assert!(b.block(3, 12, 1));
        assert!(!b.block(1, 11, 1), "already waiting");
        assert!(b.block(1, 11, 2), "a new incarnation of the slot is another sender");
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| b.take_next()).collect();
        assert_eq!(order, vec![(11, 1), (11, 2), (10, 1), (12, 1)]);
        assert!(b.is_empty());
    }
}
