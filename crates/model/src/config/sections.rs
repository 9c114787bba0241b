//! Scenario sections that are not `[scheme]` knob tables (no preset gives them a value) declared the way the
//! knobs are: each key once, with its type, unit, default, check and meaning. The struct serde reads, its
//! checks (the error names the dotted key) and the scenario reference's table (`section_table`, rendered
//! into docs/scenarios.md by `detailsim reference --update-docs`) all come from the one declaration.
//!
//! A key is one line of a `section!` block: `name: Type, "unit", || the default as the reference shows it,
//! |v| check of a set value (Ok or Err(message)), "meaning";`. Fields the reference documents elsewhere (a
//! topology kind's own keys, nested tables) go in an `extra { ... }` block, written as struct fields.

use super::knobs::{fraction, size};
use super::{ConfigError, LinkConfig, MlfqSource, NodeConfig, PiasThresholds, TierConfig};
use crate::topology::{
    DEFAULT_BUFFER, DEFAULT_DELAY, DEFAULT_FORWARDING_DELAY, DEFAULT_FRAME_OVERHEAD, DEFAULT_HOST_BUFFER_FRAMES, DEFAULT_MIN_FRAME, DEFAULT_MTU, DEFAULT_RATE,
    DEFAULT_SPEEDUP, SHARED_ALPHA, SHARED_PFC_ALPHA, SHARED_RESUME_OFFSET,
};
use crate::units::{Bytes, Dur, QueueLen, RateV};
use detailsim_engine::Time;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One key of a declared section, as the scenario reference shows it.
pub struct Field {
    /// The dotted key, e.g. `topology.shared_buffer.alpha`.
    pub key: &'static str,
    pub unit: &'static str,
    /// The default, as the reference shows it (from the constant the model uses).
    pub default: fn() -> String,
    pub meaning: &'static str,
}

macro_rules! section {
    (
        $(#[$sm:meta])*
        pub struct $name:ident ($prefix:literal, $table:ident) {
            $( $field:ident : $ty:ty, $unit:literal, || $default:expr, |$v:ident| $check:expr, $meaning:literal; )*
        }
    ) => {
        section! {
            $(#[$sm])*
            pub struct $name ($prefix, $table) {
                extra {}
                $( $field : $ty, $unit, || $default, |$v| $check, $meaning; )*
            }
        }
    };
    (
        $(#[$sm:meta])*
        pub struct $name:ident ($prefix:literal, $table:ident) {
            extra { $($extra:tt)* }
            $( $field:ident : $ty:ty, $unit:literal, || $default:expr, |$v:ident| $check:expr, $meaning:literal; )*
        }
    ) => {
        $(#[$sm])*
        #[derive(Deserialize, Debug, Clone, Default)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($extra)*
            $( pub $field: Option<$ty>, )*
        }

        impl $name {
            /// Check every key the scenario sets (the error names its dotted key).
            pub fn check_keys(&self) -> Result<(), ConfigError> {
                $(
                    if let Some($v) = self.$field.clone() {
                        let r: Result<(), String> = $check;
                        r.map_err(|msg| ConfigError { field: concat!($prefix, stringify!($field)).into(), msg })?;
                    }
                )*
                Ok(())
            }
        }

        /// The reference rows of this section, in order.
        pub const $table: &[Field] = &[
            $( Field { key: concat!($prefix, stringify!($field)), unit: $unit, default: || $default, meaning: $meaning }, )*
        ];
    };
}

fn check(ok: bool, msg: impl Into<String>) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg.into())
    }
}

const TB: u64 = 1 << 40;

/// A duration in microseconds as a scenario writes it (`"5.476us"`).
fn us(t: Time) -> String {
    format!("`\"{}us\"`", t.0 as f64 / 1e6)
}

section! {
    /// `[topology]`: the kind and its own keys (documented per kind), per-tier link settings, the
    /// shared-buffer switch, and the keys every kind takes, declared below.
    pub struct TopologyConfig ("topology.", TOPOLOGY_FIELDS) {
        extra {
            pub kind: String,
            // shape keys (which apply depends on kind)
            pub k: Option<u32>,
            pub hosts: Option<u32>,
            pub leaves: Option<u32>,
            pub spines: Option<u32>,
            pub hosts_per_leaf: Option<u32>,
            pub left: Option<u32>,
            pub right: Option<u32>,
            pub host_rate: Option<RateV>,
            pub uplink_rate: Option<RateV>,
            pub bottleneck_rate: Option<RateV>,
            pub bottleneck_delay: Option<Dur>,
            pub nodes: Option<Vec<NodeConfig>>,
            pub links: Option<Vec<LinkConfig>>,
            #[serde(default)]
            pub tiers: BTreeMap<String, TierConfig>,
            /// `[topology.shared_buffer]`: every switch's ports draw on one pool (a shared-buffer switch)
            /// instead of DeTail's per-port ingress and egress buffers and crossbar.
            pub shared_buffer: Option<SharedBufferConfig>,
        }
        link_rate: RateV, "rate", || format!("`\"{}Gbps\"`", DEFAULT_RATE.0 / 1_000_000_000), |_v| Ok(()),
            "rate of every link (both directions) unless a tier or shortcut says otherwise";
        link_delay: Dur, "duration", || us(DEFAULT_DELAY), |_v| Ok(()),
            "propagation plus transceiver delay (paper: 0.476 µs + 5 µs)";
        buffer: Bytes, "size", || size(DEFAULT_BUFFER), |_v| Ok(()),
            "ingress queue and egress queue size of every switch port";
        ingress_buffer: Bytes, "size", || "`buffer`".into(), |_v| Ok(()),
            "ingress queue size per switch port";
        egress_buffer: Bytes, "size", || "`buffer`".into(), |_v| Ok(()),
            "egress queue size per switch port";
        forwarding_delay: Dur, "duration", || us(DEFAULT_FORWARDING_DELAY), |_v| Ok(()),
            "forwarding-engine (lookup) delay of every switch";
        speedup: f64, "number ≥ 1", || format!("`{DEFAULT_SPEEDUP}`"),
            |v| check(v >= 1.0 && v.is_finite(), format!("must be a number >= 1, got {v}")),
            "crossbar speedup: each port's side of the switch fabric runs at speedup × its line rate, a transfer at the slower side's rate, one at a time out of an ingress and into an egress; a 1530 B frame crosses a 1 Gbps switch's crossbar in 3.06 µs";
        host_buffer: Bytes, "size", || format!("{DEFAULT_HOST_BUFFER_FRAMES} full frames (1,530,000 B at MTU 1500: Linux's default txqueuelen)"), |_v| Ok(()),
            "NIC queue size (all priorities together; at most 4294967295 B, or `\"inf\"`). Data beyond it is pushed back to the sender (it stays in the socket and goes when the NIC has room, highest-priority flows first, as Linux does when its queue is full); 8 full frames (at most a quarter of the buffer) are kept for ACKs and SYNs; a control segment that still does not fit is a `host_buffer` drop. Under the RoCE schemes (`dcqcn`, `hpcc`) the NIC has no queue of data in front of the wire, as a RoCE NIC's scheduler takes a queue pair's next segment only when the port can send it: data may occupy two full frames (one on the wire, one ready) and the rest of the buffer is kept for the ACKs, NACKs and CNPs a paused port holds. `nic_backpressure` in the summary counts the times data had to wait";
        mtu: Bytes, "size", || format!("`{DEFAULT_MTU}`"),
            |v| check((100..=65535).contains(&v.0), "must be between 100B and 65535B"),
            "largest IP packet";
        frame_overhead: Bytes, "size", || format!("`{DEFAULT_FRAME_OVERHEAD}`"),
            |v| check(v.0 <= 1000, format!("must be between 0B and 1000B, got {}B", v.0)),
            "bytes added to an IP packet on the wire: Ethernet header 14, 802.1Q tag 4, FCS 4, preamble 8; no inter-frame gap, as the DeTail paper counts its \"full-size 1530B Ethernet frame\" (000_76fdfa378bc5f2cf.txt:319): 1500 → 1530 B, 12.24 µs at 1 Gbps. One accounting for every frame (data, ACK, SYN, PFC) on links and in buffers; to count the 12 B gap too, raise this and `min_frame` by 12";
        min_frame: Bytes, "size", || format!("`{DEFAULT_MIN_FRAME}`"),
            |v| check(v.0 <= 1500, format!("must be between 0B and 1500B, got {}B", v.0)),
            "smallest frame on the wire: the 64 B Ethernet minimum plus the 8 B preamble (a 40 B ACK, SYN or SYN-ACK occupies 72 B, and so does a PFC frame)";
    }
}

impl TopologyConfig {
    /// The keys every topology kind takes: the declared ones, and `kind`, `tiers` and `shared_buffer`.
    pub fn common_keys() -> Vec<&'static str> {
        let declared = TOPOLOGY_FIELDS.iter().map(|f| &f.key["topology.".len()..]);
        ["kind"].into_iter().chain(declared).chain(["tiers", "shared_buffer"]).collect()
    }
}

section! {
    /// `[topology.shared_buffer]` (see `mechanisms::mmu`): every switch's ports draw on one pool (a
    /// shared-buffer switch) instead of DeTail's per-port ingress and egress buffers and crossbar.
    pub struct SharedBufferConfig ("topology.shared_buffer.", SHARED_BUFFER_FIELDS) {
        size: Bytes, "size", || "required".into(),
            |v| check(v.0 > 0 && v.0 < TB, format!("must be between 1B and 1TB, got {}B", v.0)),
            "the pool of each switch. It must leave a shared part after every reserve and headroom; the error says how much they take";
        alpha: f64, "number > 0", || format!("`{SHARED_ALPHA:?}`"),
            |v| check(v > 0.0 && v.is_finite(), format!("must be a number > 0, got {v}")),
            "Choudhury and Hahne's dynamic threshold for lossy traffic (every priority without PFC, and every priority when `flow_control` is not `pfc`): an arrival enters while its egress queue of that priority plus the arrival stays within `alpha` × the free shared bytes (and the shared part has room); otherwise it is dropped (cause `ingress_buffer`: the switch's buffer refused it) or, under DIBS, detoured to a random other switch port the MMU admits it to. With one busy queue it settles at alpha / (1 + alpha) of the shared part: half with 1";
        pfc_alpha: f64, "number in (0, 1]", || format!("`{SHARED_PFC_ALPHA:?}`"),
            |v| check(v > 0.0 && v <= 1.0, format!("must be a number in (0, 1], got {v}")),
            "PFC's dynamic threshold (the HPCC simulator's `use_dynamic_pfc_threshold`, its `pfc_a_shift` of 3): an ingress port's lossless priority sends PAUSE when its shared use (its bytes beyond the reserve) reaches `pfc_alpha` × the free shared bytes, or when anything is in its headroom; arrivals past the threshold go to the headroom";
        resume_offset: Bytes, "size", || format!("{} ({SHARED_RESUME_OFFSET} B, the HPCC simulator's)", size(SHARED_RESUME_OFFSET)),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "UNPAUSE once the priority's headroom is empty and its shared use is 0 or at least this far below the threshold";
        reserve: Bytes, "size", || size(0),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "bytes reserved for each (ingress port, priority), eight priorities per port, used before the shared part";
        headroom: Bytes, "size", || "derived".into(),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "bytes for each (ingress port, lossless priority) under PFC: what may still arrive after its PAUSE is sent. Derived from each port's link as `[scheme.pfc]` bounds it for DeTail's switch: the bytes of the reaction window (two full frames, a PFC frame, two link delays and 0.448 µs of processing, or `reaction_time`), of the forwarding delay, and a full frame: 24,192 B at 10 Gbps with the default 5.476 µs links. Without PFC nothing is set aside";
    }
}

section! {
    /// `[scheme.pias]`: how the PIAS presets' demotion thresholds are chosen (resolved by `parse_scenario`
    /// into `scheme.tcp.mlfq_thresholds`; ignored by other presets, so a sweep may cross pias with dctcp).
    pub struct PiasOverrides ("scheme.pias.", PIAS_FIELDS) {
        extra {
            /// Where the thresholds in force came from, once `parse_scenario` has resolved the table (None:
            /// they are derived when the simulator is built, from the traffic its workloads offer).
            #[serde(skip)]
            pub source: Option<MlfqSource>,
        }
        queues: u32, "count, 1 to 8", || "`8`".into(),
            |v| check((1..=8).contains(&v), format!("a whole number of queues, 1 to 8; got {v}")),
            "queues (priorities) a flow is demoted through: `queues - 1` thresholds";
        thresholds: PiasThresholds, "`\"optimal\"`, `\"equal-split\"`, `\"paper\"` or a list of sizes", || "`\"optimal\"`".into(),
            |v| match v {
                PiasThresholds::Method(m) => check(crate::mechanisms::pias::METHODS.contains(&m.as_str()),
                    format!("\"optimal\", \"equal-split\", \"paper\" or a list of byte thresholds; got {m:?}")),
                PiasThresholds::List(_) => Ok(()),
            },
            "`optimal` minimises the PIAS bound exactly for the size distribution and load (`detailsim pias-thresholds`); `equal-split` puts the j-th threshold at the 100·j/K-th percentile flow size; `paper` uses the PIAS authors' published sets (8 queues; web search and data mining); a list gives the thresholds in bytes";
        cdf: String, "name or file", || "the first `cdf` workload's".into(), |_v| Ok(()),
            "the flow-size distribution the thresholds are derived for, instead of the workload's (the front end reads the file into `points`); needs `load`";
        points: Vec<[f64; 2]>, "[[bytes, fraction], ...]", || "from `cdf`".into(), |_v| Ok(()),
            "the distribution itself, as a scenario given to the core directly may carry it";
        load: f64, "number in (0, 1)", || "the first `cdf` workload's".into(),
            |v| check(v > 0.0 && v < 1.0, format!("a load in (0, 1) (the PIAS thresholds are derived from it), got {v}")),
            "the load the thresholds are derived for (with `cdf` or `points`)";
    }
}

section! {
    /// `[scheme.red.tiers.<tier>]`: the RED thresholds of the ports on links of one tier (e.g.
    /// `tiers.bottleneck` of a dumbbell), each key the port's `[scheme.red]` value where unset.
    #[derive(PartialEq)]
    pub struct RedTierOverrides ("scheme.red.tiers.<tier>.", RED_TIER_FIELDS) {
        min_threshold: QueueLen, "size or packets", || "`scheme.red.min_threshold`".into(), |_v| Ok(()),
            "the tier's lower threshold";
        max_threshold: QueueLen, "same unit as `min_threshold`", || "`scheme.red.max_threshold`".into(), |_v| Ok(()),
            "the tier's upper threshold";
        max_probability: f64, "(0, 1]", || "`scheme.red.max_probability`".into(),
            |v| fraction(v),
            "the tier's probability at its upper threshold";
    }
}

impl SharedBufferConfig {
    /// The pool's settings (the keys' defaults where unset), and the headroom when set; call after
    /// `check_keys` and the `size` requirement.
    pub fn resolve(&self) -> (crate::mechanisms::mmu::MmuParams, Option<u64>) {
        let p = crate::mechanisms::mmu::MmuParams {
            size: self.size.map(|b| b.0).unwrap_or(0),
            alpha: self.alpha.unwrap_or(SHARED_ALPHA),
            pfc_alpha: self.pfc_alpha.unwrap_or(SHARED_PFC_ALPHA),
            reserve: self.reserve.map(|b| b.0).unwrap_or(0),
            resume_offset: self.resume_offset.map(|b| b.0).unwrap_or(SHARED_RESUME_OFFSET),
        };
        (p, self.headroom.map(|b| b.0))
    }
}

/// Every declared section's table, in the reference's order.
pub const SECTIONS: &[&[Field]] = &[TOPOLOGY_FIELDS, SHARED_BUFFER_FIELDS, PIAS_FIELDS, RED_TIER_FIELDS];

/// Every key of the declared sections: (key, unit, default as shown, meaning).
pub fn section_table() -> Vec<(&'static str, &'static str, String, &'static str)> {
    SECTIONS.iter().flat_map(|t| t.iter()).map(|f| (f.key, f.unit, (f.default)(), f.meaning)).collect()
}
