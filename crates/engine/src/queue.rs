//! The event queue: a binary heap keyed by (time, sequence number).
//!
//! The key packs time and a per-queue sequence number into one `u128`, so equal-time events come out in
//! the order they were pushed and comparisons are a single integer compare.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    key: u128,
    ev: E,
}
impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // reversed: BinaryHeap is a max-heap
        o.key.cmp(&self.key)
    }
}

/// Pending events in (time, insertion) order. Popping never goes back in time.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1 << 12), seq: 0, now: Time::ZERO }
    }
    /// Schedule `ev` at `at`. Scheduling in the past is a bug in the caller.
    #[inline]
    pub fn push(&mut self, at: Time, ev: E) {
        assert!(at >= self.now, "event scheduled in the past: {} < now {}", at, self.now);
        let key = ((at.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, ev });
    }
    /// The earliest event, advancing the queue's clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        let t = Time((e.key >> 64) as u64);
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, e.ev))
    }
    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time((e.key >> 64) as u64))
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Number of events ever pushed.
    pub fn pushed(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn equal_times_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.push(Time(5 - (i as u64 % 3)), i);
        }
        let mut last = (Time::ZERO, 0u32);
        let mut first = true;
        while let Some((t, i)) = q.pop() {
            if !first {
                assert!(t > last.0 || (t == last.0 && i > last.1));
            }
            first = false;
            last = (t, i);
        }
    }
    #[test]
    #[should_panic(expected = "in the past")]
    fn past_is_refused() {
        let mut q = EventQueue::new();
        q.push(Time(10), ());
        q.pop();
        q.push(Time(9), ());
    }
}
