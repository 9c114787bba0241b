//! Congestion control: one algorithm per file, each a component that owns its state and its parameters,
//! behind one interface (`Controller`). `Cc` holds a flow's controller and dispatches by enum (no dynamic
//! dispatch on the hot path); `TcpSender` (`transport/tcp.rs`) keeps the window machinery (slow start,
//! loss recovery, the retransmission timer, pacing) and asks its controller at fixed points.
//!
//! Adding an algorithm: a file here with its state, its parameters and their defaults, and its
//! `Controller` impl; an arm in `CongestionControl` and `Cc`; its parameters' knob block in
//! `config/knobs.rs`. `config` reads these types; nothing here reads `config`.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod l2dct;
pub mod newreno;
pub mod pfabric;
pub mod timely;

use crate::transport::params::TcpParams;
use detailsim_engine::Time;
use serde::Deserialize;

/// Which controller a flow runs (`scheme.tcp.cc`).
#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// TCP NewReno (with classic ECN reaction when `ecn` is on).
    NewReno,
    /// DCTCP: alpha-weighted window cut, precise ECN echo.
    Dctcp,
    /// L2DCT: DCTCP whose cut (alpha^w / 2) and additive increase (w / w_max per RTT) are weighted by the
    /// bytes the flow has sent: w = 2.5 up to 200 segments, falling linearly to 0.125 at 1000 segments.
    L2dct,
    /// pFabric's minimal rate control: the window shrinks only on a timeout (to one segment, then slow
    /// start); fast retransmit resends the lost segment without a cut; no ECN reaction; header-only probes
    /// after 5 timeouts in a row until an ACK returns.
    Pfabric,
    /// RoCEv2 with DCQCN (`dcqcn`): no window and no slow start; each flow's rate limiter starts at the
    /// line rate and follows DCQCN's reaction point; the receiver acknowledges every segment in order,
    /// discards one out of order and asks for the rest again (go-back-N, NACK at most once per
    /// `nack_interval` for the same point), and sends a CNP (an ACK with ECE) for CE at most once per
    /// `cnp_interval`.
    Dcqcn,
    /// HPCC (`hpcc`): RoCE's reliability (go-back-N, the receiver in order only) with a window from in-band
    /// telemetry that every switch egress writes into data packets and the receiver echoes, paced at
    /// window / base RTT.
    Hpcc,
    /// TIMELY (`timely`): RoCE's reliability as DCQCN's, and a rate from the RTT's gradient, updated once
    /// per RTT, from the line rate.
    Timely,
}

impl CongestionControl {
    /// The algorithm's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            CongestionControl::NewReno => "NewReno",
            CongestionControl::Dctcp => "DCTCP",
            CongestionControl::L2dct => "L2DCT",
            CongestionControl::Pfabric => "pFabric",
            CongestionControl::Dcqcn => "DCQCN",
            CongestionControl::Hpcc => "HPCC",
            CongestionControl::Timely => "TIMELY",
        }
    }
    /// Uses DCTCP's alpha estimate and its receiver's precise CE echo (DCTCP and L2DCT).
    #[inline]
    pub fn dctcp_echo(self) -> bool {
        matches!(self, CongestionControl::Dctcp | CongestionControl::L2dct)
    }
    /// RoCE's reliability: go-back-N, the receiver in order only (DCQCN, HPCC, TIMELY), and a rate that paces
    /// the segments, started from the NIC's rate (`TcpSender::start_rate`).
    #[inline]
    pub fn roce(self) -> bool {
        matches!(self, CongestionControl::Dcqcn | CongestionControl::Hpcc | CongestionControl::Timely)
    }
    /// Starts from the path's base RTT (HPCC's window is the path's BDP).
    #[inline]
    pub fn needs_base_rtt(self) -> bool {
        matches!(self, CongestionControl::Hpcc)
    }
}

/// What a congestion controller decides. The sender calls these at fixed points of its ACK, timer and
/// send handling; a controller changes only its own state and answers with numbers. The defaults are
/// NewReno's loss response, no ECN reaction and, for the rate hooks, "no rate".
pub trait Controller {
    /// New data was acknowledged: `acked` bytes, the ACK up to `ack` with ECN echo `ece`, the sender's
    /// next byte to send `nxt`.
    #[inline]
    fn on_new_ack(&mut self, _p: &TcpParams, _acked: u64, _ece: bool, _ack: u64, _nxt: u64) {}
    /// The window after congestion avoidance grows it for `acked` new bytes (slow start is the sender's);
    /// `sent`: the highest byte sent so far.
    #[inline]
    fn avoid(&self, p: &TcpParams, cwnd: f64, acked: f64, _sent: u64) -> f64 {
        cwnd + p.mss as f64 * acked / cwnd
    }
    /// The reaction to an ECN echo (the sender asks at most once per window of data): the new window and
    /// slow-start threshold, or None to leave both (the default: no reaction).
    #[inline]
    fn ecn_cut(&self, _p: &TcpParams, _cwnd: f64, _sent: u64) -> Option<(f64, f64)> {
        None
    }
    /// Whether loss recovery (fast retransmit, partial ACKs) changes the window.
    #[inline]
    fn loss_cuts(&self) -> bool {
        true
    }
    /// Whether a timeout may be found spurious and undone (Eifel, `spurious_rto_undo`).
    #[inline]
    fn undo_spurious(&self) -> bool {
        true
    }
    /// Timeouts in a row after which the sender only sends header-only probes until an ACK arrives.
    #[inline]
    fn probe_after(&self) -> Option<u32> {
        None
    }
    /// Whether the window never exceeds the path's BDP when flows start at line rate.
    #[inline]
    fn capped_at_bdp(&self) -> bool {
        false
    }
    /// The rate segments are paced at, bit/s (None: not paced).
    #[inline]
    fn pace_rate(&self) -> Option<f64> {
        None
    }
    /// Time passed to `now`: run the rate timers that are due.
    #[inline]
    fn tick(&mut self, _now: Time, _p: &TcpParams) {}
    /// A segment of `wire` bytes left at the paced rate.
    #[inline]
    fn on_paced_send(&mut self, _wire: u64, _p: &TcpParams) {}
    /// A congestion notification (a CNP: an ACK with ECE) arrived at `now`.
    #[inline]
    fn on_notification(&mut self, _now: Time, _p: &TcpParams) {}
    /// An ACK for `ack` brought in-band telemetry `hops`, the sender's next byte being `nxt`: the new
    /// window (None: the controller takes no telemetry).
    #[inline]
    fn on_telemetry(&mut self, _p: &TcpParams, _ack: u64, _nxt: u64, _hops: &[hpcc::IntHop]) -> Option<f64> {
        None
    }
    /// An ACK for `ack` of new data measured `rtt` (its arrival less the echoed send time), the sender's
    /// next byte being `nxt`.
    #[inline]
    fn on_rtt(&mut self, _p: &TcpParams, _ack: u64, _nxt: u64, _rtt: Time) {}
    /// Rate cuts since the last call, for the summary's counters.
    #[inline]
    fn fresh_rate_cuts(&mut self) -> u64 {
        0
    }
}

/// A flow's controller, one arm per algorithm. The rate-based ones are boxed (they are large and rare)
/// and set once the flow's path is known (`TcpSender::start_rate`).
#[derive(Debug, Clone)]
pub enum Cc {
    NewReno(newreno::NewReno),
    Dctcp(dctcp::Dctcp),
    L2dct(l2dct::L2dct),
    Pfabric(pfabric::Pfabric),
    Dcqcn(Option<Box<dcqcn::Rp>>),
    Hpcc(Option<Box<hpcc::Hpcc>>),
    Timely(Option<Box<timely::Timely>>),
}

/// Calls `$body` with `$c` bound to the controller of whichever arm `$cc` holds (a rate-based one not
/// set yet answers as `$none`).
macro_rules! each {
    ($cc:expr, $c:ident => $body:expr, $none:expr) => {
        match $cc {
            Cc::NewReno($c) => $body,
            Cc::Dctcp($c) => $body,
            Cc::L2dct($c) => $body,
            Cc::Pfabric($c) => $body,
            Cc::Dcqcn(Some($c)) => $body,
            Cc::Hpcc(Some($c)) => $body,
            Cc::Timely(Some($c)) => $body,
            Cc::Dcqcn(None) | Cc::Hpcc(None) | Cc::Timely(None) => $none,
        }
    };
}

impl Cc {
    /// The controller of a new flow running `kind`.
    pub fn new(kind: CongestionControl) -> Cc {
        match kind {
            CongestionControl::NewReno => Cc::NewReno(newreno::NewReno),
            CongestionControl::Dctcp => Cc::Dctcp(dctcp::Dctcp::default()),
            CongestionControl::L2dct => Cc::L2dct(l2dct::L2dct::default()),
            CongestionControl::Pfabric => Cc::Pfabric(pfabric::Pfabric),
            CongestionControl::Dcqcn => Cc::Dcqcn(None),
            CongestionControl::Hpcc => Cc::Hpcc(None),
            CongestionControl::Timely => Cc::Timely(None),
        }
    }

    /// A rate-based controller's start, once the sender's NIC rate `nic_bps` and (HPCC) the path's base RTT
    /// are known: the window it starts the flow with (DCQCN, TIMELY: unbounded, the rate limits; HPCC: the BDP at
    /// the NIC's rate, at least a segment), None for the others (and for HPCC without a path).
    pub fn start_rate(&mut self, p: &TcpParams, base_rtt: Option<Time>, nic_bps: f64) -> Option<f64> {
        match self {
            Cc::Dcqcn(rp) => {
                *rp = Some(Box::new(dcqcn::Rp::new(nic_bps)));
                Some(f64::INFINITY)
            }
            Cc::Timely(tm) => {
                *tm = Some(Box::new(timely::Timely::new(nic_bps)));
                Some(f64::INFINITY)
            }
            Cc::Hpcc(hp) => base_rtt.map(|rtt| {
                let h = hpcc::Hpcc::new(rtt.0 as f64 / 1e12, nic_bps);
                let w = h.w.max(p.mss as f64);
                *hp = Some(Box::new(h));
                w
            }),
            _ => None,
        }
    }

    /// DCTCP's estimator (DCTCP and L2DCT), to read or set in tests.
    pub fn dctcp_mut(&mut self) -> Option<&mut dctcp::Dctcp> {
        match self {
            Cc::Dctcp(d) => Some(d),
            Cc::L2dct(l) => Some(&mut l.dctcp),
            _ => None,
        }
    }

    /// DCQCN's reaction point, once set.
    pub fn dcqcn(&self) -> Option<&dcqcn::Rp> {
        match self {
            Cc::Dcqcn(r) => r.as_deref(),
            _ => None,
        }
    }

    /// HPCC's state, once set.
    pub fn hpcc(&self) -> Option<&hpcc::Hpcc> {
        match self {
            Cc::Hpcc(h) => h.as_deref(),
            _ => None,
        }
    }

    /// TIMELY's state, once set.
    pub fn timely(&self) -> Option<&timely::Timely> {
        match self {
            Cc::Timely(t) => t.as_deref(),
            _ => None,
        }
    }

    /// Rate decreases since the last call (DCQCN, TIMELY; 0 otherwise), for the summary's counters.
    #[inline]
    pub fn fresh_rate_cuts(&mut self) -> u64 {
        each!(self, c => c.fresh_rate_cuts(), 0)
    }

    /// Window cuts from telemetry so far (HPCC; 0 otherwise).
    pub fn window_cuts(&self) -> u64 {
        self.hpcc().map_or(0, |h| h.cuts)
    }

    #[inline]
    pub fn on_new_ack(&mut self, p: &TcpParams, acked: u64, ece: bool, ack: u64, nxt: u64) {
        each!(self, c => c.on_new_ack(p, acked, ece, ack, nxt), ())
    }
    #[inline]
    pub fn avoid(&self, p: &TcpParams, cwnd: f64, acked: f64, sent: u64) -> f64 {
        each!(self, c => c.avoid(p, cwnd, acked, sent), newreno::NewReno.avoid(p, cwnd, acked, sent))
    }
    #[inline]
    pub fn ecn_cut(&self, p: &TcpParams, cwnd: f64, sent: u64) -> Option<(f64, f64)> {
        each!(self, c => c.ecn_cut(p, cwnd, sent), None)
    }
    #[inline]
    pub fn loss_cuts(&self) -> bool {
        each!(self, c => c.loss_cuts(), true)
    }
    #[inline]
    pub fn undo_spurious(&self) -> bool {
        each!(self, c => c.undo_spurious(), true)
    }
    #[inline]
    pub fn probe_after(&self) -> Option<u32> {
        each!(self, c => c.probe_after(), None)
    }
    #[inline]
    pub fn capped_at_bdp(&self) -> bool {
        each!(self, c => c.capped_at_bdp(), false)
    }
    #[inline]
    pub fn pace_rate(&self) -> Option<f64> {
        each!(self, c => c.pace_rate(), None)
    }
    #[inline]
    pub fn tick(&mut self, now: Time, p: &TcpParams) {
        each!(self, c => c.tick(now, p), ())
    }
    #[inline]
    pub fn on_paced_send(&mut self, wire: u64, p: &TcpParams) {
        each!(self, c => c.on_paced_send(wire, p), ())
    }
    #[inline]
    pub fn on_notification(&mut self, now: Time, p: &TcpParams) {
        each!(self, c => c.on_notification(now, p), ())
    }
    #[inline]
    pub fn on_rtt(&mut self, p: &TcpParams, ack: u64, nxt: u64, rtt: Time) {
        each!(self, c => c.on_rtt(p, ack, nxt, rtt), ())
    }
    #[inline]
    pub fn on_telemetry(&mut self, p: &TcpParams, ack: u64, nxt: u64, hops: &[hpcc::IntHop]) -> Option<f64> {
        each!(self, c => c.on_telemetry(p, ack, nxt, hops), None)
    }
}
