//! TCP NewReno (RFC 5681, RFC 6582, RFC 6298, RFC 3168), byte-counted, one connection direction.
//!
//! The sender carries slow start, congestion avoidance, fast retransmit / fast recovery (switchable:
//! DeTail's reorder-resistant variant turns it off), RTO with minimum, initial value and exponential
//! back-off, and ECN reaction (halve once per window). The receiver keeps a reorder buffer, sends
//! cumulative ACKs (optionally delayed: every second segment or after a timeout) and echoes CE as ECE
//! until the sender signals CWR. RTT samples use echoed send timestamps (RFC 7323), so retransmitted
//! segments give valid samples.

use crate::config::{CongestionControl, RtoFormula, TcpParams};
use detailsim_engine::Time;

impl CongestionControl {
    /// Uses DCTCP's alpha estimate and its receiver's precise CE echo (DCTCP and L2DCT).
    #[inline]
    pub fn dctcp_echo(self) -> bool {
        matches!(self, CongestionControl::Dctcp | CongestionControl::L2dct)
    }
}

/// L2DCT's weight bounds and the sent-segment counts between which the weight falls linearly.
const L2DCT_W_MAX: f64 = 2.5;
const L2DCT_W_MIN: f64 = 0.125;
const L2DCT_FULL_SEGS: f64 = 200.0;
const L2DCT_MIN_SEGS: f64 = 1000.0;
/// pFabric: consecutive timeouts after which a flow only sends header-only probes until an ACK arrives.
pub const PFABRIC_PROBE_AFTER: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    Syn,
    SynAck,
    Data,
    Ack,
}

/// A segment the sender wants on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegOut {
    pub kind: SegKind,
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
    pub cwr: bool,
    /// Priority levels below the flow's own (PIAS MLFQ demotion); 0 otherwise.
    pub level: u8,
}

/// The state a timeout replaced, for the Eifel algorithm (RFC 3522 detection, RFC 4015 response): the
/// first ACK of new data after a timeout echoes the timestamp of the segment that reached the receiver; if
/// that is older than the timer's first retransmission, the original transmission arrived and the timeout
/// was spurious (the segment was delayed, not lost). The sender then restores its window and threshold and
/// goes on after the highest byte sent instead of sending the window again.
#[derive(Debug, Clone, Copy)]
struct Undo {
    /// When the timer retransmitted first (the timestamp that segment carries).
    retx_at: Time,
    cwnd: f64,
    ssthresh: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    SynSent,
    Established,
}

#[derive(Debug, Clone)]
pub struct TcpSender {
    size: u64,
    state: State,
    pub una: u64,
    pub nxt: u64,
    max_sent: u64,
    pub cwnd: f64,
    pub ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    srtt: f64,
    rttvar: f64,
    have_rtt: bool,
    backoff: u32,
    ecn_reacted_until: u64,
    send_cwr: bool,
    /// DCTCP: the running estimate of the marked fraction, and this observation window's counts.
    pub alpha: f64,
    win_end: u64,
    win_acked: u64,
    win_marked: u64,
    /// PIAS: bytes sent when the MLFQ counter was last reset.
    mlfq_base: u64,
    /// Consecutive timeouts (since data was last acknowledged): PIAS resets its MLFQ counter at every
    /// second one, pFabric probes from the fifth on.
    streak: u32,
    probing: bool,
    /// RTO floor and initial RTO of this flow (from the parameters, or `rto_rtts` base RTTs of its path).
    rto_min: Time,
    rto_initial: Time,
    /// Upper bound of the window (pFabric: the path's BDP; otherwise unbounded).
    max_cwnd: f64,
    /// A hole retransmission (fast retransmit or partial ACK) the local NIC could not take yet.
    hole_pending: bool,
    /// Full-size segments the local NIC can take now (set by the caller before each input; unlimited by
    /// default), and whether sending stopped because it was used up (the caller then waits for room).
    pub nic_room: u32,
    pub nic_limited: bool,
    /// `spurious_rto_undo`: what a timeout changed, kept until the first ACK of new data tells whether it
    /// was spurious (see `Undo`).
    undo: Option<Undo>,
    /// Timeouts found spurious and undone.
    pub spurious_timeouts: u32,
    /// When the retransmission timer expires, if armed.
    pub deadline: Option<Time>,
    pub timeouts: u32,
    pub retransmits: u32,
}

impl TcpSender {
    /// A sender of `size` bytes; `handshake`: it opens its connection with SYN / SYN-ACK first (otherwise
    /// the connection is open and data goes at once).
    pub fn new(size: u64, p: &TcpParams, handshake: bool) -> Self {
        TcpSender {
            size,
            state: if handshake { State::SynSent } else { State::Established },
            una: 0,
            nxt: 0,
            max_sent: 0,
            cwnd: p.initial_window as f64 * p.mss as f64,
            ssthresh: f64::INFINITY,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            srtt: 0.0,
            rttvar: 0.0,
            have_rtt: false,
            backoff: 0,
            ecn_reacted_until: 0,
            send_cwr: false,
            alpha: 1.0,
            win_end: 0,
            win_acked: 0,
            win_marked: 0,
            mlfq_base: 0,
            streak: 0,
            probing: false,
            rto_min: p.rto_min,
            rto_initial: p.rto_initial,
            max_cwnd: f64::INFINITY,
            hole_pending: false,
            nic_room: u32::MAX,
            nic_limited: false,
            undo: None,
            spurious_timeouts: 0,
            deadline: None,
            timeouts: 0,
            retransmits: 0,
        }
    }

    /// Adapt to the flow's path (before `start`): with `line_rate_start` the initial window is the
    /// path's bandwidth-delay product `bdp` (at least one segment; pFabric also caps the window there); with `rto_rtts` > 0 the RTO floor and
    /// initial RTO are that many base RTTs.
    pub fn fit_path(&mut self, p: &TcpParams, base_rtt: Time, bdp: u64) {
        if p.line_rate_start {
            self.cwnd = (bdp.div_ceil(p.mss as u64).max(1) * p.mss as u64) as f64;
            if p.cc == CongestionControl::Pfabric {
                // pFabric never needs more than a BDP in flight: its switches, not queues, pick the order
                self.max_cwnd = self.cwnd;
            }
        }
        if p.rto_rtts > 0.0 {
            let r = Time(((base_rtt.0 as f64) * p.rto_rtts).round() as u64).max(Time(1)).min(p.rto_max);
            self.rto_min = r;
            self.rto_initial = r;
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// L2DCT's weight from the segments sent so far.
    fn l2dct_weight(&self, p: &TcpParams) -> f64 {
        let segs = (self.max_sent / p.mss as u64) as f64;
        let w = if segs <= L2DCT_FULL_SEGS {
            L2DCT_W_MAX
        } else {
            L2DCT_W_MAX - (L2DCT_W_MAX - L2DCT_W_MIN) * (segs - L2DCT_FULL_SEGS) / (L2DCT_MIN_SEGS - L2DCT_FULL_SEGS)
        };
        w.clamp(L2DCT_W_MIN, L2DCT_W_MAX)
    }

    pub fn done(&self) -> bool {
        self.state == State::Established && self.una >= self.size
    }

    /// Current retransmission timeout, including back-off.
    pub fn rto(&self, p: &TcpParams) -> Time {
        let base = if self.have_rtt {
            let var = (4.0 * self.rttvar).max(1.0);
            match p.rto_formula {
                RtoFormula::Rfc6298 => Time((self.srtt + var) as u64).max(self.rto_min),
                RtoFormula::Linux => Time((self.srtt + var.max(self.rto_min.0 as f64)) as u64),
            }
        } else {
            self.rto_initial
        };
        let shifted = base.0.saturating_mul(1u64 << self.backoff.min(30));
        Time(shifted).min(p.rto_max).max(self.rto_min.min(p.rto_max))
    }

    fn arm(&mut self, now: Time, p: &TcpParams) {
        if p.retransmissions {
            self.deadline = Some(now + self.rto(p));
        }
    }

    pub fn start(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) {
        match self.state {
            State::SynSent => {
                out.push(SegOut { kind: SegKind::Syn, seq: 0, len: 0, retx: false, cwr: false, level: 0 });
                self.arm(now, p);
            }
            State::Established => self.try_send(now, p, out),
        }
    }

    fn rtt_sample(&mut self, now: Time, sent: Time) {
        let r = (now.0 - sent.0.min(now.0)) as f64;
        if !self.have_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.have_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
    }

    fn flight(&self) -> u64 {
        self.nxt - self.una
    }

    fn mss(&self, p: &TcpParams) -> f64 {
        p.mss as f64
    }

    /// PIAS's MLFQ level of the next segment: how many demotion thresholds the bytes sent so far reach.
    fn mlfq_level(&self, p: &TcpParams, seq: u64) -> u8 {
        if p.mlfq.is_empty() {
            return 0;
        }
        let sent = self.max_sent.max(seq).saturating_sub(self.mlfq_base);
        p.mlfq.iter().take_while(|&&a| sent >= a).count() as u8
    }

    fn emit(&mut self, seq: u64, p: &TcpParams, out: &mut Vec<SegOut>) -> u64 {
        let len = (p.mss as u64).min(self.size - seq);
        let retx = seq < self.max_sent;
        if retx {
            self.retransmits += 1;
        }
        // RFC 3168 6.1.2: CWR goes on the first new data segment after a window reduction
        let cwr = !retx && std::mem::take(&mut self.send_cwr);
        let level = self.mlfq_level(p, seq);
        out.push(SegOut { kind: SegKind::Data, seq, len: len as u32, retx, cwr, level });
        self.nic_room = self.nic_room.saturating_sub(1);
        len
    }

    /// Retransmit the hole at `una` now, or as soon as the local NIC has room.
    fn emit_hole(&mut self, p: &TcpParams, out: &mut Vec<SegOut>) -> u64 {
        if self.nic_room == 0 {
            self.hole_pending = true;
            self.nic_limited = true;
            return 0;
        }
        self.emit(self.una, p, out)
    }

    fn try_send(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) {
        while self.nxt < self.size {
            let seg = (p.mss as u64).min(self.size - self.nxt);
            if self.flight() > 0 && ((self.flight() + seg) as f64 > self.cwnd || self.flight() + seg > p.rwnd) {
                break;
            }
            if self.nic_room == 0 {
                // the local NIC is full: the rest waits in the socket (back-pressure)
                self.nic_limited = true;
                break;
            }
            let n = self.emit(self.nxt, p, out);
            self.nxt += n;
            self.max_sent = self.max_sent.max(self.nxt);
        }
        if self.deadline.is_none() && self.una < self.nxt {
            self.arm(now, p);
        }
    }

    /// The local NIC has room again: send what the window allows (a pending hole retransmission first).
    pub fn resume(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) {
        if self.state != State::Established || self.una >= self.size {
            return;
        }
        if std::mem::take(&mut self.hole_pending) && self.una < self.nxt {
            self.emit_hole(p, out);
        }
        self.try_send(now, p, out);
        if self.deadline.is_none() && self.una < self.nxt {
            self.arm(now, p);
        }
    }

    /// An acknowledgement arrived: cumulative `ack`, ECN-echo flag, echoed timestamp.
    #[allow(clippy::too_many_arguments)] // the fields of one ACK segment, as the simulator and live mode parse them
    pub fn on_ack(&mut self, now: Time, p: &TcpParams, kind: SegKind, ack: u64, ece: bool, ts_echo: Time, out: &mut Vec<SegOut>) {
        let mss = self.mss(p);
        if self.state == State::SynSent {
            if kind == SegKind::SynAck {
                self.state = State::Established;
                self.rtt_sample(now, ts_echo);
                self.backoff = 0;
                self.deadline = None;
                self.try_send(now, p, out);
            }
            return;
        }
        if kind != SegKind::Ack {
            return;
        }
        if self.probing {
            // pFabric: the path answers again; leave probe mode and restart from one segment
            self.probing = false;
            self.streak = 0;
            self.backoff = 0;
            self.deadline = None;
            if ack <= self.una {
                self.try_send(now, p, out);
                return;
            }
        }
        if ack > self.una {
            if let Some(u) = self.undo.take() {
                if ts_echo < u.retx_at {
                    // Eifel: the ACK answers a transmission from before the timeout: it was spurious
                    self.spurious_timeouts += 1;
                    self.cwnd = self.cwnd.max(u.cwnd);
                    self.ssthresh = self.ssthresh.max(u.ssthresh);
                    self.nxt = self.nxt.max(self.max_sent);
                }
            }
            self.streak = 0;
            self.hole_pending = false;
            let acked = (ack - self.una) as f64;
            if p.cc.dctcp_echo() {
                self.dctcp_observe(p, ack - self.una, ece, ack);
            }
            self.una = ack;
            if self.nxt < self.una {
                // an ACK for data sent before a timeout rewound nxt
                self.nxt = self.una;
            }
            self.rtt_sample(now, ts_echo);
            self.backoff = 0;
            if self.in_recovery {
                let pfabric = p.cc == CongestionControl::Pfabric;
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    if !pfabric {
                        self.cwnd = self.ssthresh;
                    }
                } else {
                    // partial ACK: retransmit the next hole, deflate by what was acked
                    let n = self.emit_hole(p, out);
                    self.nxt = self.nxt.max(self.una + n);
                    if !pfabric {
                        self.cwnd = (self.cwnd - acked + mss).max(mss);
                    }
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += acked.min(2.0 * mss);
                } else if p.cc == CongestionControl::L2dct {
                    // L2DCT: additive increase scaled by w / w_max
                    self.cwnd += self.l2dct_weight(p) / L2DCT_W_MAX * mss * acked / self.cwnd;
                } else {
                    self.cwnd += mss * acked / self.cwnd;
                }
                self.cwnd = self.cwnd.min(self.max_cwnd);
            }
            // RFC 3168 6.1.2: at most one reduction per window of data, none while loss recovery is under
            // way and none for ECE on data that a loss reduction already covered
            if p.ecn && ece && !self.in_recovery && self.una > self.ecn_reacted_until {
                match p.cc {
                    CongestionControl::Dctcp => self.dctcp_reduce(p, self.alpha),
                    // L2DCT: the cut is alpha^w / 2, gentler for flows that sent little
                    CongestionControl::L2dct => self.dctcp_reduce(p, self.alpha.powf(self.l2dct_weight(p))),
                    CongestionControl::NewReno => self.ecn_reduce(p),
                    CongestionControl::Pfabric => {}
                }
            }
            if self.una >= self.size {
                self.deadline = None;
                return;
            }
            self.arm(now, p);
        } else if ack == self.una && self.una < self.nxt {
            if !p.fast_retransmit || !p.retransmissions {
                return;
            }
            self.dupacks += 1;
            let pfabric = p.cc == CongestionControl::Pfabric;
            if self.in_recovery {
                if !pfabric {
                    self.cwnd += mss;
                }
            } else if self.dupacks == p.dupack_threshold && self.una + 1 > self.recover {
                self.recover = self.max_sent;
                self.in_recovery = true;
                self.emit_hole(p, out);
                if !pfabric {
                    // pFabric resends the hole without touching the window
                    self.ssthresh = (self.flight() as f64 / 2.0).max(2.0 * mss);
                    self.cwnd = self.ssthresh + p.dupack_threshold as f64 * mss;
                    // the loss reduction covers everything sent so far: ECE for it must not cut again
                    self.ecn_reacted_until = self.ecn_reacted_until.max(self.max_sent);
                    self.send_cwr = p.ecn;
                }
                self.arm(now, p);
            }
        } else {
            return;
        }
        self.try_send(now, p, out);
    }

    /// DCTCP: count acknowledged and marked bytes; at the end of each window of data update
    /// alpha <- (1 - g) alpha + g F, F the marked fraction.
    fn dctcp_observe(&mut self, p: &TcpParams, acked: u64, ece: bool, ack: u64) {
        self.win_acked += acked;
        if ece {
            self.win_marked += acked;
        }
        if ack > self.win_end {
            let f = if self.win_acked > 0 { self.win_marked as f64 / self.win_acked as f64 } else { 0.0 };
            self.alpha = (1.0 - p.dctcp_g) * self.alpha + p.dctcp_g * f;
            self.win_acked = 0;
            self.win_marked = 0;
            self.win_end = self.nxt.max(ack);
        }
    }

    /// DCTCP: cut the window by b / 2 (b = alpha; L2DCT: alpha^w), once per window of data.
    fn dctcp_reduce(&mut self, p: &TcpParams, b: f64) {
        let mss = self.mss(p);
        self.cwnd = (self.cwnd * (1.0 - b / 2.0)).max(mss);
        self.ssthresh = self.cwnd.max(2.0 * mss);
        self.ecn_reacted_until = self.nxt;
        self.send_cwr = true;
    }

    fn ecn_reduce(&mut self, p: &TcpParams) {
        let mss = self.mss(p);
        self.ssthresh = (self.cwnd / 2.0).max(2.0 * mss);
        self.cwnd = self.ssthresh;
        self.ecn_reacted_until = self.nxt;
        self.send_cwr = true;
    }

    /// The retransmission timer expired (the caller checked `now >= deadline`).
    pub fn on_timeout(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) {
        self.timeouts += 1;
        self.streak += 1;
        self.hole_pending = false;
        if self.streak.is_multiple_of(2) && !p.mlfq.is_empty() {
            // PIAS: after two consecutive timeouts the flow starts again at the highest priority
            self.mlfq_base = self.max_sent;
        }
        self.backoff += 1;
        self.deadline = None;
        if self.state == State::SynSent {
            out.push(SegOut { kind: SegKind::Syn, seq: 0, len: 0, retx: true, cwr: false, level: 0 });
            self.retransmits += 1;
            self.arm(now, p);
            return;
        }
        let mss = self.mss(p);
        if self.streak == 1 && p.spurious_rto_undo && p.cc != CongestionControl::Pfabric {
            self.undo = Some(Undo { retx_at: now, cwnd: self.cwnd, ssthresh: self.ssthresh });
        }
        if self.streak == 1 {
            // RFC 5681 3.1: when the segment timed out had already been retransmitted by the timer,
            // ssthresh is held, not recomputed from a one-segment flight
            self.ssthresh = (self.flight() as f64 / 2.0).max(2.0 * mss);
        }
        self.cwnd = mss;
        self.ecn_reacted_until = self.ecn_reacted_until.max(self.max_sent);
        self.send_cwr = p.ecn;
        self.nxt = self.una;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.max_sent;
        if p.cc == CongestionControl::Pfabric && self.streak >= PFABRIC_PROBE_AFTER {
            // pFabric's probe mode: a header-only segment per timeout until the flow hears an ACK
            self.probing = true;
            let level = self.mlfq_level(p, self.una);
            out.push(SegOut { kind: SegKind::Data, seq: self.una, len: 0, retx: false, cwr: false, level });
            self.arm(now, p);
            return;
        }
        self.try_send(now, p, out);
    }
}

/// What the receiver wants sent back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckOut {
    pub kind: SegKind,
    pub ack: u64,
    pub ece: bool,
    pub ts_echo: Time,
}

#[derive(Debug, Clone)]
pub struct TcpReceiver {
    size: u64,
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    ece: bool,
    pending: u32,
    pending_ts: Time,
    /// Delayed-ACK deadline, if an ACK is being held back.
    pub deadline: Option<Time>,
}

impl TcpReceiver {
    pub fn new(size: u64) -> Self {
        TcpReceiver { size, rcv_nxt: 0, ooo: Vec::new(), ece: false, pending: 0, pending_ts: Time::ZERO, deadline: None }
    }
    pub fn complete(&self) -> bool {
        self.rcv_nxt >= self.size
    }
    /// Bytes held out of order.
    pub fn buffered(&self) -> u64 {
        self.ooo.iter().map(|(a, b)| b - a).sum()
    }

    pub fn on_syn(&mut self, ts: Time) -> AckOut {
        AckOut { kind: SegKind::SynAck, ack: 0, ece: false, ts_echo: ts }
    }

    /// A data segment arrived. Returns the ACKs to send now: with DCTCP, a change of the CE state while
    /// an ACK is held back first sends that ACK with the old state (the DCTCP receiver state machine).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(&mut self, now: Time, p: &TcpParams, seq: u64, len: u32, ce: bool, cwr: bool, ts: Time) -> (Option<AckOut>, Option<AckOut>) {
        let mut early = None;
        if p.cc.dctcp_echo() {
            if ce != self.ece {
                if self.pending > 0 {
                    early = Some(self.ack(self.pending_ts));
                    self.pending = 0;
                    self.deadline = None;
                }
                self.ece = ce;
            }
        } else {
            if cwr {
                self.ece = false;
            }
            if ce {
                self.ece = true;
            }
        }
        (early, self.on_data_inner(now, p, seq, len, ce, ts))
    }

    fn on_data_inner(&mut self, now: Time, p: &TcpParams, seq: u64, len: u32, ce: bool, ts: Time) -> Option<AckOut> {
        let ce = ce && !p.cc.dctcp_echo(); // classic ECN acknowledges CE at once
        let end = seq + len as u64;
        let in_order = seq == self.rcv_nxt;
        let had_gap = !self.ooo.is_empty();
        if seq <= self.rcv_nxt {
            if end > self.rcv_nxt {
                self.rcv_nxt = end;
                // absorb buffered ranges now contiguous
                while let Some(&(a, b)) = self.ooo.first() {
                    if a <= self.rcv_nxt {
                        self.rcv_nxt = self.rcv_nxt.max(b);
                        self.ooo.remove(0);
                    } else {
                        break;
                    }
                }
            }
        } else {
            self.insert(seq, end);
        }
        let immediate = !p.delayed_ack || !in_order || had_gap || self.complete() || ce;
        if immediate {
            let ts_echo = if self.pending > 0 { self.pending_ts } else { ts };
            self.pending = 0;
            self.deadline = None;
            return Some(self.ack(ts_echo));
        }
        if self.pending == 0 {
            self.pending_ts = ts;
        }
        self.pending += 1;
        if self.pending >= 2 {
            self.pending = 0;
            self.deadline = None;
            return Some(self.ack(self.pending_ts));
        }
        self.deadline = Some(now + p.delayed_ack_timeout);
        None
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timeout(&mut self) -> Option<AckOut> {
        self.deadline = None;
        if self.pending == 0 {
            return None;
        }
        self.pending = 0;
        Some(self.ack(self.pending_ts))
    }

    fn ack(&self, ts_echo: Time) -> AckOut {
        AckOut { kind: SegKind::Ack, ack: self.rcv_nxt, ece: self.ece, ts_echo }
    }

    fn insert(&mut self, a: u64, b: u64) {
        let i = self.ooo.partition_point(|&(x, _)| x < a);
        self.ooo.insert(i, (a, b));
        // merge overlaps
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
        for &(x, y) in &self.ooo {
            if let Some(last) = merged.last_mut() {
                if x <= last.1 {
                    last.1 = last.1.max(y);
                    continue;
                }
            }
            merged.push((x, y));
        }
        self.ooo = merged;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PRESETS;

    fn params() -> TcpParams {
        (PRESETS[0].build)().tcp
    }

    /// Segments emitted by `f` as (seq, len).
    fn segs(out: &mut Vec<SegOut>) -> Vec<(u64, u32)> {
        out.drain(..).map(|s| (s.seq, s.len)).collect()
    }

    #[test]
    fn initial_window_then_slow_start() {
        let p = params();
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 10);
        assert!(s.deadline.is_some());
        let t = Time::from_us(100);
        // ACK of the first two segments grows cwnd by 2 MSS and releases 4 segments
        out.clear();
        s.on_ack(t, &p, SegKind::Ack, 2 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(segs(&mut out), vec![(10 * 1460, 1460), (11 * 1460, 1460), (12 * 1460, 1460), (13 * 1460, 1460)]);
    }

    #[test]
    fn receive_window_caps_the_flight() {
        let mut p = params();
        p.rwnd = 8 * 1460;
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 8, "initial window of 10 capped by an 8-segment receive window");
        out.clear();
        s.on_ack(Time::from_us(100), &p, SegKind::Ack, 4 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(out.len(), 4, "cwnd 14 segments, but only 4 fit the window");
    }

    #[test]
    fn three_dupacks_fast_retransmit_then_full_ack() {
        let p = params();
        let mut s = TcpSender::new(20 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        out.clear();
        let t = Time::from_us(100);
        for _ in 0..3 {
            s.on_ack(t, &p, SegKind::Ack, 0, false, Time::ZERO, &mut out);
        }
        assert_eq!(segs(&mut out), vec![(0, 1460)], "retransmits the first segment on the third dupack");
        assert_eq!(s.retransmits, 1);
        s.on_ack(t, &p, SegKind::Ack, 10 * 1460, false, Time::ZERO, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.ssthresh, 5.0 * 1460.0, "half the flight at the third dupack");
        assert!(s.cwnd >= s.ssthresh && s.cwnd < s.ssthresh + 1460.0, "deflated to ssthresh on the full ACK");
    }

    #[test]
    fn no_fast_retransmit_when_disabled() {
        let mut p = params();
        p.fast_retransmit = false;
        let mut s = TcpSender::new(20 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        out.clear();
        for _ in 0..10 {
            s.on_ack(Time::from_us(100), &p, SegKind::Ack, 0, false, Time::ZERO, &mut out);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn timeout_goes_back_to_una_and_backs_off() {
        let p = params();
        let mut s = TcpSender::new(20 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(s.deadline, Some(Time::from_ms(10)));
        out.clear();
        s.on_timeout(Time::from_ms(10), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.deadline, Some(Time::from_ms(30)), "RTO doubled");
        assert_eq!(s.timeouts, 1);
    }

    #[test]
    fn the_rto_floor_is_on_the_whole_timeout_or_on_the_variance_term() {
        // one RTT sample of 1 ms: SRTT 1 ms, RTTVAR 0.5 ms; the ACK at 1 ms re-arms the timer
        let rto_after_one_sample = |formula| {
            let mut p = params();
            p.rto_formula = formula;
            let mut s = TcpSender::new(20 * 1460, &p, false);
            let mut out = Vec::new();
            s.start(Time::ZERO, &p, &mut out);
            s.on_ack(Time::from_ms(1), &p, SegKind::Ack, 1460, false, Time::ZERO, &mut out);
            s.deadline.expect("armed") - Time::from_ms(1)
        };
        // RFC 6298: max(10 ms, 1 + 4 x 0.5 ms) = 10 ms; Linux: 1 ms + max(10 ms, 2 ms) = 11 ms
        assert_eq!(rto_after_one_sample(RtoFormula::Rfc6298), Time::from_ms(10));
        assert_eq!(rto_after_one_sample(RtoFormula::Linux), Time::from_ms(11));
    }

    #[test]
    fn receiver_reorders_and_acks_cumulatively() {
        let p = params();
        let mut r = TcpReceiver::new(3000);
        let t = Time::ZERO;
        assert_eq!(r.on_data(t, &p, 1000, 1000, false, false, t).1.unwrap().ack, 0);
        assert_eq!(r.on_data(t, &p, 2000, 1000, false, false, t).1.unwrap().ack, 0);
        assert_eq!(r.buffered(), 2000);
        assert_eq!(r.on_data(t, &p, 0, 1000, false, false, t).1.unwrap().ack, 3000);
        assert!(r.complete());
    }

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut p = params();
        p.delayed_ack = true;
        let mut r = TcpReceiver::new(10_000);
        assert!(r.on_data(Time::ZERO, &p, 0, 1000, false, false, Time::ZERO).1.is_none());
        assert_eq!(r.deadline, Some(p.delayed_ack_timeout));
        assert_eq!(r.on_data(Time::ZERO, &p, 1000, 1000, false, false, Time::ZERO).1.unwrap().ack, 2000);
        assert!(r.on_data(Time::ZERO, &p, 2000, 1000, false, false, Time::ZERO).1.is_none());
        assert_eq!(r.on_delack_timeout().unwrap().ack, 3000);
    }

    #[test]
    fn dctcp_receiver_echoes_ce_changes_at_once() {
        let mut p = params();
        p.cc = CongestionControl::Dctcp;
        p.ecn = true;
        p.delayed_ack = true;
        let mut r = TcpReceiver::new(100_000);
        let t = Time::ZERO;
        assert_eq!(r.on_data(t, &p, 0, 1000, false, false, t), (None, None)); // held back
        // CE arrives while an ACK is held: ACK the earlier segment at once with ECE = 0
        let (early, now) = r.on_data(t, &p, 1000, 1000, true, false, t);
        let early = early.unwrap();
        assert_eq!((early.ack, early.ece), (1000, false));
        assert!(now.is_none());
        let a = r.on_data(t, &p, 2000, 1000, true, false, t).1.unwrap();
        assert_eq!((a.ack, a.ece), (3000, true));
    }

    #[test]
    fn dctcp_alpha_tracks_the_marked_fraction_and_cuts_by_alpha_over_2() {
        let mut p = params();
        p.cc = CongestionControl::Dctcp;
        p.ecn = true;
        let mut s = TcpSender::new(10_000 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        // many windows with every other segment marked: alpha converges to 1/2
        let mut acked = 0;
        for i in 0..4000u64 {
            acked += 1460;
            let ece = i % 2 == 0;
            s.on_ack(Time::from_us(i), &p, SegKind::Ack, acked, ece, Time::ZERO, &mut out);
            out.clear();
        }
        assert!((s.alpha - 0.5).abs() < 0.1, "alpha {}", s.alpha);
        let before = s.cwnd;
        let a = s.alpha;
        s.ecn_reacted_until = 0;
        acked += 1460;
        s.on_ack(Time::from_us(5000), &p, SegKind::Ack, acked, true, Time::ZERO, &mut out);
        assert!(s.cwnd <= before * (1.0 - a / 2.0) + 1460.0 * 2.0);
    }

    #[test]
    fn mlfq_demotes_by_bytes_sent() {
        let mut p = params();
        p.mlfq = vec![10 * 1460, 20 * 1460];
        p.initial_window = 40;
        p.rwnd = 1 << 30;
        let mut s = TcpSender::new(30 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        let levels: Vec<u8> = out.iter().map(|x| x.level).collect();
        assert_eq!(&levels[..10], &[0; 10]);
        assert_eq!(&levels[10..20], &[1; 10]);
        assert_eq!(&levels[20..30], &[2; 10]);
    }

    #[test]
    fn mlfq_resets_after_two_consecutive_timeouts() {
        let mut p = params();
        p.mlfq = vec![10 * 1460, 20 * 1460];
        p.initial_window = 40;
        p.rwnd = 1 << 30;
        let mut s = TcpSender::new(60 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        out.clear();
        let level_after_timeout = |s: &mut TcpSender, out: &mut Vec<SegOut>, at: u64| {
            s.on_timeout(Time::from_ms(at), &p, out);
            let l = out[0].level;
            out.clear();
            l
        };
        // 40 segments sent: one timeout leaves the flow demoted, the second resets it to the top
        assert_eq!(level_after_timeout(&mut s, &mut out, 10), 2);
        assert_eq!(level_after_timeout(&mut s, &mut out, 30), 0);
        assert_eq!(level_after_timeout(&mut s, &mut out, 70), 0);
        // an ACK of new data ends the streak; segments beyond the 40 already sent count from zero again
        s.on_ack(Time::from_ms(80), &p, SegKind::Ack, 1460, false, Time::from_ms(70), &mut out);
        s.cwnd = 100.0 * 1460.0;
        s.on_ack(Time::from_ms(81), &p, SegKind::Ack, 2 * 1460, false, Time::from_ms(80), &mut out);
        let last = out.last().unwrap();
        assert_eq!((last.seq, last.level), (59 * 1460, 1));
        out.clear();
        // 20 segments past the reset: one timeout keeps the flow demoted, the second resets it
        assert_eq!(level_after_timeout(&mut s, &mut out, 100), 2);
        assert_eq!(level_after_timeout(&mut s, &mut out, 200), 0);
    }

    #[test]
    fn ecn_halves_once_per_window() {
        let mut p = params();
        p.ecn = true;
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        let before = s.cwnd;
        s.on_ack(Time::from_us(1), &p, SegKind::Ack, 1460, true, Time::ZERO, &mut out);
        let after = s.cwnd;
        assert!((after - (before + 1460.0) / 2.0).abs() < 1.0);
        s.on_ack(Time::from_us(2), &p, SegKind::Ack, 2 * 1460, true, Time::ZERO, &mut out);
        assert!(s.cwnd >= after, "no second cut in the same window");
        out.clear();
        s.on_ack(Time::from_us(3), &p, SegKind::Ack, 6 * 1460, false, Time::ZERO, &mut out);
        assert!(out.first().is_some_and(|s| s.cwr), "the first segment after the cut carries CWR");
    }

    /// A sender with `cc` and ECN that has sent its initial window of 10 segments at t = 0.
    fn ecn_sender(cc: CongestionControl) -> (TcpSender, TcpParams, Vec<SegOut>) {
        let mut p = params();
        p.cc = cc;
        p.ecn = true;
        let mut s = TcpSender::new(1000 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        (s, p, out)
    }

    #[test]
    fn ece_during_fast_recovery_does_not_cut_again() {
        for cc in [CongestionControl::NewReno, CongestionControl::Dctcp, CongestionControl::L2dct] {
            let (mut s, p, mut out) = ecn_sender(cc);
            let t = Time::from_us(100);
            // t = 100 us: segment 0 lost, three duplicate ACKs: fast retransmit, ssthresh = 10/2 segments
            for _ in 0..3 {
                s.on_ack(t, &p, SegKind::Ack, 0, false, Time::ZERO, &mut out);
            }
            assert_eq!(segs(&mut out), vec![(0, 1460)], "{cc:?}");
            assert!(s.in_recovery);
            assert_eq!(s.ssthresh, 5.0 * 1460.0, "{cc:?}");
            let inflated = s.cwnd;
            // t = 110 us: another duplicate, then a partial ACK (segment 3 was lost too), both with ECE for
            // data sent before the loss reduction
            s.on_ack(Time::from_us(110), &p, SegKind::Ack, 0, true, Time::ZERO, &mut out);
            assert_eq!(s.cwnd, inflated + 1460.0, "{cc:?}: only the dupack inflation");
            s.alpha = 1.0;
            s.on_ack(Time::from_us(150), &p, SegKind::Ack, 3 * 1460, true, Time::from_us(100), &mut out);
            assert_eq!(segs(&mut out)[0], (3 * 1460, 1460), "{cc:?}: the next hole is resent");
            assert!(s.in_recovery);
            assert_eq!(s.ssthresh, 5.0 * 1460.0, "{cc:?}: ECE in recovery must not overwrite ssthresh");
            assert_eq!(s.cwnd, inflated + 1460.0 - 3.0 * 1460.0 + 1460.0, "{cc:?}: partial-ACK deflation only");
            // t = 200 us: the full ACK (all 10 segments) with ECE: recovery ends at cwnd = ssthresh, no cut
            s.on_ack(Time::from_us(200), &p, SegKind::Ack, 10 * 1460, true, Time::from_us(100), &mut out);
            assert!(!s.in_recovery);
            assert_eq!(s.cwnd, 5.0 * 1460.0, "{cc:?}: the loss halving stands, and no second cut");
            assert_eq!(s.ssthresh, 5.0 * 1460.0, "{cc:?}");
            // the first segment after the loss reduction carries CWR (RFC 3168 6.1.2)
            let sent: Vec<SegOut> = std::mem::take(&mut out);
            assert!(sent.first().is_some_and(|x| x.cwr), "{cc:?}: CWR after a loss reduction");
            // an ECE on data sent after the reduction is a new window: one cut
            let beyond = sent.last().unwrap().seq + 1460;
            s.alpha = 1.0;
            s.on_ack(Time::from_us(300), &p, SegKind::Ack, beyond, true, Time::from_us(200), &mut out);
            assert!(s.cwnd < 5.0 * 1460.0, "{cc:?}: ECE on new data cuts (cwnd {})", s.cwnd);
        }
    }

    #[test]
    fn ece_after_a_timeout_for_data_sent_before_it_does_not_cut() {
        let (mut s, p, mut out) = ecn_sender(CongestionControl::Dctcp);
        s.on_timeout(Time::from_ms(10), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!((s.cwnd, s.ssthresh), (1460.0, 5.0 * 1460.0));
        // the ACK of the retransmission carries ECE for data sent before the timeout: slow start goes on
        s.on_ack(Time::from_ms(11), &p, SegKind::Ack, 1460, true, Time::from_ms(10), &mut out);
        assert_eq!(s.cwnd, 2.0 * 1460.0);
        assert_eq!(s.ssthresh, 5.0 * 1460.0);
    }

    /// Ten segments sent at t = 0, then a timeout at 10 ms that retransmits the first; the caller decides
    /// which transmission the next ACK answers.
    fn timed_out(undo: bool) -> (TcpSender, TcpParams, Vec<SegOut>) {
        let mut p = params();
        p.spurious_rto_undo = undo;
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        out.clear();
        s.on_timeout(Time::from_ms(10), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.cwnd, 1460.0);
        (s, p, out)
    }

    #[test]
    fn a_spurious_timeout_is_detected_by_the_echoed_timestamp_and_undone() {
        let (mut s, p, mut out) = timed_out(true);
        // the whole original window arrives: the ACK echoes t = 0, older than the retransmission at 10 ms
        s.on_ack(Time::from_ms(11), &p, SegKind::Ack, 10 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(s.spurious_timeouts, 1);
        assert_eq!(s.ssthresh, f64::INFINITY, "the threshold before the timeout");
        assert_eq!(s.cwnd, 12.0 * 1460.0, "the window before the timeout, then slow start on the ACK");
        let sent = segs(&mut out);
        assert_eq!(sent.first(), Some(&(10 * 1460, 1460)), "new data after the highest byte sent, not the window again");
        assert_eq!(sent.len(), 12);
        assert_eq!(s.retransmits, 1, "only the timer's own retransmission");
    }

    #[test]
    fn a_timeout_answered_by_its_retransmission_is_not_undone() {
        let (mut s, p, mut out) = timed_out(true);
        // the first segment was lost: the ACK answers the retransmission (its timestamp, 10 ms)
        s.on_ack(Time::from_ms(11), &p, SegKind::Ack, 1460, false, Time::from_ms(10), &mut out);
        assert_eq!(s.spurious_timeouts, 0);
        assert_eq!((s.cwnd, s.ssthresh), (2.0 * 1460.0, 5.0 * 1460.0));
        assert_eq!(segs(&mut out), vec![(1460, 1460), (2920, 1460)], "go-back-N from the first unacknowledged byte");
        // a later ACK with an old timestamp does not undo after the fact
        s.on_ack(Time::from_ms(12), &p, SegKind::Ack, 3 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(s.spurious_timeouts, 0);
        assert!(s.cwnd <= 4.0 * 1460.0);
    }

    #[test]
    fn without_the_undo_a_spurious_timeout_keeps_its_cut() {
        let (mut s, p, mut out) = timed_out(false);
        s.on_ack(Time::from_ms(11), &p, SegKind::Ack, 10 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(s.spurious_timeouts, 0);
        assert_eq!((s.cwnd, s.ssthresh), (3.0 * 1460.0, 5.0 * 1460.0));
    }

    #[test]
    fn repeated_timeouts_hold_ssthresh() {
        let p = params();
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        out.clear();
        // t = 10 ms: first timeout, ten segments in flight: ssthresh = 5 segments
        s.on_timeout(Time::from_ms(10), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.ssthresh, 5.0 * 1460.0);
        assert_eq!(s.deadline, Some(Time::from_ms(30)));
        // t = 30 ms: the retransmission timed out too (one segment in flight): ssthresh is held
        s.on_timeout(Time::from_ms(30), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.ssthresh, 5.0 * 1460.0, "RFC 5681 3.1: held, not 2 MSS");
        assert_eq!(s.deadline, Some(Time::from_ms(70)));
        // an ACK of new data ends the streak; a later timeout recomputes it from the flight again
        s.on_ack(Time::from_ms(71), &p, SegKind::Ack, 1460, false, Time::from_ms(30), &mut out);
        assert_eq!(segs(&mut out), vec![(1460, 1460), (2920, 1460)]);
        s.on_timeout(Time::from_ms(90), &p, &mut out);
        assert_eq!(s.ssthresh, 2.0 * 1460.0, "a new loss episode: half of the 2-segment flight, floor 2 MSS");
    }

    #[test]
    fn nic_room_limits_what_is_sent_and_resume_continues() {
        let p = params();
        let mut s = TcpSender::new(100 * 1460, &p, p.handshake);
        let mut out = Vec::new();
        s.nic_room = 4;
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(segs(&mut out), (0..4).map(|i| (i * 1460, 1460)).collect::<Vec<_>>());
        assert!(s.nic_limited);
        // room for 10 more at 5 us: the rest of the initial window goes, new data, not retransmissions
        s.nic_room = 10;
        s.nic_limited = false;
        s.resume(Time::from_us(5), &p, &mut out);
        assert_eq!(segs(&mut out), (4..10).map(|i| (i * 1460, 1460)).collect::<Vec<_>>());
        assert!(!s.nic_limited, "window-limited, not NIC-limited");
        // a fast retransmit with a full NIC waits, then goes first
        s.nic_room = 0;
        for _ in 0..3 {
            s.on_ack(Time::from_us(100), &p, SegKind::Ack, 0, false, Time::ZERO, &mut out);
        }
        assert!(out.is_empty() && s.nic_limited && s.in_recovery);
        s.nic_room = 1;
        s.resume(Time::from_us(110), &p, &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.retransmits, 1);
    }

    /// A sender that has sent `sent_segs` segments and estimates alpha = 1/4, about to see ECE.
    fn l2dct_after(sent_segs: u64) -> (TcpSender, TcpParams) {
        let mut p = params();
        p.cc = CongestionControl::L2dct;
        p.ecn = true;
        p.rwnd = 1 << 40;
        let mut s = TcpSender::new(1 << 40, &p, p.handshake);
        s.max_sent = sent_segs * 1460;
        s.nxt = s.max_sent;
        s.una = s.max_sent - 10 * 1460;
        s.cwnd = 100.0 * 1460.0;
        s.ssthresh = 1.0;
        s.alpha = 0.25;
        s.win_end = u64::MAX; // keep alpha fixed
        (s, p)
    }

    #[test]
    fn l2dct_weights_the_cut_and_the_increase_by_bytes_sent() {
        // w = 2.5 up to 200 segments: cut by alpha^2.5 / 2 = 1.56%; at 1000 segments w = 0.125: alpha^0.125 / 2
        for (segs, w) in [(100u64, 2.5f64), (600, 2.5 - 2.375 * 0.5), (1000, 0.125), (5000, 0.125)] {
            let (mut s, p) = l2dct_after(segs);
            let mut out = Vec::new();
            let ack = s.una + 1460;
            s.on_ack(Time::from_us(1), &p, SegKind::Ack, ack, true, Time::ZERO, &mut out);
            let grown = 100.0 * 1460.0 + (w / 2.5) * 1460.0 * 1460.0 / (100.0 * 1460.0);
            let want = grown * (1.0 - 0.25f64.powf(w) / 2.0);
            assert!((s.cwnd - want).abs() < 1e-6, "{segs} segments: cwnd {} want {want}", s.cwnd);
        }
        // DCTCP for comparison cuts by alpha / 2 whatever the flow has sent
        let (mut s, mut p) = l2dct_after(100);
        p.cc = CongestionControl::Dctcp;
        let mut out = Vec::new();
        let ack = s.una + 1460;
        s.on_ack(Time::from_us(1), &p, SegKind::Ack, ack, true, Time::ZERO, &mut out);
        assert!((s.cwnd - (100.0 * 1460.0 + 1460.0 / 100.0) * 0.875).abs() < 1e-6);
    }

    #[test]
    fn pfabric_starts_at_line_rate_and_cuts_only_on_timeouts() {
        let mut p = params();
        p.cc = CongestionControl::Pfabric;
        p.line_rate_start = true;
        p.rto_rtts = 3.0;
        p.rwnd = 1 << 30;
        let mut s = TcpSender::new(200 * 1460, &p, p.handshake);
        // 10 Gbps x 80 us = 100,000 B: 69 segments
        s.fit_path(&p, Time::from_us(80), 100_000);
        assert_eq!(s.rto(&p), Time::from_us(240));
        let mut out = Vec::new();
        s.start(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 69);
        out.clear();
        // three duplicate ACKs: the hole is resent, the window stays
        let w = s.cwnd;
        for _ in 0..3 {
            s.on_ack(Time::from_us(80), &p, SegKind::Ack, 0, false, Time::ZERO, &mut out);
        }
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.cwnd, w);
        // ACKs of the whole window do not grow it past the BDP
        let mut t = s.clone();
        t.on_ack(Time::from_us(90), &p, SegKind::Ack, 69 * 1460, false, Time::ZERO, &mut out);
        assert_eq!(t.cwnd, w);
        out.clear();
        // a timeout: one segment, slow start
        s.on_timeout(Time::from_us(400), &p, &mut out);
        assert_eq!(s.cwnd, 1460.0);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        // after five timeouts in a row only header-only probes go out, one per timeout
        for i in 2..=PFABRIC_PROBE_AFTER + 1 {
            s.on_timeout(Time::from_ms(i as u64), &p, &mut out);
        }
        assert_eq!(segs(&mut out), vec![(0, 1460), (0, 1460), (0, 1460), (0, 0), (0, 0)]);
        // the ACK of a probe ends probe mode: one full segment, RTO back to its floor
        s.on_ack(Time::from_ms(8), &p, SegKind::Ack, 0, false, Time::from_ms(7), &mut out);
        assert_eq!(segs(&mut out), vec![(0, 1460)]);
        assert_eq!(s.deadline, Some(Time::from_ms(8) + s.rto(&p)));
    }
}
