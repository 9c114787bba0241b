//! The simulator: builds the network from a scenario and runs the event loop.
//!
//! ```text
//!  host NIC ──TxDone──► link (rate, delay) ──Arrive──► switch ingress (after forwarding delay)
//!     ▲                                                   │ strict priority, per-priority HOL
//!     │                                 XbarDone (speedup × ingress line rate; egress ≤ speedup × its rate)
//!  TCP sender/receiver (sans-IO)                          ▼
//!     ▲                                              switch egress ──TxDone──► next link …
//!  workload generators (Poisson, closed loop, CSV)
//! ```
//!
//! The mechanisms are components in `crate::mechanisms` (and `crate::transport`); the `impl Sim` blocks in
//! `switch.rs`, `host.rs`, `pfc.rs`, `faults.rs` and `workload.rs` drive them. This file holds the state,
//! construction, the event loop and the result extraction.

pub(crate) mod barrier;
pub mod faults;
pub(crate) mod fold;
pub mod host;
pub mod hosts;
mod mlfq;
pub mod parts;
pub mod pfc;
mod prefetch;
pub mod report;
pub mod state;
pub mod switch;
pub mod trace;
pub mod workload;

use crate::config::{parse_scenario, ConfigError, Scenario, Scheme, Threads};
use crate::fabric::switch::Switch as _;
pub use crate::fabric::{Fabric, Node, Port, TxCount};
use crate::packet::{Packet, PacketId};
use crate::sim::workload::Workload;
use crate::stats::DropCause;
use detailsim_engine::{Arena, EventQueue, RngStreams, Time};

pub use crate::purpose;
pub use crate::sim::hosts::{App, Hosts, Role, Transfer};
pub use crate::sim::state::{Clock, Guard, NodeOrder, Records, Split, TimerCompaction};

/// An event. `repr(u8)` fixes the layout (the tag's byte, then each variant's fields as a `repr(C)` struct:
/// a first `u32` at byte 4, a second at byte 8), so that `Ev::words` and `Ev::from_words` can carry it in
/// two registers through `Sim::schedule` (see there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Ev {
    /// A packet has fully arrived at `port` (for a switch: and passed the forwarding engine).
    Arrive {
        port: u32,
        pkt: PacketId,
    } = 0,
    /// `port` finished serializing a frame and has another one waiting: `pkt`, the frame that waited first
    /// (under a FIFO discipline; 0 otherwise), a hint for the prefetch, which a higher-priority arrival may
    /// overtake. (The port events keep port and packet at the same places, so the prefetch reads them
    /// without a branch on the kind.)
    TxDone {
        port: u32,
        pkt: PacketId,
    } = 1,
    /// A folded transfer out of ingress `port` ended (`sim/fold.rs`): its bytes leave the ingress (its
    /// packet went on when it started).
    XbarEnd {
        port: u32,
    } = 2,
    /// Ingress `port` finished moving its packet across the crossbar.
    /// (`pkt`, the packet crossing, is there for prefetching; the port knows it.)
    XbarDone {
        port: u32,
        pkt: PacketId,
    } = 3,
    /// The egress side of the crossbar at `port` is free again and ingresses wait for it.
    XbarOutFree {
        port: u32,
    } = 4,
    /// DIBS: packet `pkt`, detoured at a full ingress buffer, has crossed the crossbar into egress `port`.
    DetourDone {
        port: u32,
        pkt: PacketId,
    } = 5,
    RtxTimer {
        tr: u32,
        token: u32,
    } = 6,
    DelAckTimer {
        tr: u32,
        token: u32,
    } = 7,
    /// Workload `w` acts for its `i`-th source (next arrival, next CSV row).
    Workload {
        w: u32,
        i: u32,
    } = 8,
    /// No new flows from here on.
    ArrivalsEnd = 9,
    /// A PFC frame reaches egress `port` (the upstream side of the link) and takes effect.
    PfcFrame {
        port: u32,
        pause: u8,
        unpause: u8,
    } = 10,
    /// Periodic PFC sweep: watchdog (ports paused too long) and deadlock check (cycles of pauses).
    PfcSweep = 11,
    /// Fault `i` of the scenario starts.
    Fault {
        i: u32,
    } = 12,
    /// The measurement window opens (false) or closes (true): snapshot the bytes every flow delivered.
    Window {
        close: bool,
    } = 13,
    /// Take a time-series sample (`run.sample`).
    Sample = 14,
    /// `run.event_order = "node"`: transfer `tr` (incarnation `uid`)'s sender has closed (its last byte
    /// was acknowledged), and the news reaches the receiver, which closes too.
    Fin {
        tr: u32,
        uid: u32,
    } = 15,
    /// Retrieval `app` (incarnation `uid`)'s server has spent its `server_time` on the request: the response
    /// starts.
    Respond {
        app: u32,
        uid: u32,
    } = 16,
}

const _: () = assert!(std::mem::size_of::<Ev>() == 12 && std::mem::align_of::<Ev>() == 4);

impl Ev {
    /// The event's bytes as two words (bytes 0-7, bytes 8-11), built from its fields in registers: the
    /// layout `repr(u8)` gives (the tag's byte; a first `u32` field at byte 4, a second at byte 8; `PfcFrame`'s
    /// two bytes at 8 and 9; `Window`'s flag at byte 1). Inlined where the event is made, the match folds
    /// to its one arm.
    #[inline(always)]
    pub(crate) fn words(self) -> (u64, u32) {
        let two = |tag: u8, a: u32, b: u32| (tag as u64 | (a as u64) << 32, b);
        match self {
            Ev::Arrive { port, pkt } => two(0, port, pkt),
            Ev::TxDone { port, pkt } => two(1, port, pkt),
            Ev::XbarEnd { port } => two(2, port, 0),
            Ev::XbarDone { port, pkt } => two(3, port, pkt),
            Ev::XbarOutFree { port } => two(4, port, 0),
            Ev::DetourDone { port, pkt } => two(5, port, pkt),
            Ev::RtxTimer { tr, token } => two(6, tr, token),
            Ev::DelAckTimer { tr, token } => two(7, tr, token),
            Ev::Workload { w, i } => two(8, w, i),
            Ev::ArrivalsEnd => two(9, 0, 0),
            Ev::PfcFrame { port, pause, unpause } => two(10, port, pause as u32 | (unpause as u32) << 8),
            Ev::PfcSweep => two(11, 0, 0),
            Ev::Fault { i } => two(12, i, 0),
            Ev::Window { close } => ((13 | (close as u64) << 8), 0),
            Ev::Sample => two(14, 0, 0),
            Ev::Fin { tr, uid } => two(15, tr, uid),
            Ev::Respond { app, uid } => two(16, app, uid),
        }
    }

    /// A port's own event, or an arrival or PFC frame at a port that is not another part's (tagged
    /// `fabric::REMOTE`): in a part it goes into the part's own queue (`Sim::part_push`).
    #[inline(always)]
    pub(crate) fn at_own_port(self) -> bool {
        match self {
            Ev::TxDone { .. } | Ev::XbarDone { .. } | Ev::XbarEnd { .. } | Ev::XbarOutFree { .. } | Ev::DetourDone { .. } => true,
            Ev::Arrive { port, .. } | Ev::PfcFrame { port, .. } => port & crate::fabric::REMOTE == 0,
            _ => false,
        }
    }

    /// The event `words` gave.
    ///
    /// # Safety
    /// `(w0, w1)` must be what `Ev::words` returned for some event (its tag byte one of the discriminants,
    /// `Window`'s flag 0 or 1).
    #[inline(always)]
    pub(crate) unsafe fn from_words(w0: u64, w1: u32) -> Ev {
        let bytes = ((w1 as u128) << 64 | w0 as u128).to_le_bytes();
        // SAFETY: `repr(u8)` fixes the layout `words` writes (above); the caller passes words of a valid event.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<Ev>()) }
    }
}

/// The event wheel's shape for this fabric (log2 of the bucket width in ps, log2 of the bucket count).
/// The horizon reaches a quarter beyond the longest a packet event is scheduled ahead (a full frame's
/// crossing of the crossbar, for a folded transfer, `sim/fold.rs`, then its serialization plus the link and
/// forwarding delay) with at most 1,024 buckets (each occupied bucket
/// holds a partly filled chunk: more buckets, more memory); buckets are no narrower than about 16 events
/// when every link sends full frames back to back (2.5 events per frame; fewer per bucket and the
/// per-bucket work dominates). Measured on paper/steady (1 Gbps: 131 ns x 256) and the k = 8 and 16 fat
/// trees (10 Gbps: 16.4 ns x 1,024), docs/benchmarks.md. A part of a run split in `parts` holds about its
/// share of the load, so its buckets are as much wider (paper/steady in two parts: 262 ns x 128). The shape
/// changes the cost, never the order.
fn wheel_shape(ports: &[Port], full_frame: u64, parts: u8) -> (u32, u32) {
    let (mut longest, mut crossing, mut frames_per_ps) = (0u64, 0u64, 0f64);
    for p in ports {
        let ser = p.ser(full_frame).0.max(1);
        longest = longest.max(ser + p.arrive_after.0);
        crossing = crossing.max(p.xbar_time(full_frame).0);
        frames_per_ps += 1.0 / ser as f64;
    }
    let frames_per_ps = frames_per_ps / parts.max(1) as f64;
    let longest = longest + crossing;
    let horizon = (longest + longest / 4).max(1);
    let by_load = (16.0 / (2.5 * frames_per_ps).max(1e-15)).clamp(1.0, (1u64 << 30) as f64).log2().floor() as u32;
    let by_horizon = horizon.div_ceil(1024).next_power_of_two().trailing_zeros();
    let shift = by_load.max(by_horizon).clamp(8, 30);
    let buckets = (horizon >> shift).saturating_add(1).next_power_of_two().clamp(64, 1 << 16);
    (shift, buckets.trailing_zeros())
}

pub const NO: u32 = u32::MAX;
/// The timer lane is never compacted below this many events (compaction is O(n); small lanes are cheap).
const TIMER_COMPACT_MIN: usize = 4096;

pub struct Sim {
    pub now: Time,
    pub(crate) q: EventQueue<Ev>,
    pub scheme: Scheme,
    /// The network: topology, ports, nodes, routes, PFC state, markers, per-port counters (`crate::fabric`).
    pub fab: Fabric,
    /// The faults to inject (`Fabric::for_run`).
    pub faults: Vec<crate::sim::faults::Fault>,
    /// The (port, priority) pairs currently paused, and the deadlock check's state.
    pub(crate) pfc_paused: u64,
    pub(crate) pfc_deadlock: crate::sim::pfc::DeadlockState,
    pub pkts: Arena<Packet>,
    /// The host side (`Hosts`): transfers, applications, workloads, NIC admission.
    pub hosts: Hosts,
    pub rng: RngStreams,
    pub clock: Clock,
    pub guard: Guard,
    pub(crate) order: NodeOrder,
    pub(crate) split: Split,
    /// Working space reused from event to event: the forwarding engine's candidate ports (ALB's), and the
    /// victims an eviction picks.
    pub(crate) fwd_ports: Vec<u32>,
    pub(crate) victims: Vec<(u8, PacketId)>,
    /// HPCC's in-band telemetry (`cc = "hpcc"`): whether it runs, the records each packet carries (by packet
    /// id; empty otherwise), and those of the data packet being acknowledged (the ACK echoes them).
    pub(crate) int_on: bool,
    pub(crate) int_stacks: Vec<crate::transport::cc::hpcc::IntStack>,
    pub(crate) int_echo: crate::transport::cc::hpcc::IntStack,
    /// Folded crossbar transfers (`sim/fold.rs`).
    pub(crate) fold: fold::Fold,
    /// Whether packets carry their settled hops (`Packet::hops`, `Fabric::settled_hops`): in every run
    /// whose routes stay as built, that is without `link_down` faults.
    pub(crate) hops_on: bool,
    /// What the run records for its report (`Records`).
    pub rec: Records,
}

impl Sim {
    /// Build a simulation from a scenario in JSON (see `config`).
    pub fn from_json(json: &str) -> Result<Sim, ConfigError> {
        let sc = parse_scenario(json)?;
        Sim::new(&sc)
    }

    pub fn new(sc: &Scenario) -> Result<Sim, ConfigError> {
        match sc.run.threads {
            Threads::N(n) if n >= 2 => parts::split(sc, n as u8, parts::Drive::Paced),
            Threads::Auto => {
                let hosts = crate::topology::build(&sc.topology)?.hosts().count();
                match auto_parts(free_cores(), hosts) {
                    // a scenario a split run refuses, or a fabric with no cut, runs on one thread
                    n if n >= 2 => parts::split(sc, n, parts::Drive::Paced).or_else(|_| Sim::build(sc, None)),
                    _ => Sim::build(sc, None),
                }
            }
            _ => Sim::build(sc, None),
        }
    }

    /// Build a simulation, or (`part`: this part, of how many) one part of a split run (`parts::run_in_parts`).
    pub(crate) fn build(sc: &Scenario, part: Option<(u8, u8)>) -> Result<Sim, ConfigError> {
        Sim::build_sharing(sc, part, None)
    }

    /// `build` for a part after the first of a split run (`shared`: what the first part built and worked
    /// out for all; `Fabric::build_sharing`).
    pub(crate) fn build_sharing(
        sc: &Scenario,
        part: Option<(u8, u8)>,
        shared: Option<(crate::fabric::Shared, std::sync::Arc<parts::Layout>)>,
    ) -> Result<Sim, ConfigError> {
        let (shared, layout) = match (shared, part) {
            (Some((mut s, layout)), Some((me, _))) => {
                s.held = Some(s.wiring.port_node.iter().map(|&n| layout.of[n as usize] == me).collect());
                (Some(s), Some(layout))
            }
            (s, _) => (s.map(|s| s.0), None),
        };
        // resolved once, by `parse_scenario`
        let scheme = match &sc.resolved_scheme {
            Some(s) => s.clone(),
            None => sc.scheme.resolve()?,
        };
        let rng = RngStreams::new(sc.run.seed);
        let (fab, faults) = Fabric::for_run_sharing(sc, &scheme, &rng, shared)?;
        let tcp = std::sync::Arc::new(crate::config::TcpParams { wire_overhead: crate::packet::HEADERS + fab.framing.overhead, ..scheme.tcp.clone() });
        let int_on = tcp.cc == crate::config::CongestionControl::Hpcc;
        let mut fab = fab;
        if int_on {
            let nodes = &fab.nodes;
            for pt in &mut fab.ports {
                if nodes[pt.node as usize].is_switch {
                    pt.tx_hooks = true;
                }
            }
        }
        let n = fab.nodes.len();
        let duration = sc.run.duration.0;
        let mut sim = Sim {
            now: Time::ZERO,
            q: EventQueue::new(),
            scheme,
            fab,
            faults,
            pfc_paused: 0,
            pfc_deadlock: Default::default(),
            pkts: Arena::new(),
            hosts: Hosts {
                tcp,
                nic_waiting: Vec::new(),
                nic: crate::mechanisms::nic::Admission { headroom: 0, frame: 0 },
                transfers: detailsim_engine::StripedArena::new(),
                apps: detailsim_engine::StripedArena::new(),
                workflows: Arena::new(),
                workloads: Vec::new(),
                server_time: Vec::new(),
                uid: 0,
                token: 0,
                next_app_id: 0,
                segs: Vec::with_capacity(64),
            },
            rng,
            clock: Clock {
                duration,
                warmup: sc.run.warmup.0,
                end_limit: duration + sc.run.drain.0,
                arrivals_over: false,
                arrivals_stop: if sc.run.keep_load { duration + sc.run.drain.0 } else { duration },
                measure_end: if sc.run.keep_load { duration } else { Time::MAX },
                finished: false,
                finalized: false,
                grid: Time::MAX,
                next_peak: Time::MAX,
                window: None,
                timer_compact: TimerCompaction { at: TIMER_COMPACT_MIN, min: TIMER_COMPACT_MIN },
                prefetch: false,
                deep_prefetch: false,
                route_prefetch: false,
                wheel: (0, 0),
            },
            guard: Guard {
                max_events: sc.run.max_events.unwrap_or(u64::MAX),
                max_wall: sc.run.max_wall.map(|d| std::time::Duration::from_nanos(d.0 .0 / 1000)),
                incomplete: None,
                wall_start: None,
                next_guard: if sc.run.max_wall.is_some() { 0 } else { sc.run.max_events.unwrap_or(u64::MAX) },
            },
            order: NodeOrder {
                acting: 0,
                node_counts: Vec::new(),
                open_keys: Vec::new(),
                row_keys: Vec::new(),
                transfer_count: Vec::new(),
                next_port: vec![1024; n],
            },
            split: Split::default(),
            fwd_ports: Vec::new(),
            victims: Vec::new(),
            int_on,
            int_stacks: Vec::new(),
            int_echo: Default::default(),
            fold: Default::default(),
            hops_on: false,
            rec: Records::default(),
        };
        sim.hops_on = !sim.faults.iter().any(|f| matches!(f.kind, crate::sim::faults::FaultKind::LinkDown));
        let frame = sim.fab.framing.full_frame() as u64;
        // the NIC keeps room for control segments (ACKs, SYNs): data is admitted up to this much below the cap.
        // A RoCE NIC has no queue of data in front of the wire: its scheduler picks the next queue pair's
        // segment (at the rate its rate limiter allows) only when the port can take it, so data waits in
        // the queue pairs, not in a FIFO that would go out at line rate after a PAUSE whatever DCQCN decided.
        // Its queue takes two full frames of data (one on the wire, one ready) and keeps the rest of the
        // buffer for the ACKs, NACKs and CNPs a paused port holds (with 8 frames, hosts paused under DCQCN
        // dropped their ACKs, and their senders waited for timeouts).
        let hb = sim.fab.topo.host_buffer;
        let control = if sim.hosts.tcp.cc.roce() { hb.saturating_sub(2 * frame) } else { (8 * frame).min(hb / 4) };
        sim.hosts.nic = crate::mechanisms::nic::Admission { headroom: control, frame };
        sim.hosts.nic_waiting = vec![Default::default(); sim.fab.nodes.len()];
        sim.fab.port_ctr = vec![Default::default(); sim.fab.ports.len()];
        sim.fab.tx_count = vec![TxCount::default(); sim.fab.ports.len()];
        debug_assert!(sim.q.is_empty());
        // (a later part of a split run takes the first's)
        let (shift, bits) = match &layout {
            Some(l) => l.wheel,
            None => wheel_shape(&sim.fab.ports, sim.fab.framing.full_frame() as u64, part.map_or(1, |(_, n)| n)),
        };
        sim.q = EventQueue::with_wheel(shift, bits);
        sim.clock.wheel = (shift, bits);
        let (ports, l2) = (sim.fab.wiring.port_node.len(), detailsim_engine::probe::l2_bytes());
        sim.clock.prefetch = ports >= prefetch::prefetch_ports(l2);
        sim.clock.deep_prefetch = ports >= prefetch::deep_prefetch_ports(l2);
        // (where the ports' state leaves the L2: see `Fabric::waited`)
        sim.fab.far_waiting(sim.clock.deep_prefetch);
        sim.clock.route_prefetch = ports >= prefetch::ROUTE_PREFETCH_PORTS && sim.scheme.load_balancing == crate::config::LoadBalancing::FlowHash;
        // (from the whole fabric: a later part takes the first's)
        sim.fold.margin = layout.as_ref().map_or_else(|| sim.alb_fold_margin(), |l| l.alb_margin);
        sim.clock.grid = layout.as_ref().map_or_else(|| sim.fabric_grid(), |l| l.grid);
        sim.clock.next_peak = sim.clock.grid;
        sim.clock.end_limit = sim.grid_end(sim.clock.end_limit);
        for (i, w) in sc.workload.iter().enumerate() {
            let wl = Workload::new(&mut sim, i, w)?;
            wl.check_capacity(i, w)?;
            if let Workload::Flows { rows, .. } = &wl {
                let late = rows.iter().filter(|r| r.0 >= sim.clock.arrivals_stop).count() as u64;
                if late > 0 {
                    sim.rec.rows_not_started.push((i as u32, late));
                }
            }
            sim.hosts.workloads.push(wl);
            sim.hosts.server_time.push(w.server_time());
        }
        sim.derive_mlfq(sc)?;
        if let Some((me, n)) = part {
            sim.make_part(sc, me, n, layout.as_deref())?;
            if me == 0 {
                // what the later parts share, as built (before any fault at time zero changes links and routes)
                sim.split.shared = Some(Box::new(sim.fab.shareable()));
            }
        }
        for i in 0..sim.faults.len() {
            let at = sim.faults[i].at;
            if at == Time::ZERO {
                sim.fault_start(i as u32);
            } else {
                sim.schedule(at, Ev::Fault { i: i as u32 });
            }
        }
        if sim.pfc_on() {
            let dt = sim.pfc_sweep_interval();
            sim.schedule_timer(dt, Ev::PfcSweep);
        }
        for i in 0..sim.hosts.workloads.len() {
            sim.workload_start(i as u32);
        }
        sim.schedule(duration, Ev::ArrivalsEnd);
        if sc.run.measure_from.is_some() || sc.run.measure_to.is_some() {
            let from = sc.run.measure_from.map_or(Time::ZERO, |d| d.0);
            let to = sc.run.measure_to.map_or(sim.clock.end_limit, |d| d.0);
            if to <= from {
                return crate::config::err("run.measure_to", format!("must be after run.measure_from ({} s)", from.as_secs_f64()));
            }
            sim.clock.window = Some((from, to));
            sim.schedule_timer(from, Ev::Window { close: false });
            sim.schedule_timer(to, Ev::Window { close: true });
        }
        if let Some(d) = sc.run.sample {
            // the interval is at least 1us (parse_scenario); port samples over the arrival window (flow
            // samples and the drain come on top) must fit in memory
            let rows = (sim.clock.duration.0 / d.0 .0) as f64 * sim.fab.ports.len() as f64;
            if rows > 200e6 {
                return crate::config::err("run.sample", format!("{rows:.2e} port samples over run.duration; at most 2e8 (sample less often)"));
            }
            sim.rec.sample_every = Some(d.0);
            sim.schedule_timer(Time::ZERO, Ev::Sample);
        }
        sim.fold.on = sim.fold_allowed();
        Ok(sim)
    }

    /// Whether a flow starting now is measured.
    #[inline]
    pub(crate) fn measuring(&self) -> bool {
        self.now >= self.clock.warmup && self.now < self.clock.measure_end
    }

    pub(crate) fn next_uid(&mut self) -> u32 {
        self.hosts.uid = self.hosts.uid.wrapping_add(1);
        self.hosts.uid
    }
    /// A new transfer's incarnation number. With the node order it is the sending host's count of its
    /// transfers above the host's node id (so it does not depend on when other hosts start transfers:
    /// pFabric and LAS queues break rank ties by it); wraps after 2^(32 - node bits) transfers of one host.
    pub(crate) fn transfer_uid(&mut self, src: u32) -> u32 {
        let n = self.fab.nodes.len();
        if self.order.transfer_count.len() != n {
            self.order.transfer_count = vec![0; n];
        }
        let bits = usize::BITS - n.leading_zeros();
        let c = &mut self.order.transfer_count[src as usize];
        *c = c.wrapping_add(1);
        c.wrapping_shl(bits) | src
    }
    pub(crate) fn next_app_id(&mut self) -> u64 {
        let k = self.node_count(0);
        self.order.open_keys.push(k);
        self.hosts.next_app_id += 1;
        self.striped_id(self.hosts.next_app_id - 1)
    }

    /// The acting node's next count of kind `i` (0: flows opened, 1: rows completed), as (now, node, count).
    fn node_count(&mut self, i: usize) -> (u64, u32, u32) {
        if self.order.node_counts.is_empty() {
            self.order.node_counts = vec![[0; 2]; self.fab.nodes.len() + 1];
        }
        let c = &mut self.order.node_counts[self.order.acting as usize][i];
        *c += 1;
        (self.now.0, self.order.acting, *c - 1)
    }

    /// Add a completed flow's row to the flow table (with the node order, noting where it completed).
    pub(crate) fn push_row(&mut self, r: &crate::stats::FlowRecord) {
        let k = self.node_count(1);
        self.order.row_keys.push(k);
        self.rec.flows.push(r);
    }

    /// Act as node `node` (the node order: the events scheduled next come from it), as a fabric-wide event
    /// does where it touches a node's state.
    pub(crate) fn act_as(&mut self, node: u32) {
        self.q.set_source(node + 1);
        self.order.acting = node + 1;
    }

    /// Set the acting node during set-up (a host starting its flows), plus one; 0: none. What it pushes
    /// comes from it (`EventQueue::set_source`): in a split run, events that one part's set-up pushes to
    /// another's nodes are then ordered there as the ordinary run orders them.
    pub(crate) fn set_acting(&mut self, node_plus_one: u32) {
        self.order.acting = node_plus_one;
        self.q.set_source(node_plus_one);
    }

    /// The node order's flow table at the end: flow ids by where the flows were opened (time, node, that
    /// node's count; `rank` maps each id to its place) and rows by where they completed, then the unfinished
    /// ones (flows, then workflows, each by id; `unfinished` rows from `first_unfinished`, the first
    /// `workflows_from` of them flows). A run split in two parts ends with the same table as one that is not.
    pub(crate) fn canonical_flows(&mut self, rank: &[u64], first_unfinished: usize, workflows_from: usize) {
        if let Some(t) = self.rec.trace.as_mut() {
            t.keep_flows(rank, self.now);
        }
        for id in self.rec.samples.flow.iter_mut() {
            *id = rank[*id as usize];
        }
        self.rec.samples.sort();
        let f = &mut self.rec.flows;
        for id in f.id.iter_mut() {
            *id = rank[*id as usize];
        }
        let key = |i: usize| -> (u64, u32, u64) {
            if i < first_unfinished {
                let (t, n, c) = self.order.row_keys[i];
                (t, n, c as u64)
            } else {
                (u64::MAX, (i >= first_unfinished + workflows_from) as u32, f.id[i])
            }
        };
        let mut order: Vec<usize> = (0..f.len()).collect();
        order.sort_by_key(|&i| key(i));
        f.reorder(&order);
    }

    /// Schedule `ev` at `at`. The event goes to the queue as two words in registers (`Ev::words`): passed as
    /// an `Ev`, it went through the caller's stack, written there as a byte and two `u32`s and read back as
    /// one 8-byte load, which no store can forward (docs/benchmarks.md, "The event in registers").
    #[inline(always)]
    pub(crate) fn schedule(&mut self, at: Time, ev: Ev) {
        let (w0, w1) = ev.words();
        self.schedule_words(at, w0, w1);
    }

    #[inline(never)]
    fn schedule_words(&mut self, at: Time, w0: u64, w1: u32) {
        // SAFETY: the words are `Ev::words`' (`schedule`, the only caller)
        let ev = unsafe { Ev::from_words(w0, w1) };
        self.schedule_inline(at, ev);
    }

    /// `schedule` inlined into the caller (the event's fields stored into the queue straight from its
    /// registers): for the one call on the folded transfer's path (`start_folded`), which the compiler
    /// inlined when `schedule` was an ordinary function; elsewhere the call is shorter.
    #[inline(always)]
    pub(crate) fn schedule_inline(&mut self, at: Time, ev: Ev) {
        // (in a part, the common events, at a port of its own, go straight into the queue too: the check is
        // a compare or two where `part_push` is a call)
        if !self.diverts() || ev.at_own_port() {
            self.q.push(at, ev);
        } else {
            self.part_push(at, ev, false);
        }
    }

    /// Schedule a timer (kept in the queue's timer lane: most are cancelled before they fire).
    pub(crate) fn schedule_timer(&mut self, at: Time, ev: Ev) {
        if !self.diverts() {
            self.q.push_timer(at, ev);
        } else {
            self.part_push(at, ev, true);
        }
    }

    /// Run until simulated time `limit` or the end of the run; returns whether the run has ended.
    pub fn run_until(&mut self, limit: Time) -> bool {
        if self.drives_parts() {
            return self.run_parts_until(limit);
        }
        if self.fold.on && self.fold.ins.len() != self.fab.ports.len() {
            self.fold_ready();
        }
        while !self.clock.finished {
            if self.rec.counters.events >= self.guard.next_guard && self.guard_hit() {
                self.stop_incomplete();
                break;
            }
            let Some((t, ev)) = self.q.pop_until(limit.min(self.clock.end_limit)) else {
                if self.in_window() {
                    // a part's window is done
                    break;
                }
                self.out_of_events(self.q.is_empty(), limit);
                break;
            };
            debug_assert!(t >= self.now);
            if t >= self.clock.next_peak {
                self.peak_sample(t);
            }
            self.now = t;
            self.rec.counters.events += 1;
            self.prefetch_next();
            self.set_source(ev);
            match ev {
                Ev::Arrive { port, pkt } => {
                    let node = self.fab.ports[port as usize].node;
                    if self.fab.nodes[node as usize].is_switch {
                        self.switch_arrive(port, pkt);
                    } else {
                        self.host_receive(pkt);
                    }
                }
                Ev::TxDone { port, .. } => {
                    self.fab.ports[port as usize].tx_event = false;
                    self.tx_try(port);
                }
                Ev::XbarDone { port, .. } => self.xbar_done(port),
                Ev::XbarEnd { port } => self.xbar_end_folded(port),
                Ev::DetourDone { port, pkt } => self.detour_done(port, pkt),
                Ev::XbarOutFree { port } => {
                    self.fab.ports[port as usize].xbar.woken();
                    if self.fab.ports[port as usize].waiting {
                        self.wake_waiters(port);
                    }
                }
                Ev::RtxTimer { tr, token } => self.on_rtx_timer(tr, token),
                Ev::DelAckTimer { tr, token } => self.on_delack_timer(tr, token),
                Ev::Workload { w, i } => self.workload_event(w, i),
                Ev::ArrivalsEnd => {
                    self.shared_event();
                    self.clock.arrivals_over = true;
                    self.check_finished();
                }
                Ev::PfcFrame { port, pause, unpause } => self.pfc_apply(port, pause, unpause),
                Ev::PfcSweep => {
                    self.shared_event();
                    self.pfc_sweep()
                }
                Ev::Fault { i } => {
                    self.shared_event();
                    self.fault_start(i)
                }
                Ev::Window { close } => {
                    self.shared_event();
                    self.window_edge(close)
                }
                Ev::Sample => {
                    self.shared_event();
                    self.take_sample()
                }
                Ev::Fin { tr, uid } => self.receiver_close(tr, uid),
                Ev::Respond { app, uid } => self.respond(app, uid),
            }
        }
        if !self.in_window() {
            // (the state may be read from outside now)
            self.settle_all_in(false);
            if self.clock.finished {
                self.finalize();
            }
        }
        self.clock.finished
    }

    /// The first event at or after the next multiple of the grid, at `t`: count the packets in flight at
    /// the grid's multiples up to `t` (all the same: nothing happened in between). The peak of packets in
    /// flight is the largest of these counts, which a split run can add up across its parts exactly
    /// (`parts::peak`), where a peak between two multiples would depend on both parts' timing.
    #[cold]
    #[inline(never)]
    fn peak_sample(&mut self, t: Time) {
        let g = self.clock.grid.0;
        let live = self.pkts.live() as u64;
        self.part_sampled(self.clock.next_peak.0 / g, live);
        self.rec.counters.max_packets_in_flight = self.rec.counters.max_packets_in_flight.max(live);
        self.clock.next_peak = Time((t.0 / g + 1) * g);
    }

    /// A fabric-wide event (the end of arrivals, a PFC sweep, a fault, the measurement window's edges, a
    /// sample) runs in every part of a split run: it counts once, in the first part, as in the ordinary run.
    #[inline]
    fn shared_event(&mut self) {
        if !self.lead_part() {
            self.rec.counters.events -= 1;
        }
    }

    /// No event is due by `limit` (or by the end of the run): the run is over when no event is left
    /// (`empty`; with the node order it ends with its grid interval) or the next one lies beyond the end.
    #[cold]
    fn out_of_events(&mut self, empty: bool, limit: Time) {
        if empty {
            self.now = self.grid_end(self.now).min(self.clock.end_limit);
            self.clock.finished = true;
        } else if limit >= self.clock.end_limit {
            // the next event lies beyond the end of the run
            self.now = self.clock.end_limit;
            self.clock.finished = true;
        }
    }

    /// The source of the events `ev`'s handler schedules (`run.event_order = "node"`): its node, counted
    /// from 1; 0 for the fabric-wide events (the PFC sweep, faults, the end of arrivals, the measurement
    /// window, samples), which the set-up's events share.
    #[inline(always)]
    fn set_source(&mut self, ev: Ev) {
        // packet events (nearly all) read the port's node, which their handler reads next anyway
        let s = match ev {
            Ev::Arrive { port, .. } | Ev::TxDone { port, .. } | Ev::XbarDone { port, .. } | Ev::XbarEnd { port } => self.fab.ports[port as usize].node + 1,
            _ => self.event_source(ev),
        };
        self.q.set_source(s);
        self.order.acting = s;
    }

    #[inline(never)]
    fn event_source(&self, ev: Ev) -> u32 {
        self.event_node(ev).map_or(0, |n| n + 1)
    }

    /// The node whose state `ev` is about (None: a fabric-wide event).
    #[inline]
    fn event_node(&self, ev: Ev) -> Option<u32> {
        Some(match ev {
            Ev::Arrive { port, .. }
            | Ev::TxDone { port, .. }
            | Ev::XbarDone { port, .. }
            | Ev::XbarEnd { port }
            | Ev::XbarOutFree { port }
            | Ev::DetourDone { port, .. }
            | Ev::PfcFrame { port, .. } => self.fab.node_of_port(port),
            // a stale timer (its transfer ended, the slot maybe reused) does nothing
            Ev::RtxTimer { tr, .. } => self.hosts.transfers.get(tr).src,
            Ev::DelAckTimer { tr, .. } | Ev::Fin { tr, .. } => self.hosts.transfers.get(tr).dst,
            // the responder (a retrieval's data sender)
            Ev::Respond { app, .. } => self.hosts.apps.get(app).src,
            Ev::Workload { w, i } => self.hosts.workloads[w as usize].source_host(i, &self.fab.hosts),
            Ev::ArrivalsEnd | Ev::PfcSweep | Ev::Fault { .. } | Ev::Window { .. } | Ev::Sample => return None,
        })
    }

    pub(crate) fn check_finished(&mut self) {
        if self.clock.arrivals_over && self.rec.active_measured == 0 {
            let at = self.grid_end(self.now);
            if let Some(h) = self.part_hold(at) {
                // a part of a split run holds at the end of this grid interval (unless it held already); the
                // run's end is decided at a barrier from both parts
                self.clock.end_limit = self.clock.end_limit.min(h);
            } else {
                // the run ends with the grid interval this event lies in (what a split run can stop at)
                self.clock.end_limit = self.clock.end_limit.min(at);
            }
        }
    }

    /// The shortest delay with which one node can cause an event at another (`grid`): over every port,
    /// the link and forwarding delay to its peer, and with PFC the delay before a PAUSE takes effect.
    fn fabric_grid(&self) -> Time {
        let g = (0..self.fab.ports.len() as u32).map(|p| self.least_reach(p, self.fold.margin).0).min().unwrap_or(u64::MAX);
        Time(g.max(1))
    }

    /// The shortest delay with which port `p`'s node can cause an event at its peer, over the whole run:
    /// the link and forwarding delay, and with PFC (switch ingresses send PAUSE frames, hosts do not) the
    /// delay before a PAUSE takes effect, as it is now and after every fault that changes the link's rate
    /// (a faster link reacts sooner), so that the grid and a split run's lookahead hold after a fault too.
    /// Where transfers towards switches fold under ALB, a PAUSE counts as taking effect sooner by the
    /// longest transfer (`margin`, `Sim::alb_fold_margin`), so that a split run's windows let the folds see
    /// every PAUSE that could hold them (`Sim::fold_alb_idle`).
    pub(crate) fn least_reach(&self, p: u32, margin: Option<Time>) -> Time {
        let pt = &self.fab.ports[p as usize];
        let mut g = pt.arrive_after;
        if self.pfc_on() && self.fab.nodes[pt.node as usize].is_switch {
            g = g.min(Time(self.fab.pfc[p as usize].ingress.stop_delay.0.saturating_sub(margin.map_or(0, |m| m.0)).max(1)));
            for f in self.faults.iter().filter(|f| f.link == pt.link) {
                if let crate::sim::faults::FaultKind::Degrade(rate) = f.kind {
                    let d = self.pfc_derive(p, rate).expect("checked when the scenario was built");
                    g = g.min(d.stop_delay);
                }
            }
        }
        g
    }

    /// The last picosecond of the `grid` interval that holds `t`.
    pub(crate) fn grid_end(&self, t: Time) -> Time {
        let g = self.clock.grid.0;
        Time((t.0 / g).saturating_add(1).saturating_mul(g).saturating_sub(1).max(t.0))
    }

    /// Number of pending events.
    pub fn pending_events(&self) -> usize {
        self.q.len()
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(Time::MAX);
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "shared_tests.rs"]
mod shared_tests;

#[cfg(test)]
#[path = "roce_tests.rs"]
mod roce_tests;

#[cfg(test)]
#[path = "hops_tests.rs"]
mod hops_tests;

/// Cores free for this run: the cores this process may use less the load average of the last minute
/// (rounded), so that a run beside a busy sweep takes one thread; `DETAILSIM_FREE_CORES` says it instead
/// (tests, or a user who knows better).
/// `run.threads = "auto"`: as many parts as cores are free, each with at least half of
/// `AUTO_MIN_HOSTS` hosts (so a fabric with fewer than `AUTO_MIN_HOSTS` runs on one thread), at most
/// `MAX_PARTS`; 1: not split.
pub(crate) fn auto_parts(free: usize, hosts: usize) -> u8 {
    free.min(hosts / (crate::config::AUTO_MIN_HOSTS / 2)).clamp(1, crate::config::MAX_PARTS as usize) as u8
}

fn free_cores() -> usize {
    if let Some(n) = std::env::var("DETAILSIM_FREE_CORES").ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok()).unwrap_or(0.0);
    cores.saturating_sub(load.round() as usize)
}
