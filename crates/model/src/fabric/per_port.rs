//! `PerPort<T>`: a value per port of the fabric, addressed by the port's global index. A simulation that
//! runs the whole fabric holds every port's value; a part of a split run holds only its own ports' values
//! (`keep`), packed, with a map from global index to place that the part's per-port tables share. Reading a
//! port another part holds is a bug, and panics naming the port.

use std::sync::Arc;

/// Where each port's value sits in a part's packed table: the place, or `NOT_HELD`.
pub type Places = Arc<[u32]>;
const NOT_HELD: u32 = u32::MAX;

/// A value per port, by global port index (see the module's documentation).
#[derive(Debug, Clone)]
pub struct PerPort<T> {
    items: Vec<T>,
    /// None: every port's value, at its global index.
    at: Option<Places>,
}

impl<T> Default for PerPort<T> {
    fn default() -> Self {
        PerPort { items: Vec::new(), at: None }
    }
}

impl<T> From<Vec<T>> for PerPort<T> {
    fn from(items: Vec<T>) -> Self {
        PerPort { items, at: None }
    }
}

/// The places of the ports `held` picks, in global order (`PerPort::keep`).
pub fn places(held: &[bool]) -> Places {
    let mut next = 0u32;
    held.iter()
        .map(|&h| {
            if h {
                next += 1;
                next - 1
            } else {
                NOT_HELD
            }
        })
        .collect()
}

#[cold]
#[inline(never)]
fn not_held(i: usize) -> ! {
    panic!("port {i} is held by another part of the split run")
}

impl<T> PerPort<T> {
    /// No value at all (e.g. no PFC state without PFC).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many ports the fabric has (0 for a table with no value at all), whether held here or not.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.at {
            None => self.items.len(),
            Some(at) => at.len(),
        }
    }

    /// Every port's value is here (not a part's packed table).
    #[inline]
    pub fn whole(&self) -> bool {
        self.at.is_none()
    }

    #[inline(always)]
    fn place(&self, i: usize) -> usize {
        match &self.at {
            None => i,
            Some(at) => match at[i] {
                NOT_HELD => not_held(i),
                k => k as usize,
            },
        }
    }

    /// Port `i`'s value, if there is one here.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        match &self.at {
            None => self.items.get(i),
            Some(at) => at.get(i).filter(|&&k| k != NOT_HELD).and_then(|&k| self.items.get(k as usize)),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        match &self.at {
            None => self.items.get_mut(i),
            Some(at) => match at.get(i) {
                Some(&k) if k != NOT_HELD => self.items.get_mut(k as usize),
                _ => None,
            },
        }
    }

    /// The values held here with their ports' global indices, in global order.
    pub fn held(&self) -> impl Iterator<Item = (u32, &T)> {
        let n = self.items.len();
        let ids: Box<dyn Iterator<Item = u32> + '_> = match &self.at {
            None => Box::new(0..n as u32),
            Some(at) => Box::new(at.iter().enumerate().filter(|(_, &k)| k != NOT_HELD).map(|(i, _)| i as u32)),
        };
        ids.zip(self.items.iter())
    }

    pub fn held_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> {
        let n = self.items.len();
        let ids: Box<dyn Iterator<Item = u32> + '_> = match &self.at {
            None => Box::new(0..n as u32),
            Some(at) => Box::new(at.iter().enumerate().filter(|(_, &k)| k != NOT_HELD).map(|(i, _)| i as u32)),
        };
        ids.zip(self.items.iter_mut())
    }

    /// The values held here (in global order).
    pub fn values(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Every port's value, by global index: the whole fabric's table (panics on a part's packed one).
    pub fn all(&self) -> &[T] {
        assert!(self.at.is_none(), "a part of a split run holds only its own ports");
        &self.items
    }

    /// `all().iter()`: every port's value in global order (a whole fabric's table; panics on a part's).
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.all().iter()
    }

    pub fn all_mut(&mut self) -> &mut [T] {
        assert!(self.at.is_none(), "a part of a split run holds only its own ports");
        &mut self.items
    }

    /// Keep only the values of the ports that `at` places (`places`), packed.
    pub fn keep(&mut self, at: &Places) {
        assert!(self.at.is_none(), "kept once");
        if self.items.is_empty() {
            return;
        }
        debug_assert_eq!(self.items.len(), at.len());
        let items = std::mem::take(&mut self.items);
        // a new table of the held ones' size (collecting in place would keep the whole one's allocation)
        let mut kept = Vec::with_capacity(at.iter().filter(|&&k| k != NOT_HELD).count());
        kept.extend(items.into_iter().zip(at.iter()).filter(|(_, &k)| k != NOT_HELD).map(|(v, _)| v));
        self.items = kept;
        self.at = Some(at.clone());
    }

    /// A part's packed table: `items` are the values of the ports `at` places, in global order.
    pub fn packed(items: Vec<T>, at: Places) -> PerPort<T> {
        debug_assert_eq!(items.len(), at.iter().filter(|&&k| k != NOT_HELD).count());
        PerPort { items, at: Some(at) }
    }

    /// A table of the same ports as this one (every port's, or the same part's), of `f(port, value)`.
    pub fn same_places<U>(&self, f: impl FnMut((u32, &T)) -> U) -> PerPort<U> {
        PerPort { items: self.held().map(f).collect(), at: self.at.clone() }
    }

    /// The whole fabric's table again from the parts' packed ones (each port's value from the part that
    /// holds it; every port is held by one part).
    pub fn join(parts: Vec<PerPort<T>>) -> PerPort<T> {
        let n = match parts.iter().find_map(|p| p.at.as_ref()) {
            Some(at) => at.len(),
            None => return parts.into_iter().next().unwrap_or_default(),
        };
        if parts.iter().all(|p| p.items.is_empty()) {
            return PerPort::default();
        }
        // each part's values are in global order: take them in turn (no table of options beside the result)
        let mut from: Vec<(Places, std::vec::IntoIter<T>)> = parts.into_iter().map(|p| (p.at.expect("a part's packed table"), p.items.into_iter())).collect();
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            let (_, values) = from.iter_mut().find(|(at, _)| at[i] != NOT_HELD).unwrap_or_else(|| panic!("port {i} held by no part"));
            items.push(values.next().expect("a value per port held"));
        }
        PerPort { items, at: None }
    }
}

impl<'a, T> IntoIterator for &'a PerPort<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> std::ops::Index<usize> for PerPort<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.items[self.place(i)]
    }
}

impl<T> std::ops::IndexMut<usize> for PerPort<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let k = self.place(i);
        &mut self.items[k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_holds_its_own_ports_packed_and_the_join_restores_the_whole_table() {
        let whole: Vec<u32> = (0..5).map(|i| i * 10).collect();
        let (mut a, mut b) = (PerPort::from(whole.clone()), PerPort::from(whole.clone()));
        let held = [true, false, true, false, false];
        a.keep(&places(&held));
        b.keep(&places(&held.map(|h| !h)));
        assert_eq!((a[2], b[4], a.values().len(), b.values().len()), (20, 40, 2, 3));
        assert_eq!((a.get(1), b.get(1), a.get(9)), (None, Some(&10), None));
        assert_eq!(a.held().map(|(i, &v)| (i, v)).collect::<Vec<_>>(), vec![(0, 0), (2, 20)]);
        a[2] = 21;
        b[3] = 31;
        let j = PerPort::join(vec![a, b]);
        assert!(j.whole());
        assert_eq!(j.all(), &[0, 10, 21, 31, 40]);
    }

    #[test]
    #[should_panic(expected = "port 1 is held by another part")]
    fn reading_another_parts_port_panics_naming_it() {
        let mut a = PerPort::from(vec![1, 2, 3]);
        a.keep(&places(&[true, false, true]));
        let _ = a[1];
    }
}
