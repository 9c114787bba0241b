//! What one dependent load costs on this machine, by working set: a pointer chase through one cache line
//! per step, in a random cycle over the whole set, so that neither the prefetchers nor the order of the
//! lines help. A large fabric's events pay this for every line not in cache (docs/benchmarks.md, "The
//! machine's memory on the day"); `benches/bench.py` stores it with each run of the suite, and
//! `detailsim._core.load_latency_ns` gives it from Python.

use crate::rng::RngStreams;
use std::time::Instant;

/// Words per 64-byte cache line.
const LINE: usize = 64 / std::mem::size_of::<usize>();

/// A random permutation of `0..n` that is one cycle (Sattolo's algorithm): following `next` from any
/// slot visits every slot once before it comes back.
pub fn single_cycle(n: usize, seed: u64) -> Vec<u32> {
    assert!(n >= 1 && n <= u32::MAX as usize, "single_cycle: n = {n} is not in 1..=2^32-1");
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = RngStreams::new(seed).stream(0, 0);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64) as usize);
    }
    // `order` lists the cycle; each slot points at the one after it
    let mut next = vec![0u32; n];
    for i in 0..n {
        next[order[i] as usize] = order[(i + 1) % n];
    }
    next
}

/// Nanoseconds per dependent load through `bytes` of memory (at least one line), averaged over `steps`
/// loads after one pass (at most 2^20 loads) to warm the caches and the TLB.
pub fn load_latency_ns(bytes: usize, steps: u64) -> f64 {
    let n = (bytes / 64).max(1);
    let next = single_cycle(n, 1);
    // line i's first word holds the index (in words) of the next line's first word
    let mut mem = vec![0usize; n * LINE];
    for (i, &j) in next.iter().enumerate() {
        mem[i * LINE] = j as usize * LINE;
    }
    drop(next);
    let mut p = 0usize;
    for _ in 0..n.min(1 << 20) {
        p = mem[p];
    }
    let t = Instant::now();
    for _ in 0..steps {
        p = mem[p];
    }
    let ns = t.elapsed().as_nanos() as f64 / steps.max(1) as f64;
    std::hint::black_box(p);
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_every_slot_once() {
        for n in [1usize, 2, 3, 64, 1000] {
            let next = single_cycle(n, 7);
            let mut seen = vec![false; n];
            let mut p = 0usize;
            for _ in 0..n {
                assert!(!seen[p], "n = {n}: slot {p} visited twice");
                seen[p] = true;
                p = next[p] as usize;
            }
            assert_eq!(p, 0, "n = {n}: back at the start after n steps");
            assert!(seen.iter().all(|&s| s));
        }
        // a random order, not the identity's successor
        let next = single_cycle(1000, 7);
        assert!(next.iter().enumerate().filter(|&(i, &j)| j as usize == (i + 1) % 1000).count() < 10);
    }

    #[test]
    fn a_chase_takes_time_per_load() {
        let ns = load_latency_ns(64 << 10, 100_000);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
    }
}
