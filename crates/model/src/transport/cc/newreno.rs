//! TCP NewReno's congestion control (RFC 5681 congestion avoidance, RFC 3168 ECN reaction): the window
//! grows by one segment per window of data acknowledged and halves on an ECN echo. Its loss response
//! (halving on three duplicate ACKs, one segment after a timeout) is the sender's own machinery, which
//! every window-based controller here shares.

use super::Controller;
use crate::transport::params::TcpParams;

/// NewReno keeps no state of its own: the window is the sender's.
#[derive(Debug, Clone, Copy, Default)]
pub struct NewReno;

impl Controller for NewReno {
    /// RFC 3168 6.1.2: halve, as for a loss (at least two segments).
    #[inline]
    fn ecn_cut(&self, p: &TcpParams, cwnd: f64, _sent: u64) -> Option<(f64, f64)> {
        let ssthresh = (cwnd / 2.0).max(2.0 * p.mss as f64);
        Some((ssthresh, ssthresh))
    }
}
