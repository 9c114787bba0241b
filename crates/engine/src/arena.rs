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
    /// Every slot ever allocated, mutable.
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
/// A part's indices: a released one of its stripe first, else the stripe's first index past every index
/// allocated or put (so a copy's index is never handed out).
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

#[cold]
#[inline(never)]
fn missing(i: u32) -> ! {
    panic!("record {i} is neither this part's nor a copy it holds")
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

    /// A part's place of record `i` (out of line, in `in_part` and `in_part_mut`: a whole run's lookups are
    /// a slice's bounds check, whose failing branch, never taken there, is what leads a part there).
    #[inline(always)]
    fn place(&self, i: u32) -> usize {
        match self.at.as_ref().and_then(|p| p.at.get(i as usize)) {
            Some(&k) if k != NOWHERE => k as usize,
            _ => missing(i),
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
    fn a_striped_arena_hands_out_its_stripe_and_holds_only_its_records() {
        // part 1 of 4: indices 1, 5, 9, ...; a copy put at 10 pushes the next new index past it (13); a
        // released index is handed out again first (5); a copy at 20 then puts the next at 21
        let mut a = StripedArena::new();
        a.stripe(4, 1);
        let mut got = Vec::new();
        for (k, step) in [0, 0, 10, 0, 3, 0, 20, 0].into_iter().enumerate() {
            match step {
                0 => got.push(a.alloc(k as i32)),
                3 => a.release(got[1]),
                i => a.put(i, 100 + k as i32, || -1),
            }
        }
        assert_eq!(got, vec![1, 5, 13, 5, 21]);
        assert_eq!((a.len(), a.capacity_used(), a.live()), (22, 6, 4), "22 indices, 6 records stored");
        let held: Vec<(u32, i32)> = a.held().map(|(i, &v)| (i, v)).collect();
        assert_eq!(held, vec![(1, 0), (5, 5), (10, 102), (13, 3), (20, 106), (21, 7)]);
        assert_eq!((a.try_get(2), *a.get(10)), (None, 102));
        assert_eq!(a.own_mut().map(|v| *v).collect::<Vec<_>>(), vec![0, 5, 3, 7], "its stripe's records, not the copies");
        // the whole run's arena: every index, the ones no part held filled
        let whole = a.into_whole(|| -1);
        let mut want = [-1; 22];
        for (i, v) in held {
            want[i as usize] = v;
        }
        assert_eq!(whole.slots(), &want[..]);
        // a whole run's arena is a plain one
        let mut w = StripedArena::new();
        assert_eq!((w.alloc(7), w.alloc(8), *w.get(1)), (0, 1, 8));
    }
}
