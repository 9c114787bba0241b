//! The scenario schema: one definition, validated once; every error names its field.
//!
//! A scenario has four parts (TOML on the Python side, JSON across the binding):
//!
//! ```toml
//! [run]        # duration, seed, warmup, drain
//! [topology]   # kind plus that kind's keys, per-tier link rate / delay / buffers
//! [scheme]     # preset plus policy overrides ([scheme.tcp] for transport knobs)
//! [[workload]] # one table per traffic source: kind plus its keys
//! ```

use crate::mechanisms::red::RedParams;
use crate::units::{Bytes, Dur, QLen, QueueLen, RateV};
use detailsim_engine::{Rate, Time};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// A scenario that failed validation: the dotted path of the field and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub msg: String,
}
impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "{}: {}", self.field, self.msg)
        }
    }
}
impl std::error::Error for ConfigError {}
pub fn err<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError { field: field.into(), msg: msg.into() })
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text shown in listings.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub run: RunConfig,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub scheme: SchemeConfig,
    #[serde(default)]
    pub workload: Vec<WorkloadConfig>,
    #[serde(default)]
    pub fault: Vec<FaultConfig>,
}

/// A fault injected into the fabric.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    /// `link_down`, `degrade` or `ignore_pause`.
    pub kind: String,
    /// The link, by its two node names (`["agg0_0", "core0"]`) or topology-neutrally as `"<tier>#<i>"`,
    /// the i-th link of a tier (`"agg_core#0"`: the first core–agg link). For `ignore_pause` the first
    /// node is the one whose transmitter ignores PAUSE frames from the second.
    pub link: LinkSel,
    /// When the fault starts.
    #[serde(default = "Dur::zero")]
    pub at: Dur,
    /// New rate of a degraded link.
    pub rate: Option<RateV>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum LinkSel {
    Nodes(Vec<String>),
    Tier(String),
}

pub const FAULT_KINDS: &[&str] = &["link_down", "degrade", "ignore_pause"];

impl FaultConfig {
    pub fn validate(&self, i: usize) -> Result<(), ConfigError> {
        let f = |k: &str| format!("fault[{i}].{k}");
        if !FAULT_KINDS.contains(&self.kind.as_str()) {
            return err(f("kind"), format!("unknown fault {:?}; allowed: {}", self.kind, FAULT_KINDS.join(", ")));
        }
        match &self.link {
            LinkSel::Nodes(v) if v.len() != 2 => {
                return err(f("link"), "must name the link's two nodes, e.g. [\"agg0_0\", \"core0\"], or a tier link, e.g. \"agg_core#0\"")
            }
            LinkSel::Tier(t) if !t.contains('#') => {
                return err(f("link"), "a tier link is written \"<tier>#<index>\", e.g. \"agg_core#0\"")
            }
            _ => {}
        }
        match (self.kind.as_str(), self.rate) {
            ("degrade", None) => return err(f("rate"), "required for a degraded link, e.g. \"100Mbps\""),
            ("degrade", _) => {}
            (_, Some(_)) => return err(f("rate"), "only applies to kind = \"degrade\""),
            _ => {}
        }
        Ok(())
    }
}

fn d_duration() -> Dur {
    Dur(Time::from_ms(100))
}
fn d_drain() -> Dur {
    Dur(Time::from_secs_f64(1.0))
}
fn d_seed() -> u64 {
    1
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Flows start in [0, duration).
    #[serde(default = "d_duration")]
    pub duration: Dur,
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// Flows that start before this time run but are not measured.
    #[serde(default = "Dur::zero")]
    pub warmup: Dur,
    /// After `duration`, how long the simulation may continue so measured flows can finish.
    #[serde(default = "d_drain")]
    pub drain: Dur,
    /// Keep the open-loop workloads generating (unmeasured) flows after `duration`, so that measured flows
    /// finish under the same load they started in; the run ends when the measured flows are done.
    #[serde(default)]
    pub keep_load: bool,
    /// Goodput measurement window (iperf-style): bytes each flow delivers between these times.
    pub measure_from: Option<Dur>,
    pub measure_to: Option<Dur>,
    /// Time-series interval: per port queue bytes and per measured flow bytes delivered, every `sample`.
    pub sample: Option<Dur>,
    /// Guard on runaway runs: end the run (marked incomplete) after this many events.
    pub max_events: Option<u64>,
    /// Guard on runaway runs: end the run (marked incomplete) after this much wall-clock time.
    pub max_wall: Option<Dur>,
}
impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            duration: d_duration(),
            seed: 1,
            warmup: Dur::zero(),
            drain: d_drain(),
            keep_load: false,
            measure_from: None,
            measure_to: None,
            sample: None,
            max_events: None,
            max_wall: None,
        }
    }
}
impl Dur {
    pub fn zero() -> Dur {
        Dur(Time::ZERO)
    }
}

/// Link parameters of one tier; unset fields fall back to the topology-wide ones.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    pub rate: Option<RateV>,
    pub delay: Option<Dur>,
    /// Sets both ingress and egress buffers of switch ports on this tier.
    pub buffer: Option<Bytes>,
    pub ingress_buffer: Option<Bytes>,
    pub egress_buffer: Option<Bytes>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    pub name: String,
    pub kind: String,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub a: String,
    pub b: String,
    pub rate: Option<RateV>,
    pub delay: Option<Dur>,
    pub buffer: Option<Bytes>,
    pub ingress_buffer: Option<Bytes>,
    pub egress_buffer: Option<Bytes>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
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
    // link defaults for every tier
    pub link_rate: Option<RateV>,
    pub link_delay: Option<Dur>,
    pub buffer: Option<Bytes>,
    pub ingress_buffer: Option<Bytes>,
    pub egress_buffer: Option<Bytes>,
    #[serde(default)]
    pub tiers: BTreeMap<String, TierConfig>,
    // switch and host hardware
    pub forwarding_delay: Option<Dur>,
    pub speedup: Option<f64>,
    pub host_buffer: Option<Bytes>,
    pub mtu: Option<Bytes>,
    pub frame_overhead: Option<Bytes>,
    pub min_frame: Option<Bytes>,
}

pub const TOPOLOGY_KINDS: &[&str] =
    &["detail128", "testbed16", "fattree", "leaf_spine", "single_switch", "dumbbell", "custom"];

const COMMON_TOPO_KEYS: &[&str] = &[
    "kind",
    "link_rate",
    "link_delay",
    "buffer",
    "ingress_buffer",
    "egress_buffer",
    "tiers",
    "forwarding_delay",
    "speedup",
    "host_buffer",
    "mtu",
    "frame_overhead",
    "min_frame",
];

impl TopologyConfig {
    /// Shape keys this kind accepts, and its tier names.
    pub fn kind_keys(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
        Some(match kind {
            "detail128" | "testbed16" => (&[], &["host", "tor_agg", "agg_core"]),
            "fattree" => (&["k"], &["host", "tor_agg", "agg_core"]),
            "leaf_spine" => (
                &["leaves", "spines", "hosts_per_leaf", "host_rate", "uplink_rate"],
                &["host", "leaf_spine"],
            ),
            "single_switch" => (&["hosts"], &["host"]),
            "dumbbell" => (&["left", "right", "bottleneck_rate", "bottleneck_delay"], &["host", "bottleneck"]),
            "custom" => (&["nodes", "links"], &["link"]),
            _ => return None,
        })
    }

    pub fn set_keys(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! chk {
            ($($f:ident),*) => { $( if self.$f.is_some() { v.push(stringify!($f)); } )* };
        }
        chk!(k, hosts, leaves, spines, hosts_per_leaf, left, right, host_rate, uplink_rate, bottleneck_rate,
             bottleneck_delay, nodes, links);
        v
    }

    pub fn validate_keys(&self) -> Result<(), ConfigError> {
        let Some((keys, tiers)) = Self::kind_keys(&self.kind) else {
            return err("topology.kind", format!("unknown topology {:?}; allowed: {}", self.kind, TOPOLOGY_KINDS.join(", ")));
        };
        for k in self.set_keys() {
            if !keys.contains(&k) {
                let mut allowed: Vec<&str> = keys.to_vec();
                allowed.extend_from_slice(COMMON_TOPO_KEYS);
                return err(
                    format!("topology.{k}"),
                    format!("not a key of topology kind {:?}; its keys: {}", self.kind, allowed.join(", ")),
                );
            }
        }
        for t in self.tiers.keys() {
            if !tiers.contains(&t.as_str()) {
                return err(
                    format!("topology.tiers.{t}"),
                    format!("unknown tier for topology kind {:?}; its tiers: {}", self.kind, tiers.join(", ")),
                );
            }
        }
        if let Some(s) = self.speedup {
            if !(s >= 1.0 && s.is_finite()) {
                return err("topology.speedup", format!("must be a number >= 1, got {s}"));
            }
        }
        if let Some(m) = self.mtu {
            if m.0 < 100 || m.0 > 65535 {
                return err("topology.mtu", "must be between 100B and 65535B");
            }
        }
        if let Some(m) = self.frame_overhead {
            if m.0 > 1000 {
                return err("topology.frame_overhead", format!("must be between 0B and 1000B, got {}B", m.0));
            }
        }
        if let Some(m) = self.min_frame {
            if m.0 > 1500 {
                return err("topology.min_frame", format!("must be between 0B and 1500B, got {}B", m.0));
            }
        }
        Ok(())
    }
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// Per-flow hash of the 5-tuple with a per-switch salt (ECMP).
    FlowHash,
    /// A uniformly random acceptable port per packet.
    PacketScatter,
    /// DeTail's adaptive load balancing: per packet, an acceptable port whose egress drain-byte counter
    /// for the packet's priority is below T1, else below T2, else any acceptable port.
    Adaptive,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlbChoice {
    /// Uniformly random among the selected ports.
    Random,
    /// Round robin (a per-switch pointer) among the selected ports.
    RoundRobin,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// 8 strict priorities, FIFO within each.
    StrictPriority,
    /// Least attained service: every queue (switch egress and host NIC) sends the packet whose flow had
    /// sent the fewest bytes before it (ties: the earliest queued).
    Las,
    /// pFabric: every queue sends the earliest queued packet of the flow whose packet has the lowest rank
    /// (the flow's unacknowledged bytes when it was sent); a switch egress queue that is full evicts its
    /// highest-rank packet for a lower-rank arrival, or drops the arrival.
    Pfabric,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// TCP NewReno (with classic ECN reaction when `ecn` is on).
    NewReno,
    /// DCTCP: alpha-weighted window cut, precise ECN echo.
    Dctcp,
    /// L2DCT: DCTCP whose cut (alpha^w / 2) and additive increase (w / w_max per RTT) are weighted by the
    /// bytes the flow has sent: w = 2.5 up to 200 segments, falling linearly to 0.125 at 1000 segments.
    L2dct,
    /// pFabric's minimal rate control: the window shrinks only on a timeout (to one segment, then slow
    /// start); fast retransmit resends the lost segment without a cut; no ECN reaction; header-only probes
    /// after 5 timeouts in a row until an ACK returns.
    Pfabric,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WatchdogAction {
    /// Record the event.
    Report,
    /// Record it and shut the link down (routing then excludes it).
    Shutdown,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowControl {
    /// Drop arriving packets that do not fit the ingress buffer.
    TailDrop,
    /// Priority flow control (IEEE 802.1Qbb): PAUSE/UNPAUSE on ingress drain-byte thresholds.
    Pfc,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnMarking {
    None,
    /// Mark CE when the packet's priority queue holds more than the threshold.
    PerQueue,
    /// Mark CE when the whole egress port holds more than the threshold.
    PerPort,
    /// Random Early Detection on the whole egress port (`[scheme.red]`): marks ECN-capable packets, drops
    /// the others.
    Red,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct TcpOverrides {
    pub mss: Option<Bytes>,
    pub initial_window: Option<u32>,
    pub rwnd: Option<Bytes>,
    pub handshake: Option<bool>,
    pub fast_retransmit: Option<bool>,
    pub dupack_threshold: Option<u32>,
    pub rto_min: Option<Dur>,
    pub rto_initial: Option<Dur>,
    pub rto_max: Option<Dur>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_timeout: Option<Dur>,
    pub ecn: Option<bool>,
    pub retransmissions: Option<bool>,
    pub congestion_control: Option<CongestionControl>,
    pub dctcp_g: Option<f64>,
    /// PIAS MLFQ demotion thresholds in bytes (the front end resolves "optimal", "equal-split", "paper").
    pub mlfq_thresholds: Option<Vec<Bytes>>,
    pub line_rate_start: Option<bool>,
    pub rto_rtts: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SchemeConfig {
    #[serde(default = "d_preset")]
    pub preset: String,
    pub load_balancing: Option<LoadBalancing>,
    pub flow_control: Option<FlowControl>,
    pub ecn_marking: Option<EcnMarking>,
    pub ecn_threshold: Option<Bytes>,
    /// DeTail's source ECN: the host marks CE on outgoing packets while its NIC drain-byte counter for
    /// the packet's priority exceeds `source_ecn_threshold`.
    pub source_ecn: Option<bool>,
    pub source_ecn_threshold: Option<Bytes>,
    pub scheduling: Option<Scheduling>,
    /// A full switch ingress buffer drops its lowest-priority packets to admit a higher-priority arrival
    /// (acts only where buffers overflow: tail drop, or PFC with a neighbour that ignores PAUSE).
    pub priority_eviction: Option<bool>,
    /// Every priority of a switch egress queue has the port's egress buffer to itself (instead of all
    /// priorities sharing it), so a paused priority cannot keep the others out.
    pub egress_per_priority: Option<bool>,
    /// Cap on every switch egress queue (below the port's egress buffer), in bytes ...
    pub queue_limit: Option<Bytes>,
    /// ... or in multiples of the fabric's bandwidth-delay product (host link rate x longest base RTT).
    pub queue_limit_bdp: Option<f64>,
    #[serde(default)]
    pub tcp: TcpOverrides,
    #[serde(default)]
    pub pfc: PfcOverrides,
    #[serde(default)]
    pub alb: AlbOverrides,
    #[serde(default)]
    pub dibs: DibsOverrides,
    #[serde(default)]
    pub red: RedOverrides,
}

/// `[scheme.red]`: RED parameters (ns-3's RedQueueDisc defaults), per tier overrides of the thresholds.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RedOverrides {
    pub min_threshold: Option<QueueLen>,
    pub max_threshold: Option<QueueLen>,
    pub max_probability: Option<f64>,
    pub weight: Option<f64>,
    pub gentle: Option<bool>,
    #[serde(default)]
    pub tiers: BTreeMap<String, RedTierOverrides>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RedTierOverrides {
    pub min_threshold: Option<QueueLen>,
    pub max_threshold: Option<QueueLen>,
    pub max_probability: Option<f64>,
}

/// RED resolved: the parameters of every port, and those of the ports of named tiers.
#[derive(Debug, Clone, PartialEq)]
pub struct RedConfig {
    pub base: RedParams,
    pub tiers: Vec<(String, RedParams)>,
}

impl RedConfig {
    /// The parameters of a port on link tier `tier`.
    pub fn for_tier(&self, tier: &str) -> RedParams {
        self.tiers.iter().find(|(t, _)| t == tier).map_or(self.base, |x| x.1)
    }
}

pub const RED_DEFAULT_MIN: QLen = QLen::Packets(5);
pub const RED_DEFAULT_MAX: QLen = QLen::Packets(15);
pub const RED_DEFAULT_MAX_P: f64 = 0.02;
pub const RED_DEFAULT_WEIGHT: f64 = 0.002;

impl RedOverrides {
    fn resolve(&self) -> Result<RedConfig, ConfigError> {
        let prob = |key: &str, v: Option<f64>, d: f64| -> Result<f64, ConfigError> {
            match v {
                Some(x) if !(x > 0.0 && x <= 1.0) => err(key, format!("must be in (0, 1], got {x}")),
                Some(x) => Ok(x),
                None => Ok(d),
            }
        };
        let max_p = prob("scheme.red.max_probability", self.max_probability, RED_DEFAULT_MAX_P)?;
        let weight = prob("scheme.red.weight", self.weight, RED_DEFAULT_WEIGHT)?;
        let gentle = self.gentle.unwrap_or(true);
        let min = self.min_threshold.map_or(RED_DEFAULT_MIN, |q| q.0);
        let max = self.max_threshold.map_or(RED_DEFAULT_MAX, |q| q.0);
        let base = RedParams::new(min, max, max_p, weight, gentle).map_err(|m| ConfigError { field: "scheme.red.max_threshold".into(), msg: m })?;
        let mut tiers = Vec::new();
        for (name, t) in &self.tiers {
            let f = format!("scheme.red.tiers.{name}");
            let tp = prob(&format!("{f}.max_probability"), t.max_probability, max_p)?;
            let p = RedParams::new(t.min_threshold.map_or(min, |q| q.0), t.max_threshold.map_or(max, |q| q.0), tp, weight, gentle)
                .map_err(|m| ConfigError { field: format!("{f}.max_threshold"), msg: m })?;
            tiers.push((name.clone(), p));
        }
        Ok(RedConfig { base, tiers })
    }
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct DibsOverrides {
    pub enabled: Option<bool>,
    pub threshold: Option<Bytes>,
    pub max_detours: Option<u32>,
    pub probability: Option<f64>,
    pub priorities: Option<Vec<u8>>,
}

/// DIBS: detour instead of drop.
#[derive(Debug, Clone, PartialEq)]
pub struct DibsParams {
    pub enabled: bool,
    /// Detour when the chosen egress queue holds more than this (None: when it cannot take the packet).
    pub threshold: Option<u64>,
    /// Drop a packet detoured this many times (None: no cap).
    pub max_detours: Option<u32>,
    /// Detour with this probability when eligible (otherwise behave as without DIBS).
    pub probability: f64,
    /// Priorities allowed to detour (bit p).
    pub priorities: u8,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct PfcOverrides {
    pub pause_threshold: Option<Bytes>,
    pub unpause_threshold: Option<Bytes>,
    pub reaction_time: Option<Dur>,
    pub watchdog_timeout: Option<Dur>,
    pub watchdog_action: Option<WatchdogAction>,
    pub ignore_limit: Option<u32>,
    pub deadlock_check: Option<Dur>,
    pub priorities: Option<Vec<u8>>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct AlbOverrides {
    pub t1: Option<Bytes>,
    pub t2: Option<Bytes>,
    pub choice: Option<AlbChoice>,
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlbParams {
    pub t1: u64,
    pub t2: u64,
    pub choice: AlbChoice,
}
fn d_preset() -> String {
    "fh".into()
}
impl Default for SchemeConfig {
    fn default() -> Self {
        SchemeConfig {
            preset: d_preset(),
            load_balancing: None,
            flow_control: None,
            ecn_marking: None,
            ecn_threshold: None,
            source_ecn: None,
            source_ecn_threshold: None,
            scheduling: None,
            priority_eviction: None,
            egress_per_priority: None,
            queue_limit: None,
            queue_limit_bdp: None,
            tcp: TcpOverrides::default(),
            pfc: PfcOverrides::default(),
            alb: AlbOverrides::default(),
            dibs: DibsOverrides::default(),
            red: RedOverrides::default(),
        }
    }
}

/// Transport parameters after preset and overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpParams {
    pub mss: u32,
    pub initial_window: u32,
    /// The receiver's advertised window: bytes in flight never exceed min(cwnd, rwnd).
    pub rwnd: u64,
    pub handshake: bool,
    pub fast_retransmit: bool,
    pub dupack_threshold: u32,
    pub rto_min: Time,
    pub rto_initial: Time,
    pub rto_max: Time,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    pub ecn: bool,
    /// Off: no retransmission timer and no fast retransmit (the paper's Section 3.3 study with
    /// infinite buffers, where nothing is lost).
    pub retransmissions: bool,
    pub cc: CongestionControl,
    pub dctcp_g: f64,
    /// PIAS MLFQ demotion thresholds (bytes sent); empty: no tagging.
    pub mlfq: Vec<u64>,
    /// Start every flow at line rate: the initial window is the bandwidth-delay product of its path
    /// (sender's link rate x base RTT), overriding `initial_window`.
    pub line_rate_start: bool,
    /// When positive: the minimum and initial RTO are this many base RTTs of the flow's path, overriding
    /// `rto_min` and `rto_initial`.
    pub rto_rtts: f64,
}

/// A resolved scheme: one row of the policy table.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheme {
    pub name: String,
    pub load_balancing: LoadBalancing,
    pub flow_control: FlowControl,
    pub ecn_marking: EcnMarking,
    pub ecn_threshold: u64,
    pub source_ecn: bool,
    pub source_ecn_threshold: u64,
    pub scheduling: Scheduling,
    /// A full ingress buffer evicts lower-priority packets for a higher-priority arrival.
    pub priority_eviction: bool,
    /// Switch egress space per priority rather than shared by all priorities.
    pub egress_per_priority: bool,
    /// Cap on each switch egress queue: bytes, or multiples of the fabric BDP (resolved at build time).
    pub queue_limit: Option<u64>,
    pub queue_limit_bdp: Option<f64>,
    pub tcp: TcpParams,
    pub pfc: PfcParams,
    pub alb: AlbParams,
    pub dibs: DibsParams,
    pub red: RedConfig,
}

/// A named preset: what it stands for, for `detailsim schemes`.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn() -> Scheme,
}

fn base_tcp() -> TcpParams {
    TcpParams {
        mss: 1460,
        initial_window: 10,
        rwnd: 128 * 1024,
        handshake: false,
        fast_retransmit: true,
        dupack_threshold: 3,
        rto_min: Time::from_ms(10),
        rto_initial: Time::from_ms(10),
        rto_max: Time::from_secs_f64(60.0),
        delayed_ack: false,
        delayed_ack_timeout: Time::from_us(40),
        ecn: false,
        retransmissions: true,
        cc: CongestionControl::NewReno,
        dctcp_g: 1.0 / 16.0,
        mlfq: Vec::new(),
        line_rate_start: false,
        rto_rtts: 0.0,
    }
}

/// DeTail's reorder-resistant NewReno: no fast retransmit or recovery, RTO 200 ms.
fn reorder_resistant_tcp() -> TcpParams {
    TcpParams { fast_retransmit: false, rto_min: Time::from_ms(200), rto_initial: Time::from_ms(200), ..base_tcp() }
}

fn base_pfc() -> PfcParams {
    PfcParams {
        pause_threshold: None,
        unpause_threshold: None,
        reaction_time: None,
        watchdog_timeout: Time::from_ms(100),
        watchdog_action: WatchdogAction::Report,
        ignore_limit: 3,
        deadlock_check: Time::from_ms(1),
        priorities: 0xff,
    }
}

fn base_alb() -> AlbParams {
    AlbParams { t1: 16 * 1024, t2: 64 * 1024, choice: AlbChoice::Random }
}

fn row(name: &str, lb: LoadBalancing, fc: FlowControl, source_ecn: bool, tcp: TcpParams) -> Scheme {
    Scheme {
        name: name.into(),
        load_balancing: lb,
        flow_control: fc,
        ecn_marking: EcnMarking::None,
        ecn_threshold: 64 * 1024,
        source_ecn,
        source_ecn_threshold: 64 * 1024,
        scheduling: Scheduling::StrictPriority,
        priority_eviction: false,
        egress_per_priority: false,
        queue_limit: None,
        queue_limit_bdp: None,
        tcp,
        pfc: base_pfc(),
        alb: base_alb(),
        dibs: DibsParams { enabled: false, threshold: None, max_detours: None, probability: 1.0, priorities: 0xff },
        red: RedOverrides::default().resolve().expect("RED defaults are valid"),
    }
}

fn dctcp_tcp() -> TcpParams {
    TcpParams { cc: CongestionControl::Dctcp, ecn: true, delayed_ack: true, ..base_tcp() }
}

fn dctcp_row(name: &str) -> Scheme {
    let mut s = row(name, LoadBalancing::FlowHash, FlowControl::TailDrop, false, dctcp_tcp());
    s.ecn_marking = EcnMarking::PerPort;
    s.ecn_threshold = 30 * 1024;
    s
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "fh",
        summary: "DeTail's baseline: flow hashing (ECMP), tail drop, strict priorities, NewReno with fast retransmit, RTO 10 ms",
        build: || row("fh", LoadBalancing::FlowHash, FlowControl::TailDrop, false, base_tcp()),
    },
    Preset {
        name: "scatter",
        summary: "packet scatter (random acceptable port per packet), tail drop, NewReno with fast retransmit, RTO 10 ms",
        build: || row("scatter", LoadBalancing::PacketScatter, FlowControl::TailDrop, false, base_tcp()),
    },
    Preset {
        name: "lps",
        summary: "lossless packet scatter: packet scatter, PFC, reorder-resistant NewReno (no fast retransmit, reorder buffer), RTO 200 ms",
        build: || row("lps", LoadBalancing::PacketScatter, FlowControl::Pfc, false, reorder_resistant_tcp()),
    },
    Preset {
        name: "detail",
        summary: "DeTail: adaptive load balancing (T1 16 KB, T2 64 KB), PFC, reorder-resistant NewReno with source ECN (64 KB), RTO 200 ms",
        build: || row("detail", LoadBalancing::Adaptive, FlowControl::Pfc, true, TcpParams { ecn: true, ..reorder_resistant_tcp() }),
    },
    Preset {
        name: "pfc_only",
        summary: "ablation: FH plus PFC (flow hashing, lossless, NewReno with fast retransmit, RTO 10 ms)",
        build: || row("pfc_only", LoadBalancing::FlowHash, FlowControl::Pfc, false, base_tcp()),
    },
    Preset {
        name: "tcp",
        summary: "plain TCP NewReno: flow hashing, tail drop, fast retransmit, RTO 10 ms, no ECN",
        build: || row("tcp", LoadBalancing::FlowHash, FlowControl::TailDrop, false, base_tcp()),
    },
    Preset {
        name: "dctcp",
        summary: "DCTCP: switch ECN marking per port at K = 30 KB, alpha-based window cut (g = 1/16), delayed ACKs with DCTCP echo, flow hashing, tail drop",
        build: || dctcp_row("dctcp"),
    },
    Preset {
        name: "dibs",
        summary: "DIBS + DCTCP: a packet whose egress queue is full is detoured to a random other switch port with room instead of dropped; fast retransmit off",
        build: || {
            let mut s = dctcp_row("dibs");
            s.dibs.enabled = true;
            s.tcp.fast_retransmit = false;
            s
        },
    },
    Preset {
        name: "pias",
        summary: "PIAS: host MLFQ tagging (thresholds from [scheme.tcp] mlfq_thresholds; the front end solves \"optimal\"), per-port ECN, DCTCP, strict priorities",
        build: || dctcp_row("pias"),
    },
    Preset {
        name: "las",
        summary: "LAS: every queue serves the packet of the flow with the least attained service (bytes sent), DCTCP with per-port ECN; the ideal information-agnostic reference of PIAS",
        build: || {
            let mut s = dctcp_row("las");
            s.scheduling = Scheduling::Las;
            s
        },
    },
    Preset {
        name: "l2dct",
        summary: "L2DCT: DCTCP whose window cut and increase are weighted by the bytes the flow has sent (w 2.5 -> 0.125 from 200 to 1000 segments), per-port ECN at K = 30 KB",
        build: || {
            let mut s = dctcp_row("l2dct");
            s.tcp.cc = CongestionControl::L2dct;
            s
        },
    },
    Preset {
        name: "pfabric",
        summary: "pFabric: queues send the earliest packet of the flow with the fewest unacknowledged bytes, a full queue drops its lowest-priority packet, egress queues capped at 2 x the fabric BDP, line-rate start, window cut only on timeouts, RTO 3 base RTTs",
        build: || {
            let mut s = row("pfabric", LoadBalancing::FlowHash, FlowControl::TailDrop, false, base_tcp());
            s.scheduling = Scheduling::Pfabric;
            s.queue_limit_bdp = Some(2.0);
            s.tcp.cc = CongestionControl::Pfabric;
            s.tcp.line_rate_start = true;
            s.tcp.rto_rtts = 3.0;
            s
        },
    },
    Preset {
        name: "detail_pias",
        summary: "DeTail with PIAS priorities: ALB, PFC, reorder-resistant NewReno with source ECN, plus MLFQ tagging ([scheme.pias]); not evaluated by either paper",
        build: || {
            let mut s = row("detail_pias", LoadBalancing::Adaptive, FlowControl::Pfc, true, TcpParams { ecn: true, ..reorder_resistant_tcp() });
            s.name = "detail_pias".into();
            s
        },
    },
    Preset {
        name: "alb_only",
        summary: "ablation: adaptive load balancing without PFC (tail drop), reorder-resistant NewReno with RTO 10 ms",
        build: || row("alb_only", LoadBalancing::Adaptive, FlowControl::TailDrop, false, TcpParams { fast_retransmit: false, ..base_tcp() }),
    },
];

pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

impl SchemeConfig {
    pub fn resolve(&self) -> Result<Scheme, ConfigError> {
        let Some(p) = preset(&self.preset) else {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            return err("scheme.preset", format!("unknown scheme {:?}; allowed: {}", self.preset, names.join(", ")));
        };
        let mut s = (p.build)();
        if let Some(v) = self.load_balancing {
            s.load_balancing = v;
        }
        if let Some(v) = self.flow_control {
            s.flow_control = v;
        }
        if let Some(v) = self.ecn_marking {
            s.ecn_marking = v;
        }
        if let Some(v) = self.ecn_threshold {
            s.ecn_threshold = v.0;
        }
        if let Some(v) = self.source_ecn {
            s.source_ecn = v;
        }
        if let Some(v) = self.scheduling {
            s.scheduling = v;
        }
        if s.scheduling != Scheduling::StrictPriority && s.flow_control == FlowControl::Pfc {
            return err("scheme.scheduling", "las and pfabric scheduling do not combine with PFC (pauses are per priority)");
        }
        // Under PFC a full ingress buffer never meets an arrival (pauses stop the sender first), so the option
        // changes nothing there: a scenario can set it once for its tail-drop baseline and still run DeTail.
        if let Some(v) = self.priority_eviction {
            s.priority_eviction = v;
        }
        if let Some(v) = self.egress_per_priority {
            s.egress_per_priority = v;
        }
        if let Some(v) = self.queue_limit {
            if v.0 == 0 {
                return err("scheme.queue_limit", "must be positive");
            }
            s.queue_limit = Some(v.0);
            s.queue_limit_bdp = None;
        }
        if let Some(v) = self.queue_limit_bdp {
            if !(v > 0.0 && v.is_finite()) {
                return err("scheme.queue_limit_bdp", format!("must be a positive number of bandwidth-delay products, got {v}"));
            }
            s.queue_limit_bdp = Some(v);
            s.queue_limit = None;
        }
        s.red = self.red.resolve()?;
        if let Some(v) = self.source_ecn_threshold {
            s.source_ecn_threshold = v.0;
        }
        let a = &self.alb;
        if let Some(v) = a.t1 {
            s.alb.t1 = v.0;
        }
        if let Some(v) = a.t2 {
            s.alb.t2 = v.0;
        }
        if let Some(v) = a.choice {
            s.alb.choice = v;
        }
        if s.alb.t2 < s.alb.t1 {
            return err("scheme.alb.t2", format!("must be at least t1 ({} B)", s.alb.t1));
        }
        let d = &self.dibs;
        if let Some(v) = d.enabled {
            s.dibs.enabled = v;
        }
        if let Some(v) = d.threshold {
            s.dibs.threshold = Some(v.0);
        }
        if let Some(v) = d.max_detours {
            s.dibs.max_detours = Some(v);
        }
        if let Some(v) = d.probability {
            if !(0.0..=1.0).contains(&v) {
                return err("scheme.dibs.probability", format!("must be within 0..1, got {v}"));
            }
            s.dibs.probability = v;
        }
        if let Some(v) = &d.priorities {
            if v.iter().any(|&p| p > 7) {
                return err("scheme.dibs.priorities", "priorities are 0..7");
            }
            s.dibs.priorities = v.iter().fold(0u8, |m, &p| m | (1 << p));
        }
        let pf = &self.pfc;
        if let Some(v) = pf.pause_threshold {
            s.pfc.pause_threshold = Some(v.0);
        }
        if let Some(v) = pf.unpause_threshold {
            s.pfc.unpause_threshold = Some(v.0);
        }
        if let Some(v) = pf.reaction_time {
            s.pfc.reaction_time = Some(v.0);
        }
        if let Some(v) = pf.watchdog_timeout {
            s.pfc.watchdog_timeout = v.0;
        }
        if let Some(v) = pf.watchdog_action {
            s.pfc.watchdog_action = v;
        }
        if let Some(v) = pf.ignore_limit {
            if v == 0 {
                return err("scheme.pfc.ignore_limit", "must be at least 1");
            }
            s.pfc.ignore_limit = v;
        }
        if let Some(v) = pf.deadlock_check {
            s.pfc.deadlock_check = v.0;
        }
        if let Some(v) = &pf.priorities {
            if v.is_empty() || v.iter().any(|&p| p > 7) {
                return err("scheme.pfc.priorities", "a non-empty list of priorities 0..7");
            }
            s.pfc.priorities = v.iter().fold(0u8, |m, &p| m | (1 << p));
        }
        if let (Some(p), Some(u)) = (s.pfc.pause_threshold, s.pfc.unpause_threshold) {
            if u >= p {
                return err("scheme.pfc.unpause_threshold", format!("must be below the pause threshold ({p} B)"));
            }
        }
        if s.pfc.watchdog_timeout < Time::from_ns(1) {
            return err("scheme.pfc.watchdog_timeout", "must be at least 1ns");
        }
        if s.pfc.deadlock_check > Time::ZERO && s.pfc.deadlock_check < Time::from_ns(1) {
            return err("scheme.pfc.deadlock_check", "must be at least 1ns (or \"0s\": off)");
        }
        let o = &self.tcp;
        let t = &mut s.tcp;
        if let Some(v) = o.mss {
            if v.0 < 64 || v.0 > 9000 {
                return err("scheme.tcp.mss", "must be between 64B and 9000B");
            }
            t.mss = v.0 as u32;
        }
        if let Some(v) = o.rwnd {
            if v.0 < t.mss as u64 {
                return err("scheme.tcp.rwnd", "must be at least one MSS");
            }
            t.rwnd = v.0;
        }
        if let Some(v) = o.initial_window {
            if v == 0 || v > 1_000_000 {
                return err("scheme.tcp.initial_window", format!("must be 1 to 1000000 segments, got {v}"));
            }
            t.initial_window = v;
        }
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = o.$f { t.$f = v.into_inner(); } )* };
        }
        set!(handshake, fast_retransmit, dupack_threshold, rto_min, rto_initial, rto_max, delayed_ack,
             delayed_ack_timeout, ecn, retransmissions);
        if let Some(v) = o.congestion_control {
            t.cc = v;
        }
        if let Some(g) = o.dctcp_g {
            if !(g > 0.0 && g <= 1.0) {
                return err("scheme.tcp.dctcp_g", format!("must be in (0, 1], got {g}"));
            }
            t.dctcp_g = g;
        }
        if let Some(v) = &o.mlfq_thresholds {
            let m: Vec<u64> = v.iter().map(|b| b.0).collect();
            if m.len() > 7 {
                return err("scheme.tcp.mlfq_thresholds", "at most 7 thresholds (8 priorities)");
            }
            if m.windows(2).any(|w| w[1] < w[0]) {
                return err("scheme.tcp.mlfq_thresholds", "must be non-decreasing");
            }
            t.mlfq = m;
        }
        if let Some(v) = o.line_rate_start {
            t.line_rate_start = v;
        }
        if let Some(v) = o.rto_rtts {
            if !(v >= 0.0 && v.is_finite()) {
                return err("scheme.tcp.rto_rtts", format!("must be 0 (off) or a positive number of base RTTs, got {v}"));
            }
            t.rto_rtts = v;
        }
        if t.dupack_threshold == 0 {
            return err("scheme.tcp.dupack_threshold", "must be at least 1");
        }
        if t.rto_min == Time::ZERO {
            return err("scheme.tcp.rto_min", "must be positive");
        }
        if t.rto_max < t.rto_min {
            return err("scheme.tcp.rto_max", "must be at least rto_min");
        }
        if o.rto_min.is_some() && o.rto_initial.is_none() {
            // the initial RTO follows the minimum unless it is set too
            t.rto_initial = t.rto_min;
        }
        Ok(s)
    }
}

trait IntoInner<T> {
    fn into_inner(self) -> T;
}
impl IntoInner<bool> for bool {
    fn into_inner(self) -> bool {
        self
    }
}
impl IntoInner<u32> for u32 {
    fn into_inner(self) -> u32 {
        self
    }
}
impl IntoInner<Time> for Dur {
    fn into_inner(self) -> Time {
        self.0
    }
}

pub(crate) fn d_request() -> Bytes {
    Bytes(10)
}
fn d_bg_size() -> Bytes {
    Bytes(1 << 20)
}
fn d_one() -> u32 {
    1
}
fn d_bg_prio() -> u8 {
    1
}
fn d_flow_class() -> String {
    "flow".into()
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Every server requests from uniformly random other servers.
    #[default]
    AllToAll,
    /// `frontends` servers (placed by `frontend_layout`) request from the others (back-ends) only.
    FrontToBack,
}

/// Which servers are the front-ends of a `front_to_back` workload.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FrontendLayout {
    /// Evenly spaced over the server list (servers 0, 2, 4, ... when half are front-ends), so every rack
    /// holds front-ends and back-ends alike.
    #[default]
    Spread,
    /// The first `frontends` servers (with half: the first half of the racks, pods 0-1 of the 128-server
    /// FatTree).
    First,
}

#[derive(Debug, Clone)]
pub enum WorkloadConfig {
    /// Poisson data retrievals: a small request, then a response of a size drawn from a discrete mix.
    Retrieval(RetrievalConfig),
    /// Closed-loop background flows: each server keeps `flows_per_server` flows of `size` running.
    Background(BackgroundConfig),
    /// A user's own flow list (the Python front end reads `file`, a CSV with columns
    /// src,dst,size_bytes,start_s,priority, into `rows`).
    Flows(FlowsConfig),
    /// Sequential workflows: a chain of retrievals, each starting when the previous completes.
    Sequential(SequentialConfig),
    /// Partition-aggregate workflows: parallel retrievals from `fanout` back-ends; done at the last response.
    PartitionAggregate(PartitionAggregateConfig),
    /// Incast: one receiver fetches `total` bytes split over `senders` servers at once, `repeats` times.
    Incast(IncastConfig),
    /// One-way flows with sizes from a CDF, Poisson arrivals at a rate derived from a target load,
    /// random source and destination; classes by size bucket (small, medium, large).
    Cdf(CdfConfig),
}

pub const WORKLOAD_KINDS: &[&str] = &["retrieval", "background", "flows", "sequential", "partition_aggregate", "incast", "cdf"];

/// Marks the path inside a workload in an error message, so that `parse_scenario` can join it to the
/// workload's own path (serde loses paths inside a tagged enum).
const SUBPATH: char = '\u{1}';

impl<'de> Deserialize<'de> for WorkloadConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        fn sub<T: serde::de::DeserializeOwned, E: Error>(v: Value) -> Result<T, E> {
            serde_path_to_error::deserialize(v).map_err(|e| {
                let p = e.path().to_string();
                E::custom(format!("{SUBPATH}{}{SUBPATH}{}", if p == "." { "" } else { &p }, e.into_inner()))
            })
        }
        let mut m = serde_json::Map::<String, Value>::deserialize(d)?;
        let allowed = WORKLOAD_KINDS.join(", ");
        let kind = match m.remove("kind") {
            Some(Value::String(k)) => k,
            Some(other) => return Err(D::Error::custom(format!("{SUBPATH}kind{SUBPATH}must be a string, one of {allowed}; got {other}"))),
            None => return Err(D::Error::custom(format!("{SUBPATH}kind{SUBPATH}required: one of {allowed}"))),
        };
        let v = Value::Object(m);
        Ok(match kind.as_str() {
            "retrieval" => WorkloadConfig::Retrieval(sub(v)?),
            "background" => WorkloadConfig::Background(sub(v)?),
            "flows" => WorkloadConfig::Flows(sub(v)?),
            "sequential" => WorkloadConfig::Sequential(sub(v)?),
            "partition_aggregate" => WorkloadConfig::PartitionAggregate(sub(v)?),
            "incast" => WorkloadConfig::Incast(sub(v)?),
            "cdf" => WorkloadConfig::Cdf(sub(v)?),
            k => return Err(D::Error::custom(format!("{SUBPATH}kind{SUBPATH}unknown workload {k:?}; allowed: {allowed}"))),
        })
    }
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CdfConfig {
    /// (size in bytes, cumulative probability 0..1) points, linear in between; the Python front end fills
    /// them from `cdf` (a bundled name or a file).
    pub points: Vec<[f64; 2]>,
    /// Where the points came from (for the record).
    #[serde(default)]
    pub cdf: Option<String>,
    /// Target load (payload bytes), 0 < load <= 1, on the links of `load_tier`; or give `rate` instead.
    pub load: Option<f64>,
    /// The tier the load refers to: "host" (each host's link, the default) or another tier of the
    /// topology (the mean over its links in both directions, with shortest-path routing).
    pub load_tier: Option<String>,
    /// Flows per second started by each host.
    pub rate: Option<f64>,
    #[serde(default)]
    pub priority: u8,
    /// Client/server pattern (the PIAS testbed's): this host (an index into the hosts) is the only client;
    /// it sends a `request_size` request to a random other host, which answers with a flow drawn from the
    /// CDF. Arrivals are Poisson at the client and `load` refers to the client's link. Without it every
    /// host starts one-way flows to random destinations.
    pub client: Option<u32>,
    /// Request size in the client/server pattern.
    pub request_size: Option<Bytes>,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    pub stop: Option<Dur>,
}

/// Optional bursts of a Poisson arrival process: every `burst_period`, for `burst_length`, the rate is
/// `burst_rate`; the rest of the period it is the workload's `rate`.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct BurstConfig {
    pub burst_period: Option<Dur>,
    pub burst_length: Option<Dur>,
    pub burst_rate: Option<f64>,
}

fn d_len10() -> u32 {
    10
}
fn d_fanouts() -> Vec<u32> {
    vec![10, 20, 40]
}
fn d_2kb() -> Bytes {
    Bytes(2048)
}
fn d_1mb() -> Bytes {
    Bytes(1 << 20)
}
fn d_ftb() -> Pattern {
    Pattern::FrontToBack
}
fn d_gap() -> Dur {
    Dur(Time::from_ms(1))
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SequentialConfig {
    /// Workflows per second started by each front-end.
    pub rate: f64,
    /// Retrievals per workflow.
    #[serde(default = "d_len10")]
    pub length: u32,
    pub sizes: Vec<Bytes>,
    pub weights: Option<Vec<f64>>,
    #[serde(default)]
    pub priority: u8,
    #[serde(default = "d_request")]
    pub request_size: Bytes,
    #[serde(default = "d_ftb")]
    pub pattern: Pattern,
    pub frontends: Option<u32>,
    pub frontend_layout: Option<FrontendLayout>,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    pub stop: Option<Dur>,
    pub burst_period: Option<Dur>,
    pub burst_length: Option<Dur>,
    pub burst_rate: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PartitionAggregateConfig {
    /// Workflows per second started by each front-end.
    pub rate: f64,
    #[serde(default = "d_fanouts")]
    pub fanouts: Vec<u32>,
    pub weights: Option<Vec<f64>>,
    #[serde(default = "d_2kb")]
    pub size: Bytes,
    #[serde(default)]
    pub priority: u8,
    #[serde(default = "d_request")]
    pub request_size: Bytes,
    #[serde(default = "d_ftb")]
    pub pattern: Pattern,
    pub frontends: Option<u32>,
    pub frontend_layout: Option<FrontendLayout>,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    pub stop: Option<Dur>,
    pub burst_period: Option<Dur>,
    pub burst_length: Option<Dur>,
    pub burst_rate: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    /// Host index of the receiver.
    #[serde(default)]
    pub receiver: u32,
    /// How many servers send (the first ones other than the receiver); all others by default.
    pub senders: Option<u32>,
    /// Bytes the receiver gets in total per incast, split evenly over the senders.
    #[serde(default = "d_1mb")]
    pub total: Bytes,
    #[serde(default = "d_one")]
    pub repeats: u32,
    /// Pause between the end of one incast and the start of the next.
    #[serde(default = "d_gap")]
    pub gap: Dur,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    #[serde(default)]
    pub priority: u8,
    #[serde(default = "d_request")]
    pub request_size: Bytes,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Retrievals per second issued by each requesting server.
    pub rate: f64,
    pub sizes: Vec<Bytes>,
    pub weights: Option<Vec<f64>>,
    #[serde(default)]
    pub priority: u8,
    #[serde(default = "d_request")]
    pub request_size: Bytes,
    #[serde(default)]
    pub pattern: Pattern,
    pub frontends: Option<u32>,
    pub frontend_layout: Option<FrontendLayout>,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    pub stop: Option<Dur>,
    pub burst_period: Option<Dur>,
    pub burst_length: Option<Dur>,
    pub burst_rate: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BackgroundConfig {
    #[serde(default = "d_one")]
    pub flows_per_server: u32,
    #[serde(default = "d_bg_size")]
    pub size: Bytes,
    /// A size mix instead of one size (each new flow draws its size).
    pub sizes: Option<Vec<Bytes>>,
    pub weights: Option<Vec<f64>>,
    #[serde(default = "d_bg_prio")]
    pub priority: u8,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlowsConfig {
    pub rows: Vec<FlowRow>,
    #[serde(default = "d_flow_class")]
    pub class: String,
    /// The CSV file the rows were read from (set by the front end): errors then name the file and the row.
    #[serde(default)]
    pub source: Option<String>,
}

impl FlowsConfig {
    /// The field an error about row `j`'s column `k` names: the CSV file and row, or the dotted path.
    pub fn row_field(&self, i: usize, j: usize, k: &str) -> String {
        match &self.source {
            Some(src) => format!("workload[{i}].file: {src} row {}: {k}", j + 1),
            None => format!("workload[{i}].rows[{j}].{k}"),
        }
    }
}

/// One listed flow: host indices, bytes, start time in seconds, priority (0 highest).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlowRow {
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_s: f64,
    #[serde(default)]
    pub priority: u8,
}

fn check_rate(f: &dyn Fn(&str) -> String, rate: f64, what: &str) -> Result<(), ConfigError> {
    if !(rate > 0.0 && rate.is_finite()) {
        return err(f("rate"), format!("must be a positive number of {what} per second, got {rate}"));
    }
    Ok(())
}

fn check_mix(f: &dyn Fn(&str) -> String, n: usize, weights: &Option<Vec<f64>>, what: &str) -> Result<(), ConfigError> {
    if let Some(w) = weights {
        if w.len() != n {
            return err(f("weights"), format!("must have one weight per {what} ({n} {what}s, {} weights)", w.len()));
        }
        if w.iter().any(|x| !(*x >= 0.0 && x.is_finite())) || w.iter().sum::<f64>() <= 0.0 {
            return err(f("weights"), "weights must be non-negative with a positive sum");
        }
    }
    Ok(())
}

fn check_prio(f: &dyn Fn(&str) -> String, p: u8) -> Result<(), ConfigError> {
    if p > 7 {
        return err(f("priority"), format!("must be 0 (highest) to 7 (lowest), got {p}"));
    }
    Ok(())
}

fn check_burst(f: &dyn Fn(&str) -> String, period: Option<Dur>, length: Option<Dur>, rate: Option<f64>) -> Result<(), ConfigError> {
    match (period, length, rate) {
        (None, None, None) => Ok(()),
        (Some(p), Some(l), Some(r)) => {
            if p.0 < Time::from_ns(1) {
                return err(f("burst_period"), "must be at least 1ns");
            }
            if l.0 > p.0 {
                return err(f("burst_length"), "must not exceed burst_period");
            }
            if !(r >= 0.0 && r.is_finite()) {
                return err(f("burst_rate"), format!("must be a non-negative number per second, got {r}"));
            }
            Ok(())
        }
        _ => err(f("burst_period"), "burst_period, burst_length and burst_rate go together"),
    }
}

/// The largest transfer (a flow, a response, a request): 2^50 B (1024 TB; a "bulk" flow is written as a
/// very large size) keeps every sequence number and byte count far inside 64 bits.
pub const MAX_TRANSFER: u64 = 1 << 50;

fn check_transfer(field: String, b: u64) -> Result<(), ConfigError> {
    if b == 0 || b > MAX_TRANSFER {
        return err(field, format!("must be 1B to 2^50 B (1024 TB), got {}", if b == u64::MAX { "inf".into() } else { format!("{b}B") }));
    }
    Ok(())
}

fn check_sizes(f: &dyn Fn(&str) -> String, sizes: &[Bytes]) -> Result<(), ConfigError> {
    if sizes.is_empty() {
        return err(f("sizes"), "must list at least one size, e.g. [\"2KB\", \"8KB\", \"32KB\"]");
    }
    for (j, s) in sizes.iter().enumerate() {
        check_transfer(format!("{}[{j}]", f("sizes")), s.0)?;
    }
    Ok(())
}

impl WorkloadConfig {
    pub fn validate(&self, i: usize) -> Result<(), ConfigError> {
        let f = |k: &str| format!("workload[{i}].{k}");
        match self {
            WorkloadConfig::Retrieval(r) => {
                check_rate(&f, r.rate, "retrievals")?;
                check_sizes(&f, &r.sizes)?;
                check_mix(&f, r.sizes.len(), &r.weights, "size")?;
                check_prio(&f, r.priority)?;
                check_burst(&f, r.burst_period, r.burst_length, r.burst_rate)?;
                check_transfer(f("request_size"), r.request_size.0)?;
            }
            WorkloadConfig::Background(b) => {
                check_prio(&f, b.priority)?;
                check_transfer(f("size"), b.size.0)?;
                if let Some(s) = &b.sizes {
                    check_sizes(&f, s)?;
                    check_mix(&f, s.len(), &b.weights, "size")?;
                } else if b.weights.is_some() {
                    return err(f("weights"), "goes with sizes");
                }
            }
            WorkloadConfig::Sequential(q) => {
                check_rate(&f, q.rate, "workflows")?;
                check_sizes(&f, &q.sizes)?;
                check_mix(&f, q.sizes.len(), &q.weights, "size")?;
                check_prio(&f, q.priority)?;
                check_burst(&f, q.burst_period, q.burst_length, q.burst_rate)?;
                if q.length == 0 {
                    return err(f("length"), "must be at least 1 retrieval");
                }
            }
            WorkloadConfig::PartitionAggregate(q) => {
                check_rate(&f, q.rate, "workflows")?;
                if q.fanouts.is_empty() || q.fanouts.contains(&0) {
                    return err(f("fanouts"), "must list positive fan-outs, e.g. [10, 20, 40]");
                }
                check_mix(&f, q.fanouts.len(), &q.weights, "fan-out")?;
                check_prio(&f, q.priority)?;
                check_burst(&f, q.burst_period, q.burst_length, q.burst_rate)?;
                check_transfer(f("size"), q.size.0)?;
            }
            WorkloadConfig::Cdf(c) => {
                check_prio(&f, c.priority)?;
                match (c.load, c.rate) {
                    (Some(l), None) if l > 0.0 && l <= 1.0 => {}
                    (Some(l), None) => return err(f("load"), format!("must be in (0, 1], got {l}")),
                    (None, Some(r)) => check_rate(&f, r, "flows")?,
                    _ => return err(f("load"), "give either load (fraction of the host link rate) or rate (flows/s per host)"),
                }
                if c.points.len() < 2 {
                    return err(f("points"), "a CDF needs at least two points");
                }
                let mut last = (f64::NEG_INFINITY, -1.0);
                for (j, [x, p]) in c.points.iter().copied().map(|a| [a[0], a[1]]).enumerate() {
                    if !(x >= 0.0 && x.is_finite()) || !(0.0..=1.0).contains(&p) || x < last.0 || p < last.1 {
                        return err(format!("workload[{i}].points[{j}]"), "sizes and probabilities must be non-decreasing, probabilities within 0..1");
                    }
                    last = (x, p);
                }
                if (last.1 - 1.0).abs() > 1e-9 {
                    return err(f("points"), "the last cumulative probability must be 1");
                }
                if !(last.0 >= 1.0 && last.0 <= MAX_TRANSFER as f64) {
                    return err(f("points"), format!("the largest size must be 1B to 2^50 B (1024 TB), got {} B", last.0));
                }
                if c.client.is_none() && c.request_size.is_some() {
                    return err(f("request_size"), "only applies with client (the client/server pattern)");
                }
                if let Some(b) = c.request_size {
                    check_transfer(f("request_size"), b.0)?;
                }
                if c.client.is_some() && c.load_tier.as_deref().is_some_and(|t| t != "host") {
                    return err(f("load_tier"), "with client, load refers to the client's link (load_tier = \"host\" or unset)");
                }
            }
            WorkloadConfig::Incast(c) => {
                check_prio(&f, c.priority)?;
                check_transfer(f("total"), c.total.0)?;
                if c.repeats == 0 {
                    return err(f("repeats"), "must be at least 1");
                }
                if c.senders == Some(0) {
                    return err(f("senders"), "must be at least 1");
                }
            }
            WorkloadConfig::Flows(fl) => {
                if fl.rows.is_empty() {
                    return err(format!("workload[{i}].rows"), "must list at least one flow");
                }
                for (j, r) in fl.rows.iter().enumerate() {
                    let g = |k: &str| fl.row_field(i, j, k);
                    check_transfer(g("size_bytes"), r.size_bytes)?;
                    if !(r.start_s >= 0.0 && r.start_s.is_finite()) {
                        return err(g("start_s"), format!("must be a non-negative number of seconds, got {}", r.start_s));
                    }
                    if r.priority > 7 {
                        return err(g("priority"), format!("must be 0 (highest) to 7 (lowest), got {}", r.priority));
                    }
                    if r.src == r.dst {
                        return err(g("dst"), "must differ from src");
                    }
                }
            }
        }
        Ok(())
    }
}

/// Parse and validate a scenario given as JSON (the binding's input format).
pub fn parse_scenario(json: &str) -> Result<Scenario, ConfigError> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = e.into_inner().to_string();
        // serde_json appends " at line L column C": meaningless for a scenario written in TOML.
        let msg = match inner.find(" at line ") {
            Some(i) => inner[..i].to_string(),
            None => inner,
        };
        // a path inside a workload, marked by its deserializer: join it to the workload's path
        if let Some(rest) = msg.strip_prefix(SUBPATH) {
            if let Some((sub, m)) = rest.split_once(SUBPATH) {
                let field = match (path.is_empty(), sub.is_empty()) {
                    (_, true) => path,
                    (true, false) => sub.to_string(),
                    (false, false) if sub.starts_with('[') => format!("{path}{sub}"),
                    (false, false) => format!("{path}.{sub}"),
                };
                return ConfigError { field, msg: m.to_string() };
            }
        }
        ConfigError { field: path, msg }
    })?;
    sc.topology.validate_keys()?;
    for (i, w) in sc.workload.iter().enumerate() {
        w.validate(i)?;
    }
    for (i, f) in sc.fault.iter().enumerate() {
        f.validate(i)?;
    }
    sc.scheme.resolve()?;
    if sc.run.duration.0 == Time::ZERO {
        return err("run.duration", "must be positive");
    }
    if sc.run.warmup.0 >= sc.run.duration.0 {
        return err("run.warmup", "must be shorter than run.duration");
    }
    if sc.run.max_events == Some(0) {
        return err("run.max_events", "must be at least 1 (or left out: no limit)");
    }
    if sc.run.max_wall.is_some_and(|d| d.0 < Time::from_ms(1)) {
        return err("run.max_wall", "must be at least 1ms");
    }
    if sc.run.sample.is_some_and(|d| d.0 < Time::from_us(1)) {
        return err("run.sample", "must be at least 1us");
    }
    Ok(sc)
}

pub fn rate_of(v: Option<RateV>) -> Option<Rate> {
    v.map(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    fn e(json: &str) -> String {
        parse_scenario(json).unwrap_err().to_string()
    }
    #[test]
    fn errors_name_the_field() {
        let m = e(r#"{"topology": {"kind": "fattree", "k": 4, "link_rate": "-1Gbps"}}"#);
        assert!(m.starts_with("topology.link_rate: "), "{m}");
        let m = e(r#"{"topology": {"kind": "fatree"}}"#);
        assert!(m.starts_with("topology.kind: unknown topology"), "{m}");
        let m = e(r#"{"topology": {"kind": "fattree", "bogus": 1}}"#);
        assert!(m.contains("bogus"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch", "k": 4}}"#);
        assert!(m.starts_with("topology.k: not a key"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "nope"}}"#);
        assert!(m.starts_with("scheme.preset: unknown scheme"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "run": {"duration": "10 parsecs"}}"#);
        assert!(m.starts_with("run.duration: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": -5, "sizes": ["2KB"]}]}"#);
        assert!(m.starts_with("workload[0].rate: "), "{m}");
        // paths inside a workload survive its tagged deserialization
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": 5, "sizes": ["2KB", {}]}]}"#);
        assert!(m.starts_with("workload[0].sizes[1]: invalid type: map"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": "x", "start_s": 0}]}]}"#);
        assert!(m.starts_with("workload[0].rows[0].size_bytes: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": 5, "sizes": ["2KB"], "bogus": 1}]}"#);
        assert!(m.starts_with("workload[0].bogus: unknown field"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "nope"}]}"#);
        assert!(m.starts_with("workload[0].kind: unknown workload \"nope\"; allowed: retrieval"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"rate": 5}]}"#);
        assert!(m.starts_with("workload[0].kind: required"), "{m}");
    }
    #[test]
    fn periods_below_a_nanosecond_and_endless_runs_are_refused() {
        let base = r#"{"topology": {"kind": "single_switch"}, "#;
        let m = e(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"watchdog_timeout": "1ps"}}}}}}"#));
        assert!(m.starts_with("scheme.pfc.watchdog_timeout: must be at least 1ns"), "{m}");
        let m = e(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"deadlock_check": "999ps"}}}}}}"#));
        assert!(m.starts_with("scheme.pfc.deadlock_check: must be at least 1ns"), "{m}");
        // 0s switches the deadlock check off
        parse_scenario(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"deadlock_check": "0s"}}}}}}"#)).unwrap();
        let m = e(&format!(
            r#"{base}"workload": [{{"kind": "retrieval", "rate": 5, "sizes": ["2KB"], "burst_period": "1ps", "burst_length": "1ps", "burst_rate": 9}}]}}"#
        ));
        assert!(m.starts_with("workload[0].burst_period: must be at least 1ns"), "{m}");
        let m = e(&format!(r#"{base}"run": {{"sample": "10ps"}}}}"#));
        assert!(m.starts_with("run.sample: must be at least 1us"), "{m}");
        let m = e(&format!(r#"{base}"run": {{"max_events": 0}}}}"#));
        assert!(m.starts_with("run.max_events: "), "{m}");
        let m = e(&format!(r#"{base}"run": {{"duration": "18000000s"}}}}"#));
        assert!(m.starts_with("run.duration: ") && m.contains("at most 1000000s"), "{m}");
        let m = e(&format!(r#"{base}"workload": [{{"kind": "retrieval", "rate": 5, "sizes": ["2KB", "inf"]}}]}}"#));
        assert!(m.starts_with("workload[0].sizes[1]: must be 1B to 2^50 B"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch", "link_rate": "1000Tbps"}}"#);
        assert!(m.starts_with("topology.link_rate: ") && m.contains("at most 100Tbps"), "{m}");
    }
    #[test]
    fn flow_rows_name_their_csv_row() {
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "source": "f.csv",
            "rows": [{"src": 0, "dst": 1, "size_bytes": 10, "start_s": 0.0, "priority": 9}]}]}"#);
        assert!(m.starts_with("workload[0].file: f.csv row 1: priority: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "rows": []}]}"#);
        assert!(m.starts_with("workload[0].rows: must list at least one flow"), "{m}");
    }
    #[test]
    fn presets_resolve() {
        let sc = parse_scenario(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "fh", "tcp": {"rto_min": "200ms"}}}"#).unwrap();
        let s = sc.scheme.resolve().unwrap();
        assert_eq!(s.tcp.rto_min, Time::from_ms(200));
        assert_eq!(s.tcp.rto_initial, Time::from_ms(200));
        // lowering the minimum of a 200 ms preset lowers the initial RTO with it
        let sc = parse_scenario(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "lps", "tcp": {"rto_min": "1ms"}}}"#).unwrap();
        assert_eq!(sc.scheme.resolve().unwrap().tcp.rto_initial, Time::from_ms(1));
        assert_eq!(s.load_balancing, LoadBalancing::FlowHash);
    }
}
