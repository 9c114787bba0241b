//! DCTCP (Alizadeh et al., SIGCOMM 2010): the sender estimates the fraction of its bytes that met
//! congestion, alpha <- (1 - g) alpha + g F once per window of data (F the share of the window's bytes
//! acknowledged with ECE; alpha starts at 1), and on an ECN echo cuts the window by alpha / 2, at most
//! once per window. The receiver's exact CE echo is `TcpReceiver`'s (`CongestionControl::dctcp_echo`).

use super::Controller;
use crate::transport::params::TcpParams;

/// DCTCP's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct DctcpParams {
    /// The estimator's gain g (`scheme.tcp.dctcp_g`; the DCTCP paper's 1/16).
    pub g: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0 }
    }
}

/// One flow's estimator: alpha and this observation window's counts.
#[derive(Debug, Clone)]
pub struct Dctcp {
    pub alpha: f64,
    /// The window ends when an ACK passes this byte.
    pub win_end: u64,
    win_acked: u64,
    win_marked: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp { alpha: 1.0, win_end: 0, win_acked: 0, win_marked: 0 }
    }
}

impl Dctcp {
    /// Count acknowledged and marked bytes; at the end of each window of data update alpha.
    #[inline]
    pub fn observe(&mut self, p: &DctcpParams, acked: u64, ece: bool, ack: u64, nxt: u64) {
        self.win_acked += acked;
        if ece {
            self.win_marked += acked;
        }
        if ack > self.win_end {
            let f = if self.win_acked > 0 { self.win_marked as f64 / self.win_acked as f64 } else { 0.0 };
            self.alpha = (1.0 - p.g) * self.alpha + p.g * f;
            self.win_acked = 0;
            self.win_marked = 0;
            self.win_end = nxt.max(ack);
        }
    }

    /// The window cut by b / 2 (at least one segment), and the slow-start threshold it leaves.
    #[inline]
    pub fn cut(p: &TcpParams, cwnd: f64, b: f64) -> (f64, f64) {
        let mss = p.mss as f64;
        let cwnd = (cwnd * (1.0 - b / 2.0)).max(mss);
        (cwnd, cwnd.max(2.0 * mss))
    }
}

impl Controller for Dctcp {
    #[inline]
    fn on_new_ack(&mut self, p: &TcpParams, acked: u64, ece: bool, ack: u64, nxt: u64) {
        self.observe(&p.dctcp, acked, ece, ack, nxt);
    }
    #[inline]
    fn ecn_cut(&self, p: &TcpParams, cwnd: f64, _sent: u64) -> Option<(f64, f64)> {
        Some(Dctcp::cut(p, cwnd, self.alpha))
    }
}
