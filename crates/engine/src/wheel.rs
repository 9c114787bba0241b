//! The main lane of the event queue: a timing wheel in front of two small heaps.
//!
//! ```text
//!   time ──► bucket = time >> shift (the simulation picks the width: ~16 events per bucket under full load)
//!
//!   run    the current bucket `cur`, sorted, read front to back
//!   late   heap of events pushed for the current bucket (or earlier) after it was sorted
//!   wheel  the buckets after `cur` up to the horizon, each an unsorted list of 8-event chunks, with an occupancy bitmap
//!   far    heap of events beyond the horizon (workload arrivals, links slower than the wheel was sized for)
//! ```
//!
//! Events come out in exactly the (time, sequence) order of one heap: `run` and `late` hold the current
//! bucket, and every event elsewhere lies in a later bucket. When both run dry the cursor moves to the next
//! occupied bucket (a bitmap scan) and that bucket is sorted into `run`; events of `far` move into the
//! wheel as the cursor comes within reach of them. A push appends to its bucket's last chunk, a pop reads
//! the next entry of a sorted array, and a bucket is read once, a chunk at a time, when the cursor reaches
//! it and sorted in L1: a bucket of a few events in one chunk by insertion where it lands, one of up to 32
//! events by rank (each event's place counted over 8, 16 or 32 slots without a branch on the data; a bucket's chunks hold its events in push order, so ties in time
//! fall back on position), a larger one by an insertion sort after a counting sort on its times has spread
//! it into small groups, so sorting stays linear in the events however busy the fabric. Chunks are reused last-freed first, so the chunks being filled are the ones just read:
//! the wheel's memory is the events pending, not buckets x the most a bucket ever held; a single heap's depth and
//! cache misses grow with the number of events pending, which grows with the fabric.

use crate::queue::{SEQ_BITS, SOURCE_BITS};
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// Default shape: log2 of a bucket's width in picoseconds (16.4 ns) and of the number of buckets (a horizon
/// of 16.8 µs). A simulation sets its own from its fabric (`Wheel::with_shape`).
pub const DEFAULT_SHIFT: u32 = 14;
pub const DEFAULT_BUCKET_BITS: u32 = 10;
/// Events per chunk.
const CHUNK: usize = 8;
const NIL: u32 = u32::MAX;

/// `next` first: a new chunk's link and first entry share a cache line. How many entries are written is
/// kept per bucket (`fill`, for its last chunk; the others are full), so an append touches one line. Every
/// entry is initialized (a new chunk starts as copies of its first entry), so a bucket is copied out a
/// whole chunk at a time.
#[repr(C)]
struct Chunk<E> {
    next: u32,
    entries: [Entry<E>; CHUNK],
}

#[derive(Clone, Copy)]
pub(crate) struct Entry<E> {
    pub key: u128,
    pub ev: E,
}
impl<E: Copy> Entry<E> {
    /// Write this entry into `slot` field by field: as one 32-byte copy the compiler built it on the stack
    /// from the key's and the event's registers and read it back in 16-byte halves, which no store of the
    /// halves' parts can forward (docs/benchmarks.md, "The event in registers").
    #[inline(always)]
    fn store(self, slot: &mut Entry<E>) {
        slot.key = self.key;
        slot.ev = self.ev;
    }
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
        // reversed: the heap is a max-heap
        o.key.cmp(&self.key)
    }
}

pub(crate) struct Wheel<E> {
    /// The current bucket in ascending key order; `run[pos..]` are still pending.
    run: Vec<Entry<E>>,
    pos: usize,
    /// Working space of the bucket sort: the entries' second array and the group counts.
    spare: Vec<Entry<E>>,
    counts: Vec<u32>,
    late: QuaternaryHeap<Entry<E>>,
    far: QuaternaryHeap<Entry<E>>,
    /// Per wheel slot: first and last chunk of its list (NIL: empty).
    first: Vec<u32>,
    last: Vec<u32>,
    /// Per wheel slot: entries written in its last chunk.
    fill: Vec<u8>,
    chunks: Vec<Chunk<E>>,
    /// Free chunks, linked through `next` (last freed first).
    free: u32,
    /// Bit s of word s / 64: slot s holds events.
    occupied: Vec<u64>,
    /// Events on the wheel (not in `run`, `late` or `far`).
    on_wheel: usize,
    /// The current bucket: `run` and `late` hold its events; the wheel holds buckets cur + 1 .. cur + wheel.
    cur: u64,
    /// log2 of a bucket's width (ps), the number of buckets (a power of two).
    shift: u32,
    wheel: u64,
    /// Bits of the largest source the keys carry (`EventQueue::set_source`; 0: none, and sorting by
    /// time and position is enough).
    pub(crate) src_bits: u32,
}

/// Key of an empty lane (no event has it: its time would be the end of time and its sequence number the
/// last one).
pub(crate) const NO_KEY: u128 = u128::MAX;

impl<E: Copy> Wheel<E> {
    /// Buckets of 2^`shift` ps, 2^`bucket_bits` of them.
    pub fn with_shape(shift: u32, bucket_bits: u32) -> Self {
        assert!(shift < 40 && (6..=20).contains(&bucket_bits), "wheel shape out of range");
        let wheel = 1u64 << bucket_bits;
        Wheel {
            run: Vec::with_capacity(1 << 8),
            pos: 0,
            spare: Vec::with_capacity(1 << 8),
            counts: Vec::new(),
            late: QuaternaryHeap::with_capacity(1 << 6),
            far: QuaternaryHeap::with_capacity(1 << 10),
            first: vec![NIL; wheel as usize],
            last: vec![NIL; wheel as usize],
            fill: vec![0; wheel as usize],
            chunks: Vec::new(),
            free: NIL,
            occupied: vec![0; (wheel / 64) as usize],
            on_wheel: 0,
            cur: 0,
            shift,
            wheel,
            src_bits: 0,
        }
    }

    #[inline(always)]
    fn bucket(&self, key: u128) -> u64 {
        ((key >> 64) as u64) >> self.shift
    }

    pub fn len(&self) -> usize {
        self.run.len() - self.pos + self.late.len() + self.far.len() + self.on_wheel
    }

    /// The earliest event (the wheel keeps the current bucket non-empty whenever it holds anything).
    #[inline]
    pub fn peek(&self) -> Option<&Entry<E>> {
        let r = self.run.get(self.pos);
        if self.late.is_empty() {
            return r;
        }
        match (r, self.late.peek()) {
            (Some(a), Some(b)) => Some(if a.key < b.key { a } else { b }),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// The event `k` places after the earliest in the current bucket (a hint for prefetching: events of
    /// `late` are not counted).
    #[inline(always)]
    pub fn peek_ahead(&self, k: usize) -> Option<&Entry<E>> {
        self.run.get(self.pos + k)
    }

    /// The earliest event's key, `NO_KEY` when the wheel is empty.
    #[inline(always)]
    pub fn peek_key(&self) -> u128 {
        self.peek().map_or(NO_KEY, |e| e.key)
    }

    /// Inlined into the caller down to the chunk store, the rare paths (late, far, a new chunk) being calls:
    /// no call per push, fewer instructions and mispredicted branches (docs/benchmarks.md).
    #[inline(always)]
    pub fn push(&mut self, e: Entry<E>) {
        let b = self.bucket(e.key);
        if b <= self.cur {
            self.push_late(e);
            return;
        }
        if b < self.cur + self.wheel {
            self.put_on_wheel(b, e);
        } else {
            self.push_far(e);
        }
        if self.pos == self.run.len() && self.late.is_empty() {
            self.refill();
        }
    }

    #[inline(never)]
    fn push_late(&mut self, e: Entry<E>) {
        self.late.push(e);
    }

    #[inline(never)]
    fn push_far(&mut self, e: Entry<E>) {
        self.far.push(e);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let from_run = match self.run.get(self.pos) {
            Some(a) => self.late.peek().is_none_or(|b| a.key < b.key),
            None if self.late.is_empty() => return None,
            None => false,
        };
        let e = if from_run {
            self.pos += 1;
            self.run[self.pos - 1]
        } else {
            self.late.pop().expect("late holds the earliest event")
        };
        if self.pos == self.run.len() && self.late.is_empty() {
            self.refill();
        }
        Some(e)
    }

    /// The common pop: nothing in `late`, the current bucket's next event earlier than `before` (the timer
    /// lane's first key) and due by `limit`. Takes it (refilling the bucket when it was the last) and
    /// returns it; None (nothing taken) when any of that does not hold, for the general path to decide.
    #[inline(always)]
    pub fn pop_run_before(&mut self, before: u128, limit: u64) -> Option<Entry<E>> {
        if !self.late.is_empty() {
            return None;
        }
        let e = *self.run.get(self.pos)?;
        if e.key >= before || (e.key >> 64) as u64 > limit {
            return None;
        }
        self.pos += 1;
        if self.pos == self.run.len() {
            self.refill();
        }
        Some(e)
    }

    #[inline(always)]
    fn put_on_wheel(&mut self, b: u64, entry: Entry<E>) {
        let slot = (b & (self.wheel - 1)) as usize;
        self.on_wheel += 1;
        let l = self.last[slot];
        let n = self.fill[slot] as usize;
        if l != NIL && n < CHUNK {
            entry.store(&mut self.chunks[l as usize].entries[n]);
            self.fill[slot] += 1;
            return;
        }
        if l == NIL && self.free != NIL {
            // the bucket's first event into a free chunk: the common case where buckets hold an event or two
            let i = self.free;
            let c = &mut self.chunks[i as usize];
            self.free = c.next;
            c.next = NIL;
            entry.store(&mut c.entries[0]);
            self.fill[slot] = 1;
            self.first[slot] = i;
            self.last[slot] = i;
            self.occupied[slot / 64] |= 1 << (slot % 64);
            return;
        }
        self.put_in_new_chunk(slot, l, entry);
    }

    /// `slot`'s last chunk (`l`) is full, or it has none: append a chunk to its list with `entry` first.
    #[inline(never)]
    fn put_in_new_chunk(&mut self, slot: usize, l: u32, entry: Entry<E>) {
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.chunks[i as usize].next;
            i
        } else {
            self.chunks.push(Chunk { next: NIL, entries: [entry; CHUNK] });
            (self.chunks.len() - 1) as u32
        };
        let c = &mut self.chunks[i as usize];
        c.next = NIL;
        c.entries[0] = entry;
        self.fill[slot] = 1;
        if l == NIL {
            self.first[slot] = i;
            self.occupied[slot / 64] |= 1 << (slot % 64);
        } else {
            self.chunks[l as usize].next = i;
        }
        self.last[slot] = i;
    }

    /// The current bucket ran dry: move the cursor to the next bucket that holds events and sort it into
    /// `run`.
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.pos == self.run.len() && self.late.is_empty());
        self.run.clear();
        self.pos = 0;
        // the bucket's entries in push order (whole chunks: the last one's tail is stale), then `n` of them
        self.spare.clear();
        let mut n = 0;
        // a bucket of a few events in one chunk goes into `run` as it is and is insertion-sorted there
        let mut direct = false;
        if self.on_wheel > 0 {
            let b = self.next_occupied();
            self.cur = b;
            let slot = (b & (self.wheel - 1)) as usize;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            let mut i = std::mem::replace(&mut self.first[slot], NIL);
            self.last[slot] = NIL;
            let fill = self.fill[slot] as usize;
            let c = &mut self.chunks[i as usize];
            if c.next == NIL && fill <= DIRECT_MAX {
                // (a lightly loaded wheel's buckets mostly hold one event: pushed, not copied as a slice)
                if fill == 1 {
                    self.run.push(c.entries[0]);
                } else {
                    self.run.extend_from_slice(&c.entries[..fill]);
                }
                c.next = self.free;
                self.free = i;
                self.on_wheel -= fill;
                direct = true;
                i = NIL;
            }
            while i != NIL {
                let c = &mut self.chunks[i as usize];
                let next = c.next;
                self.spare.extend_from_slice(&c.entries);
                c.next = self.free;
                self.free = i;
                i = next;
            }
            if !direct {
                n = self.spare.len() - CHUNK + fill;
                self.on_wheel -= n;
            }
        } else if let Some(f) = self.far.peek() {
            self.cur = self.bucket(f.key);
        } else {
            return;
        }
        // events of `far` the cursor has come within reach of (into this bucket only when the wheel was
        // empty: a far event's bucket is beyond every bucket on the wheel)
        let from_wheel = n;
        while let Some(f) = self.far.peek() {
            let b = self.bucket(f.key);
            if b >= self.cur + self.wheel {
                break;
            }
            let e = self.far.pop().expect("peeked");
            if b <= self.cur && direct {
                self.run.push(e);
            } else if b <= self.cur {
                self.spare.truncate(n);
                self.spare.push(e);
                n += 1;
            } else {
                self.put_on_wheel(b, e);
            }
        }
        if direct {
            insertion_sort(&mut self.run);
            return;
        }
        if self.shift <= RANK_SHIFT_MAX && (from_wheel == 0 || from_wheel == n) {
            let base = self.cur << self.shift;
            // the source joins the 32-bit rank key when it fits beside the time and the position, else the
            // key takes 64 bits
            let sb = self.src_bits;
            let narrow = self.shift + sb <= RANK_SHIFT_MAX;
            macro_rules! rank {
                ($w:expr) => {
                    if narrow {
                        rank_sort::<E, u32, { $w }>(&mut self.spare, &mut self.run, n, u32::MAX, |e, i| {
                            let (t, source) = (((e.key >> 64) as u64).wrapping_sub(base) as u32, ((e.key as u64) >> SEQ_BITS) as u32);
                            (((t << sb) | source) << RANK_POS_BITS) | i as u32
                        });
                    } else {
                        rank_sort::<E, u64, { $w }>(&mut self.spare, &mut self.run, n, u64::MAX, |e, i| {
                            let (t, source) = (((e.key >> 64) as u64).wrapping_sub(base), (e.key as u64) >> SEQ_BITS);
                            (t << (SOURCE_BITS + RANK_POS_BITS)) | (source << RANK_POS_BITS) | i as u64
                        });
                    }
                    return;
                };
            }
            if n <= RANK_MAX / 4 {
                rank!(RANK_MAX / 4);
            }
            if n <= RANK_MAX / 2 {
                rank!(RANK_MAX / 2);
            }
            if n <= RANK_MAX {
                rank!(RANK_MAX);
            }
        }
        self.run.extend_from_slice(&self.spare[..n]);
        sort_bucket(&mut self.run, &mut self.spare, &mut self.counts, self.cur, self.shift);
    }

    /// Keys from now on may carry source `src`: the rank sort keeps room for it.
    #[inline(always)]
    pub(crate) fn note_source(&mut self, src: u32) {
        let bits = u32::BITS - src.leading_zeros();
        if bits > self.src_bits {
            self.src_bits = bits;
        }
    }

    /// The first occupied bucket after `cur` (the wheel is not empty).
    fn next_occupied(&self) -> u64 {
        let base = self.cur + 1;
        let start = (base & (self.wheel - 1)) as usize;
        let words = self.occupied.len();
        for k in 0..=words {
            let w = (start / 64 + k) & (words - 1); // words is a power of two
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << (start % 64);
            } else if k == words {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let slot = (w * 64) as u64 + bits.trailing_zeros() as u64;
                return base + ((slot + self.wheel - start as u64) & (self.wheel - 1));
            }
        }
        unreachable!("the wheel counts events but no bucket holds one")
    }
}

/// Sort a bucket's events (all of bucket `cur`, 2^`shift` ps wide) by key, when `rank_sort` does not
/// apply (more than 32 events, buckets wider than 2^27 ps, or far events joining wheel events). A small
/// bucket is insertion-sorted; a larger one (a busy fabric's hold hundreds) is first spread
/// by a stable counting sort on the high bits of its time within the bucket into between n and 2n groups
/// (about one event each), then insertion-sorted, which only moves events within their group: linear work
/// without a data-dependent branch per move, instead of n log n
/// comparisons of 32-byte entries.
fn sort_bucket<E: Copy>(v: &mut Vec<Entry<E>>, tmp: &mut Vec<Entry<E>>, counts: &mut Vec<u32>, cur: u64, shift: u32) {
    let n = v.len();
    if n > SMALL_BUCKET {
        let bits = (usize::BITS - n.leading_zeros()).min(shift).min(16);
        let low = shift - bits;
        let base = cur << shift;
        let sub = |e: &Entry<E>| ((((e.key >> 64) as u64) - base) >> low) as usize;
        counts.clear();
        counts.resize(1 << bits, 0);
        for e in v.iter() {
            counts[sub(e)] += 1;
        }
        let mut at = 0u32;
        for c in counts.iter_mut() {
            let k = *c;
            *c = at;
            at += k;
        }
        tmp.clear();
        tmp.reserve(n);
        // SAFETY: the counting sort writes each of the n slots exactly once (the offsets partition 0..n)
        // before the length is set; Entry is Copy.
        unsafe {
            let dst = tmp.as_mut_ptr();
            for e in v.iter() {
                let k = sub(e);
                dst.add(counts[k] as usize).write(*e);
                counts[k] += 1;
            }
            tmp.set_len(n);
        }
        std::mem::swap(v, tmp);
    }
    insertion_sort(v);
}

/// Buckets up to this size are insertion-sorted directly (measured: 8 against 32 and n / 4 groups, paper/steady
/// FH 0.2 s -6% time, -6% branch mispredictions, docs/benchmarks.md).
const SMALL_BUCKET: usize = 8;

/// `refill` copies a bucket of up to this many events in one chunk into `run` as it is and insertion-sorts
/// it there on the events' keys, without the general path's fixed work (the chunk copied whole, a rank
/// counted over eight slots per event). Most buckets of a lightly loaded fabric hold one or two events
/// (k = 8 FH, 5 ms: 1.5 on average); under callgrind there 4 and 8 do alike, 2 a little worse, and the
/// run's instructions fall 11% (docs/benchmarks.md).
const DIRECT_MAX: usize = 4;

/// Buckets up to this size are sorted by rank (`rank_sort`), when a time within a bucket fits the rank
/// key's 32 bits beside a position below `RANK_MAX` (27 bits).
const RANK_MAX: usize = 32;
const RANK_SHIFT_MAX: u32 = 32 - RANK_POS_BITS;
/// Bits of a rank key that hold an event's position in its bucket.
const RANK_POS_BITS: u32 = RANK_MAX.trailing_zeros();

/// Sort the first `n` (1 to `W`) of `src`, a bucket's events in push order (so in sequence-number order),
/// into `dst` by rank: each event's place is the number of events that come before it, counted over a
/// fixed `W` slots (those past `n` padded to come last) with no branch on the data. (The insertion sort's
/// loop exits mispredicted about once per event, paper/steady's buckets hold about 8 events.) The rank key
/// (`key`, 32 bits when it fits, else 64) is the time within the bucket, then the source (as many bits as
/// the largest source seen: none when events carry none), then the position, which within one source is
/// the sequence numbers' order.
fn rank_sort<E: Copy, K: Copy + PartialOrd, const W: usize>(
    src: &mut Vec<Entry<E>>,
    dst: &mut Vec<Entry<E>>,
    n: usize,
    pad: K,
    key: impl Fn(&Entry<E>, usize) -> K,
) {
    debug_assert!(n >= 1 && n <= W && W <= RANK_MAX && src.len() >= n);
    if src.len() < W {
        src.resize(W, src[0]);
    }
    let src: &[Entry<E>; W] = src[..W].try_into().expect("W entries");
    let mut keys = [pad; W];
    for (i, e) in src.iter().enumerate() {
        keys[i] = if i < n { key(e, i) } else { pad };
    }
    // the ranks of the n events are 0..n (padding keys come after every event): each lands in place
    dst.clear();
    dst.resize(n, src[0]);
    for i in 0..n {
        dst[count_below(&keys, keys[i])] = src[i];
    }
    debug_assert!(dst.windows(2).all(|w| w[0].key < w[1].key), "a bucket out of key order");
}

#[inline(always)]
fn count_below<K: Copy + PartialOrd, const N: usize>(keys: &[K; N], k: K) -> usize {
    let mut r = 0u32;
    for &x in keys {
        r += (x < k) as u32;
    }
    r as usize
}

fn insertion_sort<E: Copy>(v: &mut [Entry<E>]) {
    for i in 1..v.len() {
        let e = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key > e.key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}
