//! The main lane of the event queue: a timing wheel in front of two small heaps.
//!
//! ```text
//!   time ──► bucket = time >> SHIFT (about 16 ns wide)
//!
//!   near   heap of every event in the current bucket `cur` (and any pushed for an earlier time)
//!   wheel  WHEEL buckets after `cur`, each an unsorted array, with an occupancy bitmap
//!   far    heap of events WHEEL buckets or more ahead (workload arrivals, slow links)
//! ```
//!
//! Events come out in exactly the (time, sequence) order of one heap: `near` orders the current bucket,
//! and every event elsewhere lies in a later bucket. When `near` runs dry the cursor moves to the next
//! occupied bucket (a bitmap scan) and that bucket is poured into `near`; events of `far` move into the
//! wheel as the cursor comes within reach of them. A push appends to a bucket (the ends of the buckets
//! being filled are few and stay in cache), a pop is a pop from a heap of one bucket's events (small, in
//! L1), and a bucket is read once, sequentially, when the cursor reaches it; a single heap's depth and
//! cache misses grow with the number of events pending, which grows with the fabric.

use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// log2 of a bucket's width in picoseconds (16.4 ns: tens of events per bucket in a loaded fabric).
const SHIFT: u32 = 14;
/// Buckets on the wheel (a horizon of about 16.8 µs: a link delay, a frame's serialization, a crossbar
/// transfer and a PFC stop delay all land on it).
const WHEEL: u64 = 1 << 10;

#[derive(Clone, Copy)]
pub(crate) struct Entry<E> {
    pub key: u128,
    pub ev: E,
    pub stream: u32,
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

#[inline(always)]
fn bucket(key: u128) -> u64 {
    ((key >> 64) as u64) >> SHIFT
}

pub(crate) struct Wheel<E> {
    near: QuaternaryHeap<Entry<E>>,
    far: QuaternaryHeap<Entry<E>>,
    /// Per wheel slot: its events, unsorted (each keeps its capacity once grown).
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit s of word s / 64: slot s holds events.
    occupied: Vec<u64>,
    /// Events on the wheel (not in `near` or `far`).
    on_wheel: usize,
    /// The current bucket: `near` holds its events; the wheel holds buckets cur + 1 .. cur + WHEEL.
    cur: u64,
}

impl<E: Copy> Wheel<E> {
    pub fn new() -> Self {
        Wheel {
            near: QuaternaryHeap::with_capacity(1 << 8),
            far: QuaternaryHeap::with_capacity(1 << 10),
            buckets: (0..WHEEL).map(|_| Vec::new()).collect(),
            occupied: vec![0; (WHEEL / 64) as usize],
            on_wheel: 0,
            cur: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.near.len() + self.far.len() + self.on_wheel
    }

    /// The earliest event (the queue keeps `near` non-empty whenever it holds anything).
    #[inline]
    pub fn peek(&self) -> Option<&Entry<E>> {
        self.near.peek()
    }

    #[inline]
    pub fn push(&mut self, e: Entry<E>) {
        let b = bucket(e.key);
        if b <= self.cur {
            self.near.push(e);
            return;
        }
        if b < self.cur + WHEEL {
            self.put_on_wheel(b, e);
        } else {
            self.far.push(e);
        }
        if self.near.is_empty() {
            self.refill();
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let e = self.near.pop()?;
        if self.near.is_empty() {
            self.refill();
        }
        Some(e)
    }

    #[inline]
    fn put_on_wheel(&mut self, b: u64, entry: Entry<E>) {
        let slot = (b & (WHEEL - 1)) as usize;
        self.buckets[slot].push(entry);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.on_wheel += 1;
    }

    /// `near` ran dry: move the cursor to the next bucket that holds events and pour it into `near`.
    #[inline(never)]
    fn refill(&mut self) {
        if self.on_wheel > 0 {
            let b = self.next_occupied();
            self.cur = b;
            let slot = (b & (WHEEL - 1)) as usize;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            let bucket = &mut self.buckets[slot];
            self.on_wheel -= bucket.len();
            self.near.extend(bucket.drain(..));
        } else if let Some(f) = self.far.peek() {
            self.cur = bucket(f.key);
        } else {
            return;
        }
        // events of `far` the cursor has come within reach of
        while let Some(f) = self.far.peek() {
            let b = bucket(f.key);
            if b >= self.cur + WHEEL {
                break;
            }
            let e = self.far.pop().expect("peeked");
            if b <= self.cur {
                self.near.push(e);
            } else {
                self.put_on_wheel(b, e);
            }
        }
    }

    /// The first occupied bucket after `cur` (the wheel is not empty).
    fn next_occupied(&self) -> u64 {
        let base = self.cur + 1;
        let start = (base & (WHEEL - 1)) as usize;
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
                return base + ((slot + WHEEL - start as u64) & (WHEEL - 1));
            }
        }
        unreachable!("the wheel counts events but no bucket holds one")
    }
}
