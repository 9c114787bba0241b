//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015) as two
//! components: the reaction point (`Rp`, the sender's NIC: a rate limiter driven by CNPs and timers) and
//! the notification point (`Np`, the receiver's NIC: at most one CNP per flow per interval).
//!
//! The reaction point follows the HPCC simulator's NIC (`rdma-hw.cc`, its "Mellanox version of DCQCN",
//! `*Mlx`, alibaba-edu/High-Precision-Congestion-Control), which the field's comparisons run:
//!
//! ```text
//!   first CNP     alpha = 1; rate = target = rate_on_first_cnp x rate; the alpha and decrease timers start
//!   every alpha_interval   alpha = (1 - g) alpha + g if a CNP came since the last update, else (1 - g) alpha
//!   every decrease_interval, if a CNP came since the last check:
//!                 target = rate (unless it is the first decrease of a recovery and clamping is off);
//!                 rate = max(min_rate, rate (1 - alpha / 2)); stage = 0; the increase timer restarts
//!   every increase_interval (and every byte_counter bytes sent, when set), stage + 1 after:
//!                 stage < F        fast recovery      rate = (rate + target) / 2
//!                 stage = F        additive increase  target += rate_ai
//!                 stage > F        hyper increase     target += rate_hai   (target at most the line rate)
//!                 then rate = (rate + target) / 2
//! ```
//!
//! With a byte counter (the paper's, off in the HPCC simulator) the stage is counted separately for the
//! timer and the counter, and the phase is fast recovery while both are below F, hyper increase once both
//! are past it, additive increase otherwise. Every deadline is a field the caller schedules on; `advance`
//! runs the ones due in time order. Rates are bits per second (f64).

use crate::transport::params::TcpParams;
use detailsim_engine::Time;

/// DCQCN's parameters. Defaults (`Default`): the HPCC simulator's `RdmaHw` attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnParams {
    /// EWMA gain of alpha (`EwmaGain`, 1/16).
    pub g: f64,
    /// Additive and hyper increase steps, bit/s (`RateAI` 5 Mb/s, `RateHAI` 50 Mb/s).
    pub rate_ai: f64,
    pub rate_hai: f64,
    /// The rate never falls below this, bit/s (`MinRate`, 100 Mb/s).
    pub min_rate: f64,
    /// Alpha's update period (`AlphaResumInterval`, 55 us).
    pub alpha_interval: Time,
    /// How often a CNP's rate decrease is checked (`RateDecreaseInterval`, 4 us).
    pub decrease_interval: Time,
    /// The rate increase timer (`RPTimer`, 1500 us; the HPCC simulator's `run.py` uses 300 us for `dcqcn` and
    /// 55 us for `dcqcn_paper`).
    pub increase_interval: Time,
    /// Bytes sent per rate increase event, the paper's byte counter (None: timer only, as the HPCC simulator).
    pub byte_counter: Option<u64>,
    /// Increase events of fast recovery (`FastRecoveryTimes`, F = 5).
    pub fast_recovery: u32,
    /// The rate on the first CNP, as a share of the current rate (`RateOnFirstCnp`, 1.0).
    pub rate_on_first_cnp: f64,
    /// Set the target to the current rate on every decrease (`ClampTargetRate`, off: not on the first
    /// decrease of a recovery).
    pub clamp_target: bool,
    /// The notification point's interval: at most one CNP per flow per this (50 us: the value commonly
    /// cited for DCQCN's N; the HPCC simulator marks every ACK instead, and we do not have the DCQCN paper
    /// to quote).
    pub cnp_interval: Time,
    /// The receiver's NACK interval: one NACK per this for the same missing point (`NACK Generation
    /// Interval`, 500 us).
    pub nack_interval: Time,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            g: 1.0 / 16.0,
            rate_ai: 5e6,
            rate_hai: 50e6,
            min_rate: 100e6,
            alpha_interval: Time::from_us(55),
            decrease_interval: Time::from_us(4),
            increase_interval: Time::from_us(1500),
            byte_counter: None,
            fast_recovery: 5,
            rate_on_first_cnp: 1.0,
            clamp_target: false,
            cnp_interval: Time::from_us(50),
            nack_interval: Time::from_us(500),
        }
    }
}

/// Which rate increase an event made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increase {
    FastRecovery,
    Additive,
    Hyper,
}

/// The reaction point of one flow.
#[derive(Debug, Clone)]
pub struct Rp {
    /// The line rate (the rate's and target's ceiling) and the current and target rates, bit/s.
    pub line: f64,
    pub rate: f64,
    pub target: f64,
    pub alpha: f64,
    /// A CNP came since the last alpha update / decrease check.
    cnp_for_alpha: bool,
    cnp_for_decrease: bool,
    /// No CNP yet: the timers do not run.
    pub first: bool,
    /// Increase events since the last decrease: by the timer, by the byte counter.
    pub timer_stage: u32,
    pub byte_stage: u32,
    bytes: u64,
    /// The next alpha update, decrease check and increase event (None: not running).
    pub alpha_at: Option<Time>,
    pub decrease_at: Option<Time>,
    pub increase_at: Option<Time>,
    /// Decreases and increases made (for the run's counters and tests).
    pub decreases: u64,
    pub increases: u64,
    /// Decreases already reported (`fresh_decreases`).
    reported: u64,
}

impl Rp {
    /// A flow starting at the line rate (RoCE has no slow start).
    pub fn new(line: f64) -> Rp {
        Rp {
            line,
            rate: line,
            target: line,
            alpha: 1.0,
            cnp_for_alpha: false,
            cnp_for_decrease: false,
            first: true,
            timer_stage: 0,
            byte_stage: 0,
            bytes: 0,
            alpha_at: None,
            decrease_at: None,
            increase_at: None,
            decreases: 0,
            increases: 0,
            reported: 0,
        }
    }

    /// Decreases made since the last call (for the caller's counters).
    pub fn fresh_decreases(&mut self) -> u64 {
        let n = self.decreases - self.reported;
        self.reported = self.decreases;
        n
    }

    /// The earliest deadline (for the caller's timer).
    pub fn deadline(&self) -> Option<Time> {
        [self.alpha_at, self.decrease_at, self.increase_at].into_iter().flatten().min()
    }

    /// A CNP for this flow arrived now.
    pub fn on_cnp(&mut self, now: Time, p: &DcqcnParams) {
        self.cnp_for_alpha = true;
        self.cnp_for_decrease = true;
        if self.first {
            self.first = false;
            self.alpha = 1.0;
            self.cnp_for_alpha = false;
            self.alpha_at = Some(now + p.alpha_interval);
            // 1 ns after, so that a decrease check never precedes the alpha update of the same instant
            self.decrease_at = Some(now + p.decrease_interval + Time(1000));
            self.rate *= p.rate_on_first_cnp;
            self.target = self.rate;
        }
    }

    /// `bytes` more were sent: with a byte counter, an increase event per `byte_counter` bytes.
    pub fn on_sent(&mut self, bytes: u64, p: &DcqcnParams) {
        let Some(b) = p.byte_counter else { return };
        if self.first {
            return; // at the line rate until the first CNP: nothing to recover
        }
        self.bytes += bytes;
        while self.bytes >= b {
            self.bytes -= b;
            self.increase(p);
            self.byte_stage += 1;
        }
    }

    /// Run every timer due at or before `now`, in time order (alpha update before a decrease check due at
    /// the same instant, both before an increase).
    pub fn advance(&mut self, now: Time, p: &DcqcnParams) {
        loop {
            let due = |t: Option<Time>| t.filter(|&t| t <= now);
            let next =
                [(due(self.alpha_at), 0), (due(self.decrease_at), 1), (due(self.increase_at), 2)].into_iter().filter_map(|(t, k)| t.map(|t| (t, k))).min();
            let Some((t, k)) = next else { return };
            match k {
                0 => {
                    self.alpha = (1.0 - p.g) * self.alpha + if self.cnp_for_alpha { p.g } else { 0.0 };
                    self.cnp_for_alpha = false;
                    self.alpha_at = Some(t + p.alpha_interval);
                }
                1 => {
                    self.decrease_at = Some(t + p.decrease_interval);
                    if self.cnp_for_decrease {
                        if p.clamp_target || self.timer_stage != 0 || self.byte_stage != 0 {
                            self.target = self.rate;
                        }
                        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(p.min_rate);
                        self.timer_stage = 0;
                        self.byte_stage = 0;
                        self.bytes = 0;
                        self.cnp_for_decrease = false;
                        self.decreases += 1;
                        self.increase_at = Some(t + p.increase_interval);
                    }
                }
                _ => {
                    self.increase_at = Some(t + p.increase_interval);
                    self.increase(p);
                    self.timer_stage += 1;
                }
            }
        }
    }

    /// The phase the next increase event is in.
    pub fn phase(&self, p: &DcqcnParams) -> Increase {
        let f = p.fast_recovery;
        let (t, b) = (self.timer_stage, if p.byte_counter.is_some() { self.byte_stage } else { self.timer_stage });
        if t.max(b) < f {
            Increase::FastRecovery
        } else if t.min(b) > f {
            // (without a byte counter b is the timer's stage: past F alone is hyper increase)
            Increase::Hyper
        } else {
            Increase::Additive
        }
    }

    fn increase(&mut self, p: &DcqcnParams) {
        match self.phase(p) {
            Increase::FastRecovery => {}
            Increase::Additive => self.target = (self.target + p.rate_ai).min(self.line),
            Increase::Hyper => self.target = (self.target + p.rate_hai).min(self.line),
        }
        self.rate = (self.rate + self.target) / 2.0;
        self.increases += 1;
    }
}

/// The notification point of one flow: a CE-marked packet arriving now calls for a CNP if none was sent
/// for the flow in the last `cnp_interval`.
#[derive(Debug, Clone, Default)]
pub struct Np {
    pub last_cnp: Option<Time>,
    pub cnps: u64,
}

impl Np {
    pub fn on_ce(&mut self, now: Time, p: &DcqcnParams) -> bool {
        if self.last_cnp.is_some_and(|t| now < t + p.cnp_interval) {
            return false;
        }
        self.last_cnp = Some(now);
        self.cnps += 1;
        true
    }
}

/// DCQCN behind the controller interface: no window reaction (the rate is everything), the segments
/// paced at the reaction point's rate, its timers run as time passes, a CNP starts a decrease.
impl super::Controller for Rp {
    #[inline]
    fn pace_rate(&self) -> Option<f64> {
        Some(self.rate)
    }
    #[inline]
    fn tick(&mut self, now: Time, p: &TcpParams) {
        self.advance(now, &p.dcqcn);
    }
    #[inline]
    fn on_paced_send(&mut self, wire: u64, p: &TcpParams) {
        self.on_sent(wire, &p.dcqcn);
    }
    #[inline]
    fn on_notification(&mut self, now: Time, p: &TcpParams) {
        self.on_cnp(now, &p.dcqcn);
    }
    #[inline]
    fn fresh_rate_cuts(&mut self) -> u64 {
        self.fresh_decreases()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;

    #[test]
    fn the_first_cnp_starts_the_timers_and_the_first_decrease_halves_the_rate() {
        let p = DcqcnParams::default();
        let mut rp = Rp::new(10.0 * G);
        assert_eq!(rp.deadline(), None, "no timer before a CNP");
        rp.on_cnp(Time::ZERO, &p);
        assert_eq!((rp.alpha_at, rp.decrease_at), (Some(Time::from_us(55)), Some(Time(4_001_000))));
        rp.advance(Time::from_us(5), &p);
        // alpha 1: rate x (1 - 1/2); the target stays at the line rate (the first decrease is not clamped)
        assert_eq!((rp.rate, rp.target, rp.decreases), (5.0 * G, 10.0 * G, 1));
        assert_eq!(rp.increase_at, Some(Time(4_001_000) + Time::from_us(1500)));
        // alpha decays by (1 - g) each 55 us without CNPs: 15/16 at 55 us, (15/16)^2 at 110
        rp.advance(Time::from_us(110), &p);
        assert!((rp.alpha - (15.0f64 / 16.0).powi(2)).abs() < 1e-12, "{}", rp.alpha);
        // a CNP at 111 us: the check at 112.001 us cuts by alpha / 2; no increase came since the last decrease
        // (stage 0), so the target is not clamped
        rp.on_cnp(Time::from_us(111), &p);
        rp.advance(Time::from_us(113), &p);
        let a = (15.0f64 / 16.0).powi(2);
        assert!((rp.rate - 5.0 * G * (1.0 - a / 2.0)).abs() < 1.0, "{}", rp.rate);
        assert_eq!(rp.target, 10.0 * G);
    }

    #[test]
    fn recovery_halves_the_gap_five_times_then_adds_and_then_hyper_adds() {
        let p = DcqcnParams::default();
        let mut rp = Rp::new(10.0 * G);
        rp.on_cnp(Time::ZERO, &p);
        rp.advance(Time::from_us(5), &p); // rate 5 G, target 10 G
        rp.advance(Time(4_001_000) + Time::from_us(1500), &p); // a fast recovery: 7.5 G, stage 1
                                                               // a second CNP: the check at 1508.001 us clamps the target to 7.5 G (stage 1) and cuts by alpha / 2
        rp.on_cnp(Time::from_us(1506), &p);
        rp.advance(Time::from_us(1509), &p);
        assert_eq!(rp.target, 7.5 * G);
        let t0 = Time(1_508_001_000);
        let mut expect = (rp.rate, 7.5 * G);
        for k in 1..=8u64 {
            rp.advance(t0 + Time::from_us(1500 * k), &p);
            let stage = k - 1; // the stage before this event
            if stage == 5 {
                expect.1 += 5e6;
            } else if stage > 5 {
                expect.1 += 50e6;
            }
            expect.0 = (expect.0 + expect.1) / 2.0;
            assert!((rp.rate - expect.0).abs() < 1e-3 && (rp.target - expect.1).abs() < 1e-3, "event {k}: {} {}", rp.rate, rp.target);
        }
        // five fast recoveries, one additive (+5 Mb/s), two hyper (+50 Mb/s each)
        assert_eq!((rp.increases, rp.decreases), (9, 2));
        assert!((rp.target - (7.5 * G + 105e6)).abs() < 1e-3);
        // the target never passes the line rate
        for k in 9..=300u64 {
            rp.advance(t0 + Time::from_us(1500 * k), &p);
        }
        assert_eq!(rp.target, 10.0 * G);
        assert!(rp.rate <= 10.0 * G && rp.rate > 9.99 * G);
    }

    #[test]
    fn a_later_decrease_clamps_the_target_and_the_rate_never_falls_below_the_minimum() {
        let p = DcqcnParams::default();
        let mut rp = Rp::new(10.0 * G);
        rp.on_cnp(Time::ZERO, &p);
        rp.advance(Time::from_us(5), &p);
        rp.advance(Time(4_001_000) + Time::from_us(1500), &p); // one fast recovery: 7.5 G, stage 1
        assert_eq!((rp.rate, rp.timer_stage), (7.5 * G, 1));
        rp.on_cnp(Time::from_us(1506), &p);
        rp.advance(Time::from_us(1510), &p);
        // the decrease sets the target to the rate it cuts from
        assert_eq!(rp.target, 7.5 * G);
        assert!(rp.rate < 7.5 * G && rp.timer_stage == 0);
        // a CNP every check drives the rate to the floor and keeps it there
        let mut t = Time::from_us(1510);
        for _ in 0..2000 {
            rp.on_cnp(t, &p);
            t += Time::from_us(4);
            rp.advance(t, &p);
        }
        assert_eq!(rp.rate, p.min_rate);
        assert!(rp.alpha > 0.99, "alpha tends to 1 under CNPs every period: {}", rp.alpha);
    }

    #[test]
    fn the_byte_counter_makes_increase_events_and_both_counters_past_f_hyper_increase() {
        let p = DcqcnParams { byte_counter: Some(10_000_000), increase_interval: Time::from_us(55), ..DcqcnParams::default() };
        let mut rp = Rp::new(40.0 * G);
        rp.on_sent(50_000_000, &p);
        assert_eq!(rp.increases, 0, "no recovery before a CNP");
        rp.on_cnp(Time::ZERO, &p);
        rp.advance(Time::from_us(5), &p); // 20 G, target 40 G
                                          // 6 byte-counter events (60 MB): five fast recoveries, then (byte stage 5, timer stage 0) additive
        rp.on_sent(60_000_000, &p);
        assert_eq!((rp.byte_stage, rp.timer_stage, rp.increases), (6, 0, 6));
        let mut expect = 20.0 * G;
        for _ in 0..5 {
            expect = (expect + 40.0 * G) / 2.0;
        }
        expect = (expect + 40.0 * G) / 2.0; // the target, already at the line rate, stays there
        assert!((rp.rate - expect).abs() < 1.0);
        // the timer catches up: timer stage 6, byte stage 6: hyper increase from then on
        for k in 1..=6u64 {
            rp.advance(Time(4_001_000) + Time::from_us(55 * k), &p);
        }
        assert_eq!(rp.phase(&p), Increase::Hyper);
        // without a byte counter the timer alone decides: stage 5 additive, 6 hyper
        let q = DcqcnParams::default();
        let mut r = Rp::new(10.0 * G);
        r.timer_stage = 5;
        assert_eq!(r.phase(&q), Increase::Additive);
        r.timer_stage = 6;
        assert_eq!(r.phase(&q), Increase::Hyper);
        r.timer_stage = 4;
        assert_eq!(r.phase(&q), Increase::FastRecovery);
    }

    #[test]
    fn the_notification_point_sends_at_most_one_cnp_per_interval() {
        let p = DcqcnParams::default();
        let mut np = Np::default();
        let sent: Vec<bool> = [0u64, 10, 49, 50, 51, 99, 100, 200].iter().map(|&us| np.on_ce(Time::from_us(us), &p)).collect();
        assert_eq!(sent, [true, false, false, true, false, false, true, true]);
        assert_eq!(np.cnps, 4);
    }
}
