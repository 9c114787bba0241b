//! Every `[scheme]` knob declared once: its schema field, how it overrides the preset (with its check),
//! how its value reads in the scenario reference, and its row there (unit and meaning). The tables in
//! docs/scenarios.md are generated from `knob_table` (`detailsim reference --update-docs`; a test keeps
//! them in sync), with each knob's default per preset read from the presets themselves.
//!
//! A knob is one line of a `knobs!` block: `name: SchemaType, "unit", |s, v| { apply to the Scheme s },
//! |s| the value as the reference shows it, "meaning";`. An `apply` returns `Err(message)` through
//! `check`; the error names the knob's dotted key. Checks that relate two knobs (`t2` at least `t1`, the
//! unpause threshold below the pause threshold, ...) run after every knob is applied
//! (`SchemeConfig::resolve`).

use super::*;
use crate::units::{Bytes, Dur};
use detailsim_engine::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// One knob of the scenario reference.
pub struct Knob {
    /// The dotted key, e.g. `scheme.tcp.mss`.
    pub key: &'static str,
    /// The unit or values column.
    pub unit: &'static str,
    pub meaning: &'static str,
    /// The value a scheme has, as the reference shows it (in backticks, or words such as "none").
    pub shown: fn(&Scheme) -> String,
}

macro_rules! knobs {
    (
        $(#[$sm:meta])*
        pub struct $name:ident ($prefix:literal, $table:ident) { $($extra:tt)* }
        knobs {
            $( $field:ident : $ty:ty, $unit:literal, |$s:ident, $v:ident| $apply:block, |$d:ident| $shown:expr, $meaning:literal; )*
        }
    ) => {
        $(#[$sm])*
        pub struct $name {
            $($extra)*
            $( pub $field: Option<$ty>, )*
        }

        impl $name {
            /// Apply the knobs the scenario sets to `s`, each checked (the error names its key).
            pub fn apply(&self, s: &mut Scheme) -> Result<(), ConfigError> {
                $(
                    if let Some(v) = self.$field.clone() {
                        let f = |$s: &mut Scheme, $v: $ty| -> Result<(), String> {
                            $apply
                            #[allow(unreachable_code)]
                            Ok(())
                        };
                        f(s, v).map_err(|msg| ConfigError { field: concat!($prefix, stringify!($field)).into(), msg })?;
                    }
                )*
                Ok(())
            }
        }

        /// The reference rows of these knobs, in order.
        pub const $table: &[Knob] = &[
            $( Knob { key: concat!($prefix, stringify!($field)), unit: $unit, meaning: $meaning, shown: |$d: &Scheme| $shown }, )*
        ];
    };
}

/// `SchemeConfig` from the list of its knob sub-tables and the `[scheme]` table's own knobs: the struct
/// (the sub-tables as fields, `[scheme.pias]`, which resolves through its component, beside them), `apply_tables` (each sub-table's knobs, in the list's order) and `TABLES` (every knob table
/// the reference shows, `[scheme]`'s first).
macro_rules! scheme_config {
    (
        $(#[$doc:meta])*
        tables { $( $f:ident : $t:ty, $tbl:ident; )* }
        knobs { $($k:tt)* }
    ) => {
        knobs! {
            #[derive(Deserialize, Debug, Clone)]
            #[serde(deny_unknown_fields)]
            pub struct SchemeConfig ("scheme.", SCHEME_KNOBS) {
                #[serde(default = "d_preset")]
                pub preset: String,
                $( #[serde(default)] pub $f: $t, )*
                /// `[scheme.pias]`: how the PIAS presets' demotion thresholds are chosen (resolved by the core into
                /// `scheme.tcp.mlfq_thresholds`; ignored by other presets, so a sweep may cross pias with dctcp).
                pub pias: Option<PiasOverrides>,
            }
            knobs { $($k)* }
        }

        impl SchemeConfig {
            /// Apply every sub-table's knobs to `s`, in the declared order (each checked; the error names its key).
            pub(crate) fn apply_tables(&self, s: &mut Scheme) -> Result<(), ConfigError> {
                $( self.$f.apply(s)?; )*
                Ok(())
            }
        }

        /// Every knob table of the reference, `[scheme]`'s first, then the sub-tables in their order.
        pub const TABLES: &[&[Knob]] = &[SCHEME_KNOBS, $($tbl),*];
    };
}

fn check(ok: bool, msg: impl Into<String>) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg.into())
    }
}

/// A value in (0, 1] (a probability, a gain, an EWMA weight).
pub(crate) fn fraction(v: f64) -> Result<(), String> {
    check(v > 0.0 && v <= 1.0, format!("must be in (0, 1], got {v}"))
}

fn mask_of(v: &[u8]) -> u8 {
    v.iter().fold(0u8, |m, &p| m | (1 << p))
}

/// A size as a scenario writes it: `"64KB"` when a whole number of KB or MB, else bytes.
pub(crate) fn size(b: u64) -> String {
    match b {
        0 => "`0`".into(),
        u64::MAX => "`\"inf\"`".into(),
        _ if b.is_multiple_of(1 << 20) => format!("`\"{}MB\"`", b >> 20),
        _ if b.is_multiple_of(1024) => format!("`\"{}KB\"`", b >> 10),
        _ => format!("`{b}`"),
    }
}

/// A duration in the largest unit that holds it whole.
pub(crate) fn dur(t: Time) -> String {
    let ps = t.0;
    for (unit, per) in [("s", 1_000_000_000_000u64), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)] {
        if ps >= per && ps.is_multiple_of(per) {
            return format!("`\"{}{unit}\"`", ps / per);
        }
    }
    if ps == 0 {
        "`\"0s\"`".into()
    } else {
        format!("`\"{}ns\"`", ps as f64 / 1000.0)
    }
}

fn flag(b: bool) -> String {
    format!("`{b}`")
}

fn num(x: impl std::fmt::Display) -> String {
    format!("`{x}`")
}

/// An enum value by its scenario name.
fn en(v: impl Serialize) -> String {
    format!("`{}`", serde_json::to_value(v).ok().and_then(|j| j.as_str().map(String::from)).unwrap_or_default())
}

fn opt(v: Option<String>, none: &str) -> String {
    v.unwrap_or_else(|| none.into())
}

fn list(v: &[u64], none: &str) -> String {
    if v.is_empty() {
        none.into()
    } else {
        format!("`[{}]`", v.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", "))
    }
}

fn mask(m: u8, all: &str) -> String {
    if m == 0xff {
        all.into()
    } else {
        format!("`[{}]`", (0..8).filter(|p| m & (1 << p) != 0).map(|p| p.to_string()).collect::<Vec<_>>().join(", "))
    }
}

scheme_config! {
    /// The `[scheme]` table's sub-tables whose knobs are declared in a `knobs!` block: the field, its
    /// overrides type and its reference table. A new `[scheme.X]` is one line here, its `knobs!` block
    /// below, and its component's parameters: the field, the order its knobs apply in (this list's), and
    /// its table in the reference (docs/scenarios.md, generated) follow from it.
    tables {
        tcp: TcpOverrides, TCP_KNOBS;
        pfc: PfcOverrides, PFC_KNOBS;
        alb: AlbOverrides, ALB_KNOBS;
        dibs: DibsOverrides, DIBS_KNOBS;
        dcqcn: DcqcnOverrides, DCQCN_KNOBS;
        hpcc: HpccOverrides, HPCC_KNOBS;
        timely: TimelyOverrides, TIMELY_KNOBS;
        red: RedOverrides, RED_KNOBS;
    }
    knobs {
        load_balancing: LoadBalancing, r##"`flow_hash`, `packet_scatter`, `adaptive`"##,
            |s, v| { s.load_balancing = v; },
            |s| en(s.load_balancing),
            r##"`flow_hash`: ECMP on the 5-tuple hash with a per-switch salt; `packet_scatter`: uniformly random acceptable port per packet; `adaptive`: DeTail's ALB (see `[scheme.alb]`)"##;
        flow_control: FlowControl, r##"`tail_drop`, `pfc`"##,
            |s, v| { s.flow_control = v; },
            |s| en(s.flow_control),
            r##"`tail_drop`: a full ingress buffer drops the arriving packet; `pfc`: priority flow control (see `[scheme.pfc]`)"##;
        ecn_marking: EcnMarking, r##"`none`, `per_queue`, `per_port`, `red`"##,
            |s, v| { s.ecn_marking = v; },
            |s| en(s.ecn_marking),
            r##"marking at every switch egress and host NIC enqueue: CE when the packet's priority queue (`per_queue`) or the whole port (`per_port`) already holds more than `ecn_threshold`; `red`: Random Early Detection on the port (`[scheme.red]`), which marks ECN-capable packets and drops the others (`red` drops; a host NIC only marks)"##;
        ecn_threshold: Bytes, r##"size"##,
            |s, v| { s.ecn_threshold = v.0; },
            |s| size(s.ecn_threshold),
            r##"switch marking threshold K"##;
        source_ecn: bool, r##"bool"##,
            |s, v| { s.source_ecn = v; },
            |s| flag(s.source_ecn),
            r##"DeTail's source ECN: a host marks CE on a packet entering its NIC queue while the NIC's drain-byte counter for the packet's priority exceeds `source_ecn_threshold` (the transport must have `tcp.ecn` on to react)"##;
        source_ecn_threshold: Bytes, r##"size"##,
            |s, v| { s.source_ecn_threshold = v.0; },
            |s| size(s.source_ecn_threshold),
            r##""##;
        scheduling: Scheduling, r##"`strict_priority`, `las`, `pfabric`"##,
            |s, v| { s.scheduling = v; },
            |s| en(s.scheduling),
            r##"`las`: every switch egress queue and host NIC sends the packet whose flow had sent the fewest bytes before it (the earliest queued on ties); ingress queues stay FIFO per priority. `pfabric`: a data packet's rank is its flow's unacknowledged bytes when it was sent (ACKs and SYNs rank 0); every egress queue and NIC finds the lowest-rank packet and sends the earliest queued packet of that packet's flow (so a flow's packets leave in order); when a switch egress queue cannot take an arrival it evicts its highest-rank packet (the latest queued on ties) if that ranks strictly worse than the arrival, repeatedly, and otherwise drops the arrival (`priority` drops). Neither is combinable with PFC"##;
        priority_eviction: bool, r##"bool"##,
            |s, v| { s.priority_eviction = v; },
            |s| flag(s.priority_eviction),
            r##"when a switch ingress buffer cannot take an arriving packet, drop the most recently queued packets of the lowest priority below the arrival's (`priority` drops) until it fits; only then drop the arrival. Protects high-priority traffic from low-priority traffic that fills the shared per-port buffer. Acts only where a buffer overflows: under PFC (pauses stop senders first) it changes nothing, so a scenario can set it for its tail-drop baseline and still run DeTail. Not a reading of the DeTail paper's text (docs/model.md: no sentence describes it): a knob for demonstrations, which the DeTail paper scenarios leave off. Needs `ingress_sharing = "shared"`"##;
        egress_sharing: BufferSharing, r##"`shared`, `whole_per_priority`, `eighths`, `in_use`"##,
            |s, v| { s.egress_sharing = v; },
            |s| en(s.egress_sharing),
            r##"how a switch port's egress buffer is shared among the eight priorities (strict priority serves them either way). `shared`: one space, any priority may fill it (a priority paused downstream can then keep the others from crossing the crossbar). `whole_per_priority`: each priority has the port's whole egress buffer to itself (eight times the port's bytes in all). `eighths`: the buffer in eight equal parts, one per priority. `in_use`: the buffer in equal parts among the priorities the scenario's packets carry (two parts for retrievals and background). In the split readings all priorities together still hold at most the buffer. Per-port (CIOQ) buffers only: with `[topology.shared_buffer]` the pool's thresholds decide and this has no effect. The DeTail paper's reading: docs/model.md"##;
        ingress_sharing: BufferSharing, r##"`shared`, `whole_per_priority`, `eighths`, `in_use`"##,
            |s, v| { s.ingress_sharing = v; },
            |s| en(s.ingress_sharing),
            r##"how a switch port's ingress buffer is shared among the priorities, as `egress_sharing` (a full part drops the arrival). Under PFC the derived thresholds are sized for at least as many priorities as there are parts, so a lossless priority pauses before its part is full; where one part cannot hold the pause threshold and the bytes in flight (with `eighths` and 128 KB, at 10 Gbps: the lossless matrix in docs/validation.md) the run is refused with the buffer it needs. `priority_eviction` needs `shared`. The DeTail paper's reading (`eighths`, 000:283): docs/model.md"##;
        queue_limit_bdp: f64, r##"number > 0"##,
            |s, v| { check(v > 0.0 && v.is_finite(), format!("must be a positive number of bandwidth-delay products, got {v}"))?; s.queue_limit_bdp = Some(v); s.queue_limit = None; },
            |s| opt(s.queue_limit_bdp.map(num), "none"),
            r##"cap every switch egress queue at this many times the fabric's bandwidth-delay product: the largest, over the paths from the first host to the others, of the path's bottleneck rate × its base RTT (a full segment out, a bare ACK back, idle fabric). The result is in the summary as `fabric.queue_limit_bytes` beside `fabric.bdp_bytes` and `fabric.base_rtt_s`"##;
        queue_limit: Bytes, r##"size"##,
            |s, v| { check(v.0 > 0, "must be positive")?; s.queue_limit = Some(v.0); s.queue_limit_bdp = None; },
            |s| opt(s.queue_limit.map(size), "none"),
            r##"cap every switch egress queue at this many bytes (below the port's egress buffer); wins over `queue_limit_bdp` when both are set"##;
    }
}

knobs! {
    /// `[scheme.tcp]`: TCP knobs over the preset's transport.
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct TcpOverrides ("scheme.tcp.", TCP_KNOBS) {}
    knobs {
        mss: Bytes, r##"size"##,
            |s, v| { check((64..=9000).contains(&v.0), "must be between 64B and 9000B")?; s.tcp.mss = v.0 as u32; },
            |s| size(s.tcp.mss as u64),
            r##"maximum segment size (MSS + 40 B of headers must fit the MTU)"##;
        initial_window: u32, r##"segments"##,
            |s, v| { check((1..=1_000_000).contains(&v), format!("must be 1 to 1000000 segments, got {v}"))?; s.tcp.initial_window = v; },
            |s| num(s.tcp.initial_window),
            r##"initial congestion window"##;
        rwnd: Bytes, r##"size"##,
            |s, v| { check(v.0 >= s.tcp.mss as u64, "must be at least one MSS")?; s.tcp.rwnd = v.0; },
            |s| size(s.tcp.rwnd),
            r##"the receiver's advertised window: bytes in flight never exceed min(cwnd, rwnd). 128 KB is ns-3's default receive buffer (the DeTail paper's simulator); `dcqcn` has no window (`"inf"`)"##;
        handshake: bool, r##"bool"##,
            |s, v| { s.tcp.handshake = v; },
            |s| flag(s.tcp.handshake),
            r##"SYN / SYN-ACK before the first data segment of a connection (persistent connections otherwise). A retrieval (and the `cdf` workload's client/server pattern) is one connection: the request opens it and the response travels back on it, on the request's ports, with no second handshake"##;
        fast_retransmit: bool, r##"bool"##,
            |s, v| { s.tcp.fast_retransmit = v; },
            |s| flag(s.tcp.fast_retransmit),
            r##"fast retransmit and NewReno fast recovery on `dupack_threshold` duplicate ACKs; off, duplicate ACKs are ignored (reorder-resistant)"##;
        dupack_threshold: u32, r##"integer"##,
            |s, v| { check(v >= 1, "must be at least 1")?; s.tcp.dupack_threshold = v; },
            |s| num(s.tcp.dupack_threshold),
            r##""##;
        rto_min: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be positive")?; s.tcp.rto_min = v.0; },
            |s| dur(s.tcp.rto_min),
            r##"minimum retransmission timeout (RFC 6298 estimator above it)"##;
        rto_initial: Dur, r##"duration"##,
            |s, v| { s.tcp.rto_initial = v.0; },
            |s| dur(s.tcp.rto_initial),
            r##"RTO before the first RTT sample; follows `rto_min` when only that is set"##;
        rto_max: Dur, r##"duration"##,
            |s, v| { s.tcp.rto_max = v.0; },
            |s| dur(s.tcp.rto_max),
            r##"cap of the exponential back-off"##;
        rto_formula: RtoFormula, r##"`rfc6298`, `linux`"##,
            |s, v| { s.tcp.rto_formula = v; },
            |s| en(s.tcp.rto_formula),
            r##"how the RTO follows the RTT estimate: `rfc6298` (and ns-3) RTO = max(`rto_min`, SRTT + 4 RTTVAR); `linux` (`tcp_set_rto`) RTO = SRTT + max(`rto_min`, 4 RTTVAR), the floor applied to the variance term, so the timeout is never below SRTT + `rto_min`"##;
        delayed_ack: bool, r##"bool"##,
            |s, v| { s.tcp.delayed_ack = v; },
            |s| flag(s.tcp.delayed_ack),
            r##"ACK every second segment or after `delayed_ack_timeout`; out-of-order data is acknowledged at once"##;
        delayed_ack_timeout: Dur, r##"duration"##,
            |s, v| { s.tcp.delayed_ack_timeout = v.0; },
            |s| dur(s.tcp.delayed_ack_timeout),
            r##"how long a lone segment's ACK is held (`delayed_ack` only: the presets built on DCTCP, `dctcp`, `dibs`, `pias`, `las`, `l2dct`). Our choice, no paper states one: below the base RTTs the PIAS paper reports ("The base round-trip time (RTT) of our testbed is around 100us", ../shared/papers/003_5c3f0d64251b88f8.txt:239; "85.2µs" across its simulated spine, line 354), so a held ACK delays a flow's last round trip by less than one base RTT. Linux holds it much longer (its minimum, `TCP_DELACK_MIN`, is 40 ms; `quickack` mode and the 200 ms maximum aside), which at datacenter RTTs stalls a flow whose last window is one segment; set `"40ms"` to model that"##;
        congestion_control: CongestionControl, r##"`new_reno`, `dctcp`, `l2dct`, `pfabric`, `dcqcn`, `hpcc`, `timely`"##,
            |s, v| { s.tcp.cc = v; },
            |s| en(s.tcp.cc),
            r##"L2DCT: DCTCP's α and echo, but the cut is α^w / 2 and the congestion-avoidance increase w / 2.5 segments per RTT, with the weight w = 2.5 until the flow has sent 200 segments, then falling linearly to 0.125 at 1000 segments (the L2DCT authors' values). pFabric: the window changes only on a timeout (to one segment, then slow start); three duplicate ACKs resend the missing segment without a cut; no ECN reaction; the window never exceeds the path BDP; after 5 timeouts in a row the flow enters pFabric's probe mode: each timeout sends one header-only segment, and the first ACK ends probe mode and restarts from one segment. DCTCP: the sender keeps α ← (1 − g) α + g F (F the fraction of bytes acknowledged with ECE in the last window, α starts at 1) and cuts the window by α/2 once per window; the receiver echoes the CE state exactly, sending an ACK at once when it changes while an ACK is held back (the DCTCP delayed-ACK state machine) DCQCN (RoCEv2, `transport/cc/dcqcn.rs`): no window and no slow start; each flow's rate limiter starts at its NIC's line rate and spaces segments by their wire time at its rate, which DCQCN's reaction point sets (alpha, rate decrease on a CNP, fast recovery, additive and hyper increase on its timer, and on its byte counter if set); the receiver acknowledges every segment in order, discards one out of order and sends a NACK (once per 500 µs for the same point) that makes the sender go back to it (go-back-N), and answers CE with a CNP (ECE on the ACK) at most once per 50 µs; the retransmission timer remains as a last resort. The `dcqcn` preset takes the HPCC simulator's DCQCN settings (alpha every 1 µs, decrease check every 4 µs, increase timer 300 µs, g = 1/256, one fast recovery step, +5 / +50 Mb/s, minimum rate 1 Gb/s; RED marking from 100 to 400 KB with p 0.2 on the instantaneous queue; PFC), tuned for 25 Gbps NICs. HPCC (`transport/cc/hpcc.rs`): RoCE's reliability as DCQCN's, and a window from in-band telemetry: every switch egress a data packet leaves appends its queue length, bytes sent, time and line rate (up to five hops), the receiver echoes them in the ACK, and the sender computes each hop's utilisation (queue / (rate x T) + transmit rate / rate, T the flow's base RTT), keeps the largest in an EWMA over T, and sets W = W_c / (U / 0.95) + W_AI when U reaches 0.95 or after 5 additive steps, else W_c + W_AI, updating the reference W_c once per RTT; segments are paced at W / T and the flow starts at its path's BDP (W_AI = 40 Mb/s x T, the HPCC simulator's `run.py` for 100 Gbps NICs; eta 0.95 and maxStage 5 its `rdma-hw.cc` defaults). TIMELY (`transport/cc/timely.rs`, see `[scheme.timely]`): RoCE's reliability as DCQCN's, and a rate from the RTT's gradient (TIMELY's Algorithm 1), updated once per RTT and starting at the line rate; no ECN reaction"##;
        dctcp_g: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.dctcp.g = v; },
            |s| num(s.tcp.dctcp.g),
            r##"DCTCP's gain g"##;
        line_rate_start: bool, r##"bool"##,
            |s, v| { s.tcp.line_rate_start = v; },
            |s| flag(s.tcp.line_rate_start),
            r##"start every flow at line rate: the initial window is its path's bandwidth-delay product (bottleneck rate × base RTT, rounded up to whole segments), overriding `initial_window`"##;
        rto_rtts: f64, r##"number ≥ 0"##,
            |s, v| { check(v >= 0.0 && v.is_finite(), format!("must be 0 (off) or a positive number of base RTTs, got {v}"))?; s.tcp.rto_rtts = v; },
            |s| num(s.tcp.rto_rtts),
            r##"when positive, the minimum and initial RTO of every flow are this many base RTTs of its path, overriding `rto_min` and `rto_initial`"##;
        mlfq_thresholds: Vec<Bytes>, r##"list of sizes (≤ 7, non-decreasing)"##,
            |s, v| { let m: Vec<u64> = v.iter().map(|b| b.0).collect(); check(m.len() <= 7, "at most 7 thresholds (8 priorities)")?; check(m.windows(2).all(|w| w[1] >= w[0]), "must be non-decreasing")?; s.tcp.mlfq = m; },
            |s| list(&s.tcp.mlfq, "none"),
            r##"PIAS tagging: a flow's packets carry its priority plus the number of thresholds its bytes sent have reached (demotion only; reset after two consecutive timeouts). PIAS's idle reset is for persistent connections that carry many messages; here every message (flow, request, response) is its own transfer whose counter starts at zero, which is what the idle reset approximates, so there is no idle timer. `[scheme.pias]` fills it"##;
        spurious_rto_undo: bool, r##"bool"##,
            |s, v| { s.tcp.spurious_rto_undo = v; },
            |s| flag(s.tcp.spurious_rto_undo),
            r##"detect spurious timeouts and undo them, as Linux does by default (Eifel: RFC 3522 detection, RFC 4015 response): the first ACK of new data after a timeout echoes the timestamp of the transmission that reached the receiver; when that is older than the timer's retransmission, the segment was delayed, not lost, and the sender restores its window and threshold and goes on after the highest byte sent instead of sending the window again. Counted in the summary's `spurious_timeouts` (and in `timeouts`)"##;
        retransmissions: bool, r##"bool"##,
            |s, v| { s.tcp.retransmissions = v; },
            |s| flag(s.tcp.retransmissions),
            r##"off: no retransmission timer and no fast retransmit — for the paper's Section 3.3 study with infinite buffers (`buffer = "inf"`), where nothing is lost"##;
        ecn: bool, r##"bool"##,
            |s, v| { s.tcp.ecn = v; },
            |s| flag(s.tcp.ecn),
            r##"ECN-capable transport: data is sent ECT, the receiver echoes CE (ECE until CWR), the sender halves its window once per window of data"##;
    }
}

knobs! {
    /// `[scheme.pfc]`.
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct PfcOverrides ("scheme.pfc.", PFC_KNOBS) {
        /// Set by `parse_scenario` when `priorities` was left out and filled with the workloads' own.
        #[serde(skip)]
        pub from_workloads: bool,
    }
    knobs {
        pause_threshold: Bytes, r##"size"##,
            |s, v| { s.pfc.pause_threshold = Some(v.0); },
            |s| opt(s.pfc.pause_threshold.map(size), "derived per port"),
            r##"PAUSE above this"##;
        unpause_threshold: Bytes, r##"size"##,
            |s, v| { s.pfc.unpause_threshold = Some(v.0); },
            |s| opt(s.pfc.unpause_threshold.map(size), "derived per port"),
            r##"UNPAUSE below this"##;
        reaction_time: Dur, r##"duration"##,
            |s, v| { s.pfc.reaction_time = Some(v.0); },
            |s| opt(s.pfc.reaction_time.map(dur), "derived per link"),
            r##"worst-case window from generating a PAUSE until the last byte the upstream may still send has arrived: 2 maximum frames + one PFC frame (`topology.min_frame`, 72 B) + 2 link delays + 0.448 µs processing; 36.456 µs at 1 Gbps with 5.476 µs links, as in the paper (000_76fdfa378bc5f2cf.txt:283; the processing time is what the paper's total leaves)"##;
        watchdog_timeout: Dur, r##"duration ≥ 1 ns"##,
            |s, v| { check(v.0 >= Time::from_ns(1), "must be at least 1ns")?; s.pfc.watchdog_timeout = v.0; },
            |s| dur(s.pfc.watchdog_timeout),
            r##"a switch egress paused for one priority longer than this is reported (`paused_too_long`)"##;
        watchdog_action: WatchdogAction, r##"`report`, `shutdown`"##,
            |s, v| { s.pfc.watchdog_action = v; },
            |s| en(s.pfc.watchdog_action),
            r##"`shutdown` also shuts the link down (one per watchdog sweep) and routing excludes it"##;
        ignore_limit: u32, r##"integer"##,
            |s, v| { check(v >= 1, "must be at least 1")?; s.pfc.ignore_limit = v; },
            |s| num(s.pfc.ignore_limit),
            r##"a neighbour that keeps sending a paused priority after the reaction window is re-sent PAUSE; after this many strikes it is reported (`ignores_pause`) and, with `shutdown`, its link shut down"##;
        priorities: Vec<u8>, r##"list of 0..7"##,
            |s, v| { check(!v.is_empty() && v.iter().all(|&p| p <= 7), "a non-empty list of priorities 0..7")?; s.pfc.priorities = mask_of(&v); },
            |s| mask(s.pfc.priorities, "the workloads' own"),
            r##"the lossless priorities. Left out, they are the priorities the scenario's workloads use (each workload's `priority`, a flow list's rows, and under MLFQ tagging the levels a flow is demoted to), and the thresholds are derived as the DeTail paper derives them, for eight priorities (it leaves the pause threshold "unmodified" when fewer are used, ../shared/papers/000_76fdfa378bc5f2cf.txt:287), where the buffer holds eight, else for those in use. The others are lossy: they get no PAUSE and may use only the ingress buffer left after the lossless priorities' headroom (n × (pause + one frame + reaction bytes + forwarding bytes)); with a list given, the derivation below uses n = the number of lossless priorities instead of 8"##;
        deadlock_check: Dur, r##"duration ≥ 1 ns, or `"0s"`"##,
            |s, v| { check(v.0 == Time::ZERO || v.0 >= Time::from_ns(1), "must be at least 1ns (or \"0s\": off)")?; s.pfc.deadlock_check = v.0; },
            |s| dur(s.pfc.deadlock_check),
            r##"period of the check for a cycle of egress ports each paused by the next (a PFC deadlock); a cycle present in two consecutive checks is reported once with its ports; `"0s"` turns it off"##;
    }
}

knobs! {
    /// `[scheme.alb]`.
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct AlbOverrides ("scheme.alb.", ALB_KNOBS) {}
    knobs {
        t1: Bytes, r##"size"##,
            |s, v| { s.alb.t1 = v.0; },
            |s| size(s.alb.t1),
            r##"first threshold"##;
        t2: Bytes, r##"size"##,
            |s, v| { s.alb.t2 = v.0; },
            |s| size(s.alb.t2),
            r##"second threshold (at least `t1`)"##;
        choice: AlbChoice, r##"`random`, `round_robin`"##,
            |s, v| { s.alb.choice = v; },
            |s| en(s.alb.choice),
            r##"how to pick among the selected ports (round robin: a per-switch pointer)"##;
    }
}

knobs! {
    /// `[scheme.dibs]`.
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct DibsOverrides ("scheme.dibs.", DIBS_KNOBS) {}
    knobs {
        enabled: bool, r##"bool"##,
            |s, v| { s.dibs.enabled = v; },
            |s| flag(s.dibs.enabled),
            r##""##;
        threshold: Bytes, r##"size"##,
            |s, v| { s.dibs.threshold = Some(v.0); },
            |s| opt(s.dibs.threshold.map(size), "none"),
            r##"also detour when the chosen egress queue would hold more than this (shared-buffer variant)"##;
        max_detours: u32, r##"integer"##,
            |s, v| { s.dibs.max_detours = Some(v); },
            |s| opt(s.dibs.max_detours.map(num), "none"),
            r##"a packet detoured this many times is dropped (`detour_limit` drops)"##;
        probability: f64, r##"0..1"##,
            |s, v| { check((0.0..=1.0).contains(&v), format!("must be within 0..1, got {v}"))?; s.dibs.probability = v; },
            |s| num(s.dibs.probability),
            r##"detour an eligible packet with this probability (otherwise it takes its normal path)"##;
        priorities: Vec<u8>, r##"list of 0..7"##,
            |s, v| { check(v.iter().all(|&p| p <= 7), "priorities are 0..7")?; s.dibs.priorities = mask_of(&v); },
            |s| mask(s.dibs.priorities, "all"),
            r##"priorities allowed to detour (priority-aware detouring)"##;
    }
}

knobs! {
    /// `[scheme.dcqcn]` (with `tcp.congestion_control = "dcqcn"`).
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct DcqcnOverrides ("scheme.dcqcn.", DCQCN_KNOBS) {}
    knobs {
        g: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.dcqcn.g = v; },
            |s| num(s.tcp.dcqcn.g),
            r##"EWMA gain of alpha (the HPCC simulator's `EwmaGain`; its `run.py` uses 1/256)"##;
        rate_ai: crate::units::RateV, r##"rate"##,
            |s, v| { s.tcp.dcqcn.rate_ai = v.0.0 as f64; },
            |s| rate_str(s.tcp.dcqcn.rate_ai),
            r##"additive increase step of the target rate (`RateAI`)"##;
        rate_hai: crate::units::RateV, r##"rate"##,
            |s, v| { s.tcp.dcqcn.rate_hai = v.0.0 as f64; },
            |s| rate_str(s.tcp.dcqcn.rate_hai),
            r##"hyper increase step (`RateHAI`)"##;
        min_rate: crate::units::RateV, r##"rate"##,
            |s, v| { check(v.0.0 > 0, "must be above 0")?; s.tcp.dcqcn.min_rate = v.0.0 as f64; },
            |s| rate_str(s.tcp.dcqcn.min_rate),
            r##"the rate never falls below this (`MinRate`)"##;
        alpha_interval: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be above 0")?; s.tcp.dcqcn.alpha_interval = v.0; },
            |s| dur(s.tcp.dcqcn.alpha_interval),
            r##"alpha's update period (`AlphaResumInterval`)"##;
        decrease_interval: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be above 0")?; s.tcp.dcqcn.decrease_interval = v.0; },
            |s| dur(s.tcp.dcqcn.decrease_interval),
            r##"how often a CNP's rate cut is applied (`RateDecreaseInterval`)"##;
        increase_interval: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be above 0")?; s.tcp.dcqcn.increase_interval = v.0; },
            |s| dur(s.tcp.dcqcn.increase_interval),
            r##"the rate increase timer (`RPTimer`)"##;
        byte_counter: Bytes, r##"size"##,
            |s, v| { check(v.0 > 0, "must be above 0")?; s.tcp.dcqcn.byte_counter = Some(v.0); },
            |s| opt(s.tcp.dcqcn.byte_counter.map(size), "none"),
            r##"bytes sent per rate increase event, DCQCN's byte counter (none: the timer alone, as the HPCC simulator)"##;
        fast_recovery: u32, r##"integer"##,
            |s, v| { s.tcp.dcqcn.fast_recovery = v; },
            |s| num(s.tcp.dcqcn.fast_recovery),
            r##"increase events of fast recovery, F (`FastRecoveryTimes`)"##;
        rate_on_first_cnp: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.dcqcn.rate_on_first_cnp = v; },
            |s| num(s.tcp.dcqcn.rate_on_first_cnp),
            r##"the rate on a flow's first CNP, as a share of its rate (`RateOnFirstCnp`)"##;
        clamp_target: bool, r##"bool"##,
            |s, v| { s.tcp.dcqcn.clamp_target = v; },
            |s| flag(s.tcp.dcqcn.clamp_target),
            r##"set the target to the rate on every cut, also the first of a recovery (`ClampTargetRate`)"##;
        cnp_interval: Dur, r##"duration"##,
            |s, v| { s.tcp.dcqcn.cnp_interval = v.0; },
            |s| dur(s.tcp.dcqcn.cnp_interval),
            r##"the receiver sends at most one CNP per flow per this"##;
        nack_interval: Dur, r##"duration"##,
            |s, v| { s.tcp.dcqcn.nack_interval = v.0; },
            |s| dur(s.tcp.dcqcn.nack_interval),
            r##"the receiver's NACK for the same missing point at most once per this (`NACK Generation Interval`; also HPCC's)"##;
    }
}

knobs! {
    /// `[scheme.hpcc]` (with `tcp.congestion_control = "hpcc"`).
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct HpccOverrides ("scheme.hpcc.", HPCC_KNOBS) {}
    knobs {
        eta: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.hpcc.eta = v; },
            |s| num(s.tcp.hpcc.eta),
            r##"target utilisation (`TargetUtil`)"##;
        max_stage: u32, r##"integer"##,
            |s, v| { s.tcp.hpcc.max_stage = v; },
            |s| num(s.tcp.hpcc.max_stage),
            r##"additive increases before a multiplicative update (`MiThresh`)"##;
        rate_ai: crate::units::RateV, r##"rate"##,
            |s, v| { s.tcp.hpcc.rate_ai = v.0.0 as f64; },
            |s| rate_str(s.tcp.hpcc.rate_ai),
            r##"additive increase as a rate: W_AI = rate_ai x the flow's base RTT (`run.py --cc hp`: 10 x NIC Gbps / 25 Mb/s, 40 Mb/s at 100 Gbps)"##;
    }
}

knobs! {
    /// `[scheme.timely]` (with `tcp.congestion_control = "timely"`).
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct TimelyOverrides ("scheme.timely.", TIMELY_KNOBS) {}
    knobs {
        t_low: Dur, r##"duration"##,
            |s, v| { s.tcp.timely.t_low = v.0; },
            |s| dur(s.tcp.timely.t_low),
            r##"below this RTT the rate grows by `delta` whatever the gradient (the TIMELY paper's T_low)"##;
        t_high: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be above 0")?; s.tcp.timely.t_high = v.0; },
            |s| dur(s.tcp.timely.t_high),
            r##"above this RTT the rate is cut by beta (1 - t_high / RTT) (T_high)"##;
        delta: crate::units::RateV, r##"rate"##,
            |s, v| { s.tcp.timely.delta = v.0.0 as f64; },
            |s| rate_str(s.tcp.timely.delta),
            r##"additive increase step (δ); five times it in hyperactive increase"##;
        beta: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.timely.beta = v; },
            |s| num(s.tcp.timely.beta),
            r##"multiplicative decrease factor (β)"##;
        alpha: f64, r##"number in (0, 1]"##,
            |s, v| { fraction(v)?; s.tcp.timely.alpha = v; },
            |s| num(s.tcp.timely.alpha),
            r##"EWMA weight of the newest RTT difference (the HPCC simulator's `TimelyAlpha`)"##;
        min_rtt: Dur, r##"duration"##,
            |s, v| { check(v.0 > Time::ZERO, "must be above 0")?; s.tcp.timely.min_rtt = v.0; },
            |s| dur(s.tcp.timely.min_rtt),
            r##"the RTT the gradient is divided by (the HPCC simulator's `TimelyMinRtt`)"##;
        hai_after: u32, r##"integer"##,
            |s, v| { s.tcp.timely.hai_after = v; },
            |s| num(s.tcp.timely.hai_after),
            r##"updates in a row with a gradient ≤ 0 after which the increase is 5 δ (hyperactive increase)"##;
        min_rate: crate::units::RateV, r##"rate"##,
            |s, v| { check(v.0.0 > 0, "must be above 0")?; s.tcp.timely.min_rate = v.0.0 as f64; },
            |s| rate_str(s.tcp.timely.min_rate),
            r##"the rate never falls below this"##;
    }
}

knobs! {
    /// `[scheme.red]` (with `ecn_marking = "red"`): the parameters of every port, then `tiers.<tier>` tables
    /// of the thresholds of a link tier's ports (`RedTierOverrides`, declared in `sections.rs`).
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct RedOverrides ("scheme.red.", RED_KNOBS) {
        #[serde(default)]
        pub tiers: BTreeMap<String, RedTierOverrides>,
    }
    knobs {
        min_threshold: crate::units::QueueLen, r##"size (`"30KB"`) or packets (`"20 packets"`)"##,
            |s, v| { s.red.min = v.0; },
            |s| qlen(s.red.min),
            r##"below it (the average queue) nothing is marked"##;
        max_threshold: crate::units::QueueLen, r##"same unit as `min_threshold`"##,
            |s, v| { s.red.max = v.0; },
            |s| qlen(s.red.max),
            r##"above `min_threshold`; from it the probability rises to 1 at twice it (`gentle`) or every arrival is congested"##;
        max_probability: f64, r##"(0, 1]"##,
            |s, v| { fraction(v)?; s.red.max_p = v; },
            |s| num(s.red.max_p),
            r##"the probability at `max_threshold` (ns-3's 1 / LInterm)"##;
        weight: f64, r##"(0, 1]"##,
            |s, v| { fraction(v)?; s.red.weight = v; },
            |s| num(s.red.weight),
            r##"EWMA weight of the average queue; 1 = instantaneous"##;
        gentle: bool, r##"bool"##,
            |s, v| { s.red.gentle = v; },
            |s| flag(s.red.gentle),
            r##"between `max_threshold` and twice it the probability rises from `max_probability` to 1 (otherwise every arrival there is congested)"##;
    }
}

impl RedOverrides {
    /// Merge the `tiers.<tier>` tables into `red`'s (each key checked; the error names the tier).
    pub(crate) fn apply_tiers(&self, red: &mut RedConfig) -> Result<(), ConfigError> {
        for (name, t) in &self.tiers {
            t.check_keys().map_err(|e| ConfigError { field: e.field.replace("<tier>", name), msg: e.msg })?;
            let e = red.tiers.entry(name.clone()).or_default();
            e.min_threshold = t.min_threshold.or(e.min_threshold);
            e.max_threshold = t.max_threshold.or(e.max_threshold);
            e.max_probability = t.max_probability.or(e.max_probability);
        }
        Ok(())
    }
}

/// A queue length as a scenario writes it: `"20 packets"`, or a size.
fn qlen(q: crate::units::QLen) -> String {
    match q {
        crate::units::QLen::Packets(n) => format!("`\"{n} packets\"`"),
        crate::units::QLen::Bytes(b) => size(b),
    }
}

fn rate_str(bps: f64) -> String {
    let b = bps.round() as u64;
    for (unit, per) in [("Gbps", 1_000_000_000u64), ("Mbps", 1_000_000), ("Kbps", 1_000)] {
        if b >= per && b.is_multiple_of(per) {
            return format!("`\"{}{unit}\"`", b / per);
        }
    }
    format!("`\"{b}bps\"`")
}

impl Default for SchemeConfig {
    fn default() -> Self {
        // every knob unset, the preset its serde default
        serde_json::from_str("{}").expect("an empty [scheme] table reads")
    }
}

/// Every knob's reference row with its value under each preset (in the presets' order).
pub fn knob_table() -> Vec<(&'static Knob, Vec<(&'static str, String)>)> {
    let schemes: Vec<(&'static str, Scheme)> = PRESETS.iter().map(|p| (p.name, p.build())).collect();
    TABLES.iter().flat_map(|t| t.iter()).map(|k| (k, schemes.iter().map(|(n, s)| (*n, (k.shown)(s))).collect())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(json: &str) -> Result<Scheme, ConfigError> {
        serde_json::from_str::<SchemeConfig>(json).unwrap().resolve()
    }

    #[test]
    fn every_preset_is_the_base_scheme_plus_knobs_a_scenario_could_write() {
        // a preset's overrides are a [scheme] table: written under `preset = "fh"` in a scenario they give the
        // same scheme (but its name), and the base is FH's
        assert_eq!(preset("fh").unwrap().overrides, "{}");
        for p in PRESETS {
            let mut table: serde_json::Value = serde_json::from_str(p.overrides).unwrap();
            table["preset"] = "fh".into();
            let mut s = serde_json::from_value::<SchemeConfig>(table).unwrap().resolve().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            s.name = p.name.into();
            assert_eq!(s, p.build(), "{}", p.name);
        }
    }

    #[test]
    fn a_knob_overrides_its_preset_and_its_error_names_its_key() {
        let s = resolve(r#"{"preset": "detail", "tcp": {"mss": 1000, "rto_min": "1ms"}, "pfc": {"priorities": [0, 3]}}"#).unwrap();
        assert_eq!((s.tcp.mss, s.tcp.rto_min, s.tcp.rto_initial, s.pfc.priorities), (1000, Time::from_ms(1), Time::from_ms(1), 0b1001));
        assert!(!s.tcp.fast_retransmit, "the rest is the preset's");
        for (json, key) in [
            (r#"{"tcp": {"mss": 10}}"#, "scheme.tcp.mss"),
            (r#"{"dibs": {"probability": 2}}"#, "scheme.dibs.probability"),
            (r#"{"queue_limit": 0}"#, "scheme.queue_limit"),
            (r#"{"pfc": {"priorities": []}}"#, "scheme.pfc.priorities"),
            (r#"{"alb": {"t1": "64KB", "t2": "16KB"}}"#, "scheme.alb.t2"),
            (r#"{"tcp": {"mss": 1460, "rwnd": 1000}}"#, "scheme.tcp.rwnd"),
            (r#"{"preset": "dcqcn", "dcqcn": {"g": 0}}"#, "scheme.dcqcn.g"),
            (r#"{"preset": "dcqcn", "dcqcn": {"decrease_interval": "0us"}}"#, "scheme.dcqcn.decrease_interval"),
            (r#"{"preset": "hpcc", "hpcc": {"eta": 1.5}}"#, "scheme.hpcc.eta"),
        ] {
            assert_eq!(resolve(json).unwrap_err().field, key, "{json}");
        }
        // the RoCE knobs reach their parameters
        let s = resolve(r#"{"preset": "dcqcn", "dcqcn": {"rate_ai": "20Mbps", "byte_counter": "10MB"}, "hpcc": {"max_stage": 0}}"#).unwrap();
        assert_eq!((s.tcp.dcqcn.rate_ai, s.tcp.dcqcn.byte_counter, s.tcp.hpcc.max_stage), (20e6, Some(10 << 20), 0));
    }

    #[test]
    fn a_presets_red_marking_stays_unless_the_scenario_overrides_it() {
        // dcqcn marks from 100 to 400 KB with p 0.2 on the instantaneous queue; [scheme.red] overrides a part
        let s = resolve(r#"{"preset": "dcqcn"}"#).unwrap();
        let b = s.red.base();
        assert_eq!((b.min, b.max, b.packets, b.max_p, b.weight, b.gentle), (100_000.0, 400_000.0, false, 0.2, 1.0, false));
        let s = resolve(r#"{"preset": "dcqcn", "red": {"max_probability": 0.5}}"#).unwrap();
        assert_eq!((s.red.base().min, s.red.base().max_p), (100_000.0, 0.5));
        // the other presets keep RED's defaults (5 to 15 packets)
        let s = resolve(r#"{"preset": "dctcp"}"#).unwrap();
        assert_eq!((s.red.base().min, s.red.base().max, s.red.base().packets), (5.0, 15.0, true));
    }

    #[test]
    fn a_red_tier_takes_the_ports_values_where_unset_and_its_errors_name_the_tier() {
        let s = resolve(r#"{"red": {"min_threshold": "20 packets", "max_threshold": "60 packets", "tiers": {"bottleneck": {"max_threshold": "40 packets"}}}}"#)
            .unwrap();
        let (b, t) = (s.red.base(), s.red.for_tier("bottleneck"));
        assert_eq!((b.min, b.max, t.min, t.max, t.max_p), (20.0, 60.0, 20.0, 40.0, 0.02));
        assert_eq!(s.red.for_tier("core"), b, "a tier without a table is the port's");
        for (json, key) in [
            (r#"{"red": {"tiers": {"bottleneck": {"max_probability": 0}}}}"#, "scheme.red.tiers.bottleneck.max_probability"),
            (r#"{"red": {"tiers": {"edge": {"max_threshold": "3 packets"}}}}"#, "scheme.red.tiers.edge.max_threshold"),
            (r#"{"red": {"min_threshold": "30KB"}}"#, "scheme.red.max_threshold"),
            (r#"{"red": {"weight": 1.5}}"#, "scheme.red.weight"),
        ] {
            assert_eq!(resolve(json).unwrap_err().field, key, "{json}");
        }
        // the unit rule: a lower threshold in bytes over the default's packets is refused until both are bytes
        assert!(!resolve(r#"{"red": {"min_threshold": "30KB", "max_threshold": "90KB"}}"#).unwrap().red.base().packets);
    }

    #[test]
    fn queue_limit_wins_over_queue_limit_bdp() {
        // as the reference says, in either order (until issue 35 the multiple won, against the reference)
        for json in [r#"{"queue_limit": 50000, "queue_limit_bdp": 1}"#, r#"{"queue_limit_bdp": 1, "queue_limit": 50000}"#] {
            let s = resolve(json).unwrap();
            assert_eq!((s.queue_limit, s.queue_limit_bdp), (Some(50000), None));
        }
        let s = resolve(r#"{"preset": "pfabric", "queue_limit": 50000}"#).unwrap();
        assert_eq!((s.queue_limit, s.queue_limit_bdp), (Some(50000), None));
    }

    #[test]
    fn every_knob_has_one_row_and_every_preset_a_value() {
        let t = knob_table();
        let mut keys: Vec<&str> = t.iter().map(|(k, _)| k.key).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n);
        assert!(n >= 45, "{n} knobs");
        assert!(t.iter().all(|(_, by)| by.len() == PRESETS.len() && by.iter().all(|(_, v)| !v.is_empty())));
        // the values read as a scenario writes them
        let row = |key: &str| t.iter().find(|(k, _)| k.key == key).unwrap().1.clone();
        assert_eq!(row("scheme.tcp.rto_min")[0], ("fh", "`\"10ms\"`".to_string()));
        assert_eq!(row("scheme.ecn_threshold")[0].1, "`\"64KB\"`");
        assert_eq!(row("scheme.load_balancing")[0].1, "`flow_hash`");
        assert_eq!(row("scheme.tcp.mss")[0].1, "`1460`");
    }
}
