//! The simulator's run state, grouped by concern (the fields of `Sim` that are not the network, the
//! transport records or the results).

use crate::sim::parts;
use detailsim_engine::Time;

/// Where the run is in its schedule.
#[derive(Debug, Clone)]
pub struct Clock {
    /// The event wheel's shape (`wheel_shape`: bucket width as a shift, buckets as bits).
    pub wheel: (u32, u32),
    /// The arrival window (`run.duration`) and the warm-up: flows are measured if they start in
    /// [warmup, measure_end).
    pub duration: Time,
    pub warmup: Time,
    /// The run's end (arrival window plus drain; with the node order, the end of that grid interval).
    pub end_limit: Time,
    pub(crate) arrivals_over: bool,
    /// Open-loop workloads start flows before this time (`duration`, or the end of the drain with
    /// `run.keep_load`).
    pub(crate) arrivals_stop: Time,
    pub(crate) measure_end: Time,
    pub finished: bool,
    pub(crate) finalized: bool,
    /// The fabric's shortest delay from a node acting to another node feeling it (link plus forwarding
    /// delay, or a PFC frame's): no node can affect another sooner. With the node order a run ends at the
    /// end of an interval of this grid (`grid_end`), so that a run split in windows of it ends at the same
    /// event.
    pub grid: Time,
    /// The next multiple of `grid` at which the packets in flight are counted (`Sim::peak_sample`).
    pub(crate) next_peak: Time,
    /// `run.measure_from` .. `measure_to`: the goodput measurement window.
    pub window: Option<(Time, Time)>,
    /// The loop's housekeeping: when to compact the timer lane, and whether to prefetch in two stages, up
    /// to three events ahead, or three, up to five (see `prefetch_next`; on in fabrics whose state
    /// outgrows the caches).
    pub(crate) timer_compact: TimerCompaction,
    /// The first stage, the next event's packet and port lines (on in fabrics whose ports no longer fit
    /// the L2 comfortably, `prefetch::prefetch_ports`).
    pub(crate) prefetch: bool,
    pub(crate) deep_prefetch: bool,
    /// Three stages, the last the output port the route will take (`prefetch_next`; in the largest
    /// fabrics, under flow hashing).
    pub(crate) route_prefetch: bool,
}

/// `run.max_events` / `run.max_wall`: guards on runaway runs.
#[derive(Debug, Clone)]
pub struct Guard {
    /// u64::MAX / None: none. Change the event limit after construction with `Sim::set_max_events` (the
    /// loop looks at a precomputed threshold).
    pub(crate) max_events: u64,
    pub max_wall: Option<std::time::Duration>,
    /// When a guard ended the run: which, and when (the summary's `incomplete`).
    pub incomplete: Option<String>,
    pub(crate) wall_start: Option<std::time::Instant>,
    /// The event count at which the guards are next looked at (u64::MAX without guards): one compare per event.
    pub(crate) next_guard: u64,
}

/// The node order: what keeps a node's events in an order that does not depend on how other nodes' events
/// interleave with them. Simultaneous events are ordered by the node that scheduled them (each event's
/// handler sets its node as the queue's source; see `Sim::event_source`).
#[derive(Debug, Clone)]
pub struct NodeOrder {
    /// The node whose event is being handled, plus one (0: none; during set-up, the host whose flows
    /// start), and per node the flows it opened and the rows it completed so far; per flow id, where it
    /// was opened, and per row of the flow table, where it completed (time, node, that node's count): the
    /// order the flow table is put in at the end (`canonical_flows`), the same however the run is split.
    pub(crate) acting: u32,
    pub(crate) node_counts: Vec<[u32; 2]>,
    pub(crate) open_keys: Vec<(u64, u32, u32)>,
    pub(crate) row_keys: Vec<(u64, u32, u32)>,
    /// Transfers counted per sending host (`Sim::transfer_uid`).
    pub(crate) transfer_count: Vec<u32>,
    /// The next TCP source port, per node.
    pub(crate) next_port: Vec<u32>,
}

/// A run split in parts (`sim::parts`).
#[derive(Default)]
pub struct Split {
    /// This simulation is a part of a split run.
    pub(crate) part: Option<Box<parts::Part>>,
    /// `run.threads = N`: this is the first part, and this the others with what drives them all.
    pub(crate) parts: Option<Box<parts::Parts>>,
    /// How many parts the run is split in (0: not split), also once they are joined.
    pub(crate) n: u8,
    /// Rounds the parts ran (windows after which they met at the barrier), the same whoever ran them.
    pub(crate) rounds: u64,
    /// `part` is set: pushes go through it.
    pub(crate) divert: bool,
    /// Packets in flight in the other parts (for the conservation check at the end).
    pub(crate) in_flight_elsewhere: u64,
    /// The first part of a split run, until the others are built: what they share of its fabric as built.
    pub(crate) shared: Option<Box<crate::fabric::Shared>>,
    /// A part is running a window (`run_until` stops when the window's events are done).
    pub(crate) in_window: bool,
}

/// Compact the timer lane when it holds more events than `at` (see `Sim::compact_timers`), and never below `min`.
#[derive(Debug, Clone)]
pub struct TimerCompaction {
    pub(crate) at: usize,
    pub(crate) min: usize,
}

/// What the run records for its report: counters, the flow table and its classes, the flows measured and
/// in progress, `run.sample`'s interval and samples, the packet trace, the PFC events, and the `flows`
/// rows that never start.
#[derive(Default)]
pub struct Records {
    pub counters: crate::stats::Counters,
    pub flows: crate::stats::FlowColumns,
    pub classes: crate::stats::Classes,
    pub active_measured: u64,
    /// `run.sample`: the time-series interval, and the samples taken.
    pub sample_every: Option<Time>,
    pub samples: crate::stats::Samples,
    /// Packet trace (pcap export), when asked for.
    pub trace: Option<crate::sim::trace::Trace>,
    /// PFC's reports (pauses, watchdog, deadlocks).
    pub pfc_events: Vec<crate::sim::pfc::PfcEvent>,
    /// Per `flows` workload with rows starting at or after the arrival window: (workload, rows), reported
    /// in the summary (such rows never start).
    pub rows_not_started: Vec<(u32, u64)>,
}
