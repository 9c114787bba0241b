//! The main lane of the event queue: a timing wheel in front of two small heaps.
//!
//! ```text
//!   time ──► bucket = time >> shift (the simulation picks the width: ~16 events per bucket under full load)
//!
//!   run    the current bucket `cur`, sorted (the next event last)
//!   late   heap of events pushed for the current bucket (or earlier) after it was sorted
//!   wheel  the buckets after `cur` up to the horizon, each an unsorted list of 8-event chunks, with an occupancy bitmap
//!   far    heap of events beyond the horizon (workload arrivals, links slower than the wheel was sized for)
//! ```
//!
//! Events come out in exactly the (time, sequence) order of one heap: `run` and `late` hold the current
//! bucket, and every event elsewhere lies in a later bucket. When both run dry the cursor moves to the next
//! occupied bucket (a bitmap scan) and that bucket is sorted into `run`; events of `far` move into the
//! wheel as the cursor comes within reach of them. A push appends to its bucket's last chunk, a pop takes
//! the last of a sorted array, and a bucket is read once, a chunk at a time, when the cursor reaches it and
//! sorted in L1. Chunks are reused last-freed first, so the chunks being filled are the ones just read:
//! the wheel's memory is the events pending, not buckets x the most a bucket ever held; a single heap's depth and
//! cache misses grow with the number of events pending, which grows with the fabric.

use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;
use std::mem::MaybeUninit;

/// Default shape: log2 of a bucket's width in picoseconds (16.4 ns) and of the number of buckets (a horizon
/// of 16.8 µs). A simulation sets its own from its fabric (`Wheel::with_shape`).
pub const DEFAULT_SHIFT: u32 = 14;
pub const DEFAULT_BUCKET_BITS: u32 = 10;
/// Events per chunk.
const CHUNK: usize = 8;
const NIL: u32 = u32::MAX;

/// `next` first: a new chunk's link and first entry share a cache line. How many entries are written is
/// kept per bucket (`fill`, for its last chunk; the others are full), so an append touches one line.
#[repr(C)]
struct Chunk<E> {
    next: u32,
    entries: [MaybeUninit<Entry<E>>; CHUNK],
}

#[derive(Clone, Copy)]
pub(crate) struct Entry<E> {
    pub key: u128,
    pub ev: E,
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
    run: Vec<Entry<E>>,
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
}

impl<E: Copy> Wheel<E> {
    /// Buckets of 2^`shift` ps, 2^`bucket_bits` of them.
    pub fn with_shape(shift: u32, bucket_bits: u32) -> Self {
        assert!(shift < 40 && (6..=20).contains(&bucket_bits), "wheel shape out of range");
        let wheel = 1u64 << bucket_bits;
        Wheel {
            run: Vec::with_capacity(1 << 8),
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
        }
    }

    #[inline(always)]
    fn bucket(&self, key: u128) -> u64 {
        ((key >> 64) as u64) >> self.shift
    }

    pub fn len(&self) -> usize {
        self.run.len() + self.late.len() + self.far.len() + self.on_wheel
    }

    /// The earliest event (the wheel keeps the current bucket non-empty whenever it holds anything).
    #[inline]
    pub fn peek(&self) -> Option<&Entry<E>> {
        match (self.run.last(), self.late.peek()) {
            (Some(a), Some(b)) => Some(if a.key < b.key { a } else { b }),
            (a, None) => a,
            (None, b) => b,
        }
    }

    #[inline]
    pub fn push(&mut self, e: Entry<E>) {
        let b = self.bucket(e.key);
        if b <= self.cur {
            self.late.push(e);
            return;
        }
        if b < self.cur + self.wheel {
            self.put_on_wheel(b, e);
        } else {
            self.far.push(e);
        }
        if self.run.is_empty() && self.late.is_empty() {
            self.refill();
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let from_run = match (self.run.last(), self.late.peek()) {
            (Some(a), Some(b)) => a.key < b.key,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let e = if from_run { self.run.pop() } else { self.late.pop() };
        if self.run.is_empty() && self.late.is_empty() {
            self.refill();
        }
        e
    }

    #[inline]
    fn put_on_wheel(&mut self, b: u64, entry: Entry<E>) {
        let slot = (b & (self.wheel - 1)) as usize;
        self.on_wheel += 1;
        let l = self.last[slot];
        let n = self.fill[slot] as usize;
        if l != NIL && n < CHUNK {
            self.chunks[l as usize].entries[n].write(entry);
            self.fill[slot] += 1;
            return;
        }
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.chunks[i as usize].next;
            i
        } else {
            self.chunks.push(Chunk { next: NIL, entries: [MaybeUninit::uninit(); CHUNK] });
            (self.chunks.len() - 1) as u32
        };
        let c = &mut self.chunks[i as usize];
        c.next = NIL;
        c.entries[0].write(entry);
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
        debug_assert!(self.run.is_empty() && self.late.is_empty());
        if self.on_wheel > 0 {
            let b = self.next_occupied();
            self.cur = b;
            let slot = (b & (self.wheel - 1)) as usize;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            let mut i = std::mem::replace(&mut self.first[slot], NIL);
            let last = std::mem::replace(&mut self.last[slot], NIL);
            while i != NIL {
                let n = if i == last { self.fill[slot] as usize } else { CHUNK };
                let c = &mut self.chunks[i as usize];
                let next = c.next;
                // SAFETY: put_on_wheel wrote entries[..n] (every entry of a chunk that is not the last).
                self.run.extend(c.entries[..n].iter().map(|e| unsafe { e.assume_init() }));
                self.on_wheel -= n;
                c.next = self.free;
                self.free = i;
                i = next;
            }
        } else if let Some(f) = self.far.peek() {
            self.cur = self.bucket(f.key);
        } else {
            return;
        }
        // events of `far` the cursor has come within reach of
        while let Some(f) = self.far.peek() {
            let b = self.bucket(f.key);
            if b >= self.cur + self.wheel {
                break;
            }
            let e = self.far.pop().expect("peeked");
            if b <= self.cur {
                self.run.push(e);
            } else {
                self.put_on_wheel(b, e);
            }
        }
        self.run.sort_unstable_by(|a, b| b.key.cmp(&a.key));
    }

    /// The first occupied bucket after `cur` (the wheel is not empty).
    fn next_occupied(&self) -> u64 {
        let base = self.cur + 1;
        let start = (base & (self.wheel - 1)) as usize;
        let words = self.occupied.len();
        for k in 0..=words {
            let w = (start / 64 + k) % words;
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
