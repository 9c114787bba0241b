//! Integer time and link rates.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (or span of) simulated time, in picoseconds. `u64` picoseconds last 213 days.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * PS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * PS_PER_MS)
    }
    /// Seconds as a float, rounded to the nearest picosecond.
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * PS_PER_S as f64).round() as u64)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    pub fn saturating_sub(self, o: Time) -> Time {
        Time(self.0.saturating_sub(o.0))
    }
}

impl Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, o: Time) -> Time {
        Time(self.0 + o.0)
    }
}
impl AddAssign for Time {
    #[inline]
    fn add_assign(&mut self, o: Time) {
        self.0 += o.0
    }
}
impl Sub for Time {
    type Output = Time;
    #[inline]
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}us", self.as_us_f64())
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to a whole picosecond.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Time {
        // packets: the product fits in 64 bits, and a 64-bit division is much cheaper than a 128-bit one
        if bytes < (1 << 20) {
            return Time((bytes * 8 * PS_PER_S).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        let r = self.0 as u128;
        Time(num.div_ceil(r) as u64)
    }
    /// Picoseconds per byte when that is a whole number small enough for the packet fast path (rates that
    /// divide 8 Tbit/s: 1, 10, 25, 40, 100 Gbit/s and most others used), else 0.
    pub const fn ps_per_byte(self) -> u64 {
        let num = 8 * PS_PER_S;
        if self.0 != 0 && num.is_multiple_of(self.0) && num / self.0 <= (1 << 32) {
            num / self.0
        } else {
            0
        }
    }
    /// `tx_time` with this rate's `ps_per_byte` computed beforehand: a multiplication instead of a
    /// division for packets; the same result to the picosecond.
    #[inline(always)]
    pub fn tx_time_pb(self, ps_per_byte: u64, bytes: u64) -> Time {
        if ps_per_byte != 0 && bytes < (1 << 20) {
            return Time(bytes * ps_per_byte);
        }
        self.tx_time(bytes)
    }
    /// Time to serialize `bytes` at `speedup` times this rate.
    #[inline]
    pub fn tx_time_speedup(self, bytes: u64, speedup: f64) -> Time {
        let t = self.tx_time(bytes).0 as f64 / speedup;
        Time(t.ceil() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn full_frame_at_1gbps_is_12_24_us() {
        assert_eq!(Rate::gbps(1).tx_time(1530), Time::from_ns(12_240));
    }
    #[test]
    fn one_byte_at_400gbps_is_20_ps() {
        assert_eq!(Rate::gbps(400).tx_time(1), Time(20));
    }
    #[test]
    fn the_64_bit_path_rounds_like_the_128_bit_one() {
        for rate in [1u64, 3, 999_999_937, 1_000_000_000, 40_000_000_000, 400_000_000_000, 3_333_333_333] {
            for bytes in [0u64, 1, 64, 1530, 9000, (1 << 20) - 1, 1 << 20, 1 << 30] {
                let exact = (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128) as u64;
                assert_eq!(Rate(rate).tx_time(bytes).0, exact, "{bytes} B at {rate} bit/s");
            }
        }
    }
    #[test]
    fn the_per_byte_path_equals_the_division() {
        for rate in [1u64, 3, 1_000, 999_999_937, 1_000_000_000, 4_000_000_000, 40_000_000_000, 400_000_000_000, 3_333_333_333] {
            let r = Rate(rate);
            for bytes in [0u64, 1, 64, 1530, 9000, (1 << 20) - 1, 1 << 20, 1 << 30] {
                assert_eq!(r.tx_time_pb(r.ps_per_byte(), bytes), r.tx_time(bytes), "{bytes} B at {rate} bit/s");
            }
        }
        assert_eq!(Rate::gbps(1).ps_per_byte(), 8_000);
        assert_eq!(Rate(3_333_333_333).ps_per_byte(), 0);
        assert_eq!(Rate(1).ps_per_byte(), 0, "too slow for the fast path");
    }
    #[test]
    fn crossbar_speedup_4() {
        assert_eq!(Rate::gbps(1).tx_time_speedup(1530, 4.0), Time::from_ns(3_060));
    }
}
