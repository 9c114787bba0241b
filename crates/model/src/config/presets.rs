//! Resolved schemes: the parameters every mechanism reads, and the named presets (one row of the
//! policy table each) that a scenario starts from.

use super::*;
use crate::mechanisms::red::RedParams;
use crate::units::QLen;
use detailsim_engine::Time;

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

/// A named preset: what it stands for, for `detailsim schemes`.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn() -> Scheme,
}

pub(crate) fn base_tcp() -> TcpParams {
    TcpParams::default()
}

/// DeTail's reorder-resistant NewReno: no fast retransmit or recovery, RTO 200 ms.
pub(crate) fn reorder_resistant_tcp() -> TcpParams {
    TcpParams { fast_retransmit: false, rto_min: Time::from_ms(200), rto_initial: Time::from_ms(200), ..base_tcp() }
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
        red: RedOverrides::default().resolve().expect("RED defaults are valid"),
        mlfq_source: None,
    }
}

pub(crate) fn dctcp_tcp() -> TcpParams {
    TcpParams { cc: CongestionControl::Dctcp, ecn: true, delayed_ack: true, ..base_tcp() }
}

/// DCQCN as the HPCC simulator runs it for the HPCC paper's comparison (its `run.py`, `--cc dcqcn`, at a
/// 25 Gbps NIC: CC_MODE 1, ALPHA_RESUME_INTERVAL 1 us, RATE_DECREASE_INTERVAL 4 us, RP_TIMER 300 us, EWMA_GAIN
/// 1/256, FAST_RECOVERY_TIMES 1, RATE_AI 5 Mb/s, RATE_HAI 50 Mb/s, MIN_RATE 1000 Mb/s, CLAMP_TARGET_RATE 0;
/// KMIN 100 KB, KMAX 400 KB, PMAX 0.2 on the instantaneous queue), lossless under PFC.
pub(crate) fn dcqcn_row() -> Scheme {
    let tcp = TcpParams {
        cc: CongestionControl::Dcqcn,
        ecn: true,
        fast_retransmit: false,
        rwnd: u64::MAX,
        dcqcn: crate::transport::cc::dcqcn::DcqcnParams {
            g: 1.0 / 256.0,
            rate_ai: 5e6,
            rate_hai: 50e6,
            min_rate: 1e9,
            alpha_interval: Time::from_us(1),
            decrease_interval: Time::from_us(4),
            increase_interval: Time::from_us(300),
            fast_recovery: 1,
            ..Default::default()
        },
        ..base_tcp()
    };
    let mut s = row("dcqcn", LoadBalancing::FlowHash, FlowControl::Pfc, false, tcp);
    s.ecn_marking = EcnMarking::Red;
    let red = RedParams::new(QLen::Bytes(100_000), QLen::Bytes(400_000), 0.2, 1.0, false).expect("valid");
    s.red = RedConfig { base: red, tiers: Vec::new() };
    s
}

pub(crate) fn dctcp_row(name: &str) -> Scheme {
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
        summary: "PIAS: host MLFQ tagging (thresholds \"optimal\" by default for the scenario's flow sizes and load: its cdf workload, or the traffic its workloads offer; [scheme.pias] to choose), per-port ECN, DCTCP, strict priorities",
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
        summary: "DeTail with PIAS priorities: ALB, PFC, reorder-resistant NewReno with source ECN, plus MLFQ tagging (thresholds solved as for pias; its demotion levels lossless); not evaluated by either paper",
        build: || {
            let mut s = row("detail_pias", LoadBalancing::Adaptive, FlowControl::Pfc, true, TcpParams { ecn: true, ..reorder_resistant_tcp() });
            s.name = "detail_pias".into();
            s
        },
    },
    Preset {
        name: "dcqcn",
        summary: "RoCEv2 with DCQCN: rate-limited senders from line rate (no window, no slow start), CNPs from RED-style ECN marking (100-400 KB, p 0.2), go-back-N, PFC, flow hashing; the HPCC simulator's DCQCN settings",
        build: dcqcn_row,
    },
    Preset {
        name: "hpcc",
        summary: "HPCC: a window from in-band telemetry (every switch egress records queue, bytes sent, time, rate; eta 0.95, maxStage 5), paced at W / base RTT, starting at the path's BDP; go-back-N, PFC, flow hashing, no ECN",
        build: || {
            let tcp = TcpParams { cc: CongestionControl::Hpcc, fast_retransmit: false, rwnd: u64::MAX, ..base_tcp() };
            row("hpcc", LoadBalancing::FlowHash, FlowControl::Pfc, false, tcp)
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
