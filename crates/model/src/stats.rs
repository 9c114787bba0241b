//! Results: per-flow records in columns, counters, per-port statistics.

use serde::Serialize;
use std::collections::HashMap;

/// One row of the flow table.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowRecord {
    pub id: u64,
    pub class: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub prio: u8,
    pub start: u64,
    /// `u64::MAX` for a flow that had not completed when the run ended.
    pub end: u64,
    pub timeouts: u32,
    pub retransmits: u32,
    pub ideal: u64,
    /// Bytes delivered to the receiving application (in order), by completion or the end of the run.
    pub delivered: u64,
    /// Bytes delivered inside the measurement window (`run.measure_from` .. `measure_to`).
    pub window: u64,
    /// A flow-list row's input id (0 for generated flows).
    pub input_id: u64,
}

/// Finished (and, at the end, unfinished) measured flows, one column per field.
#[derive(Debug, Default, Clone)]
pub struct FlowColumns {
    pub id: Vec<u64>,
    pub class: Vec<u16>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size: Vec<u64>,
    pub priority: Vec<u8>,
    pub start_ps: Vec<u64>,
    /// `u64::MAX` for a flow that had not completed when the run ended.
    pub end_ps: Vec<u64>,
    pub timeouts: Vec<u32>,
    pub retransmits: Vec<u32>,
    /// The flow's completion time alone in an idle fabric (0 where not defined, e.g. workflows).
    pub ideal_ps: Vec<u64>,
    pub bytes_delivered: Vec<u64>,
    pub window_bytes: Vec<u64>,
    /// A flow-list row's id in its input (htsim's connection id, the HPCC file's line, the CSV's row); 0
    /// for generated flows.
    pub input_id: Vec<u64>,
}

impl FlowColumns {
    /// Append `o`'s rows after these.
    pub fn append(&mut self, o: FlowColumns) {
        self.id.extend(o.id);
        self.class.extend(o.class);
        self.src.extend(o.src);
        self.dst.extend(o.dst);
        self.size.extend(o.size);
        self.priority.extend(o.priority);
        self.start_ps.extend(o.start_ps);
        self.end_ps.extend(o.end_ps);
        self.timeouts.extend(o.timeouts);
        self.retransmits.extend(o.retransmits);
        self.ideal_ps.extend(o.ideal_ps);
        self.bytes_delivered.extend(o.bytes_delivered);
        self.window_bytes.extend(o.window_bytes);
        self.input_id.extend(o.input_id);
    }
    /// Put the rows in `order` (row `order[k]` becomes row `k`).
    pub fn reorder(&mut self, order: &[usize]) {
        fn by<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            *v = order.iter().map(|&i| v[i]).collect();
        }
        by(&mut self.id, order);
        by(&mut self.class, order);
        by(&mut self.src, order);
        by(&mut self.dst, order);
        by(&mut self.size, order);
        by(&mut self.priority, order);
        by(&mut self.start_ps, order);
        by(&mut self.end_ps, order);
        by(&mut self.timeouts, order);
        by(&mut self.retransmits, order);
        by(&mut self.ideal_ps, order);
        by(&mut self.bytes_delivered, order);
        by(&mut self.window_bytes, order);
        by(&mut self.input_id, order);
    }
    pub fn push(&mut self, r: &FlowRecord) {
        self.ideal_ps.push(r.ideal);
        self.id.push(r.id);
        self.class.push(r.class);
        self.src.push(r.src);
        self.dst.push(r.dst);
        self.size.push(r.size);
        self.priority.push(r.prio);
        self.start_ps.push(r.start);
        self.end_ps.push(r.end);
        self.timeouts.push(r.timeouts);
        self.retransmits.push(r.retransmits);
        self.bytes_delivered.push(r.delivered);
        self.window_bytes.push(r.window);
        self.input_id.push(r.input_id);
    }
    pub fn len(&self) -> usize {
        self.id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// Time series sampled every `run.sample`: per port queue bytes, per measured flow bytes delivered.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    pub port_t: Vec<u64>,
    pub port: Vec<u32>,
    pub ingress: Vec<u64>,
    pub egress: Vec<u64>,
    pub flow_t: Vec<u64>,
    pub flow: Vec<u64>,
    pub delivered: Vec<u64>,
}

impl Samples {
    /// Append `o`'s samples after these.
    pub fn append(&mut self, o: Samples) {
        self.port_t.extend(o.port_t);
        self.port.extend(o.port);
        self.ingress.extend(o.ingress);
        self.egress.extend(o.egress);
        self.flow_t.extend(o.flow_t);
        self.flow.extend(o.flow);
        self.delivered.extend(o.delivered);
    }

    /// Port samples by time, then port; flow samples by time, then flow id.
    pub fn sort(&mut self) {
        let mut o: Vec<usize> = (0..self.port_t.len()).collect();
        o.sort_by_key(|&i| (self.port_t[i], self.port[i]));
        self.port_t = o.iter().map(|&i| self.port_t[i]).collect();
        self.port = o.iter().map(|&i| self.port[i]).collect();
        self.ingress = o.iter().map(|&i| self.ingress[i]).collect();
        self.egress = o.iter().map(|&i| self.egress[i]).collect();
        let mut o: Vec<usize> = (0..self.flow_t.len()).collect();
        o.sort_by_key(|&i| (self.flow_t[i], self.flow[i]));
        self.flow_t = o.iter().map(|&i| self.flow_t[i]).collect();
        self.flow = o.iter().map(|&i| self.flow[i]).collect();
        self.delivered = o.iter().map(|&i| self.delivered[i]).collect();
    }
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// The arrival port's ingress buffer was full (congestion).
    IngressBuffer,
    /// A host's NIC queue was full.
    HostBuffer,
    /// No route to the destination.
    NoRoute,
    /// The packet was queued for, or sent into, a link that went down.
    LinkDown,
    /// DIBS: detoured the maximum number of times, or no port had room to detour to.
    DetourLimit,
    /// pFabric: a full egress queue dropped the arrival, or evicted a queued packet of higher rank for it;
    /// `priority_eviction`: a full ingress buffer dropped a lower-priority packet for an arrival.
    Priority,
    /// RED found the egress congested and the packet was not ECN-capable.
    Red,
}
impl DropCause {
    pub const ALL: [DropCause; 7] =
        [DropCause::IngressBuffer, DropCause::HostBuffer, DropCause::NoRoute, DropCause::LinkDown, DropCause::DetourLimit, DropCause::Priority, DropCause::Red];
    pub fn name(self) -> &'static str {
        match self {
            DropCause::IngressBuffer => "ingress_buffer",
            DropCause::HostBuffer => "host_buffer",
            DropCause::NoRoute => "no_route",
            DropCause::LinkDown => "link_down",
            DropCause::DetourLimit => "detour_limit",
            DropCause::Priority => "priority",
            DropCause::Red => "red",
        }
    }
    /// Congestion drops are the ones a lossless fabric must never have.
    pub fn is_congestion(self) -> bool {
        matches!(self, DropCause::IngressBuffer | DropCause::HostBuffer | DropCause::DetourLimit | DropCause::Priority | DropCause::Red)
    }
}

#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub events: u64,
    pub link_traversals: u64,
    pub pkts_created: u64,
    pub pkts_delivered: u64,
    pub pkts_stale: u64,
    pub drops: [u64; DropCause::ALL.len()],
    pub ecn_marks: u64,
    pub timeouts: u64,
    /// Timeouts `scheme.tcp.spurious_rto_undo` found spurious and undid (counted in `timeouts` too).
    pub spurious_timeouts: u64,
    pub retransmits: u64,
    pub flows_started: u64,
    pub flows_completed: u64,
    /// PFC frames sent (each carries pause and/or unpause bits for one or more priorities).
    pub pfc_pause_frames: u64,
    /// (port, priority) pause transitions requested.
    pub pfc_pauses: u64,
    /// The most packets in flight (created, not yet delivered or dropped) at a multiple of the fabric's grid.
    pub max_packets_in_flight: u64,
    /// Congestion drops at switches of packets of PFC (lossless) priorities: violations of the lossless
    /// invariant, and those exempt because the link's upstream ignores pauses (a fault).
    pub lossless_drops: u64,
    pub lossless_exempt_drops: u64,
    /// DIBS: detours made, and delivered packets by how many times they were detoured.
    pub detours: u64,
    /// Times a sender's data found its host NIC full and waited (back-pressure).
    pub nic_blocked: u64,
    pub detour_histogram: Vec<u64>,
    /// RoCE (DCQCN, HPCC): CNPs the receivers sent, NACKs, and DCQCN's rate cuts.
    pub cnps: u64,
    pub nacks: u64,
    pub rate_cuts: u64,
    /// PIAS: data packets sent at a priority below their flow's own (demoted by MLFQ tagging).
    pub mlfq_demoted: u64,
    /// HPCC: window updates that found the path's utilisation at or above eta (multiplicative cuts).
    pub window_cuts: u64,
}
impl Counters {
    /// Add another part's counts (a split run; its `max_packets_in_flight` is joined from the parts' samples
    /// instead, `sim::parts`).
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            events,
            link_traversals,
            pkts_created,
            pkts_delivered,
            pkts_stale,
            drops,
            ecn_marks,
            timeouts,
            spurious_timeouts,
            retransmits,
            flows_started,
            flows_completed,
            pfc_pause_frames,
            pfc_pauses,
            max_packets_in_flight,
            lossless_drops,
            lossless_exempt_drops,
            detours,
            nic_blocked,
            detour_histogram,
            cnps,
            nacks,
            rate_cuts,
            mlfq_demoted,
            window_cuts,
        } = o;
        for (x, y) in [
            (&mut self.events, events),
            (&mut self.link_traversals, link_traversals),
            (&mut self.pkts_created, pkts_created),
            (&mut self.pkts_delivered, pkts_delivered),
            (&mut self.pkts_stale, pkts_stale),
            (&mut self.ecn_marks, ecn_marks),
            (&mut self.timeouts, timeouts),
            (&mut self.spurious_timeouts, spurious_timeouts),
            (&mut self.retransmits, retransmits),
            (&mut self.flows_started, flows_started),
            (&mut self.flows_completed, flows_completed),
            (&mut self.pfc_pause_frames, pfc_pause_frames),
            (&mut self.pfc_pauses, pfc_pauses),
            (&mut self.max_packets_in_flight, max_packets_in_flight),
            (&mut self.lossless_drops, lossless_drops),
            (&mut self.lossless_exempt_drops, lossless_exempt_drops),
            (&mut self.detours, detours),
            (&mut self.nic_blocked, nic_blocked),
            (&mut self.cnps, cnps),
            (&mut self.nacks, nacks),
            (&mut self.rate_cuts, rate_cuts),
            (&mut self.mlfq_demoted, mlfq_demoted),
            (&mut self.window_cuts, window_cuts),
        ] {
            *x += y;
        }
        for (x, y) in self.drops.iter_mut().zip(drops) {
            *x += y;
        }
        if self.detour_histogram.len() < detour_histogram.len() {
            self.detour_histogram.resize(detour_histogram.len(), 0);
        }
        for (x, y) in self.detour_histogram.iter_mut().zip(detour_histogram) {
            *x += y;
        }
    }
    pub fn drop(&mut self, c: DropCause) {
        self.drops[c as usize] += 1;
    }
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Class names, interned to small ids.
#[derive(Debug, Default, Clone)]
pub struct Classes {
    pub names: Vec<String>,
    index: HashMap<String, u16>,
}
impl Classes {
    pub fn id(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u16;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }
}

/// Per-port counters that change only on a drop or a mark (kept out of `Port`, whose hot fields stay
/// within fewer cache lines).
#[derive(Debug, Default, Clone, Copy)]
pub struct PortCounters {
    pub drops: u64,
    /// Congestion drops of lossless-priority packets under PFC counted here (invariant violations).
    pub lossless_drops: u64,
    pub ecn_marks: u64,
}

#[derive(Debug, Serialize, Clone)]
pub struct PortStats {
    pub node: String,
    pub port: u32,
    pub peer: String,
    pub tier: &'static str,
    pub rate_bps: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub utilisation: f64,
    pub max_ingress_bytes: u64,
    pub max_egress_bytes: u64,
    /// Time-average egress occupancy over the run.
    pub mean_egress_bytes: f64,
    pub drops: u64,
    /// Congestion drops of lossless-priority packets under PFC counted here (lossless invariant violations).
    pub lossless_drops: u64,
    pub ecn_marks: u64,
    pub up: bool,
    pub pfc_frames_sent: u64,
    pub pfc_frames_received: u64,
    pub pfc_paused_s: f64,
    /// Per priority 0..7: time this egress was paused, and PAUSE requests this port's ingress sent.
    pub pfc_paused_s_by_priority: Vec<f64>,
    pub pfc_pauses_sent_by_priority: Vec<u64>,
}
