//! TCP NewReno (RFC 5681, RFC 6582, RFC 6298, RFC 3168), byte-counted, one connection direction.
//!
//! The sender carries slow start, congestion avoidance, fast retransmit / fast recovery (switchable:
//! DeTail's reorder-resistant variant turns it off), RTO with minimum, initial value and exponential
//! back-off, and ECN reaction (halve once per window). The receiver keeps a reorder buffer, sends
//! cumulative ACKs (optionally delayed: every second segment or after a timeout) and echoes CE as ECE
//! until the sender signals CWR. RTT samples use echoed send timestamps (RFC 7323), so retransmitted
//! segments give valid samples.

use crate::transport::cc::Cc;
use crate::transport::params::{RtoFormula, TcpParams};
use detailsim_engine::Time;

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
    /// The flow's attained service when the segment is sent: bytes sent before it, counted to the highest
    /// byte sent so far (a retransmission does not lower it) from the start of the message. What LAS ranks
    /// by and PIAS's MLFQ demotes by ("bytes sent", 003_5c3f0d64251b88f8.txt).
    pub sent: u64,
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
    /// The congestion controller (`transport::cc`): what the window does on ACKs, ECN echoes and losses,
    /// and the pacing rate of the rate-based ones.
    pub cc: Cc,
    /// PIAS: bytes sent when the MLFQ counter was last reset.
    mlfq_base: u64,
    /// Consecutive timeouts (since data was last acknowledged): PIAS resets its MLFQ counter at every
    /// second one, pFabric probes from the fifth on.
    streak: u32,
    probing: bool,
    /// RTO floor and initial RTO of this flow (from the parameters, or `rto_rtts` base RTTs of its path).
    rto_min: Time,
    rto_initial: Time,
    /// Upper bound of the window (the path's BDP for a controller capped there; otherwise unbounded).
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
    /// A paced sender (DCQCN, HPCC): when the next segment may leave, and the time the sender waits for
    /// (None: not waiting for the rate).
    next_send: Time,
    pub pace_at: Option<Time>,
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
            cc: Cc::new(p.cc),
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
            next_send: Time::ZERO,
            pace_at: None,
        }
    }

    /// A rate-based controller (DCQCN, HPCC) starts from the sender's NIC rate `nic_bps` and, where it
    /// needs one, the path's base RTT: it sets the first window (DCQCN: none; HPCC: the path's BDP).
    pub fn start_rate(&mut self, p: &TcpParams, base_rtt: Option<Time>, nic_bps: f64) {
        if let Some(w) = self.cc.start_rate(p, base_rtt, nic_bps) {
            self.cwnd = w;
        }
    }

    /// An ACK for `ack` brought these hop records (in-band telemetry): a controller that takes them (HPCC)
    /// sets the window.
    pub fn on_int(&mut self, p: &TcpParams, ack: u64, hops: &[crate::transport::cc::hpcc::IntHop]) {
        if let Some(w) = self.cc.on_telemetry(p, ack, self.nxt, hops) {
            self.cwnd = w.max(p.mss as f64);
        }
    }

    /// When the caller's timer must fire: the retransmission deadline, or the end of a wait for the rate.
    #[inline]
    pub fn wake_at(&self) -> Option<Time> {
        match (self.deadline, self.pace_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The caller's timer (`wake_at`) fired at `now`: the retransmission timer expired (true), or a wait
    /// for the rate ended and the sender goes on.
    pub fn on_timer(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) -> bool {
        if self.deadline.is_some_and(|d| d <= now) {
            self.on_timeout(now, p, out);
            return true;
        }
        if self.pace_at.is_some_and(|t| t <= now) {
            self.pace_at = None;
            self.try_send(now, p, out);
        }
        false
    }

    /// Adapt to the flow's path (before `start`): with `line_rate_start` the initial window is the
    /// path's bandwidth-delay product `bdp` (at least one segment; pFabric also caps the window there); with `rto_rtts` > 0 the RTO floor and
    /// initial RTO are that many base RTTs.
    pub fn fit_path(&mut self, p: &TcpParams, base_rtt: Time, bdp: u64) {
        if p.line_rate_start {
            self.cwnd = (bdp.div_ceil(p.mss as u64).max(1) * p.mss as u64) as f64;
            if self.cc.capped_at_bdp() {
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
                out.push(SegOut { kind: SegKind::Syn, seq: 0, len: 0, retx: false, cwr: false, level: 0, sent: 0 });
                self.arm(now, p);
            }
            State::Established => self.try_send(now, p, out),
        }
    }

    /// Takes the RTT sample of an ACK arriving at `now` that echoes send time `sent`, and returns it.
    fn rtt_sample(&mut self, now: Time, sent: Time) -> Time {
        let sample = Time(now.0 - sent.0.min(now.0));
        let r = sample.0 as f64;
        if !self.have_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.have_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        sample
    }

    fn flight(&self) -> u64 {
        self.nxt - self.una
    }

    fn mss(&self, p: &TcpParams) -> f64 {
        p.mss as f64
    }

    /// The attained service of a segment starting at `seq` (`SegOut::sent`).
    fn attained(&self, seq: u64) -> u64 {
        self.max_sent.max(seq).saturating_sub(self.mlfq_base)
    }

    /// PIAS's MLFQ level of a segment with attained service `sent`: how many demotion thresholds it reaches.
    fn mlfq_level(p: &TcpParams, sent: u64) -> u8 {
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
        let sent = self.attained(seq);
        out.push(SegOut { kind: SegKind::Data, seq, len: len as u32, retx, cwr, level: Self::mlfq_level(p, sent), sent });
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
        if self.cc.pace_rate().is_some() {
            self.try_send_paced(now, p, out);
            return;
        }
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

    /// `try_send` of a rate-limited sender (DCQCN, HPCC): the window as TCP's, and each segment no earlier
    /// than the previous one's wire time at the rate after it (`pace_at`: the sender waits for that time).
    #[inline(never)]
    fn try_send_paced(&mut self, now: Time, p: &TcpParams, out: &mut Vec<SegOut>) {
        self.cc.tick(now, p);
        self.pace_at = None;
        while self.nxt < self.size {
            let seg = (p.mss as u64).min(self.size - self.nxt);
            if self.flight() > 0 && ((self.flight() + seg) as f64 > self.cwnd || self.flight() + seg > p.rwnd) {
                break;
            }
            if self.nic_room == 0 {
                self.nic_limited = true;
                break;
            }
            if now < self.next_send {
                self.pace_at = Some(self.next_send);
                break;
            }
            let rate = self.cc.pace_rate().expect("a paced sender");
            let n = self.emit(self.nxt, p, out);
            let wire = n + p.wire_overhead as u64;
            self.next_send = self.next_send.max(now) + Time((wire as f64 * 8e12 / rate).round() as u64);
            self.cc.on_paced_send(wire, p);
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
        if p.cc.roce() {
            self.on_ack_roce(now, p, ack, ece, false, ts_echo, out);
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
            self.cc.on_new_ack(p, ack - self.una, ece, ack, self.nxt);
            self.una = ack;
            if self.nxt < self.una {
                // an ACK for data sent before a timeout rewound nxt
                self.nxt = self.una;
            }
            let rtt = self.rtt_sample(now, ts_echo);
            self.cc.on_rtt(p, ack, self.nxt, rtt);
            self.backoff = 0;
            if self.in_recovery {
                let cuts = self.cc.loss_cuts();
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    if cuts {
                        self.cwnd = self.ssthresh;
                    }
                } else {
                    // partial ACK: retransmit the next hole, deflate by what was acked
                    let n = self.emit_hole(p, out);
                    self.nxt = self.nxt.max(self.una + n);
                    if cuts {
                        self.cwnd = (self.cwnd - acked + mss).max(mss);
                    }
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += acked.min(2.0 * mss);
                } else {
                    self.cwnd = self.cc.avoid(p, self.cwnd, acked, self.max_sent);
                }
                self.cwnd = self.cwnd.min(self.max_cwnd);
            }
            // RFC 3168 6.1.2: at most one reduction per window of data, none while loss recovery is under
            // way and none for ECE on data that a loss reduction already covered
            if p.ecn && ece && !self.in_recovery && self.una > self.ecn_reacted_until {
                if let Some((cwnd, ssthresh)) = self.cc.ecn_cut(p, self.cwnd, self.max_sent) {
                    self.cwnd = cwnd;
                    self.ssthresh = ssthresh;
                    self.ecn_reacted_until = self.nxt;
                    self.send_cwr = true;
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
            let cuts = self.cc.loss_cuts();
            if self.in_recovery {
                if cuts {
                    self.cwnd += mss;
                }
            } else if self.dupacks == p.dupack_threshold && self.una + 1 > self.recover {
                self.recover = self.max_sent;
                self.in_recovery = true;
                self.emit_hole(p, out);
                if cuts {
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

    /// DCQCN: a NACK arrived (the receiver lacks `ack` onwards): go back to it (go-back-N).
    pub fn on_nack(&mut self, now: Time, p: &TcpParams, ack: u64, ece: bool, ts_echo: Time, out: &mut Vec<SegOut>) {
        if self.state == State::Established {
            self.on_ack_roce(now, p, ack, ece, true, ts_echo, out);
        }
    }

    /// A rate-based controller's ACK (or NACK; RoCE): a CNP (ECE) goes to the controller; no window, no fast
    /// retransmit: a cumulative ACK moves the left edge, a NACK sends everything from it again.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn on_ack_roce(&mut self, now: Time, p: &TcpParams, ack: u64, ece: bool, nack: bool, ts_echo: Time, out: &mut Vec<SegOut>) {
        self.cc.tick(now, p);
        if ece {
            self.cc.on_notification(now, p);
        }
        if ack > self.una {
            self.una = ack.min(self.size);
            self.nxt = self.nxt.max(self.una);
            let rtt = self.rtt_sample(now, ts_echo);
            self.cc.on_rtt(p, ack, self.nxt, rtt);
            self.backoff = 0;
            self.streak = 0;
            if self.una >= self.size {
                self.deadline = None;
                self.pace_at = None;
                return;
            }
            self.arm(now, p);
        }
        if nack && self.una < self.nxt {
            self.nxt = self.una;
        }
        self.try_send(now, p, out);
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
            out.push(SegOut { kind: SegKind::Syn, seq: 0, len: 0, retx: true, cwr: false, level: 0, sent: 0 });
            self.retransmits += 1;
            self.arm(now, p);
            return;
        }
        if p.cc.roce() {
            // go back to the first unacknowledged byte, at the rate the reaction point has now
            self.nxt = self.una;
            self.try_send(now, p, out);
            if self.deadline.is_none() && self.una < self.nxt {
                self.arm(now, p);
            }
            return;
        }
        let mss = self.mss(p);
        if self.streak == 1 && p.spurious_rto_undo && self.cc.undo_spurious() {
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
        if self.cc.probe_after().is_some_and(|n| self.streak >= n) {
            // pFabric's probe mode: a header-only segment per timeout until the flow hears an ACK
            self.probing = true;
            let sent = self.attained(self.una);
            out.push(SegOut { kind: SegKind::Data, seq: self.una, len: 0, retx: false, cwr: false, level: Self::mlfq_level(p, sent), sent });
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
    /// DCQCN: a NACK (go back to `ack`).
    pub nack: bool,
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
    /// DCQCN: the notification point, and the last NACK (when, for which point).
    pub np: crate::transport::cc::dcqcn::Np,
    nack_at: Option<(Time, u64)>,
}

impl TcpReceiver {
    pub fn new(size: u64) -> Self {
        TcpReceiver { size, rcv_nxt: 0, ooo: Vec::new(), ece: false, pending: 0, pending_ts: Time::ZERO, deadline: None, np: Default::default(), nack_at: None }
    }
    pub fn complete(&self) -> bool {
        self.rcv_nxt >= self.size
    }
    /// Bytes held out of order.
    pub fn buffered(&self) -> u64 {
        self.ooo.iter().map(|(a, b)| b - a).sum()
    }

    pub fn on_syn(&mut self, ts: Time) -> AckOut {
        AckOut { kind: SegKind::SynAck, ack: 0, ece: false, nack: false, ts_echo: ts }
    }

    /// A data segment arrived. Returns the ACKs to send now: with DCTCP, a change of the CE state while
    /// an ACK is held back first sends that ACK with the old state (the DCTCP receiver state machine).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(&mut self, now: Time, p: &TcpParams, seq: u64, len: u32, ce: bool, cwr: bool, ts: Time) -> (Option<AckOut>, Option<AckOut>) {
        if p.cc.roce() {
            return (None, self.on_data_roce(now, p, seq, len, ce, ts));
        }
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

    /// RoCE's receiver (DCQCN): in order, an ACK; out of order, the segment is discarded and a NACK asks
    /// for everything from `rcv_nxt` (once per `nack_interval` for the same point, as the HPCC simulator's
    /// NIC); a duplicate, nothing. CE calls for a CNP (ECE on the answer, or alone) at most once per
    /// `cnp_interval` (the notification point).
    fn on_data_roce(&mut self, now: Time, p: &TcpParams, seq: u64, len: u32, ce: bool, ts: Time) -> Option<AckOut> {
        let cnp = ce && self.np.on_ce(now, &p.dcqcn);
        let reply = |ack: u64, nack: bool| AckOut { kind: SegKind::Ack, ack, ece: cnp, nack, ts_echo: ts };
        if seq == self.rcv_nxt {
            self.rcv_nxt = seq + len as u64;
            return Some(reply(self.rcv_nxt, false));
        }
        if seq > self.rcv_nxt && self.nack_at.is_none_or(|(t, at)| now >= t || at != self.rcv_nxt) {
            self.nack_at = Some((now + p.dcqcn.nack_interval, self.rcv_nxt));
            return Some(reply(self.rcv_nxt, true));
        }
        // a CNP alone (an ACK the sender reads as neither new data nor a NACK)
        cnp.then(|| reply(self.rcv_nxt, false))
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
        AckOut { kind: SegKind::Ack, ack: self.rcv_nxt, ece: self.ece, nack: false, ts_echo }
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
#[path = "tcp_tests.rs"]
mod tests;
