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
}
