//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015): a
//! rate-based controller driven by the gradient of the RTT. Each update, with `new_rtt` the RTT an ACK
//! measured (its arrival less the echoed send time of the segment it acknowledges), is the paper's
//! Algorithm 1:
//!
//! ```text
//!   new_rtt_diff = new_rtt - prev_rtt;  prev_rtt = new_rtt
//!   rtt_diff     = (1 - alpha) rtt_diff + alpha new_rtt_diff
//!   gradient     = rtt_diff / min_rtt
//!   new_rtt < t_low       rate += delta
//!   new_rtt > t_high      rate *= 1 - beta (1 - t_high / new_rtt)
//!   gradient <= 0         rate += N delta    N = 5 once the gradient was <= 0 at `hai_after` updates in
//!                                            a row (hyperactive increase), else 1
//!   otherwise             rate *= 1 - beta gradient   (a factor below 0 counts as 0)
//! ```
//!
//! The rate stays within [`min_rate`, the NIC's line rate] and starts at the line rate. Updates run once
//! per RTT, as the HPCC simulator's TIMELY (`rdma-hw.cc`, `UpdateRateTimely`): on the first ACK beyond the
//! sequence number the sender had reached at the last update; the first such ACK only records its RTT.
//! TIMELY runs over RoCE's reliability (go-back-N, the receiver in order only), as DCQCN and HPCC do.
//! Parameters: `t_low` 50 µs, `t_high` 500 µs, `delta` 10 Mb/s and `beta` 0.8 are the paper's evaluation
//! values (its section 6); `alpha` 0.875 and `min_rtt` 20 µs are the HPCC simulator's `TimelyAlpha` and
//! `TimelyMinRtt` (the TIMELY paper is not among the project's papers, so these are not quoted from it).
//! Unlike the paper, the RTT is not corrected for the segment's serialization time.

use super::Controller;
use crate::transport::params::TcpParams;
use detailsim_engine::Time;

/// TIMELY's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelyParams {
    /// Below this RTT the rate grows by `delta` whatever the gradient.
    pub t_low: Time,
    /// Above this RTT the rate is cut in proportion to how far the RTT exceeds it.
    pub t_high: Time,
    /// Additive increase step, bit/s.
    pub delta: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// EWMA weight of the newest RTT difference.
    pub alpha: f64,
    /// The RTT the gradient is normalised by.
    pub min_rtt: Time,
    /// Updates in a row with a non-positive gradient after which the increase is 5 delta.
    pub hai_after: u32,
    /// The rate never falls below this, bit/s.
    pub min_rate: f64,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            delta: 10e6,
            beta: 0.8,
            alpha: 0.875,
            min_rtt: Time::from_us(20),
            hai_after: 5,
            min_rate: 100e6,
        }
    }
}

/// The increase in hyperactive mode, in steps of `delta` (the paper's N).
pub const HAI_STEPS: f64 = 5.0;

/// One flow's TIMELY state.
#[derive(Debug, Clone)]
pub struct Timely {
    /// The rate now and its bounds' top (the NIC's line rate), bit/s.
    pub rate: f64,
    pub line: f64,
    /// The RTT of the last update (picoseconds) and the smoothed RTT difference (picoseconds).
    pub prev_rtt: f64,
    pub rtt_diff: f64,
    /// Updates in a row whose gradient was <= 0.
    pub neg_streak: u32,
    /// The sequence number past which the next ACK makes an update (0: none yet).
    pub last_update_seq: u64,
    /// Rate cuts since the summary last took them, and in all.
    fresh_cuts: u64,
    pub cuts: u64,
}

impl Timely {
    /// A flow whose NIC runs at `line` bit/s: it starts at the line rate.
    pub fn new(line: f64) -> Timely {
        Timely { rate: line, line, prev_rtt: 0.0, rtt_diff: 0.0, neg_streak: 0, last_update_seq: 0, fresh_cuts: 0, cuts: 0 }
    }

    /// An ACK for `ack` measured `rtt`, the sender's next byte being `nxt`: once per RTT, the update.
    pub fn sample(&mut self, p: &TimelyParams, ack: u64, nxt: u64, rtt: Time) {
        if ack <= self.last_update_seq {
            return;
        }
        let new_rtt = rtt.0 as f64;
        if self.last_update_seq != 0 {
            self.update(p, new_rtt);
        }
        self.prev_rtt = new_rtt;
        self.last_update_seq = nxt.max(ack);
    }

    /// Algorithm 1 for one RTT sample (picoseconds).
    fn update(&mut self, p: &TimelyParams, new_rtt: f64) {
        let new_rtt_diff = new_rtt - self.prev_rtt;
        self.rtt_diff = (1.0 - p.alpha) * self.rtt_diff + p.alpha * new_rtt_diff;
        let gradient = self.rtt_diff / p.min_rtt.0 as f64;
        let before = self.rate;
        if new_rtt < p.t_low.0 as f64 {
            self.neg_streak = 0;
            self.rate += p.delta;
        } else if new_rtt > p.t_high.0 as f64 {
            self.neg_streak = 0;
            self.rate *= 1.0 - p.beta * (1.0 - p.t_high.0 as f64 / new_rtt);
        } else if gradient <= 0.0 {
            self.neg_streak += 1;
            let n = if self.neg_streak >= p.hai_after { HAI_STEPS } else { 1.0 };
            self.rate += n * p.delta;
        } else {
            self.neg_streak = 0;
            self.rate *= (1.0 - p.beta * gradient).max(0.0);
        }
        self.rate = self.rate.clamp(p.min_rate.min(self.line), self.line);
        if self.rate < before {
            self.fresh_cuts += 1;
            self.cuts += 1;
        }
    }
}

/// TIMELY behind the controller interface: no ECN reaction, the segments paced at its rate, which each
/// RTT sample moves.
impl Controller for Timely {
    #[inline]
    fn pace_rate(&self) -> Option<f64> {
        Some(self.rate)
    }
    #[inline]
    fn on_rtt(&mut self, p: &TcpParams, ack: u64, nxt: u64, rtt: Time) {
        self.sample(&p.timely, ack, nxt, rtt);
    }
    #[inline]
    fn fresh_rate_cuts(&mut self) -> u64 {
        std::mem::take(&mut self.fresh_cuts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: f64 = 1e6; // picoseconds per microsecond

    /// A trace computed by hand with the defaults (alpha 0.875, beta 0.8, delta 10 Mb/s, min_rtt 20 us,
    /// t_low 50 us, t_high 500 us) from 10 Gb/s; each ACK is the first past the previous update's `nxt`.
    #[test]
    fn follows_a_hand_computed_trace() {
        let p = TimelyParams::default();
        let mut t = Timely::new(10e9);
        let mut seq = 0u64;
        let mut step = |t: &mut Timely, rtt_us: u64| {
            seq += 1000;
            t.sample(&p, seq, seq, Time::from_us(rtt_us));
        };
        // 1. the first sample only records its RTT: 100 us
        step(&mut t, 100);
        assert_eq!((t.rate, t.prev_rtt, t.rtt_diff), (10e9, 100.0 * US, 0.0));
        // 2. 120 us: diff = 0.875 x 20 us = 17.5 us, gradient 17.5 / 20 = 0.875 > 0, inside [t_low, t_high]:
        //    rate x (1 - 0.8 x 0.875) = 10 Gb/s x 0.3 = 3 Gb/s
        step(&mut t, 120);
        assert!((t.rtt_diff - 17.5 * US).abs() < 1e-6);
        assert!((t.rate - 3e9).abs() < 1.0, "{}", t.rate);
        // 3. 110 us: new diff -10 us; diff = 0.125 x 17.5 + 0.875 x (-10) = -6.5625 us <= 0: rate + 10 Mb/s
        step(&mut t, 110);
        assert!((t.rtt_diff + 6.5625 * US).abs() < 1e-6);
        assert!((t.rate - 3.01e9).abs() < 1.0, "{}", t.rate);
        assert_eq!(t.neg_streak, 1);
        // 4. 40 us < t_low: + 10 Mb/s whatever the gradient, and the streak restarts
        step(&mut t, 40);
        assert!((t.rate - 3.02e9).abs() < 1.0);
        assert_eq!(t.neg_streak, 0);
        // 5. 1000 us > t_high: x (1 - 0.8 x (1 - 500 / 1000)) = x 0.6 -> 1.812 Gb/s
        step(&mut t, 1000);
        assert!((t.rate - 1.812e9).abs() < 1.0, "{}", t.rate);
        assert_eq!(t.cuts, 2);
        // 6-10. five falling RTTs inside the band: the fifth increase in a row is hyperactive (5 x 10 Mb/s)
        for (i, rtt) in [400u64, 300, 200, 150, 100].into_iter().enumerate() {
            let before = t.rate;
            step(&mut t, rtt);
            let want = if i == 4 { 50e6 } else { 10e6 };
            assert!((t.rate - before - want).abs() < 1.0, "update {}: +{}", i + 6, t.rate - before);
        }
        // an ACK that is not past the last update changes nothing
        let r = t.rate;
        t.sample(&p, seq, seq + 5000, Time::from_us(2000));
        assert_eq!(t.rate, r);
    }

    #[test]
    fn the_rate_stays_between_the_minimum_and_the_line_rate() {
        let p = TimelyParams::default();
        let mut t = Timely::new(1e9);
        t.sample(&p, 1, 1, Time::from_us(20));
        t.sample(&p, 2, 2, Time::from_us(10)); // below t_low: + delta, capped at the line rate
        assert_eq!(t.rate, 1e9);
        // a steep rise: 1 - 0.8 x gradient < 0 counts as 0, and the rate stops at min_rate
        t.sample(&p, 3, 3, Time::from_us(400));
        assert_eq!(t.rate, p.min_rate);
    }
}
