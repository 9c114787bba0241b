//! Priority flow control (IEEE 802.1Qbb) as DeTail uses it, as two components per port: the ingress side
//! that watches its buffer and sends PAUSE / UNPAUSE, and the egress side that obeys the peer's frames.
//!
//! ```text
//!   upstream egress U ══ link ══► downstream ingress D (switch)
//!     PfcEgress::on_frame ◄─ PfcFrame ── PfcIngress::on_occupancy(drain-byte counters)
//!     (paused mask, paused time)        pause p when the bytes of priority ≤ p exceed the pause threshold,
//!                                       unpause when they fall below the unpause threshold (on/off, no quanta)
//!                                       PfcIngress::on_data: data of a paused priority after the grace time
//!                                       → resend PAUSE, or report the neighbour as ignoring it
//! ```
//!
//! Thresholds (`derive`) follow the paper: with R the bytes that may still arrive during the reaction
//! window, unpause = R and pause = the midpoint of [R, (buffer − nR)/n] for n lossless priorities; at
//! 1 Gbps, 5.476 µs links and 128 KB buffers that is 4557 / 8192 B, the paper's values. A frame is never
//! queued or dropped; the caller delivers it after the stop delay. The components take `now` and return
//! what to send; the watchdog's and deadlock check's reports are the caller's (they need the topology).

use detailsim_engine::{Rate, Time};
use serde::Deserialize;

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WatchdogAction {
    /// Record the event.
    Report,
    /// Record it and shut the link down (routing then excludes it).
    Shutdown,
}

/// PFC parameters. Thresholds and reaction time left at `None` are derived per port from its link
/// (see `Sim` construction and docs/scenarios.md).
#[derive(Debug, Clone, PartialEq)]
pub struct PfcParams {
    pub pause_threshold: Option<u64>,
    pub unpause_threshold: Option<u64>,
    pub reaction_time: Option<Time>,
    pub watchdog_timeout: Time,
    pub watchdog_action: WatchdogAction,
    pub ignore_limit: u32,
    pub deadlock_check: Time,
    /// Priorities with PFC (lossless), bit p; the others are lossy and may use only the buffer left after
    /// the lossless priorities' headroom.
    pub priorities: u8,
    /// Derive the thresholds as the DeTail paper does, for all eight priorities, even when fewer are
    /// lossless ("When fewer priorities are used, the Pause threshold can be raised without suffering
    /// packet loss. Given the desire to agilely respond to congestion, we leave it unmodified.",
    /// ../shared/papers/000_76fdfa378bc5f2cf.txt:287), where the buffer holds eight; otherwise (10 Gbps and
    /// faster with 128 KB) for the lossless priorities alone. Set when the lossless priorities are the ones
    /// the workloads use (`scheme.pfc.priorities` left out); an explicit list derives for its own count.
    pub eight_first: bool,
}

/// Processing time in the paper's 36.456 µs worst-case window beyond two maximum frames, the PFC frame
/// and two link delays at 1 GbE (36.456 − 24.48 − 0.576 − 10.952 µs: the paper's full frame is 1530 B and
/// a PFC frame, a minimum-size frame in the same accounting, 72 B; `topology::Framing`).
pub const PFC_PROCESSING: Time = Time(448_000);

/// Bytes that may still arrive at a port during the reaction window of a link.
pub fn reaction_bytes(rate: Rate, window: Time) -> u64 {
    ((window.0 as u128 * rate.0 as u128).div_ceil(8 * 1_000_000_000_000u128)) as u64
}

/// A PFC frame: priorities to pause and to unpause (bit p).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcFrame {
    pub pause: u8,
    pub unpause: u8,
}

/// What one switch ingress uses, derived from its link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub pause: u64,
    pub unpause: u64,
    /// Time from generating a PFC frame until the upstream transmitter obeys it.
    pub stop_delay: Time,
    /// After a PAUSE, data of that priority arriving later than this is the neighbour ignoring it.
    pub grace: Time,
    /// Ingress bytes lossy priorities may use (the rest is the lossless priorities' headroom).
    pub lossy_limit: u64,
}

/// The link an ingress sits on, as PFC sees it.
#[derive(Debug, Clone, Copy)]
pub struct LinkView {
    pub rate: Rate,
    pub delay: Time,
    /// The receiving switch's forwarding delay (bytes keep arriving while the engine decides).
    pub forwarding_delay: Time,
    /// The largest frame on the wire.
    pub max_frame: u64,
    /// A PFC frame on the wire (a minimum-size frame).
    pub pfc_frame: u64,
    /// The ingress buffer.
    pub buffer: u64,
    /// How the ingress buffer is split among the priorities (`queue::BufferSharing::parts`): above 1, each
    /// priority may hold only `buffer / parts`, so the thresholds are sized for at least that many.
    pub parts: u8,
}

/// Why `derive` cannot make PFC lossless on a link: the parameter at fault (`None`: the buffer, or the
/// number of lossless priorities, rather than a threshold) and the explanation. The caller names the
/// field (`scheme.pfc`, `.pause_threshold`, `.unpause_threshold`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeriveError {
    pub param: Option<&'static str>,
    pub msg: String,
}

/// Thresholds and delays of an ingress on link `l` (the paper's derivation, or the configured values
/// checked against the buffer); `name` names the link in errors.
pub fn derive(p: &PfcParams, l: LinkView, name: &str) -> Result<Thresholds, DeriveError> {
    if p.eight_first && p.priorities != 0xff {
        if let Ok(t) = derive_for(p, l, name, 8) {
            return Ok(t);
        }
    }
    // an ingress split in parts keeps each priority inside its part: size for no fewer than the parts
    let n = (p.priorities.count_ones() as u64).max(if l.parts > 1 { l.parts as u64 } else { 0 });
    derive_for(p, l, name, n).map_err(|mut e| {
        if l.parts > 1 && e.param.is_none() {
            e.msg += &format!(
                " (the ingress is split in {} parts, one per priority: scheme.ingress_sharing = \"shared\" lets the lossless priorities use the whole buffer)",
                l.parts
            );
        }
        e
    })
}

/// `derive` with the thresholds sized for `n` lossless priorities sharing the buffer (the lossy priorities'
/// share is what the actual lossless ones leave).
fn derive_for(p: &PfcParams, l: LinkView, name: &str, n: u64) -> Result<Thresholds, DeriveError> {
    let (rate, delay, max_frame, buf) = (l.rate, l.delay, l.max_frame, l.buffer);
    let window = p.reaction_time.unwrap_or(rate.tx_time(max_frame) + rate.tx_time(max_frame) + rate.tx_time(l.pfc_frame) + delay + delay + PFC_PROCESSING);
    let r = reaction_bytes(rate, window);
    let max_pause = (buf.saturating_sub(n * r)) / n;
    let unpause = p.unpause_threshold.unwrap_or(r);
    // lossless bound: per priority at most pause + one frame + what arrives during the reaction window and
    // the forwarding delay; a derived threshold stays within it
    let in_flight = r + reaction_bytes(rate, l.forwarding_delay);
    let lossless_max = (buf / n).saturating_sub(max_frame + in_flight);
    let pause = p.pause_threshold.unwrap_or(((r + max_pause) / 2).min(lossless_max));
    if p.pause_threshold.is_none() && pause <= unpause {
        let need = n * (unpause + 1 + max_frame + in_flight);
        return Err(DeriveError {
            param: None,
            msg: format!("ingress buffer of {name} ({buf} B) is too small for lossless PFC: each of the {n} lossless priorities needs room for a pause threshold above the unpause threshold ({unpause} B), a frame ({max_frame} B) and the {in_flight} B that arrive before a PAUSE takes effect; the smallest buffer that holds them is {need} B: raise the buffer to it (topology.buffer, or the tier's), make fewer priorities lossless (scheme.pfc.priorities), or set pause_threshold/unpause_threshold"),
        });
    }
    if unpause >= pause {
        return Err(DeriveError { param: Some("unpause_threshold"), msg: format!("must be below the pause threshold ({pause} B) on {name}") });
    }
    let per_prio = pause + max_frame + in_flight;
    if n * per_prio > buf {
        return Err(DeriveError {
            param: Some("pause_threshold"),
            msg: format!(
                "{pause} B is too high for lossless PFC on {name}: {n} x ({pause} + {max_frame} + {in_flight} B in flight) exceeds the {buf} B ingress buffer"
            ),
        });
    }
    let stop_delay = window.saturating_sub(rate.tx_time(max_frame) + delay);
    Ok(Thresholds {
        pause,
        unpause,
        stop_delay,
        grace: stop_delay + rate.tx_time(max_frame) + delay + l.forwarding_delay + Time(1),
        lossy_limit: if p.priorities == 0xff { buf } else { buf - p.priorities.count_ones() as u64 * per_prio },
    })
}

/// Headroom a lossless priority of an ingress on link `l` needs (a shared-buffer switch's, which pauses
/// from the MMU's dynamic threshold): what may still arrive after the PAUSE is sent, as `derive` bounds it:
/// the reaction window's bytes, those of the forwarding delay, and a frame.
pub fn headroom(p: &PfcParams, l: LinkView) -> u64 {
    let window =
        p.reaction_time.unwrap_or(l.rate.tx_time(l.max_frame) + l.rate.tx_time(l.max_frame) + l.rate.tx_time(l.pfc_frame) + l.delay + l.delay + PFC_PROCESSING);
    reaction_bytes(l.rate, window) + reaction_bytes(l.rate, l.forwarding_delay) + l.max_frame
}

/// What data arriving at an ingress says about the upstream's obedience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataCheck {
    /// Nothing wrong (not paused, or still within the grace time).
    Fine,
    /// Data of a paused priority after the grace time: send this PAUSE again.
    Resend(PfcFrame),
    /// The upstream has ignored the PAUSE `ignore_limit` times: report it (once per priority).
    Ignoring,
    /// Ignoring, already reported.
    Reported,
}

/// The ingress side of a switch port: sends PAUSE / UNPAUSE as its drain-byte counters cross thresholds.
/// Field order is the memory layout (`repr(C)`): what every arrival and every change of the ingress bytes
/// reads comes first, in 48 bytes at the start of the port's (cache-line aligned) `PfcPort`; the
/// per-priority records and counters follow.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct PfcIngress {
    pub enabled: bool,
    /// Lossless priorities (bit p).
    pub mask: u8,
    /// Priorities this port has asked its peer to pause (and when: `sent_at`).
    pub sent: u8,
    pub ignore_reported: u8,
    pub pause_th: u64,
    pub unpause_th: u64,
    /// The ingress bytes lossy packets may use.
    pub lossy_limit: u64,
    pub grace: Time,
    pub stop_delay: Time,
    pub frames_sent: u64,
    pub sent_at: [Time; 8],
    pub last_strike: [Time; 8],
    pub strikes: [u32; 8],
    /// PAUSE requests sent, per priority.
    pub pauses_sent: [u64; 8],
}

impl PfcIngress {
    /// Turn PFC on for lossless priorities `mask` with thresholds `t` (again after the link's rate changed).
    pub fn install(&mut self, mask: u8, t: Thresholds) {
        self.enabled = true;
        self.pause_th = t.pause;
        self.unpause_th = t.unpause;
        self.stop_delay = t.stop_delay;
        self.grace = t.grace;
        self.mask = mask;
        self.lossy_limit = t.lossy_limit;
    }

    /// Whether an arrival of priority `prio` is lossy here (PFC on, the priority not lossless).
    #[inline]
    pub fn lossy(&self, prio: u8) -> bool {
        self.enabled && self.mask & (1 << prio) == 0
    }

    /// The ingress holds `bytes` per priority now: the frame to send, if a lossless priority's drain-byte
    /// counter (bytes of that priority or higher) crossed the pause threshold upwards or the unpause
    /// threshold downwards. The frame is recorded as sent.
    #[inline]
    pub fn on_occupancy(&mut self, now: Time, bytes: &[u32; 8]) -> Option<PfcFrame> {
        self.check(bytes).map(|f| self.send(now, f))
    }

    /// The frame `on_occupancy` would send, without recording it (for a caller that `send`s it itself).
    #[inline(always)]
    pub fn check(&self, bytes: &[u32; 8]) -> Option<PfcFrame> {
        if !self.enabled {
            return None;
        }
        // The drain-byte counter of priority q (bytes of q or higher) never decreases with q, so a PAUSE is
        // due only if it is at the lowest lossless priority not yet paused, and an UNPAUSE only if it is at
        // the highest one paused: two prefix sums decide the common case, nothing to send.
        let unsent = self.mask & !self.sent;
        let held = self.mask & self.sent;
        // (q is at most 7; saying so lets the compiler drop the slice's bounds check, which kept the slicing
        // out of line, a call per test)
        let upto = |q: u32| bytes[..=(q as usize).min(7)].iter().map(|&b| b as u64).sum::<u64>();
        let may_pause = unsent != 0 && upto(7 - unsent.leading_zeros()) > self.pause_th;
        let may_unpause = held != 0 && upto(held.trailing_zeros()) < self.unpause_th;
        if !may_pause && !may_unpause {
            return None;
        }
        let (mut pause, mut unpause) = (0u8, 0u8);
        let mut acc = 0u64;
        for (q, &b) in bytes.iter().enumerate() {
            acc += b as u64;
            let bit = 1u8 << q;
            if self.mask & bit == 0 {
                continue;
            }
            if self.sent & bit == 0 {
                if acc > self.pause_th {
                    pause |= bit;
                }
            } else if acc < self.unpause_th {
                unpause |= bit;
            }
        }
        (pause | unpause != 0).then_some(PfcFrame { pause, unpause })
    }

    /// Record frame `f` as sent now and return it.
    pub fn send(&mut self, now: Time, f: PfcFrame) -> PfcFrame {
        self.sent = (self.sent | f.pause) & !f.unpause;
        for q in 0..8 {
            if f.pause & (1 << q) != 0 {
                self.sent_at[q] = now;
                self.pauses_sent[q] += 1;
            }
            if f.unpause & (1 << q) != 0 {
                self.strikes[q] = 0;
            }
        }
        self.frames_sent += 1;
        f
    }

    /// Data of priority `prio` arrived now: is the upstream ignoring our PAUSE? A strike is data of a
    /// paused priority later than the grace time after the PAUSE (or after the last strike); the PAUSE is
    /// resent until `ignore_limit` strikes, then the upstream is reported.
    #[inline]
    pub fn on_data(&mut self, now: Time, prio: u8, ignore_limit: u32) -> DataCheck {
        let q = prio as usize;
        if self.sent & (1 << prio) == 0 || now <= self.sent_at[q] + self.grace || now <= self.last_strike[q] + self.grace {
            return DataCheck::Fine;
        }
        self.strikes[q] += 1;
        self.last_strike[q] = now;
        if self.strikes[q] >= ignore_limit {
            if self.ignore_reported & (1 << prio) == 0 {
                self.ignore_reported |= 1 << prio;
                DataCheck::Ignoring
            } else {
                DataCheck::Reported
            }
        } else {
            self.sent_at[q] = now;
            DataCheck::Resend(self.send(now, PfcFrame { pause: 1 << prio, unpause: 0 }))
        }
    }
}

/// The egress side of a port: the priorities its peer has paused, and for how long.
#[derive(Debug, Clone)]
pub struct PfcEgress {
    /// Priorities paused (bit p).
    pub paused: u8,
    /// The transmitter ignores PAUSE (a fault).
    pub ignores_pause: bool,
    pub paused_since: [Time; 8],
    pub paused_ps: u64,
    pub paused_prio_ps: [u64; 8],
    /// Pause episodes the watchdog has already reported (bit per priority; cleared on unpause).
    pub watchdog_reported: u8,
    pub frames_received: u64,
}

impl Default for PfcEgress {
    fn default() -> Self {
        PfcEgress {
            paused: 0,
            ignores_pause: false,
            paused_since: [Time::MAX; 8],
            paused_ps: 0,
            paused_prio_ps: [0; 8],
            watchdog_reported: 0,
            frames_received: 0,
        }
    }
}

impl PfcEgress {
    /// Frame `f` takes effect now. Returns how many priorities became paused minus how many resumed.
    pub fn on_frame(&mut self, now: Time, f: PfcFrame) -> i32 {
        self.frames_received += 1;
        let pause = if self.ignores_pause { 0 } else { f.pause };
        let mut delta = 0;
        for q in 0..8 {
            let bit = 1u8 << q;
            if pause & bit != 0 && self.paused & bit == 0 {
                self.paused_since[q] = now;
                delta += 1;
            }
            if f.unpause & bit != 0 && self.paused & bit != 0 {
                self.accrue(now, q);
                self.watchdog_reported &= !bit;
                delta -= 1;
            }
        }
        self.paused = (self.paused | pause) & !f.unpause;
        delta
    }

    fn accrue(&mut self, now: Time, q: usize) {
        let t = (now - self.paused_since[q]).0;
        self.paused_ps += t;
        self.paused_prio_ps[q] += t;
        self.paused_since[q] = Time::MAX;
    }

    /// The link went down: every pause ends now. Returns how many priorities were paused.
    pub fn release_all(&mut self, now: Time) -> u32 {
        let mut n = 0;
        for q in 0..8 {
            if self.paused_since[q] != Time::MAX {
                self.accrue(now, q);
                n += 1;
            }
        }
        self.paused = 0;
        n
    }

    /// The watchdog: priorities paused for `timeout` or longer and not yet reported in this episode, now
    /// marked reported (only the first such priority with `first_only`).
    pub fn overdue(&mut self, now: Time, timeout: Time, first_only: bool) -> u8 {
        let mut hits = 0u8;
        for q in 0..8 {
            let since = self.paused_since[q];
            if since != Time::MAX && now >= since + timeout && self.watchdog_reported & (1 << q) == 0 {
                self.watchdog_reported |= 1 << q;
                hits |= 1 << q;
                if first_only {
                    break;
                }
            }
        }
        hits
    }

    /// Paused time per priority so far (open pauses counted up to `now`).
    pub fn paused_by_prio(&self, now: Time) -> [Time; 8] {
        let mut out = [Time::ZERO; 8];
        for (q, o) in out.iter_mut().enumerate() {
            *o = Time(self.paused_prio_ps[q]);
            if self.paused_since[q] != Time::MAX {
                *o += now.saturating_sub(self.paused_since[q]);
            }
        }
        out
    }

    /// Paused time so far over all priorities (open pauses counted up to `now`).
    pub fn paused_total(&self, now: Time) -> Time {
        Time(self.paused_ps)
            + (0..8).filter(|&q| self.paused_since[q] != Time::MAX).map(|q| now.saturating_sub(self.paused_since[q])).fold(Time::ZERO, |a, b| a + b)
    }
}

/// PFC state of one port: both sides (cache-line aligned, the ingress's hot fields first).
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
pub struct PfcPort {
    pub ingress: PfcIngress,
    pub egress: PfcEgress,
}

const _: () = assert!(std::mem::offset_of!(PfcPort, ingress) == 0 && std::mem::offset_of!(PfcIngress, stop_delay) + 8 <= 64);

#[cfg(test)]
mod tests {
    use super::*;

    fn params(priorities: u8) -> PfcParams {
        PfcParams {
            eight_first: false,
            pause_threshold: None,
            unpause_threshold: None,
            reaction_time: None,
            watchdog_timeout: Time::from_ms(10),
            watchdog_action: WatchdogAction::Report,
            ignore_limit: 3,
            deadlock_check: Time::ZERO,
            priorities,
        }
    }
    fn gbe(buffer: u64) -> LinkView {
        LinkView { rate: Rate(1_000_000_000), delay: Time(5_476_000), forwarding_delay: Time::ZERO, max_frame: 1530, pfc_frame: 72, buffer, parts: 1 }
    }
    fn ingress(pause: u64, unpause: u64, mask: u8) -> PfcIngress {
        let mut i = PfcIngress::default();
        i.install(mask, Thresholds { pause, unpause, stop_delay: Time(1000), grace: Time(5000), lossy_limit: 0 });
        i
    }
    fn bytes(b: &[(usize, u32)]) -> [u32; 8] {
        let mut out = [0; 8];
        for &(q, v) in b {
            out[q] = v;
        }
        out
    }

    #[test]
    fn the_paper_thresholds_at_1gbe_with_128kb_buffers() {
        let t = derive(&params(0xff), gbe(128 * 1024), "h->s").unwrap();
        // the paper's 36.456 us window carries 4557 B; pause is the midpoint of [4557, (128 KB - 8 x 4557) / 8]
        assert_eq!((t.unpause, t.pause), (4557, 8192));
        assert_eq!(t.lossy_limit, 128 * 1024, "all priorities lossless: no lossy share");
        // one lossless priority: the lossy ones keep what its headroom leaves
        let one = derive(&params(0b1), gbe(128 * 1024), "h->s").unwrap();
        assert_eq!(one.lossy_limit, 128 * 1024 - (one.pause + 1530 + 4557));
    }

    #[test]
    fn a_buffer_too_small_for_lossless_pfc_is_refused_with_the_numbers() {
        let e = derive(&params(0xff), gbe(16 * 1024), "h3->sw").unwrap_err();
        assert_eq!(e.param, None, "the buffer, not a threshold");
        assert!(e.msg.contains("h3->sw") && e.msg.contains("too small"), "{}", e.msg);
    }

    #[test]
    fn an_ingress_split_in_eighths_sizes_the_thresholds_for_eight_or_refuses() {
        // at 1 Gbps: the paper's thresholds, sized for eight (each in an eighth of 128 KB), where a shared
        // ingress sized for the two lossless priorities alone pauses four times later
        let split = derive(&params(0b11), LinkView { parts: 8, ..gbe(128 * 1024) }, "h->s").unwrap();
        assert_eq!((split.pause, derive(&params(0b11), gbe(128 * 1024), "h->s").unwrap().pause), (8192, 32768));
        assert!(split.pause + 1530 + 4557 <= 128 * 1024 / 8);
        // at 10 Gbps two lossless priorities fit the whole 128 KB, not an eighth of it each
        let fast = LinkView { rate: Rate(10_000_000_000), ..gbe(128 * 1024) };
        let t = derive(&params(0b11), fast, "h->s").unwrap();
        assert!(t.pause + 1530 > 128 * 1024 / 8, "sized for two, each beyond an eighth");
        let e = derive(&params(0b11), LinkView { parts: 8, ..fast }, "h->s").unwrap_err();
        assert!(e.param.is_none() && e.msg.contains("too small") && e.msg.contains("scheme.ingress_sharing"), "{}", e.msg);
    }

    #[test]
    fn pause_above_the_threshold_unpause_below_the_other_per_drain_bytes() {
        let mut i = ingress(8000, 4000, 0b11);
        let t = Time(100);
        assert_eq!(i.on_occupancy(t, &bytes(&[(1, 8000)])), None, "at the threshold, not above");
        // priority 1's drain bytes count priority 0's too
        assert_eq!(i.on_occupancy(t, &bytes(&[(0, 100), (1, 7950)])), Some(PfcFrame { pause: 0b10, unpause: 0 }));
        assert_eq!(i.sent, 0b10);
        assert_eq!(i.on_occupancy(t, &bytes(&[(0, 100), (1, 7950)])), None, "already paused: no second frame");
        assert_eq!(i.on_occupancy(t, &bytes(&[(1, 4000)])), None, "at the unpause threshold, not below");
        assert_eq!(i.on_occupancy(Time(200), &bytes(&[(1, 3999)])), Some(PfcFrame { pause: 0, unpause: 0b10 }));
        // lossy priority 2 never pauses
        assert_eq!(i.on_occupancy(t, &bytes(&[(2, 1 << 20)])), None);
        assert_eq!((i.frames_sent, i.pauses_sent[1]), (2, 1));
        assert!(i.lossy(2) && !i.lossy(1));
    }

    #[test]
    fn data_after_the_grace_time_is_a_strike_then_a_report() {
        let mut i = ingress(8000, 4000, 0b1);
        i.on_occupancy(Time(0), &bytes(&[(0, 9000)]));
        assert_eq!(i.on_data(Time(5000), 0, 3), DataCheck::Fine, "within the grace time");
        assert_eq!(i.on_data(Time(5001), 0, 3), DataCheck::Resend(PfcFrame { pause: 1, unpause: 0 }));
        assert_eq!(i.on_data(Time(9000), 0, 3), DataCheck::Fine, "grace restarts with the resend");
        assert_eq!(i.on_data(Time(10_002), 0, 3), DataCheck::Resend(PfcFrame { pause: 1, unpause: 0 }));
        assert_eq!(i.on_data(Time(15_003), 0, 3), DataCheck::Ignoring);
        assert_eq!(i.on_data(Time(20_004), 0, 3), DataCheck::Reported);
        assert_eq!(i.on_data(Time(99_999), 1, 3), DataCheck::Fine, "priority 1 was never paused");
    }

    #[test]
    fn the_egress_obeys_and_accounts_paused_time_per_priority() {
        let mut e = PfcEgress::default();
        assert_eq!(e.on_frame(Time(100), PfcFrame { pause: 0b101, unpause: 0 }), 2);
        assert_eq!(e.paused, 0b101);
        assert_eq!(e.on_frame(Time(150), PfcFrame { pause: 0b1, unpause: 0 }), 0, "a repeated PAUSE changes nothing");
        assert_eq!(e.on_frame(Time(400), PfcFrame { pause: 0, unpause: 0b1 }), -1);
        assert_eq!(e.paused_by_prio(Time(1000))[..3], [Time(300), Time::ZERO, Time(900)]);
        assert_eq!(e.paused_total(Time(1000)), Time(1200));
        // the watchdog reports priority 2 once per episode
        assert_eq!(e.overdue(Time(1000), Time(500), false), 0b100);
        assert_eq!(e.overdue(Time(2000), Time(500), false), 0);
        // a link that goes down ends the pause
        assert_eq!(e.release_all(Time(1100)), 1);
        assert_eq!((e.paused, e.paused_total(Time(5000))), (0, Time(1300)));
        // a transmitter that ignores PAUSE still takes UNPAUSE
        let mut bad = PfcEgress { ignores_pause: true, ..Default::default() };
        assert_eq!(bad.on_frame(Time(0), PfcFrame { pause: 0xff, unpause: 0 }), 0);
        assert_eq!((bad.paused, bad.frames_received), (0, 1));
    }
}
