//! Resolved schemes: the parameters every mechanism reads, and the named presets (one row of the
//! policy table each) that a scenario starts from.

use super::*;
use crate::mechanisms::red::RedParams;
use crate::units::QLen;
use detailsim_engine::Time;

/// RED as a scheme sets it (`[scheme.red]`): the parameters of every port, and the thresholds of the
/// ports of named link tiers (`tiers.<tier>`, each key the port's value where unset). The scheme's
/// resolution checks every port's parameters (`check`), so reading them cannot fail afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct RedConfig {
    pub min: QLen,
    pub max: QLen,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
    pub tiers: std::collections::BTreeMap<String, RedTierOverrides>,
}

impl Default for RedConfig {
    /// ns-3's RedQueueDisc defaults.
    fn default() -> Self {
        RedConfig { min: RED_DEFAULT_MIN, max: RED_DEFAULT_MAX, max_p: RED_DEFAULT_MAX_P, weight: RED_DEFAULT_WEIGHT, gentle: true, tiers: Default::default() }
    }
}

impl RedConfig {
    fn params(&self, tier: Option<&RedTierOverrides>) -> Result<RedParams, String> {
        let (min, max, max_p) = match tier {
            Some(t) => (t.min_threshold.map_or(self.min, |q| q.0), t.max_threshold.map_or(self.max, |q| q.0), t.max_probability.unwrap_or(self.max_p)),
            None => (self.min, self.max, self.max_p),
        };
        RedParams::new(min, max, max_p, self.weight, self.gentle)
    }

    /// The parameters of a port on no named tier.
    pub fn base(&self) -> RedParams {
        self.params(None).expect("RED's parameters are checked when the scheme resolves")
    }

    /// The parameters of a port on link tier `tier`.
    pub fn for_tier(&self, tier: &str) -> RedParams {
        self.params(self.tiers.get(tier)).expect("RED's parameters are checked when the scheme resolves")
    }

    /// Every port's parameters are valid (the thresholds in one unit, the upper above the lower); the error
    /// names the upper threshold's key.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        self.params(None).map_err(|msg| ConfigError { field: "scheme.red.max_threshold".into(), msg })?;
        for (name, t) in &self.tiers {
            self.params(Some(t)).map_err(|msg| ConfigError { field: format!("scheme.red.tiers.{name}.max_threshold"), msg })?;
        }
        Ok(())
    }
}

pub const RED_DEFAULT_MIN: QLen = QLen::Packets(5);

pub const RED_DEFAULT_MAX: QLen = QLen::Packets(15);

pub const RED_DEFAULT_MAX_P: f64 = 0.02;

pub const RED_DEFAULT_WEIGHT: f64 = 0.002;

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
    /// How a switch port's egress buffer is shared among the priorities.
    pub egress_sharing: BufferSharing,
    /// How a switch port's ingress buffer is shared among the priorities.
    pub ingress_sharing: BufferSharing,
    /// Cap on each switch egress queue: bytes, or multiples of the fabric BDP (resolved at build time).
    pub queue_limit: Option<u64>,
    pub queue_limit_bdp: Option<f64>,
    pub tcp: TcpParams,
    pub pfc: PfcParams,
    pub alb: AlbParams,
    pub dibs: DibsParams,
    pub red: RedConfig,
    /// Where the MLFQ thresholds in `tcp.mlfq` came from (set when the simulator is built; None without
    /// tagging).
    pub mlfq_source: Option<MlfqSource>,
}

/// A mechanism a scheme may turn on beyond the pipeline every scheme runs (queues, PFC, forwarding, ECN
/// marking, the scheduler of `scheduling`, the congestion control of `tcp.congestion_control`). A driver
/// that implements only some of them (live mode: `live::LIVE_OPTIONAL`) refuses a scheme that needs another
/// by its field; a new one is an arm here and in `Scheme::optional`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optional {
    /// DIBS: a switch detours what its buffer refuses.
    Dibs,
    /// A full ingress evicts lower-priority packets.
    PriorityEviction,
    /// PIAS's MLFQ: hosts tag a flow's packets by the bytes it has sent.
    Mlfq,
}

impl Optional {
    /// The scenario field that turns it on.
    pub fn field(self) -> &'static str {
        match self {
            Optional::Dibs => "scheme.dibs",
            Optional::PriorityEviction => "scheme.priority_eviction",
            Optional::Mlfq => "scheme.tcp.mlfq_thresholds",
        }
    }
}

impl Scheme {
    /// The optional mechanisms this scheme turns on.
    pub fn optional(&self) -> Vec<Optional> {
        let on = [(Optional::Dibs, self.dibs.enabled), (Optional::PriorityEviction, self.priority_eviction), (Optional::Mlfq, !self.tcp.mlfq.is_empty())];
        on.into_iter().filter(|&(_, on)| on).map(|(o, _)| o).collect()
    }
}

/// A named preset: what it stands for, for `detailsim schemes`, and the knobs it sets over the base scheme.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    /// A `[scheme]` table (JSON) of the knobs this preset sets, each named as a scenario names it.
    pub overrides: &'static str,
}

impl Preset {
    /// The preset's scheme: the base scheme with its overrides applied through the knobs.
    pub fn build(&self) -> Scheme {
        let cfg: super::SchemeConfig = serde_json::from_str(self.overrides).unwrap_or_else(|e| panic!("preset {}: {e}", self.name));
        let mut s = base_scheme(self.name);
        cfg.apply_overrides(&mut s).unwrap_or_else(|e| panic!("preset {}: {e}", self.name));
        s
    }
}

/// The scheme every preset starts from (FH's row: flow hashing, tail drop, NewReno, no ECN), named.
pub fn base_scheme(name: &str) -> Scheme {
    row(name, LoadBalancing::FlowHash, FlowControl::TailDrop, false, base_tcp())
}

pub(crate) fn base_tcp() -> TcpParams {
    TcpParams::default()
}

pub(crate) fn base_pfc() -> PfcParams {
    PfcParams {
        pause_threshold: None,
        unpause_threshold: None,
        reaction_time: None,
        watchdog_timeout: Time::from_ms(100),
        watchdog_action: WatchdogAction::Report,
        ignore_limit: 3,
        deadlock_check: Time::from_ms(1),
        priorities: 0xff,
        eight_first: false,
    }
}

pub(crate) fn base_alb() -> AlbParams {
    AlbParams { t1: 16 * 1024, t2: 64 * 1024, choice: AlbChoice::Random }
}

pub(crate) fn row(name: &str, lb: LoadBalancing, fc: FlowControl, source_ecn: bool, tcp: TcpParams) -> Scheme {
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
        egress_sharing: BufferSharing::Shared,
        ingress_sharing: BufferSharing::Shared,
        queue_limit: None,
        queue_limit_bdp: None,
        tcp,
        pfc: base_pfc(),
        alb: base_alb(),
        dibs: DibsParams { enabled: false, threshold: None, max_detours: None, probability: 1.0, priorities: 0xff },
        red: RedConfig::default(),
        mlfq_source: None,
    }
}

/// The named presets, in the order the reference lists them: each is the base scheme (`base_scheme`: FH) with
/// the knobs its name stands for set, written as a `[scheme]` table and applied through the knobs' own
/// declarations (`config/knobs.rs`), as a scenario's overrides are.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "fh",
        summary: "DeTail's baseline: flow hashing (ECMP), tail drop, strict priorities, NewReno with fast retransmit, RTO 10 ms",
        overrides: r#"{}"#,
    },
    Preset {
        name: "scatter",
        summary: "packet scatter (random acceptable port per packet), tail drop, NewReno with fast retransmit, RTO 10 ms",
        overrides: r#"{"load_balancing": "packet_scatter"}"#,
    },
    Preset {
        name: "lps",
        summary: "lossless packet scatter: packet scatter, PFC, reorder-resistant NewReno (no fast retransmit, reorder buffer), RTO 200 ms",
        overrides: r#"{"load_balancing": "packet_scatter", "flow_control": "pfc", "tcp": {"fast_retransmit": false, "rto_min": "200ms", "rto_initial": "200ms"}}"#,
    },
    Preset {
        name: "detail",
        summary: "DeTail: adaptive load balancing (T1 16 KB, T2 64 KB), PFC, reorder-resistant NewReno with source ECN (64 KB), RTO 200 ms",
        overrides: r#"{"load_balancing": "adaptive", "flow_control": "pfc", "source_ecn": true, "tcp": {"fast_retransmit": false, "rto_min": "200ms", "rto_initial": "200ms", "ecn": true}}"#,
    },
    Preset {
        name: "pfc_only",
        summary: "ablation: FH plus PFC (flow hashing, lossless, NewReno with fast retransmit, RTO 10 ms)",
        overrides: r#"{"flow_control": "pfc"}"#,
    },
    Preset {
        name: "tcp",
        summary: "plain TCP NewReno: flow hashing, tail drop, fast retransmit, RTO 10 ms, no ECN",
        overrides: r#"{}"#,
    },
    Preset {
        name: "dctcp",
        summary: "DCTCP: switch ECN marking per port at K = 30 KB, alpha-based window cut (g = 1/16), delayed ACKs with DCTCP echo, flow hashing, tail drop",
        overrides: r#"{"ecn_marking": "per_port", "ecn_threshold": "30KB", "tcp": {"congestion_control": "dctcp", "ecn": true, "delayed_ack": true}}"#,
    },
    Preset {
        name: "dibs",
        summary: "DIBS + DCTCP: a packet whose egress queue is full is detoured to a random other switch port with room instead of dropped; fast retransmit off",
        overrides: r#"{"ecn_marking": "per_port", "ecn_threshold": "30KB", "dibs": {"enabled": true}, "tcp": {"congestion_control": "dctcp", "ecn": true, "delayed_ack": true, "fast_retransmit": false}}"#,
    },
    Preset {
        name: "pias",
        summary: "PIAS: host MLFQ tagging (thresholds \"optimal\" by default for the scenario's flow sizes and load: its cdf workload, or the traffic its workloads offer; [scheme.pias] to choose), per-port ECN, DCTCP, strict priorities",
        overrides: r#"{"ecn_marking": "per_port", "ecn_threshold": "30KB", "tcp": {"congestion_control": "dctcp", "ecn": true, "delayed_ack": true}}"#,
    },
    Preset {
        name: "las",
        summary: "LAS: every queue serves the packet of the flow with the least attained service (bytes sent), DCTCP with per-port ECN; the ideal information-agnostic reference of PIAS",
        overrides: r#"{"ecn_marking": "per_port", "ecn_threshold": "30KB", "tcp": {"congestion_control": "dctcp", "ecn": true, "delayed_ack": true}, "scheduling": "las"}"#,
    },
    Preset {
        name: "l2dct",
        summary: "L2DCT: DCTCP whose window cut and increase are weighted by the bytes the flow has sent (w 2.5 -> 0.125 from 200 to 1000 segments), per-port ECN at K = 30 KB",
        overrides: r#"{"ecn_marking": "per_port", "ecn_threshold": "30KB", "tcp": {"congestion_control": "l2dct", "ecn": true, "delayed_ack": true}}"#,
    },
    Preset {
        name: "pfabric",
        summary: "pFabric: queues send the earliest packet of the flow with the fewest unacknowledged bytes, a full queue drops its lowest-priority packet, egress queues capped at 2 x the fabric BDP, line-rate start, window cut only on timeouts, RTO 3 base RTTs",
        overrides: r#"{"scheduling": "pfabric", "queue_limit_bdp": 2.0, "tcp": {"congestion_control": "pfabric", "line_rate_start": true, "rto_rtts": 3.0}}"#,
    },
    Preset {
        name: "detail_pias",
        summary: "DeTail with PIAS priorities: ALB, PFC, reorder-resistant NewReno with source ECN, plus MLFQ tagging (thresholds solved as for pias; its demotion levels lossless); not evaluated by either paper",
        overrides: r#"{"load_balancing": "adaptive", "flow_control": "pfc", "source_ecn": true, "tcp": {"fast_retransmit": false, "rto_min": "200ms", "rto_initial": "200ms", "ecn": true}}"#,
    },
    Preset {
        name: "dcqcn",
        summary: "RoCEv2 with DCQCN: rate-limited senders from line rate (no window, no slow start), CNPs from RED-style ECN marking (100-400 KB, p 0.2), go-back-N, PFC, flow hashing; the HPCC simulator's DCQCN settings",
        overrides: r#"{"flow_control": "pfc", "ecn_marking": "red", "tcp": {"congestion_control": "dcqcn", "ecn": true, "fast_retransmit": false, "rwnd": "inf"}, "dcqcn": {"g": 0.00390625, "rate_ai": "5Mbps", "rate_hai": "50Mbps", "min_rate": "1Gbps", "alpha_interval": "1us", "decrease_interval": "4us", "increase_interval": "300us", "fast_recovery": 1}, "red": {"min_threshold": "100000B", "max_threshold": "400000B", "max_probability": 0.2, "weight": 1.0, "gentle": false}}"#,
    },
    Preset {
        name: "hpcc",
        summary: "HPCC: a window from in-band telemetry (every switch egress records queue, bytes sent, time, rate; eta 0.95, maxStage 5), paced at W / base RTT, starting at the path's BDP; go-back-N, PFC, flow hashing, no ECN",
        overrides: r#"{"flow_control": "pfc", "tcp": {"congestion_control": "hpcc", "fast_retransmit": false, "rwnd": "inf"}}"#,
    },
    Preset {
        name: "alb_only",
        summary: "ablation: adaptive load balancing without PFC (tail drop), reorder-resistant NewReno with RTO 10 ms",
        overrides: r#"{"load_balancing": "adaptive", "tcp": {"fast_retransmit": false}}"#,
    },
];

pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}
