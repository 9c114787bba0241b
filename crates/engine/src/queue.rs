//! The event queue: events keyed by (time, sequence number), popped in key order.
//!
//! The key packs time, a source and a per-queue sequence number into one `u128` (time in the high 64 bits;
//! below it the source in the top `SOURCE_BITS` and the sequence number under it), so equal-time events
//! come out by source and, within a source, in the order they were pushed, and comparisons are a single
//! integer compare. A queue whose source is never set (`set_source`) orders equal-time events by push
//! order alone. Packet events go to a timing
//! wheel (`wheel.rs`), timers to a heap of their own. (A radix heap measured slower than a heap on the
//! paper/steady benchmark; per-link streams, which kept one heap entry per busy link, cost more cache
//! misses than the wheel saves with them; sorted streams per delay, merged by a winner tree, ran slower on
//! paper/steady: see docs/benchmarks.md.)

use crate::time::Time;
use crate::wheel::{Entry, Wheel, NO_KEY};
use dary_heap::QuaternaryHeap as BinaryHeap;

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

/// Pending events in (time, insertion) order. Popping never goes back in time.
///
/// Two lanes share one sequence counter, so the order is exactly that of a single queue: the main lane for
/// packet events, and a timer lane for timers that are mostly cancelled before they fire (retransmission
/// timeouts). Lazily cancelled timers pile up in their own heap and do not deepen the hot one.
pub struct EventQueue<E> {
    main: Wheel<E>,
    timers: BinaryHeap<Entry<E>>,
    /// The timer lane's earliest key (`NO_KEY`: empty), kept beside the heap so choosing a lane reads no
    /// heap.
    timer_key: u128,
    seq: u64,
    /// The current source, shifted into place above the sequence number (`set_source`).
    src_hi: u64,
    now: Time,
}

/// Bits of a key's sequence half that hold the source (`set_source`); the sequence number has the rest.
pub const SOURCE_BITS: u32 = 24;
pub(crate) const SEQ_BITS: u32 = 64 - SOURCE_BITS;

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_wheel(crate::wheel::DEFAULT_SHIFT, crate::wheel::DEFAULT_BUCKET_BITS)
    }
    /// A queue whose wheel has 2^`bucket_bits` buckets of 2^`shift` ps (the order of events does not
    /// depend on the shape, only the cost of keeping it).
    pub fn with_wheel(shift: u32, bucket_bits: u32) -> Self {
        EventQueue {
            main: Wheel::with_shape(shift, bucket_bits),
            timers: BinaryHeap::with_capacity(1 << 12),
            timer_key: NO_KEY,
            seq: 0,
            src_hi: 0,
            now: Time::ZERO,
        }
    }
    /// Events pushed from now on come from source `src` (below 2^`SOURCE_BITS`): at equal times, events of
    /// a lower source come out first, and a source's own events in the order they were pushed. So the
    /// order of two simultaneous events from different sources does not depend on which was pushed first
    /// (a simulation that sets the source to the node whose event it handles makes each node's order of
    /// events independent of how events at other nodes interleave with its own).
    #[inline(always)]
    pub fn set_source(&mut self, src: u32) {
        debug_assert!(src < 1 << SOURCE_BITS, "event source out of range");
        self.src_hi = (src as u64) << SEQ_BITS;
        self.main.note_source(src);
    }
    #[inline]
    fn key(&mut self, at: Time) -> u128 {
        assert!(at >= self.now, "event scheduled in the past: {} < now {}", at, self.now);
        debug_assert!(self.seq < 1 << SEQ_BITS, "sequence numbers exhausted");
        let key = ((at.0 as u128) << 64) | (self.src_hi | self.seq) as u128;
        self.seq += 1;
        key
    }
    /// Schedule `ev` at `at`. Scheduling in the past is a bug in the caller.
    #[inline(always)]
    pub fn push(&mut self, at: Time, ev: E) {
        let key = self.key(at);
        self.main.push(Entry { key, ev });
    }
    /// The key an event due at `at` pushed now would get (the sequence number is used up): for pushing it
    /// into another queue (`push_keyed`) in this queue's order.
    #[inline]
    pub fn next_key(&mut self, at: Time) -> u128 {
        self.key(at)
    }
    /// Push `ev` with a key made by `next_key` (of this queue or another), in the main lane or the timer
    /// lane.
    pub fn push_keyed(&mut self, key: u128, ev: E, timer: bool) {
        assert!((key >> 64) as u64 >= self.now.0, "event scheduled in the past: {} < now {}", (key >> 64) as u64, self.now);
        self.main.note_source(((key as u64) >> SEQ_BITS) as u32);
        if timer {
            self.insert_timer(Entry { key, ev });
        } else {
            self.main.push(Entry { key, ev });
        }
    }
    /// The time of the earliest event (None: empty).
    pub fn peek_time(&self) -> Option<Time> {
        let (key, _) = self.next_key_lane();
        (key != NO_KEY).then_some(Time((key >> 64) as u64))
    }
    /// Schedule a timer event: same ordering as `push`, kept in the timer lane.
    #[inline]
    pub fn push_timer(&mut self, at: Time, ev: E) {
        let key = self.key(at);
        self.insert_timer(Entry { key, ev });
    }
    #[inline]
    fn insert_timer(&mut self, e: Entry<E>) {
        self.timer_key = self.timer_key.min(e.key);
        self.timers.push(e);
    }
    /// The earliest key and its lane (true: the main lane); `NO_KEY` when both are empty.
    #[inline(always)]
    fn next_key_lane(&self) -> (u128, bool) {
        let m = self.main.peek_key();
        if m < self.timer_key {
            (m, true)
        } else {
            (self.timer_key, false)
        }
    }
    #[inline]
    fn pop_lane(&mut self, main: bool) -> Entry<E> {
        if main {
            self.main.pop().expect("the lane was peeked")
        } else {
            let e = self.timers.pop().expect("the lane was peeked");
            self.timer_key = self.timers.peek().map_or(NO_KEY, |t| t.key);
            e
        }
    }
    /// The earliest event, advancing the queue's clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time(u64::MAX))
    }
    /// The earliest event if it is due no later than `limit`; otherwise it stays queued.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        // nearly every pop: the wheel's current bucket, no late event, no timer due first
        if let Some(Entry { key, ev }) = self.main.pop_run_before(self.timer_key, limit.0) {
            let t = Time((key >> 64) as u64);
            debug_assert!(t >= self.now);
            self.now = t;
            return Some((t, ev));
        }
        let (key, lane) = self.next_key_lane();
        if key == NO_KEY {
            return None;
        }
        let t = Time((key >> 64) as u64);
        if t > limit {
            return None;
        }
        let Entry { ev, .. } = self.pop_lane(lane);
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, ev))
    }
    /// The event `pop` would return next (unless one pushed before then comes first). Between events a
    /// simulation touches more state than the caches hold; a caller that prefetches what the next event
    /// needs while it handles this one hides the misses behind its own work.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        match self.main.peek() {
            Some(e) if e.key < self.timer_key => Some(&e.ev),
            _ => self.timers.peek().map(|e| &e.ev),
        }
    }
    /// An event due soon after the next one (the `k`-th after it in the main lane's current bucket, when
    /// there is one): a hint for prefetching further ahead than `peek`.
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&E> {
        self.main.peek_ahead(k).map(|e| &e.ev)
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn len(&self) -> usize {
        self.main.len() + self.timers.len()
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
        self.timer_key = self.timers.peek().map_or(NO_KEY, |t| t.key);
    }
    pub fn is_empty(&self) -> bool {
        self.main.len() == 0 && self.timers.is_empty()
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
    fn equal_times_by_source_then_push_order() {
        // buckets of every sort path: a few events (rank sort: the source in the 32-bit key, or with wide
        // buckets and large sources in a 64-bit one), many (counting + insertion sort), events pushed into
        // the current bucket after it was sorted (late), and beyond the wheel (far)
        for (n, shift, sources) in [(5u64, 14, 4u64), (30, 14, 4), (300, 14, 4), (5, 26, 1 << 20), (30, 26, 1 << 20)] {
            let mut q = EventQueue::with_wheel(shift, 10);
            let t_base = 3u64 << shift;
            let mut rng = 12345u64;
            let mut next = || {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                rng >> 33
            };
            // an event at 0 holds the cursor, so the rest go into wheel buckets (and far)
            q.push(Time(0), (0, u64::MAX));
            let mut pushed = Vec::new();
            for i in 0..n {
                let (src, t) = ((next() % sources) as u32, t_base + next() % 3 + if i % 7 == 0 { 1 << 50 } else { 0 });
                q.set_source(src);
                q.push(Time(t), (src, i));
                pushed.push((t, src, i));
            }
            assert_eq!(q.pop(), Some((Time(0), (0, u64::MAX))));
            // the earliest, then more at its time (which come after it, whatever their source: it is done)
            pushed.sort();
            let (t0, s0, i0) = pushed.remove(0);
            let first = q.pop().unwrap();
            assert_eq!(first, (Time(t0), (s0, i0)));
            for i in n..n + 6 {
                let src = (next() % sources) as u32;
                q.set_source(src);
                q.push(Time(t0), (src, i));
                pushed.push((t0, src, i));
            }
            pushed.sort();
            let mut got = Vec::new();
            while let Some((t, (src, i))) = q.pop() {
                got.push((t.0, src, i));
            }
            assert_eq!(got, pushed, "{n} events, buckets of 2^{shift} ps");
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
    /// A small deterministic generator for the randomised order tests.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }
    /// The wheel against a plain heap of (time, sequence): times spread from the same bucket to far
    /// beyond the wheel's horizon (so events move from the far heap onto the wheel and the cursor wraps),
    /// with timers mixed in.
    #[test]
    fn the_wheel_keeps_the_order_of_one_heap_at_every_time_scale() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap as StdHeap;
        let mut next = xorshift(0x2545f4914f6cdd1d);
        for (shift, bits) in [(14, 10), (8, 6), (20, 12)] {
            let mut q = EventQueue::with_wheel(shift, bits);
            let mut model = StdHeap::new();
            let (mut seq, mut popped) = (0u64, 0usize);
            for round in 0..200_000u64 {
                let now = q.now().0;
                let spread = [1u64, 3_000, 40_000, 300_000, 20_000_000, 5_000_000_000][(next() % 6) as usize];
                for _ in 0..(next() % 3) {
                    let at = now + next() % spread;
                    match next() % 3 {
                        0 | 1 => q.push(Time(at), seq),
                        _ => q.push_timer(Time(at), seq),
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
            assert!(q.is_empty(), "the queue drained");
            assert_eq!(q.len(), 0, "is_empty and len agree");
            assert!(popped > 100_000);
        }
    }
    /// Buckets of a few events (the rank sort's 8, 16 and 32 slots) and crowded ones (hundreds of events
    /// in one bucket: the counting-sort path; and buckets wider than the rank key's 27 bits), many at equal
    /// times, some pushed into the bucket being popped, some timers at the same instants, still come out in
    /// the order of one heap.
    #[test]
    fn crowded_buckets_keep_the_order_of_one_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap as StdHeap;
        let mut next = xorshift(0x9e3779b97f4a7c15);
        for (shift, bits, crowd) in [(14u32, 10u32, 3u64), (14, 10, 12), (14, 10, 25), (14, 10, 40), (14, 10, 900), (8, 6, 300), (20, 12, 5000), (28, 6, 20)] {
            let mut q = EventQueue::with_wheel(shift, bits);
            let mut model = StdHeap::new();
            let mut seq = 0u64;
            for round in 0..400u64 {
                let now = q.now().0;
                // a crowd of events within a few buckets ahead, times drawn from a few distinct instants
                let base = now + (next() % 4) * (1 << shift);
                for _ in 0..crowd {
                    let at = base + (next() % 16) * (next() % (1 << shift)) / 16;
                    if next().is_multiple_of(5) {
                        q.push_timer(Time(at), seq);
                    } else {
                        q.push(Time(at), seq);
                    }
                    model.push(Reverse((at, seq)));
                    seq += 1;
                }
                for _ in 0..crowd {
                    let got = q.pop();
                    let want = model.pop().map(|Reverse((t, s))| (Time(t), s));
                    assert_eq!(got, want, "round {round}");
                    if round.is_multiple_of(3) && next().is_multiple_of(4) {
                        // an event for the instant being handled (into the sorted bucket)
                        let at = q.now().0 + next() % 3;
                        q.push(Time(at), seq);
                        model.push(Reverse((at, seq)));
                        seq += 1;
                    }
                }
            }
            while let Some(Reverse((t, s))) = model.pop() {
                assert_eq!(q.pop(), Some((Time(t), s)));
            }
            assert!(q.is_empty());
        }
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
    #[should_panic(expected = "in the past")]
    fn past_is_refused() {
        let mut q = EventQueue::new();
        q.push(Time(10), ());
        q.pop();
        q.push(Time(9), ());
    }
}
