//! Unit tests of `tcp` (a file of their own to keep the module short).
use super::*;
use crate::config::PRESETS;
use crate::transport::cc::pfabric::PROBE_AFTER as PFABRIC_PROBE_AFTER;
use crate::transport::cc::CongestionControl;

fn params() -> TcpParams {
    PRESETS[0].build().tcp
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
    assert!((s.cc.dctcp_mut().unwrap().alpha - 0.5).abs() < 0.1, "alpha {}", s.cc.dctcp_mut().unwrap().alpha);
    let before = s.cwnd;
    let a = s.cc.dctcp_mut().unwrap().alpha;
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
fn attained_service_counts_bytes_sent_and_a_retransmission_does_not_lower_it() {
    // LAS ranks by it: a go-back-N retransmission of the first segment after 20 were sent has attained
    // 20 segments' worth, not its sequence number 0
    let mut p = params();
    p.initial_window = 20;
    p.rwnd = 1 << 30;
    let mut s = TcpSender::new(60 * 1460, &p, p.handshake);
    let mut out = Vec::new();
    s.start(Time::ZERO, &p, &mut out);
    let sent: Vec<u64> = out.iter().map(|x| x.sent).collect();
    assert_eq!(sent, (0..20).map(|i| i * 1460).collect::<Vec<u64>>());
    out.clear();
    s.on_timeout(Time::from_ms(10), &p, &mut out);
    assert_eq!((out[0].seq, out[0].retx, out[0].sent), (0, true, 20 * 1460));
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
        if let Some(d) = s.cc.dctcp_mut() {
            d.alpha = 1.0;
        }
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
        if let Some(d) = s.cc.dctcp_mut() {
            d.alpha = 1.0;
        }
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

/// A sender (`cc`: L2DCT or DCTCP) that has sent `sent_segs` segments and estimates alpha = 1/4, about to see ECE.
fn l2dct_after(sent_segs: u64, cc: CongestionControl) -> (TcpSender, TcpParams) {
    let mut p = params();
    p.cc = cc;
    p.ecn = true;
    p.rwnd = 1 << 40;
    let mut s = TcpSender::new(1 << 40, &p, p.handshake);
    s.max_sent = sent_segs * 1460;
    s.nxt = s.max_sent;
    s.una = s.max_sent - 10 * 1460;
    s.cwnd = 100.0 * 1460.0;
    s.ssthresh = 1.0;
    s.cc.dctcp_mut().unwrap().alpha = 0.25;
    s.cc.dctcp_mut().unwrap().win_end = u64::MAX; // keep alpha fixed
    (s, p)
}

#[test]
fn l2dct_weights_the_cut_and_the_increase_by_bytes_sent() {
    // w = 2.5 up to 200 segments: cut by alpha^2.5 / 2 = 1.56%; at 1000 segments w = 0.125: alpha^0.125 / 2
    for (segs, w) in [(100u64, 2.5f64), (600, 2.5 - 2.375 * 0.5), (1000, 0.125), (5000, 0.125)] {
        let (mut s, p) = l2dct_after(segs, CongestionControl::L2dct);
        let mut out = Vec::new();
        let ack = s.una + 1460;
        s.on_ack(Time::from_us(1), &p, SegKind::Ack, ack, true, Time::ZERO, &mut out);
        let grown = 100.0 * 1460.0 + (w / 2.5) * 1460.0 * 1460.0 / (100.0 * 1460.0);
        let want = grown * (1.0 - 0.25f64.powf(w) / 2.0);
        assert!((s.cwnd - want).abs() < 1e-6, "{segs} segments: cwnd {} want {want}", s.cwnd);
    }
    // DCTCP for comparison cuts by alpha / 2 whatever the flow has sent
    let (mut s, p) = l2dct_after(100, CongestionControl::Dctcp);
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

// ---------------------------------------------------------------- DCQCN (RoCEv2)

fn dcqcn() -> TcpParams {
    crate::config::preset("dcqcn").unwrap().build().tcp
}

/// A DCQCN sender of `n` full segments on a 10 Gbps NIC, started at 0.
fn roce_sender(n: u64) -> (TcpSender, TcpParams, Vec<SegOut>) {
    let p = dcqcn();
    let mut s = TcpSender::new(n * 1460, &p, false);
    s.start_rate(&p, None, 10e9);
    let mut out = Vec::new();
    s.start(Time::ZERO, &p, &mut out);
    (s, p, out)
}

#[test]
fn a_dcqcn_sender_paces_at_its_rate_with_no_window() {
    let (mut s, p, mut out) = roce_sender(1000);
    // one segment now, the next when the first has left at 10 Gbps: (1460 + 70) B x 8 / 10 Gbps = 1.224 us
    assert_eq!(segs(&mut out), vec![(0, 1460)]);
    let gap = Time(1_224_000);
    assert_eq!(s.pace_at, Some(gap));
    assert_eq!(s.wake_at(), Some(gap), "the pacing wait comes before the RTO");
    let mut t = Time::ZERO;
    for k in 1..200u64 {
        t += gap;
        assert!(!s.on_timer(t, &p, &mut out));
        assert_eq!(segs(&mut out), vec![(k * 1460, 1460)], "segment {k} at {t}");
    }
    // 200 segments in flight and no ACK: no window holds them back
    assert_eq!(s.nxt - s.una, 200 * 1460);
}

#[test]
fn a_cnp_slows_the_pacing_and_the_rate_recovers() {
    let (mut s, p, mut out) = roce_sender(100_000);
    out.clear();
    // a CNP on the ACK of the first segment at 2 us: the decrease check 4 us later halves the rate (alpha 1)
    s.on_ack(Time::from_us(2), &p, SegKind::Ack, 1460, true, Time::ZERO, &mut out);
    let rp = s.cc.dcqcn().unwrap();
    assert_eq!((rp.rate, rp.first), (10e9, false));
    let mut t = Time::from_us(2);
    let mut gaps = Vec::new();
    let mut last = None;
    while t < Time::from_us(30) {
        t = s.wake_at().unwrap();
        s.on_timer(t, &p, &mut out);
        if !out.is_empty() {
            out.clear();
            if let Some(l) = last {
                gaps.push((t - l).0);
            }
            last = Some(t);
        }
    }
    let rp = s.cc.dcqcn().unwrap();
    assert_eq!(rp.decreases, 1);
    // segments left every 1.224 us before the decrease at 6.001 us; by then alpha, updated every 1 us from
    // 3 us on without another CNP, is (255/256)^4, and the rate 10 Gbps x (1 - alpha / 2)
    let rate = 10e9 * (1.0 - (255.0f64 / 256.0).powi(4) / 2.0);
    assert!((s.cc.dcqcn().unwrap().rate - rate).abs() < 1.0);
    assert_eq!(gaps.first(), Some(&1_224_000));
    assert_eq!(*gaps.last().unwrap(), (1530.0 * 8e12 / rate).round() as u64);
    // the increase timer (300 us) brings the rate halfway back to the target, still the line rate (fast
    // recovery, F = 1)
    let t1 = Time(6_001_000) + Time::from_us(300);
    s.on_ack(t1, &p, SegKind::Ack, 2 * 1460, false, Time::ZERO, &mut out);
    let rp = s.cc.dcqcn().unwrap();
    assert!((rp.rate - (rate + 10e9) / 2.0).abs() < 1.0, "{}", rp.rate);
}

#[test]
fn a_nack_goes_back_to_the_first_missing_byte() {
    let (mut s, p, mut out) = roce_sender(100);
    let gap = Time(1_224_000);
    for k in 1..10u64 {
        s.on_timer(Time(gap.0 * k), &p, &mut out);
    }
    assert_eq!(s.nxt, 10 * 1460);
    out.clear();
    // the receiver got segments 0-2 and then 4: it acknowledged 3 segments, then NACKs from segment 3
    s.on_ack(Time::from_us(12), &p, SegKind::Ack, 3 * 1460, false, Time::ZERO, &mut out);
    s.on_nack(Time(12_500_000), &p, 3 * 1460, false, Time::ZERO, &mut out);
    assert_eq!(s.nxt, 3 * 1460 + out.iter().map(|x| x.len as u64).sum::<u64>(), "sending again from segment 3");
    let resent: Vec<u64> = out.iter().map(|x| x.seq).collect();
    assert!(resent.is_empty() || resent[0] == 3 * 1460, "{resent:?}");
    let before = s.retransmits;
    for k in 11..20u64 {
        s.on_timer(Time(gap.0 * k), &p, &mut out);
    }
    assert!(s.retransmits > before, "segments 3-9 go again as retransmissions");
    // a plain duplicate ACK (a CNP alone) does not go back
    let nxt = s.nxt;
    s.on_ack(Time::from_us(30), &p, SegKind::Ack, 3 * 1460, true, Time::ZERO, &mut out);
    assert!(s.nxt >= nxt);
}

#[test]
fn the_roce_receiver_discards_out_of_order_nacks_once_per_interval_and_paces_cnps() {
    let p = dcqcn();
    let mut r = TcpReceiver::new(100 * 1460);
    let data = |r: &mut TcpReceiver, us: u64, k: u64, ce: bool| r.on_data(Time::from_us(us), &p, k * 1460, 1460, ce, false, Time::ZERO).1;
    let a = data(&mut r, 0, 0, false).unwrap();
    assert_eq!((a.ack, a.nack, a.ece), (1460, false, false));
    // segment 2 before 1: discarded, NACK for 1
    let a = data(&mut r, 1, 2, false).unwrap();
    assert_eq!((a.ack, a.nack), (1460, true));
    assert_eq!((r.rcv_nxt, r.buffered()), (1460, 0), "nothing kept out of order");
    // more out of order within the NACK interval (500 us): no second NACK
    assert_eq!(data(&mut r, 2, 3, false), None);
    assert_eq!(data(&mut r, 400, 4, false), None);
    // after it, a NACK again
    assert!(data(&mut r, 502, 5, false).unwrap().nack);
    // in order again; CE: a CNP (ECE) at most once per 50 us
    assert!(data(&mut r, 510, 1, true).unwrap().ece);
    assert!(!data(&mut r, 520, 2, true).unwrap().ece);
    let a = data(&mut r, 561, 3, true).unwrap();
    assert!(a.ece && !a.nack && a.ack == 4 * 1460);
    // a duplicate: nothing, unless it carries a CNP that is due
    assert_eq!(data(&mut r, 562, 1, false), None);
    let a = data(&mut r, 700, 1, true).unwrap();
    assert!(a.ece && !a.nack && a.ack == 4 * 1460);
}
