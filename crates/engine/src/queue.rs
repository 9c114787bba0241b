//! The event queue: a binary heap keyed by (time, sequence number).
//!
//! The key packs time and a per-queue sequence number into one `u128`, so equal-time events come out in
//! the order they were pushed and comparisons are a single integer compare. (A radix heap, which the
//! monotone keys of a simulation allow, measured slower than this on the paper/steady benchmark: see
//! docs/benchmarks.md.)

use crate::time::Time;
use std::cmp::Ordering;
use dary_heap::QuaternaryHeap as BinaryHeap;

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
///
/// Two lanes share one sequence counter, so the order is exactly that of a single queue: the main lane for
/// packet events, and a timer lane for timers that are mostly cancelled before they fire (retransmission
/// timeouts). Lazily cancelled timers pile up in their own heap and do not deepen the hot one.
pub struct EventQueue<E> {
    main: BinaryHeap<Entry<E>>,
    timers: BinaryHeap<Entry<E>>,
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
        EventQueue { main: BinaryHeap::with_capacity(1 << 12), timers: BinaryHeap::with_capacity(1 << 12), seq: 0, now: Time::ZERO }
    }
    #[inline]
    fn key(&mut self, at: Time) -> u128 {
        assert!(at >= self.now, "event scheduled in the past: {} < now {}", at, self.now);
        let key = ((at.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        key
    }
    /// Schedule `ev` at `at`. Scheduling in the past is a bug in the caller.
    #[inline]
    pub fn push(&mut self, at: Time, ev: E) {
        let key = self.key(at);
        self.main.push(Entry { key, ev });
    }
    /// Schedule a timer event: same ordering as `push`, kept in the timer lane.
    #[inline]
    pub fn push_timer(&mut self, at: Time, ev: E) {
        let key = self.key(at);
        self.timers.push(Entry { key, ev });
    }
    #[inline]
    fn next_lane(&mut self) -> Option<&mut BinaryHeap<Entry<E>>> {
        match (self.main.peek(), self.timers.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(&mut self.main),
            (None, Some(_)) => Some(&mut self.timers),
            (Some(a), Some(b)) => Some(if a.key < b.key { &mut self.main } else { &mut self.timers }),
        }
    }
    /// The earliest event, advancing the queue's clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let Entry { key, ev } = self.next_lane()?.pop()?;
        let t = Time((key >> 64) as u64);
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, ev))
    }
    /// The earliest event if it is due no later than `limit`; otherwise it stays queued.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        let lane = self.next_lane()?;
        let t = Time((lane.peek()?.key >> 64) as u64);
        if t > limit {
            return None;
        }
        let Entry { ev, .. } = lane.pop()?;
        self.now = t;
        Some((t, ev))
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn len(&self) -> usize {
        self.main.len() + self.timers.len()
    }
    pub fn is_empty(&self) -> bool {
        self.main.is_empty() && self.timers.is_empty()
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
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::new();
        q.push(Time(10), 'a');
        q.push(Time(20), 'b');
        assert_eq!(q.pop_until(Time(15)), Some((Time(10), 'a')));
        assert_eq!(q.pop_until(Time(15)), None);
        q.push(Time(20), 'c');
        assert_eq!(q.pop(), Some((Time(20), 'b')));
        assert_eq!(q.pop(), Some((Time(20), 'c')));
    }
    #[test]
    fn lanes_share_one_order() {
        let mut q = EventQueue::new();
        q.push_timer(Time(5), 1);
        q.push(Time(5), 2);
        q.push_timer(Time(3), 3);
        q.push(Time(7), 4);
        q.push_timer(Time(5), 5);
        let order: Vec<i32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![3, 1, 2, 5, 4]);
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
