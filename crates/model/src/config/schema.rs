//! The scenario schema as serde reads it: every table and key, their defaults, nothing resolved.

use crate::units::{Bytes, Dur, RateV};
use detailsim_engine::Time;
use serde::Deserialize;

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

pub(crate) fn d_duration() -> Dur {
    Dur(Time::from_ms(100))
}

pub(crate) fn d_drain() -> Dur {
    Dur(Time::from_secs_f64(1.0))
}

pub(crate) fn d_seed() -> u64 {
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
    /// How events due at the same picosecond are ordered: `"node"`, the only order (see `EventOrder`).
    #[serde(default)]
    pub event_order: EventOrder,
    /// 1, N up to `MAX_PARTS` (the run split in N parts of the fabric, each on its own thread:
    /// `sim::parts`; it gives the one-thread results exactly), or "auto", the default (`Threads`).
    #[serde(default)]
    pub threads: Threads,
}

/// `run.threads`: how many threads run the simulation. Results do not depend on it. Left out, one for the
/// library (a caller may look into the simulation as it runs, which a split run keeps in parts);
/// `detailsim run` and `detailsim.run` make it "auto" (`api.execute`).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(try_from = "ThreadsField")]
pub enum Threads {
    /// As many as this machine has cores free (its cores less the load average), with at least half of
    /// `AUTO_MIN_HOSTS` hosts per part, when that is two or more and the scenario can be split (it uses
    /// nothing a split run refuses); one otherwise (`sim::auto_parts`). Sweeps run every run on one thread
    /// (their workers share the cores).
    Auto,
    N(u32),
}

impl Default for Threads {
    fn default() -> Threads {
        Threads::N(1)
    }
}

/// The fabrics `Threads::Auto` splits: at least this many hosts, and half as many per part (a smaller one
/// runs faster on one thread than it gains from two: docs/benchmarks.md).
pub const AUTO_MIN_HOSTS: usize = 16;

/// The most parts a run can be split in (`run.threads`).
pub const MAX_PARTS: u32 = 64;

#[derive(Deserialize)]
#[serde(untagged)]
enum ThreadsField {
    N(u32),
    Word(String),
}

impl TryFrom<ThreadsField> for Threads {
    type Error = String;
    fn try_from(v: ThreadsField) -> Result<Threads, String> {
        match v {
            ThreadsField::N(n) => Ok(Threads::N(n)),
            ThreadsField::Word(w) if w == "auto" => Ok(Threads::Auto),
            ThreadsField::Word(w) => Err(format!("{w:?}: expected a number of threads (1 to {MAX_PARTS}) or \"auto\"")),
        }
    }
}

/// The order of simultaneous events (same picosecond), and with it how nodes act on each other: by the
/// node whose event scheduled them (lower node id first; events scheduled by the set-up and by fabric-wide
/// events such as the PFC sweep before any node's), then in the order that node scheduled them; and every
/// effect of one node on another is an event at least one grid interval later (`Sim::grid`): TCP source
/// ports per host, a transfer's ends closed separately (`Ev::Fin`), counts credited as senders close,
/// background sources restarted by their sender, flow lists walked per sender, runs ended on a grid
/// boundary. A run split between threads keeps this order exactly (`sim::parts`). The field stays so that
/// scenarios naming it still read; `"push"` (fabric-wide push order, the default until issue 35) is
/// refused with the reason.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EventOrder {
    #[default]
    Node,
    /// Removed; refused by the scenario check.
    Push,
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
            event_order: EventOrder::Node,
            threads: Threads::N(1),
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

pub const TOPOLOGY_KINDS: &[&str] = &["detail128", "testbed16", "fattree", "leaf_spine", "single_switch", "dumbbell", "custom"];

pub use crate::transport::cc::CongestionControl;
pub use crate::transport::params::{RtoFormula, TcpParams};

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowControl {
    /// Drop arriving packets that do not fit the ingress buffer.
    TailDrop,
    /// Priority flow control (IEEE 802.1Qbb): PAUSE/UNPAUSE on ingress drain-byte thresholds.
    Pfc,
}

/// Where a PIAS preset's demotion thresholds came from (reported in the summary's `mechanisms.mlfq`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MlfqSource {
    /// "optimal", "equal-split", "paper", or "list" (given by the scenario).
    pub method: String,
    pub queues: u32,
    /// The load the thresholds were solved for (None for a list).
    pub load: Option<f64>,
    /// The load the workloads offer on the hosts' links, where it was estimated (it may exceed 1; the
    /// solver then uses 0.99).
    pub offered_load: Option<f64>,
    /// The size distribution: which workload, table or key.
    pub from: String,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(try_from = "serde_json::Value")]
pub enum PiasThresholds {
    Method(String),
    List(Vec<Bytes>),
}

impl TryFrom<serde_json::Value> for PiasThresholds {
    type Error = String;
    fn try_from(v: serde_json::Value) -> Result<Self, String> {
        match v {
            serde_json::Value::String(m) => Ok(PiasThresholds::Method(m)),
            serde_json::Value::Array(xs) => xs
                .into_iter()
                .enumerate()
                .map(|(i, x)| serde_json::from_value::<Bytes>(x).map_err(|e| format!("threshold {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map(PiasThresholds::List),
            other => Err(format!("\"optimal\", \"equal-split\", \"paper\" or a list of byte thresholds; got {other}")),
        }
    }
}

pub(crate) fn d_preset() -> String {
    "fh".into()
}

pub(crate) fn d_request() -> Bytes {
    Bytes(10)
}

pub(crate) fn d_bg_size() -> Bytes {
    Bytes(1 << 20)
}

pub(crate) fn d_one() -> u32 {
    1
}

pub(crate) fn d_bg_prio() -> u8 {
    1
}

pub(crate) fn d_flow_class() -> String {
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

/// Workload kinds the Python front end reads from another simulator's files and hands over as `flows`:
/// the HPCC simulator's flow file and a csg-htsim connection matrix (listed in errors beside the core's).
pub const FRONT_END_WORKLOAD_KINDS: &[&str] = &["hpcc_flows", "htsim_cm"];

/// Marks the path inside a workload in an error message, so that `parse_scenario` can join it to the
/// workload's own path (serde loses paths inside a tagged enum).
pub(crate) const SUBPATH: char = '\u{1}';

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
        let allowed = WORKLOAD_KINDS.iter().chain(FRONT_END_WORKLOAD_KINDS).copied().collect::<Vec<_>>().join(", ");
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
    /// The server's time from a request's last byte to its response's first in the client/server pattern
    /// (as the request-response workloads' `server_time`).
    pub server_time: Option<Dur>,
    #[serde(default = "Dur::zero")]
    pub start: Dur,
    pub stop: Option<Dur>,
}

/// A workload table with field groups declared once (a struct's body cannot call a macro, so the macro
/// writes the whole struct): `arrivals` adds a Poisson arrival process that may burst (`start`, `stop`,
/// and every `burst_period`, for `burst_length`, `burst_rate` instead of the workload's `rate`; read
/// together by `Self::bursts`), `requests` the size of the request a response answers (`request_size`, 10 B
/// by default).
macro_rules! workload_table {
    ($(#[$m:meta])* pub struct $name:ident { $($body:tt)* } with [$($group:ident),*]) => {
        workload_table!(@build [$(#[$m])*] $name { $($body)* } [$($group),*]);
    };
    (@build [$($m:tt)*] $name:ident { $($body:tt)* } [arrivals $(, $rest:ident)*]) => {
        workload_table!(@build [$($m)*] $name { $($body)*
            #[serde(default = "Dur::zero")]
            pub start: Dur,
            pub stop: Option<Dur>,
            pub burst_period: Option<Dur>,
            pub burst_length: Option<Dur>,
            pub burst_rate: Option<f64>,
        } [$($rest),*]);
        impl $name {
            /// The bursts, as (period, length, rate) if any field is set.
            pub fn bursts(&self) -> (Option<Dur>, Option<Dur>, Option<f64>) {
                (self.burst_period, self.burst_length, self.burst_rate)
            }
        }
    };
    (@build [$($m:tt)*] $name:ident { $($body:tt)* } [frontends $(, $rest:ident)*]) => {
        workload_table!(@build [$($m)*] $name { $($body)*
            /// Arrivals per second at each front-end: retrievals (`retrieval`) or workflows (`sequential`,
            /// `partition_aggregate`).
            pub rate: f64,
            /// Weights of the size (or fan-out) mix, in its order; equal when absent.
            pub weights: Option<Vec<f64>>,
            #[serde(default)]
            pub priority: u8,
            pub frontends: Option<u32>,
            pub frontend_layout: Option<FrontendLayout>,
        } [$($rest),*]);
    };
    (@build [$($m:tt)*] $name:ident { $($body:tt)* } [requests $(, $rest:ident)*]) => {
        workload_table!(@build [$($m)*] $name { $($body)*
            #[serde(default = "d_request")]
            pub request_size: Bytes,
            /// The responder's time from a request's last byte to its response's first (an application's
            /// and its host stack's processing, which the network model does not otherwise have), the
            /// same for every request; none by default.
            #[serde(default = "Dur::zero")]
            pub server_time: Dur,
        } [$($rest),*]);
    };
    (@build [$($m:tt)*] $name:ident { $($body:tt)* } []) => {
        $($m)*
        pub struct $name { $($body)* }
    };
}

pub(crate) fn d_len10() -> u32 {
    10
}

pub(crate) fn d_fanouts() -> Vec<u32> {
    vec![10, 20, 40]
}

pub(crate) fn d_2kb() -> Bytes {
    Bytes(2048)
}

pub(crate) fn d_1mb() -> Bytes {
    Bytes(1 << 20)
}

pub(crate) fn d_ftb() -> Pattern {
    Pattern::FrontToBack
}

pub(crate) fn d_gap() -> Dur {
    Dur(Time::from_ms(1))
}

workload_table! {
    #[derive(Deserialize, Debug, Clone)]
    #[serde(deny_unknown_fields)]
    pub struct SequentialConfig {
        /// Retrievals per workflow.
        #[serde(default = "d_len10")]
        pub length: u32,
        pub sizes: Vec<Bytes>,
        #[serde(default = "d_ftb")]
        pub pattern: Pattern,
    } with [arrivals, requests, frontends]
}

workload_table! {
    #[derive(Deserialize, Debug, Clone)]
    #[serde(deny_unknown_fields)]
    pub struct PartitionAggregateConfig {
        #[serde(default = "d_fanouts")]
        pub fanouts: Vec<u32>,
        #[serde(default = "d_2kb")]
        pub size: Bytes,
        #[serde(default = "d_ftb")]
        pub pattern: Pattern,
    } with [arrivals, requests, frontends]
}

workload_table! {
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
    } with [requests]
}

workload_table! {
    #[derive(Deserialize, Debug, Clone)]
    #[serde(deny_unknown_fields)]
    pub struct RetrievalConfig {
        pub sizes: Vec<Bytes>,
        #[serde(default)]
        pub pattern: Pattern,
    } with [arrivals, requests, frontends]
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BackgroundConfig {
    /// Closed loop: flows each server keeps running (1 when neither this nor `rate` is given).
    pub flows_per_server: Option<u32>,
    /// Open loop: flows each server starts per second (Poisson arrivals until `run.duration`), instead of
    /// keeping `flows_per_server` running.
    pub rate: Option<f64>,
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
    /// The line of `source` each row came from (an HPCC flow file, an htsim connection matrix: set by the
    /// front end): errors then name the line.
    #[serde(default)]
    pub lines: Option<Vec<u32>>,
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
    /// The input's own id of the row (htsim's connection id, the HPCC flow file's line, the CSV's row),
    /// kept in the flow table as `input_id`; by default the row's position in the list, from 1.
    #[serde(default)]
    pub id: Option<u64>,
}

/// The largest transfer (a flow, a response, a request): 2^50 B (1024 TB; a "bulk" flow is written as a
/// very large size) keeps every sequence number and byte count far inside 64 bits.
pub const MAX_TRANSFER: u64 = 1 << 50;
