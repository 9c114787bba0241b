//! Random streams seeded from (master seed, component, purpose).
//!
//! Each stream is an independent Xoshiro256++ generator whose seed is a SplitMix64 hash of the three
//! numbers, so a new component or purpose never shifts the draws of an existing one.

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Factory of streams for one simulation run.
#[derive(Clone, Copy, Debug)]
pub struct RngStreams {
    master: u64,
}

impl RngStreams {
    pub fn new(master: u64) -> Self {
        RngStreams { master }
    }
    /// The stream of `component` (e.g. a node index) for `purpose` (a constant naming what it draws).
    pub fn stream(&self, component: u64, purpose: u64) -> Stream {
        let s = splitmix(splitmix(splitmix(self.master) ^ component) ^ purpose.rotate_left(32));
        Stream(Xoshiro256PlusPlus::seed_from_u64(s))
    }
}

/// One random stream.
#[derive(Clone, Debug)]
pub struct Stream(Xoshiro256PlusPlus);

impl Stream {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>()
    }
    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        self.0.random_range(0..n)
    }
    /// Exponentially distributed with the given mean.
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so ln never sees 0.
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = RngStreams::new(1);
        let mut s1 = a.stream(3, 7);
        let mut s2 = a.stream(3, 7);
        let mut s3 = a.stream(4, 7);
        let mut s4 = RngStreams::new(2).stream(3, 7);
        let v1: Vec<u64> = (0..4).map(|_| s1.next_u64()).collect();
        let v2: Vec<u64> = (0..4).map(|_| s2.next_u64()).collect();
        let v3: Vec<u64> = (0..4).map(|_| s3.next_u64()).collect();
        let v4: Vec<u64> = (0..4).map(|_| s4.next_u64()).collect();
        assert_eq!(v1, v2);
        assert_ne!(v1, v3);
        assert_ne!(v1, v4);
    }
    #[test]
    fn exp_mean() {
        let mut s = RngStreams::new(9).stream(0, 0);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| s.exp(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.02, "{m}");
    }
}
