//! L2DCT (Munir et al., INFOCOM 2013): DCTCP's estimator and echo, with the cut (alpha^w / 2) and the
//! congestion-avoidance increase (w / w_max segments per RTT) weighted by what the flow has sent: the
//! weight is w_max = 2.5 up to 200 segments and falls linearly to w_min = 0.125 at 1000 (the L2DCT
//! authors' values), so short flows take more of the link and yield less.

use super::dctcp::Dctcp;
use super::Controller;
use crate::transport::params::TcpParams;

/// The weight's bounds and the sent-segment counts between which it falls linearly.
pub const W_MAX: f64 = 2.5;
pub const W_MIN: f64 = 0.125;
pub const FULL_SEGS: f64 = 200.0;
pub const MIN_SEGS: f64 = 1000.0;

/// One flow's L2DCT state: DCTCP's estimator (its gain is `scheme.tcp.dctcp_g`).
#[derive(Debug, Clone, Default)]
pub struct L2dct {
    pub dctcp: Dctcp,
}

/// The weight of a flow that has sent up to byte `sent`.
#[inline]
pub fn weight(p: &TcpParams, sent: u64) -> f64 {
    let segs = (sent / p.mss as u64) as f64;
    let w = if segs <= FULL_SEGS { W_MAX } else { W_MAX - (W_MAX - W_MIN) * (segs - FULL_SEGS) / (MIN_SEGS - FULL_SEGS) };
    w.clamp(W_MIN, W_MAX)
}

impl Controller for L2dct {
    #[inline]
    fn on_new_ack(&mut self, p: &TcpParams, acked: u64, ece: bool, ack: u64, nxt: u64) {
        self.dctcp.observe(&p.dctcp, acked, ece, ack, nxt);
    }
    /// Additive increase scaled by w / w_max.
    #[inline]
    fn avoid(&self, p: &TcpParams, cwnd: f64, acked: f64, sent: u64) -> f64 {
        cwnd + weight(p, sent) / W_MAX * p.mss as f64 * acked / cwnd
    }
    /// The cut is alpha^w / 2: gentler for flows that sent little.
    #[inline]
    fn ecn_cut(&self, p: &TcpParams, cwnd: f64, sent: u64) -> Option<(f64, f64)> {
        Some(Dctcp::cut(p, cwnd, self.dctcp.alpha.powf(weight(p, sent))))
    }
}
