//! A dense arena with a free list: entities addressed by `u32` slots, reused after release.

/// Slots of `T`; `alloc` reuses released slots first.
pub struct Arena<T> {
    slots: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Arena<T> {
    pub fn new() -> Self {
        Arena { slots: Vec::new(), free: Vec::new(), live: 0 }
    }
    #[inline]
    pub fn alloc(&mut self, v: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = v;
            i
        } else {
            self.slots.push(v);
            (self.slots.len() - 1) as u32
        }
    }
    /// Allocate a slot whose index is `offset` modulo `stride`: a released one (only slots of that stripe are
    /// ever released here) or a new one, the slots skipped on the way filled with `fill()` (they belong to
    /// another stripe: `put` fills them). Two arenas allocating from different stripes never hand out the
    /// same index, so each can hold copies of the other's records at their own indices.
    pub fn alloc_in(&mut self, v: T, stride: u32, offset: u32, mut fill: impl FnMut() -> T) -> u32 {
        debug_assert!(offset < stride);
        if let Some(i) = self.free.pop() {
            debug_assert_eq!(i % stride, offset, "a slot of another stripe was released");
            self.live += 1;
            self.slots[i as usize] = v;
            return i;
        }
        while self.slots.len() as u32 % stride != offset {
            self.slots.push(fill());
        }
        self.live += 1;
        self.slots.push(v);
        (self.slots.len() - 1) as u32
    }
    /// Store `v` at slot `i`, a slot of another stripe (see `alloc_in`): not counted live, never released.
    pub fn put(&mut self, i: u32, v: T, mut fill: impl FnMut() -> T) {
        while self.slots.len() <= i as usize {
            self.slots.push(fill());
        }
        self.slots[i as usize] = v;
    }
    /// Every slot ever allocated or put, mutable.
    pub fn slots_mut(&mut self) -> &mut [T] {
        &mut self.slots
    }
    /// Release a slot. Its content stays until reused; the caller must not use the index again.
    #[inline]
    pub fn release(&mut self, i: u32) {
        debug_assert!((i as usize) < self.slots.len());
        self.live -= 1;
        self.free.push(i);
    }
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.slots[i as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.slots[i as usize]
    }
    /// Every slot ever allocated, released ones included (their last content).
    pub fn slots(&self) -> &[T] {
        &self.slots
    }
    /// Slots in use.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Slots ever allocated (high-water mark).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

/// An arena whose records the two ends of a flow share in a run split in parts: in a whole run, an
/// `Arena`; in part `me` of `n` (`stripe`), the part allocates the indices `i` with `i % n == me` and holds
/// copies of other parts' records at their indices (`put`), each stored packed, with a map from index to
/// place, so that a part holds only its own records and its copies, not a slot for every index of the run.
/// Indices are handed out as `Arena::alloc_in` does (a released one of the stripe first, else the stripe's
/// first index past every index seen).
pub struct StripedArena<T> {
    /// A whole run's records, at their indices (a part: none).
    whole: Vec<T>,
    /// A part's: its records and copies, packed, and its map (index -> place, `NOWHERE`: none here).
    packed: Vec<T>,
    at: Option<Box<Places>>,
    /// Released indices (a part: of its stripe).
    free: Vec<u32>,
    live: usize,
}

struct Places {
    at: Vec<u32>,
    n: u32,
    me: u32,
}

const NOWHERE: u32 = u32::MAX;

impl<T> Default for StripedArena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> StripedArena<T> {
    pub fn new() -> Self {
        StripedArena { whole: Vec::new(), packed: Vec::new(), at: None, free: Vec::new(), live: 0 }
    }

    /// A whole run's arena of these records (by index; none of them live: a joined run's).
    pub fn from_slots(whole: Vec<T>) -> Self {
        StripedArena { whole, packed: Vec::new(), at: None, free: Vec::new(), live: 0 }
    }

    /// From now on, allocate the indices of stripe `me` of `n` (before any record is allocated).
    pub fn stripe(&mut self, n: u32, me: u32) {
        assert!(self.whole.is_empty() && me < n, "striped before any record, me < n");
        self.at = Some(Box::new(Places { at: Vec::new(), n, me }));
    }

    /// A part's place of record `i` (out of line: a whole run's lookups are a slice's bounds check, whose
    /// failing branch, never taken there, is what leads a part here).
    #[inline(never)]
    fn place(&self, i: u32) -> usize {
        match self.at.as_ref().and_then(|p| p.at.get(i as usize)) {
            Some(&k) if k != NOWHERE => k as usize,
            _ => panic!("record {i} is neither this part's nor a copy it holds"),
        }
    }

    #[inline(never)]
    fn in_part(&self, i: u32) -> &T {
        &self.packed[self.place(i)]
    }

    #[inline(never)]
    fn in_part_mut(&mut self, i: u32) -> &mut T {
        let k = self.place(i);
        &mut self.packed[k]
    }

    #[inline]
    pub fn alloc(&mut self, v: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            *self.get_mut(i) = v;
            return i;
        }
        let Some(p) = &mut self.at else {
            self.whole.push(v);
            return (self.whole.len() - 1) as u32;
        };
        let mut i = p.at.len() as u32;
        i += (p.me + p.n - i % p.n) % p.n;
        p.at.resize(i as usize + 1, NOWHERE);
        p.at[i as usize] = self.packed.len() as u32;
        self.packed.push(v);
        i
    }

    /// Store `v` at index `i`: in a part, a copy of another part's record (not counted live, never released
    /// here); in a whole run, the record joined from the parts (the slots before it filled with `fill()`).
    pub fn put(&mut self, i: u32, v: T, mut fill: impl FnMut() -> T) {
        match &mut self.at {
            None => {
                while self.whole.len() <= i as usize {
                    self.whole.push(fill());
                }
                self.whole[i as usize] = v;
            }
            Some(p) => {
                if p.at.len() <= i as usize {
                    p.at.resize(i as usize + 1, NOWHERE);
                }
                match p.at[i as usize] {
                    NOWHERE => {
                        p.at[i as usize] = self.packed.len() as u32;
                        self.packed.push(v);
                    }
                    k => self.packed[k as usize] = v,
                }
            }
        }
    }

    #[inline]
    pub fn release(&mut self, i: u32) {
        debug_assert!(self.try_get(i).is_some());
        self.live -= 1;
        self.free.push(i);
    }

    #[inline(always)]
    pub fn get(&self, i: u32) -> &T {
        match self.whole.get(i as usize) {
            Some(v) => v,
            None => self.in_part(i),
        }
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        if (i as usize) < self.whole.len() {
            return &mut self.whole[i as usize];
        }
        self.in_part_mut(i)
    }

    /// Record `i`, if this arena holds it.
    pub fn try_get(&self, i: u32) -> Option<&T> {
        match &self.at {
            None => self.whole.get(i as usize),
            Some(p) => p.at.get(i as usize).filter(|&&k| k != NOWHERE).map(|&k| &self.packed[k as usize]),
        }
    }

    /// One past the highest index allocated or put.
    pub fn len(&self) -> usize {
        match &self.at {
            None => self.whole.len(),
            Some(p) => p.at.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records held, with their indices, in index order (a part: its own and its copies).
    pub fn held(&self) -> impl Iterator<Item = (u32, &T)> {
        let ids: Vec<(u32, usize)> = match &self.at {
            None => (0..self.whole.len()).map(|i| (i as u32, i)).collect(),
            Some(p) => p.at.iter().enumerate().filter(|(_, &k)| k != NOWHERE).map(|(i, &k)| (i as u32, k as usize)).collect(),
        };
        let store = if self.at.is_none() { &self.whole } else { &self.packed };
        ids.into_iter().map(move |(i, k)| (i, &store[k]))
    }

    /// The records of this part's stripe (a whole run: every record), mutable.
    pub fn own_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let mine: Vec<bool> = match &self.at {
            None => vec![true; self.whole.len()],
            Some(p) => {
                let mut mine = vec![false; self.packed.len()];
                for (i, &k) in p.at.iter().enumerate() {
                    if k != NOWHERE && i as u32 % p.n == p.me {
                        mine[k as usize] = true;
                    }
                }
                mine
            }
        };
        let store = if self.at.is_none() { &mut self.whole } else { &mut self.packed };
        store.iter_mut().zip(mine).filter(|(_, m)| *m).map(|(v, _)| v)
    }

    /// Every slot, by index: a whole run's records (panics in a part).
    pub fn slots(&self) -> &[T] {
        assert!(self.at.is_none(), "a part's records are packed: use held()");
        &self.whole
    }

    pub fn slots_mut(&mut self) -> &mut [T] {
        assert!(self.at.is_none(), "a part's records are packed: use own_mut()");
        &mut self.whole
    }

    /// Records in use (allocated here and not released).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Records stored (a whole run: the high-water mark of indices).
    pub fn capacity_used(&self) -> usize {
        self.whole.len() + self.packed.len()
    }

    /// The part's map dropped: the arena of a whole run, with every index up to `len()` held (the joined
    /// records put since), or filled with `fill()`.
    pub fn into_whole(self, mut fill: impl FnMut() -> T) -> StripedArena<T> {
        let Some(p) = self.at else { return self };
        let mut packed: Vec<Option<T>> = self.packed.into_iter().map(Some).collect();
        let whole = p.at.iter().map(|&k| if k == NOWHERE { fill() } else { packed[k as usize].take().expect("one place per index") }).collect();
        StripedArena { whole, packed: Vec::new(), at: None, free: self.free, live: self.live }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn reuse() {
        let mut a = Arena::new();
        let x = a.alloc(1);
        let y = a.alloc(2);
        a.release(x);
        let z = a.alloc(3);
        assert_eq!(z, x);
        assert_eq!(*a.get(y), 2);
        assert_eq!(a.live(), 2);
    }
    #[test]
    fn stripes_never_share_an_index() {
        let (mut even, mut odd) = (Arena::new(), Arena::new());
        let e: Vec<u32> = (0..3).map(|v| even.alloc_in(v, 2, 0, || -1)).collect();
        let o: Vec<u32> = (0..3).map(|v| odd.alloc_in(v, 2, 1, || -1)).collect();
        assert_eq!((e, o.clone()), (vec![0, 2, 4], vec![1, 3, 5]));
        // a copy of the odd arena's record in the even one, at its index
        even.put(o[2], 10, || -1);
        assert_eq!((*even.get(5), *even.get(3), even.live()), (10, -1, 3));
        even.release(2);
        assert_eq!(even.alloc_in(7, 2, 0, || -1), 2);
        assert_eq!(even.alloc_in(8, 2, 0, || -1), 6, "the slot put at 5 is not handed out");
    }
    #[test]
    fn a_striped_arena_hands_out_the_indices_alloc_in_does_and_holds_only_its_records() {
        // the same steps on a plain arena's stripe and on a striped arena
        let (mut plain, mut packed) = (Arena::new(), StripedArena::new());
        packed.stripe(4, 1);
        let mut got = Vec::new();
        for (k, step) in [0, 0, 10, 0, 3, 0, 20, 0].into_iter().enumerate() {
            match step {
                0 => got.push((plain.alloc_in(k as i32, 4, 1, || -1), packed.alloc(k as i32))),
                3 => {
                    plain.release(got[1].0);
                    packed.release(got[1].1);
                }
                i => {
                    plain.put(i, 100 + k as i32, || -1);
                    packed.put(i, 100 + k as i32, || -1);
                }
            }
        }
        assert!(got.iter().all(|(a, b)| a == b), "{got:?}");
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![1, 5, 13, 5, 21]);
        assert_eq!((packed.len(), plain.capacity_used(), packed.capacity_used()), (22, 22, 6));
        for (i, v) in packed.held() {
            assert_eq!(v, plain.get(i));
        }
        assert_eq!(packed.try_get(2), None);
        assert_eq!(packed.own_mut().map(|v| *v).collect::<Vec<_>>(), vec![0, 5, 3, 7]);
        let whole = packed.into_whole(|| -1);
        assert_eq!(whole.slots(), plain.slots());
    }
}
