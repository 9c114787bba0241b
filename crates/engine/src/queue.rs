//! The event queue: a binary heap keyed by (time, sequence number).
//!
//! The key packs time and a per-queue sequence number into one `u128`, so equal-time events come out in
//! the order they were pushed and comparisons are a single integer compare. (A radix heap, which the
//! monotone keys of a simulation allow, measured slower than this on the paper/steady benchmark: see
//! docs/benchmarks.md.)
//!
//! **Streams.** A link delivers its frames in the order it sends them, so the arrivals of one link need not
//! all sit in the heap: `push_stream` appends to the stream's FIFO and only the stream's head is in the
//! heap, under the key it was given when pushed. When the head is popped the next one takes its place. The
//! order events come out in is exactly that of one heap holding them all (every event keeps its own key,
//! and a stream's keys increase in FIFO order); the heap is one entry per busy link instead of one per frame
//! in flight, which keeps it small and in cache as the fabric grows.

use crate::time::Time;
use crate::wheel::{Entry, Wheel};
use dary_heap::QuaternaryHeap as BinaryHeap;
use std::collections::VecDeque;

/// Ask the CPU to bring the cache line holding `*r` closer (a hint: no effect on results, none at all off x86-64).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and never changes memory; the address comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(r as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// No stream: the entry is an ordinary event.
const NO_STREAM: u32 = u32::MAX;
/// A stream with nothing queued.
const IDLE: u64 = u64::MAX;

/// Pending events in (time, insertion) order. Popping never goes back in time.
///
/// Two lanes share one sequence counter, so the order is exactly that of a single queue: the main lane for
/// packet events, and a timer lane for timers that are mostly cancelled before they fire (retransmission
/// timeouts). Lazily cancelled timers pile up in their own heap and do not deepen the hot one.
pub struct EventQueue<E> {
    main: Wheel<E>,
    timers: BinaryHeap<Entry<E>>,
    /// Per stream: the time of its last event (`IDLE`: nothing queued) and how many wait behind its head
    /// (which is in `main`). Kept apart from the FIFOs so that a stream with one event in flight, the
    /// common case, touches 16 bytes.
    stream_state: Vec<StreamState>,
    stream_rest: Vec<VecDeque<(u128, E)>>,
    queued_in_streams: usize,
    seq: u64,
    now: Time,
}

#[derive(Clone, Copy)]
struct StreamState {
    last: u64,
    rest: u32,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            main: Wheel::new(),
            timers: BinaryHeap::with_capacity(1 << 12),
            stream_state: Vec::new(),
            stream_rest: Vec::new(),
            queued_in_streams: 0,
            seq: 0,
            now: Time::ZERO,
        }
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
        self.main.push(Entry { key, ev, stream: NO_STREAM });
    }
    /// Schedule a timer event: same ordering as `push`, kept in the timer lane.
    #[inline]
    pub fn push_timer(&mut self, at: Time, ev: E) {
        let key = self.key(at);
        self.timers.push(Entry { key, ev, stream: NO_STREAM });
    }
    /// Schedule `ev` at `at` on `stream` (e.g. the link it arrives over): same order as `push`. Events of
    /// one stream are normally pushed in time order; one that is not goes into the heap on its own.
    #[inline]
    pub fn push_stream(&mut self, stream: u32, at: Time, ev: E) {
        let key = self.key(at);
        let s = stream as usize;
        if s >= self.stream_state.len() {
            self.grow_streams(s + 1);
        }
        let st = &mut self.stream_state[s];
        if st.last == IDLE {
            st.last = at.0;
            self.main.push(Entry { key, ev, stream });
        } else if st.last <= at.0 {
            st.last = at.0;
            st.rest += 1;
            self.stream_rest[s].push_back((key, ev));
            self.queued_in_streams += 1;
        } else {
            // out of time order for its stream: an ordinary event keeps the global order exact
            self.main.push(Entry { key, ev, stream: NO_STREAM });
        }
    }
    /// Room for streams `0..n` (`push_stream` grows the tables on demand).
    #[cold]
    fn grow_streams(&mut self, n: usize) {
        if n > self.stream_state.len() {
            self.stream_state.resize(n, StreamState { last: IDLE, rest: 0 });
            self.stream_rest.resize_with(n, VecDeque::new);
        }
    }
    /// The stream's next event takes the place of its head just popped.
    #[inline]
    fn advance_stream(&mut self, stream: u32) {
        let st = &mut self.stream_state[stream as usize];
        if st.rest == 0 {
            st.last = IDLE;
            return;
        }
        st.rest -= 1;
        self.queued_in_streams -= 1;
        let (key, ev) = self.stream_rest[stream as usize].pop_front().expect("counted");
        self.main.push(Entry { key, ev, stream });
    }
    /// The lane holding the earliest event: Some(true) the main lane, Some(false) the timers.
    #[inline]
    fn next_lane(&self) -> Option<bool> {
        match (self.main.peek(), self.timers.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(a), Some(b)) => Some(a.key < b.key),
        }
    }
    #[inline]
    fn pop_lane(&mut self, main: bool) -> Entry<E> {
        let e = if main { self.main.pop() } else { self.timers.pop() };
        e.expect("the lane was peeked")
    }
    /// The earliest event, advancing the queue's clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let lane = self.next_lane()?;
        let Entry { key, ev, stream } = self.pop_lane(lane);
        if stream != NO_STREAM {
            self.advance_stream(stream);
        }
        let t = Time((key >> 64) as u64);
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, ev))
    }
    /// The earliest event if it is due no later than `limit`; otherwise it stays queued.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        let lane = self.next_lane()?;
        let key = if lane { self.main.peek() } else { self.timers.peek() }.expect("the lane was peeked").key;
        let t = Time((key >> 64) as u64);
        if t > limit {
            return None;
        }
        let Entry { ev, stream, .. } = self.pop_lane(lane);
        if stream != NO_STREAM {
            self.advance_stream(stream);
        }
        self.now = t;
        Some((t, ev))
    }
    /// The event `pop` would return next (or one pushed before then comes first), with the memory its
    /// stream will read when it is popped already on its way into the cache. Between events a simulation
    /// touches more state than the caches hold; a caller that prefetches what the next event needs while it
    /// handles this one hides the miss behind its own work. Changes nothing.
    #[inline]
    pub fn peek_prefetch(&self) -> Option<&E> {
        let top = match (self.main.peek(), self.timers.peek()) {
            (None, None) => return None,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (Some(a), Some(b)) => {
                if a.key < b.key {
                    a
                } else {
                    b
                }
            }
        };
        if top.stream != NO_STREAM {
            let s = top.stream as usize;
            if self.stream_state[s].rest > 0 {
                if let Some(front) = self.stream_rest[s].front() {
                    prefetch(front);
                }
            }
        }
        Some(&top.ev)
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn len(&self) -> usize {
        self.main.len() + self.timers.len() + self.queued_in_streams
    }
    /// Events in the timer lane (cancelled ones included until they are popped or dropped by `retain_timers`).
    pub fn timers_len(&self) -> usize {
        self.timers.len()
    }
    /// Drop the timer-lane events `keep` refuses (cancelled timers), in O(n). The order of the rest is
    /// unchanged: every event keeps its key.
    pub fn retain_timers(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let mut v = std::mem::take(&mut self.timers).into_vec();
        v.retain(|e| keep(&e.ev));
        self.timers = BinaryHeap::from(v);
    }
    /// Entries in the heaps (the streams' heads included, the rest of the streams not).
    pub fn heap_len(&self) -> usize {
        self.main.len() + self.timers.len()
    }
    pub fn is_empty(&self) -> bool {
        self.main.len() == 0 && self.timers.is_empty()
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
    /// Streams change where events wait, never the order they come out in: a random mix of plain,
    /// timer and stream pushes (some streams out of time order) pops exactly as one plain heap would.
    #[test]
    fn streams_keep_the_order_of_one_heap() {
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut a = EventQueue::new();
        let mut b = EventQueue::new();
        let mut id = 0u32;
        let mut out_a = Vec::new();
        let mut out_b = Vec::new();
        for _ in 0..20_000 {
            let now = a.now();
            for _ in 0..(next() % 3) {
                let at = Time(now.0 + next() % 50);
                match next() % 4 {
                    0 => {
                        a.push(at, id);
                        b.push(at, id);
                    }
                    1 => {
                        a.push_timer(at, id);
                        b.push(at, id);
                    }
                    _ => {
                        a.push_stream((next() % 7) as u32, at, id);
                        b.push(at, id);
                    }
                }
                id += 1;
            }
            if next() % 5 < 3 {
                out_a.push(a.pop());
                out_b.push(b.pop());
            }
            assert_eq!(a.len(), b.len());
        }
        while let Some(x) = b.pop() {
            out_b.push(Some(x));
            out_a.push(a.pop());
        }
        assert!(a.is_empty());
        assert_eq!(out_a, out_b);
    }
    /// The wheel against a plain heap of (time, sequence): times spread from the same bucket to far
    /// beyond the wheel's horizon (so events move from the far heap onto the wheel and the cursor wraps),
    /// with streams and timers mixed in.
    #[test]
    fn the_wheel_keeps_the_order_of_one_heap_at_every_time_scale() {
        use std::collections::BinaryHeap as StdHeap;
        use std::cmp::Reverse;
        let mut rng = 0x2545f4914f6cdd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut q = EventQueue::new();
        let mut model = StdHeap::new();
        let (mut seq, mut popped) = (0u64, 0usize);
        for round in 0..200_000u64 {
            let now = q.now().0;
            let spread = [1u64, 3_000, 40_000, 300_000, 20_000_000, 5_000_000_000][(next() % 6) as usize];
            for _ in 0..(next() % 3) {
                let at = now + next() % spread;
                match next() % 3 {
                    0 => q.push(Time(at), seq),
                    1 => q.push_timer(Time(at), seq),
                    _ => q.push_stream((next() % 5) as u32, Time(at), seq),
                }
                model.push(Reverse((at, seq)));
                seq += 1;
            }
            if round % 7 < 4 || round > 190_000 {
                let got = q.pop();
                let want = model.pop().map(|Reverse((t, s))| (Time(t), s));
                assert_eq!(got, want, "pop {popped}");
                popped += 1;
            }
        }
        while let Some(Reverse((t, s))) = model.pop() {
            assert_eq!(q.pop(), Some((Time(t), s)));
        }
        assert!(q.is_empty() && q.len() == 0);
        assert!(popped > 100_000);
    }
    #[test]
    fn dropped_timers_leave_the_order_of_the_rest() {
        let mut q = EventQueue::new();
        for i in 0..50u64 {
            q.push_timer(Time(100 - i), i);
            q.push(Time(100 - i), 1000 + i);
        }
        q.retain_timers(|e| e % 2 == 0);
        assert_eq!(q.timers_len(), 25);
        let got: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let mut want = Vec::new();
        for i in (0..50u64).rev() {
            if i % 2 == 0 {
                want.push(i);
            }
            want.push(1000 + i);
        }
        assert_eq!(got, want);
    }
    #[test]
    fn a_stream_keeps_one_entry_in_the_heap() {
        let mut q = EventQueue::new();
        for i in 0..100u64 {
            q.push_stream(3, Time(10 + i), i);
        }
        assert_eq!((q.len(), q.heap_len()), (100, 1));
        assert_eq!(q.pop(), Some((Time(10), 0)));
        assert_eq!((q.len(), q.heap_len()), (99, 1));
        assert_eq!(q.pop_until(Time(11)), Some((Time(11), 1)));
        assert_eq!(q.pop_until(Time(11)), None);
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
