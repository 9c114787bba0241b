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
}
