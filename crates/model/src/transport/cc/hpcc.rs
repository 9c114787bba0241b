//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): the sender's window from
//! in-band telemetry. Every switch egress a data packet leaves appends a record (its queue length, the
//! bytes it has sent, the time, its line rate); the receiver echoes the records in the ACK; the sender
//! compares each hop's record with the one the previous ACK brought:
//!
//! ```text
//!   per hop j:  txRate_j = (txBytes_j - txBytes_j') / (ts_j - ts_j')
//!               u_j = min(qlen_j, qlen_j') / (B_j T) + txRate_j / B_j
//!   u = max_j u_j, tau = that hop's ts_j - ts_j' (at most T);  U = (1 - tau / T) U + tau / T u
//!   W = Wc / (U / eta) + W_AI   when U >= eta or incStage >= maxStage  (multiplicative decrease)
//!   W = Wc + W_AI               otherwise                              (additive increase)
//!   Wc and incStage (reset to 0, or + 1) are updated once per RTT: on the first ACK beyond the sequence
//!   number the last update had sent (its `last_update_seq`); the ACKs between only set W
//!   rate R = W / T
//! ```
//!
//! T is the flow's base RTT, B_j a hop's line rate, W the window in bytes, W_AI = R_AI x T. The component takes an ACK's
//! records and the sender's next sequence number, and returns the window; it knows no event loop.

use crate::transport::params::TcpParams;

/// One hop's telemetry, as a switch egress writes it when the packet leaves.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IntHop {
    /// Bytes queued at the egress.
    pub qlen: u64,
    /// Bytes the egress has sent so far.
    pub tx_bytes: u64,
    /// When (picoseconds).
    pub ts: u64,
    /// Its line rate, bit/s.
    pub rate: u64,
}

/// The most hops a packet records (a fat tree's longest path: ToR, aggregation, core, aggregation, ToR).
pub const MAX_HOPS: usize = 5;

/// The records a packet carries (a data packet's, or the ACK that echoes them).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    /// A switch egress appends its record (beyond `MAX_HOPS`, nothing).
    #[inline]
    pub fn push(&mut self, h: IntHop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = h;
            self.n += 1;
        }
    }
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

/// HPCC's parameters. Defaults: the HPCC simulator's (`rdma-hw.cc` attributes `TargetUtil` 0.95 and
/// `MiThresh` 5; `run.py --cc hp` at a 100 Gbps NIC: `ai = 10 * bw / 25` = 40 Mb/s).
#[derive(Debug, Clone, PartialEq)]
pub struct HpccParams {
    /// Target utilisation eta.
    pub eta: f64,
    /// Additive increases before a multiplicative update (maxStage).
    pub max_stage: u32,
    /// Additive increase as a rate, bit/s: W_AI = rate_ai x T (the simulator's rate form, R / c + R_AI).
    pub rate_ai: f64,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams { eta: 0.95, max_stage: 5, rate_ai: 40e6 }
    }
}

/// One flow's HPCC state.
#[derive(Debug, Clone)]
pub struct Hpcc {
    /// Base RTT, seconds, and the window that fills the path at line rate (W_init = B_NIC x T), bytes.
    pub t: f64,
    pub w_init: f64,
    /// The window now, the reference window, the EWMA of the utilisation, the additive stage.
    pub w: f64,
    pub wc: f64,
    pub u: f64,
    pub inc_stage: u32,
    /// The sequence number past which the next ACK makes a per-RTT update (0: none yet).
    pub last_update_seq: u64,
    /// The records the last ACK brought (hops in path order), and how many.
    prev: [IntHop; MAX_HOPS],
    nhop: usize,
    /// Window cuts: updates that found the path's utilisation at or above eta (W = Wc / (U / eta) + W_AI
    /// with U >= eta), for the summary's `mechanisms.hpcc`.
    pub cuts: u64,
}

impl Hpcc {
    /// A flow with base RTT `t` (seconds) whose NIC runs at `nic_bps`: it starts with the window that
    /// fills the path (line-rate start).
    pub fn new(t: f64, nic_bps: f64) -> Hpcc {
        let w_init = nic_bps * t / 8.0;
        Hpcc { t, w_init, w: w_init, wc: w_init, u: 0.0, inc_stage: 0, last_update_seq: 0, prev: [IntHop::default(); MAX_HOPS], nhop: 0, cuts: 0 }
    }

    /// Hops on the path the last ACK reported.
    pub fn hops(&self) -> usize {
        self.nhop
    }

    /// The pacing rate, bit/s: W / T.
    pub fn rate(&self) -> f64 {
        self.w * 8.0 / self.t
    }

    /// An ACK for `ack_seq` arrived with hop records `hops`, the sender's next sequence number being
    /// `snd_nxt`: the new window (bytes).
    pub fn on_ack(&mut self, p: &HpccParams, ack_seq: u64, snd_nxt: u64, hops: &[IntHop]) -> f64 {
        let n = hops.len().min(MAX_HOPS);
        if self.last_update_seq == 0 || self.nhop != n {
            // the first ACK (or a new path): its records are the reference for the next
            self.prev[..n].copy_from_slice(&hops[..n]);
            self.nhop = n;
            self.last_update_seq = snd_nxt.max(1);
            return self.w;
        }
        let update_wc = ack_seq > self.last_update_seq;
        let (mut umax, mut tau) = (0.0f64, 0.0f64);
        for (h, old) in hops[..n].iter().zip(&self.prev[..n]) {
            let dt = h.ts.saturating_sub(old.ts) as f64 / 1e12;
            if dt <= 0.0 {
                continue;
            }
            let b = h.rate as f64;
            let tx_rate = h.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8.0 / dt;
            let u = h.qlen.min(old.qlen) as f64 * 8.0 / (b * self.t) + tx_rate / b;
            if u > umax {
                umax = u;
                tau = dt;
            }
        }
        let w_ai = p.rate_ai * self.t / 8.0;
        if tau > 0.0 {
            let tau = tau.min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + tau / self.t * umax;
        }
        self.prev[..n].copy_from_slice(&hops[..n]);
        let w = if self.u >= p.eta || self.inc_stage >= p.max_stage {
            self.cuts += (self.u >= p.eta) as u64;
            let w = self.wc / (self.u / p.eta) + w_ai;
            if update_wc {
                self.inc_stage = 0;
                self.wc = w;
            }
            w
        } else {
            let w = self.wc + w_ai;
            if update_wc {
                self.inc_stage += 1;
                self.wc = w;
            }
            w
        };
        if update_wc {
            self.last_update_seq = snd_nxt;
        }
        // never below one packet's worth, never above the line-rate window
        self.w = w.clamp(1500.0, self.w_init);
        self.w
    }
}

/// HPCC behind the controller interface: no reaction to ECN, the window from telemetry, paced at W / T.
impl super::Controller for Hpcc {
    #[inline]
    fn pace_rate(&self) -> Option<f64> {
        Some(self.rate())
    }
    #[inline]
    fn on_telemetry(&mut self, p: &TcpParams, ack: u64, nxt: u64, hops: &[IntHop]) -> Option<f64> {
        Some(self.on_ack(&p.hpcc, ack, nxt, hops))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    /// One bottleneck hop at 100 Gbps: `q` bytes queued, `sent` bytes sent by time `t_us`.
    fn hop(q: u64, sent: u64, t_us: u64) -> IntHop {
        IntHop { qlen: q, tx_bytes: sent, ts: t_us * US, rate: 100_000_000_000 }
    }

    #[test]
    fn a_full_link_with_a_queue_shrinks_the_window_by_u_over_eta() {
        let p = HpccParams::default();
        // T = 10 us at 100 Gbps: W_init = 125,000 B
        let mut h = Hpcc::new(10e-6, 100e9);
        assert!((h.w_init - 125_000.0).abs() < 1e-6);
        assert_eq!(h.on_ack(&p, 1000, 100_000, &[hop(0, 0, 0)]), h.w_init, "the first ACK is the reference");
        // 10 us later: the link sent at line rate (125,000 B in 10 us) and holds 62,500 B (half a BDP) now and
        // before: u = 62,500 x 8 / (100e9 x 10e-6) + 1 = 1.5, tau = T: U = 1.5
        h.last_update_seq = 100_000;
        h.prev[0].qlen = 62_500;
        let w = h.on_ack(&p, 100_001, 200_000, &[hop(62_500, 125_000, 10)]);
        assert!((h.u - 1.5).abs() < 1e-12, "{}", h.u);
        // W = Wc / (U / eta) + W_AI = 125,000 x 0.95 / 1.5 + 50 (W_AI = 40 Mb/s x 10 us)
        assert!((w - (h.w_init * 0.95 / 1.5 + 50.0)).abs() < 1e-6, "{w}");
        assert_eq!((h.wc, h.inc_stage, h.last_update_seq), (w, 0, 200_000));
        assert!((h.rate() - w * 8.0 / 10e-6).abs() < 1.0);
    }

    #[test]
    fn an_idle_link_adds_w_ai_per_rtt_then_multiplies_after_max_stage() {
        let p = HpccParams::default();
        let mut h = Hpcc::new(10e-6, 100e9);
        h.on_ack(&p, 1, 10, &[hop(0, 0, 0)]);
        // start from a small window, the link half used and no queue: U = 0.5 < eta
        h.w = 50_000.0;
        h.wc = 50_000.0;
        let mut seq = 10;
        let mut sent = 0;
        for k in 1..=5u64 {
            sent += 62_500;
            let w = h.on_ack(&p, seq + 1, seq + 1000, &[hop(0, sent, 10 * k)]);
            seq += 1000;
            assert!((h.u - 0.5).abs() < 1e-9 || k == 1, "{}", h.u);
            assert!((w - (50_000.0 + 50.0 * k as f64)).abs() < 1e-6, "update {k}: {w}");
            assert_eq!(h.inc_stage, k as u32);
        }
        // incStage reached maxStage: the next update is multiplicative even below eta, W = Wc / (U / eta) + W_AI
        sent += 62_500;
        let w = h.on_ack(&p, seq + 1, seq + 1000, &[hop(0, sent, 60)]);
        let wc = 50_000.0 + 250.0;
        assert!((w - (wc / (0.5 / 0.95) + 50.0)).abs() < 1e-6, "{w}");
        assert_eq!(h.inc_stage, 0);
    }

    #[test]
    fn acks_within_an_rtt_set_the_window_but_not_the_reference() {
        let p = HpccParams::default();
        let mut h = Hpcc::new(10e-6, 100e9);
        h.on_ack(&p, 1, 100_000, &[hop(0, 0, 0)]);
        // an ACK below last_update_seq (100,000): W from Wc, Wc unchanged
        let w = h.on_ack(&p, 50_000, 150_000, &[hop(100_000, 62_500, 5)]);
        assert_eq!(h.wc, h.w_init);
        assert_eq!(h.last_update_seq, 100_000);
        // u = min(100,000, 0) ... = 0 queue + 62,500 B in 5 us = 1.0 of the link; tau = 5 us of T = 10: U = 0.5
        assert!((h.u - 0.5).abs() < 1e-12);
        assert_eq!(w, h.w_init, "W_c + W_AI, held to the line-rate window");
        // the most loaded hop decides: a second hop idle changes nothing
        let mut g = Hpcc::new(10e-6, 100e9);
        g.on_ack(&p, 1, 100_000, &[hop(0, 0, 0), hop(0, 0, 0)]);
        g.on_ack(&p, 50_000, 150_000, &[hop(100_000, 62_500, 5), hop(0, 0, 5)]);
        assert_eq!(g.u, h.u);
    }
}
