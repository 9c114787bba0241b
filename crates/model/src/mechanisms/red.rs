//! Random Early Detection (Floyd & Jacobson 1993) as ns-2 and ns-3 users know it, as a sans-IO component:
//! it owns its average and count, takes the instantaneous queue length at an arrival and a uniform draw,
//! and says whether the arrival is congested (mark it CE if ECN-capable, otherwise drop it).
//!
//! ```text
//!   avg ← (1 − w)·avg + w·q                          (q: the queue at the arrival, before it; w = 1: instantaneous)
//!   avg < min                  → pass, count = −1
//!   min ≤ avg < max            → p_b = max_p·(avg − min)/(max − min)
//!   gentle, max ≤ avg < 2·max  → p_b = max_p + (1 − max_p)·(avg − max)/max
//!   otherwise                  → congested (count = 0)
//!   count += 1; p_a = p_b / (1 − count·p_b) (1 once count·p_b ≥ 1); congested when u < p_a, then count = 0
//! ```
//! The average is updated on arrivals only (no decay over idle periods; with `weight = 1`, the setting of
//! DCTCP-style marking and ns-3's dctcp-example, idle time does not matter).

use crate::units::QLen;

/// RED parameters of one queue; thresholds in bytes or in packets (`packets`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub min: f64,
    pub max: f64,
    pub packets: bool,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
}

impl RedParams {
    /// From thresholds given in the same unit.
    pub fn new(min: QLen, max: QLen, max_p: f64, weight: f64, gentle: bool) -> Result<RedParams, String> {
        let (lo, hi, packets) = match (min, max) {
            (QLen::Bytes(a), QLen::Bytes(b)) => (a, b, false),
            (QLen::Packets(a), QLen::Packets(b)) => (a, b, true),
            _ => return Err("min_threshold and max_threshold must be in the same unit (both bytes or both packets)".into()),
        };
        if hi <= lo {
            return Err(format!("max_threshold must be above min_threshold ({lo})"));
        }
        Ok(RedParams { min: lo as f64, max: hi as f64, packets, max_p, weight, gentle })
    }
}

/// The state RED keeps per queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Red {
    pub avg: f64,
    pub count: i64,
}

impl Default for Red {
    fn default() -> Self {
        Red { avg: 0.0, count: -1 }
    }
}

impl Red {
    /// The marking probability for the current average, before the count correction (p_b); None when the
    /// average is past the region where RED is probabilistic (every arrival is congested).
    pub fn p_b(p: &RedParams, avg: f64) -> Option<f64> {
        if avg < p.min {
            Some(0.0)
        } else if avg < p.max {
            Some(p.max_p * (avg - p.min) / (p.max - p.min))
        } else if p.gentle && avg < 2.0 * p.max {
            Some(p.max_p + (1.0 - p.max_p) * (avg - p.max) / p.max)
        } else {
            None
        }
    }

    /// An arrival finds `queue` (bytes or packets, as the parameters say) ahead of it; `u` is a uniform draw
    /// in [0, 1) (only read in the probabilistic region). True: congested (mark CE or drop).
    pub fn on_arrival(&mut self, p: &RedParams, queue: f64, u: impl FnOnce() -> f64) -> bool {
        self.avg = (1.0 - p.weight) * self.avg + p.weight * queue;
        match Red::p_b(p, self.avg) {
            Some(pb) if pb <= 0.0 => {
                self.count = -1;
                false
            }
            Some(pb) => {
                self.count += 1;
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
                if u() < pa {
                    self.count = 0;
                    true
                } else {
                    false
                }
            }
            None => {
                self.count = 0;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(gentle: bool, weight: f64) -> RedParams {
        RedParams::new(QLen::Packets(20), QLen::Packets(60), 0.1, weight, gentle).unwrap()
    }

    #[test]
    fn instantaneous_red_follows_the_formula_on_a_fixed_trace() {
        let p = params(false, 1.0);
        let mut r = Red::default();
        // (queue at the arrival, uniform draw)
        let trace = [
            (10.0, 0.0),   // below min: never, whatever the draw
            (40.0, 0.06),  // p_b = 0.05, count 0: p_a = 0.05, passes
            (40.0, 0.055), // count 1: p_a = 0.05 / 0.95 = 0.0526, passes
            (40.0, 0.055), // count 2: p_a = 0.05 / 0.90 = 0.0556, marks; count back to 0
            (50.0, 0.07),  // count 1: p_b = 0.075, p_a = 0.081, marks
            (60.0, 0.99),  // at max without gentle: always
            (19.0, 0.0),
        ];
        let expect = [false, false, false, true, true, true, false];
        // the expected decisions are also computed from the formula here, independently of the component
        let mut count: i64 = -1;
        for (i, (q, u)) in trace.into_iter().enumerate() {
            let avg: f64 = q;
            let want = if avg < 20.0 {
                count = -1;
                false
            } else if avg < 60.0 {
                count += 1;
                let pb = 0.1 * (avg - 20.0) / 40.0;
                let pa = pb / (1.0 - count as f64 * pb);
                let m = u < pa;
                if m {
                    count = 0;
                }
                m
            } else {
                count = 0;
                true
            };
            assert_eq!(want, expect[i]);
            assert_eq!(r.on_arrival(&p, q, || u), want, "queue {q}, draw {u}");
            assert_eq!(r.count, count);
            assert_eq!(r.avg, avg);
        }
    }

    #[test]
    fn count_correction_spreads_marks_evenly() {
        // at a constant p_b the count correction (count incremented before use, as in ns-2) makes the gap
        // between marks uniform on 1..1/p_b - 1: P(gap = n) = p_b / (1 - p_b); the mean gap is 1/(2 p_b)
        // arrivals, not the geometric 1/p_b
        let p = params(false, 1.0);
        let mut r = Red::default();
        let mut x: u64 = 0x2545F4914F6CDD1D;
        let mut draw = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut marks, n) = (0u32, 200_000);
        for _ in 0..n {
            marks += r.on_arrival(&p, 40.0, &mut draw) as u32; // p_b = 0.05
        }
        let gap = n as f64 / marks as f64;
        assert!((gap - 10.0).abs() < 0.3, "mean gap {gap}, want 10");
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one_between_max_and_twice_max() {
        let p = params(true, 1.0);
        assert_eq!(Red::p_b(&p, 60.0), Some(0.1));
        assert!((Red::p_b(&p, 90.0).unwrap() - 0.55).abs() < 1e-12);
        assert_eq!(Red::p_b(&p, 120.0), None);
        assert_eq!(Red::p_b(&params(false, 1.0), 60.0), None);
    }

    #[test]
    fn the_average_is_an_ewma_of_the_queue() {
        let p = params(false, 0.25);
        let mut r = Red::default();
        for q in [100.0, 100.0, 0.0] {
            r.on_arrival(&p, q, || 0.5);
        }
        // 0 -> 25 -> 43.75 -> 32.8125
        assert!((r.avg - 32.8125).abs() < 1e-12);
    }

    #[test]
    fn thresholds_must_share_a_unit_and_be_ordered() {
        assert!(RedParams::new(QLen::Bytes(10), QLen::Packets(20), 0.1, 1.0, false).is_err());
        assert!(RedParams::new(QLen::Packets(20), QLen::Packets(20), 0.1, 1.0, false).is_err());
    }
}
