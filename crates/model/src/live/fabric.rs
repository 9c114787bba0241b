//! The live fabric: the simulator's switch and NIC components forwarding real frames.
//!
//! ```text
//!   host kernel ─veth─► on_host_frame ─► NIC queue (8 priorities, source ECN) ─┐ paced at the link rate,
//!                                                                             │ obeys PAUSE
//!                       on_wire_frame(port) ◄── frame from the peer port ◄────┘
//!   switch port: PfcIngress::on_data ─► route (flow hash / ALB over drain bytes) ─► Switch::arrive:
//!                CIOQ: ingress queue ─► PFC check (PAUSE / UNPAUSE out of this port) ─► crossbar (speedup,
//!                   strict priority, waits while the egress is full) ─► egress queue
//!                shared buffer: the switch's MMU admits it (PFC on its dynamic threshold) ─► egress queue
//!                ─► (ECN / RED marker) ─► paced transmitter (a sent frame's bytes leave the MMU)
//!   host port, from the wire: data ─► deliver to the host's veth; PFC ─► PfcEgress (pause mask)
//! ```
//!
//! Like every component it takes `now` and an input and pushes what to do (`Out`: a frame to write to a
//! port's or a host's interface) to a buffer; the caller owns the sockets and the clock. It holds the
//! scenario's network as the simulator builds it (`crate::fabric::Fabric::for_run`: topology, routes,
//! ports with their queues and crossbar sides, PFC thresholds, markers and random streams) and runs the
//! pipeline's shared steps on it (`fabric::pipeline`: ingress admission, PFC check, crossbar start and
//! end, egress marking), which the simulator runs too; what is its own is the polled timing (a transfer's
//! end and a transmitter's next start are deadlines, not events) and the paced transmitter. Differences
//! from the simulator, on purpose: a PFC frame leaves at once and takes effect when it arrives (the stop
//! delay is the real one); propagation is whatever the veth and the forwarding loop take.

use crate::config::LoadBalancing;
use crate::config::Scheme;
use crate::fabric::switch::{Head, Refused, Switch};
use crate::fabric::BufferModel;
use crate::live::frame::{self, Ipv4Info, Kind};
use crate::mechanisms::ecn::Verdict;
use crate::mechanisms::pfc::PfcFrame;
use crate::mechanisms::queue::NIL;
use crate::packet::{PacketId, ECN_CE};
use detailsim_engine::Time;

/// Where a frame goes: out of fabric port `p` (to its peer), or into host `h`'s own interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Port(u32),
    Host(u32),
}

/// A frame to write now. The caller writes `Fabric::frame(pid)` to the target and then `release`s it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Out {
    pub to: Target,
    pub pid: PacketId,
}

/// Per-port counters of the emulator itself.
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    pub tx_frames: u64,
    pub tx_wire_bytes: u64,
    /// Serialisation time of everything sent (the busy time at the configured rate).
    pub busy_ps: u64,
    /// How late each frame started against its paced start time (ns): a histogram, so that a long run
    /// keeps a fixed size.
    pub late_ns: LateHist,
    pub pfc_sent: u64,
    pub pfc_received: u64,
    /// Frames sent back to back (queued before the previous one's paced end): their ideal spacing (the
    /// previous frame's serialisation time) and the spacing achieved. Their ratio is the achieved rate.
    pub backlog_ideal_ps: u64,
    pub backlog_actual_ps: u64,
    last_send: Time,
    last_ser: Time,
}

/// A log-linear histogram of nanosecond values: exact below 64 ns, then 64 buckets per power of two (at most
/// 1.6% relative error), the maximum exact; 14 KB whatever the number of samples.
#[derive(Debug, Clone)]
pub struct LateHist {
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

impl Default for LateHist {
    fn default() -> Self {
        LateHist { counts: vec![0; (SUB + (64 - SUB_BITS as u64) * SUB) as usize], n: 0, max: 0 }
    }
}

impl LateHist {
    fn bucket(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // v's top bit, at least SUB_BITS
        let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
        (SUB + (e - SUB_BITS) as u64 * SUB + sub) as usize
    }
    /// The smallest value that falls in bucket `i`.
    fn low(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let (e, sub) = ((i - SUB) / SUB + SUB_BITS as u64, (i - SUB) % SUB);
        (1 << e) | (sub << (e - SUB_BITS as u64))
    }
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::bucket(ns)] += 1;
        self.n += 1;
        self.max = self.max.max(ns);
    }
    pub fn len(&self) -> u64 {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Add another histogram's samples.
    pub fn merge(&mut self, o: &LateHist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.max = self.max.max(o.max);
    }
    /// The nearest-rank `q` quantile (0..1), as the lower edge of its bucket (the maximum for q = 1).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((self.n as f64 * q).ceil() as u64).clamp(1, self.n);
        if rank == self.n {
            return self.max;
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::low(i);
            }
        }
        self.max
    }
}

/// Counters of the whole fabric.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub host_frames: u64,
    pub delivered: u64,
    pub forwarded: u64,
    /// Frames that are neither IPv4 to one of our hosts nor PFC (ARP, IPv6...): not forwarded.
    pub foreign: u64,
    /// NIC queue full: the host's frame is dropped (the kernel cannot be back-pressured through a veth).
    pub nic_drops: u64,
    /// Switch ingress full, by whether the priority is lossless under PFC (those must stay 0).
    pub ingress_drops_lossy: u64,
    pub ingress_drops_lossless: u64,
    pub red_drops: u64,
    pub no_route: u64,
    pub ecn_marks: u64,
    pub pfc_frames: u64,
    pub pfc_ignoring: u64,
}

/// What only the live forwarder keeps per port, beside the network's port (`crate::fabric::Port`: its
/// queues, crossbar sides and waiters): the host whose NIC it is, the end of the transfer out of its
/// ingress, the paced transmitter, and the emulator's own counters.
#[derive(Debug, Clone, Default)]
pub struct LiveTx {
    /// The host this port belongs to (its NIC), or none for a switch port.
    pub host: Option<u32>,
    /// When the transfer out of this ingress ends (valid while the port's `xbar.in_busy`).
    pub xbar_done: Time,
    /// The paced transmitter may start the next frame at this time.
    pub tx_ready: Time,
    /// The frame being serialised and when its last bit leaves: it is handed to the peer then (store and
    /// forward, as in the simulator), not when its first bit does.
    pub on_wire: Option<(PacketId, Time)>,
    /// When the peer last resumed a paused priority.
    pub resumed_at: Time,
    pub stats: PortStats,
}

#[derive(Debug, Clone, Copy)]
struct Meta {
    out: u32,
    /// The index on its switch of the port it came in at (a shared-buffer switch's MMU charges it there
    /// until it leaves).
    inp: u32,
    prio: u8,
    ecn: u8,
    wire: u64,
    queued_at: Time,
}

pub struct Fabric {
    /// The network as a simulated run starts with it (`crate::fabric::Fabric::for_run`): ports with their
    /// queues, crossbar sides and waiters, nodes with their forwarding state and random streams, routes,
    /// PFC state and markers. The pipeline's steps are its methods (`fabric::pipeline`), the simulator's too.
    pub net: crate::fabric::Fabric,
    /// Per port, what only the live forwarder keeps.
    pub tx: Vec<LiveTx>,
    /// Host index → its node's (only) port.
    pub host_port: Vec<u32>,
    lb: LoadBalancing,
    alb: crate::config::AlbParams,
    pfc_on: bool,
    pfc_mask: u8,
    ignore_limit: u32,
    frames: Vec<Vec<u8>>,
    meta: Vec<Meta>,
    free: Vec<PacketId>,
    links: Vec<PacketId>,
    scratch: Vec<u32>,
    /// The time of the input or poll being handled (the arbiter's `now`).
    now: Time,
    out: Vec<Out>,
    pub counters: Counters,
}

/// The live forwarder drives the switch's control flow (`fabric::switch`) at its inputs and polls: a started
/// transfer's end is a poll deadline (`LiveTx::xbar_done`), and so is a busy egress side's (`poll` reads
/// `out_free_at`); a PFC frame leaves at once, as a frame on the wire.
impl Switch for Fabric {
    type Links = Vec<PacketId>;
    const WAITERS_FIRST: bool = true;
    fn now(&self) -> Time {
        self.now
    }
    fn fab(&mut self) -> &mut crate::fabric::Fabric {
        &mut self.net
    }
    fn net(&mut self) -> (&mut crate::fabric::Fabric, &mut Vec<PacketId>) {
        (&mut self.net, &mut self.links)
    }
    fn pfc_on(&self) -> bool {
        self.pfc_on
    }
    fn ignore_limit(&self) -> u32 {
        self.ignore_limit
    }
    fn send_pfc(&mut self, port: u32, f: PfcFrame) {
        self.emit_pfc(port, f);
    }
    fn pfc_ignored(&mut self, _port: u32, _prio: u8) {
        self.counters.pfc_ignoring += 1;
    }
    fn head(&mut self, _inp: u32, _prio: u8, pid: PacketId) -> Head {
        let m = &self.meta[pid as usize];
        Head::Cross { out: m.out, wire: m.wire }
    }
    fn crossing(&mut self, inp: u32, _pid: PacketId, done: Time) {
        self.tx[inp as usize].xbar_done = done;
    }
    fn retry_at(&mut self, _out: u32, _at: Time) {}
    fn crossed(&self, pid: PacketId) -> (u32, u8, u64) {
        let m = &self.meta[pid as usize];
        (m.out, m.prio, m.wire)
    }
    fn enter_egress(&mut self, out: u32, pid: PacketId, prio: u8, wire: u64) {
        self.counters.forwarded += 1;
        let ecn = self.meta[pid as usize].ecn;
        self.enqueue_egress(self.now, out, pid, prio, ecn, wire);
    }
    // live mode neither evicts, nor runs pFabric, nor detours (`LIVE_SCHEDULING`, `LIVE_OPTIONAL`): a refused frame
    // is dropped
    fn make_room(&mut self, _port: u32, _prio: u8, _wire: u64) {}
    fn admit_at(&mut self, _port: u32, _out: u32, _pid: PacketId, _wire: u64) -> bool {
        true
    }
    fn entered_by(&mut self, pid: PacketId, port: u32) {
        let base = self.net.nodes[self.net.ports[port as usize].node as usize].port_base;
        self.meta[pid as usize].inp = port - base;
    }
    fn refused(&mut self, _port: u32, pid: PacketId, _out: u32, prio: u8, _wire: u64, _why: Refused) -> Option<u32> {
        if self.pfc_on && self.pfc_mask & (1 << prio) != 0 {
            self.counters.ingress_drops_lossless += 1;
        } else {
            self.counters.ingress_drops_lossy += 1;
        }
        self.free.push(pid);
        None
    }
}

/// What live mode runs, by scheme field (allow-lists: a controller, scheduler, buffer model or optional
/// mechanism the simulator gains is refused live, by its field, until the live forwarder or the hosts run it).
/// The congestion controls of the hosts: the kernel's `reno`, NewReno, set per socket.
pub const LIVE_CONGESTION_CONTROL: &[crate::config::CongestionControl] = &[crate::config::CongestionControl::NewReno];
/// The egress schedulers of the live switches (the egress queues' strict priority, FIFO within a priority).
pub const LIVE_SCHEDULING: &[crate::config::Scheduling] = &[crate::config::Scheduling::StrictPriority];
/// The switch buffer models the live forwarder drives (`fabric::switch::Switch::arrive`): both.
pub const LIVE_BUFFER_MODELS: &[BufferModel] = &[BufferModel::Cioq, BufferModel::Shared];
/// The optional mechanisms (`config::Optional`) live mode runs: none yet (a live switch neither detours nor
/// evicts, and the hosts' kernel TCP sends a flow at one DSCP, so PIAS's demotion by bytes sent is not
/// modelled).
pub const LIVE_OPTIONAL: &[crate::config::Optional] = &[];

impl Fabric {
    /// Why a scenario's scheme, buffer model (`model`) and faults cannot run live (the field and what live
    /// mode supports), if they cannot.
    pub fn unsupported(s: &Scheme, model: BufferModel, faults: &[crate::fabric::Fault]) -> Option<String> {
        if !faults.is_empty() {
            return Some("fault: live mode does not inject faults (remove the scenario's [[fault]] entries)".into());
        }
        if !LIVE_CONGESTION_CONTROL.contains(&s.tcp.cc) {
            return Some(format!(
                "scheme.tcp.congestion_control: live mode's hosts run the kernel's NewReno only (this kernel has no DCTCP \
                 module, and RoCE is the simulator's); the scheme {} uses {} (set congestion_control = \"new_reno\" to run \
                 its switches live with NewReno hosts)",
                s.name,
                s.tcp.cc.name()
            ));
        }
        if !LIVE_SCHEDULING.contains(&s.scheduling) {
            return Some(format!("scheme.scheduling: live mode runs {LIVE_SCHEDULING:?} only (the scheme {} uses {:?})", s.name, s.scheduling));
        }
        if !LIVE_BUFFER_MODELS.contains(&model) {
            return Some(format!("topology: live mode drives the buffer models {LIVE_BUFFER_MODELS:?} only (this scenario's switches are {model:?})"));
        }
        if let Some(o) = s.optional().into_iter().find(|o| !LIVE_OPTIONAL.contains(o)) {
            return Some(format!("{}: live mode does not run {o:?} (the scheme {} turns it on)", o.field(), s.name));
        }
        None
    }

    /// The live fabric of a scenario's network (`crate::fabric::Fabric::for_run`, as a simulated run starts
    /// with it): its ports, queues, thresholds, markers and streams, either buffer model (check `unsupported`
    /// first).
    pub fn new(net: &crate::fabric::Fabric, scheme: &Scheme) -> Fabric {
        let pfc_on = scheme.flow_control == crate::config::FlowControl::Pfc;
        let mut net = net.clone();
        // the simulator reads PFC state and markers only with PFC and marking on; the live loop always does
        if net.pfc.len() != net.ports.len() {
            net.pfc = vec![Default::default(); net.ports.len()];
        }
        if net.markers.len() != net.ports.len() {
            net.markers = vec![crate::mechanisms::ecn::Marker::Off; net.ports.len()];
        }
        let mut tx = vec![LiveTx::default(); net.ports.len()];
        for (i, &n) in net.hosts.iter().enumerate() {
            let p = net.nodes[n as usize].port_base;
            tx[p as usize].host = Some(i as u32);
        }
        let host_port = net.hosts.iter().map(|&n| net.nodes[n as usize].port_base).collect();
        Fabric {
            net,
            tx,
            host_port,
            lb: scheme.load_balancing,
            alb: scheme.alb.clone(),
            pfc_on,
            pfc_mask: scheme.pfc.priorities,
            ignore_limit: scheme.pfc.ignore_limit,
            frames: Vec::new(),
            meta: Vec::new(),
            free: Vec::new(),
            links: Vec::new(),
            scratch: Vec::new(),
            now: Time::ZERO,
            out: Vec::new(),
            counters: Counters::default(),
        }
    }

    /// The bytes of frame `pid`.
    pub fn frame(&self, pid: PacketId) -> &[u8] {
        &self.frames[pid as usize]
    }

    /// The caller has written frame `pid`: its slot is free again.
    pub fn release(&mut self, pid: PacketId) {
        self.free.push(pid);
    }

    /// Frames to write, in order (the buffer is handed over and refilled by the next inputs).
    pub fn take_out(&mut self, into: &mut Vec<Out>) {
        into.clear();
        std::mem::swap(into, &mut self.out);
    }

    fn store(&mut self, bytes: &[u8]) -> PacketId {
        match self.free.pop() {
            Some(pid) => {
                let f = &mut self.frames[pid as usize];
                f.clear();
                f.extend_from_slice(bytes);
                pid
            }
            None => {
                self.frames.push(bytes.to_vec());
                self.meta.push(Meta { out: 0, inp: 0, prio: 0, ecn: 0, wire: 0, queued_at: Time::ZERO });
                self.links.push(NIL);
                (self.frames.len() - 1) as PacketId
            }
        }
    }

    /// Bytes a frame of `len` bytes (Ethernet header and payload, no FCS) occupies on the wire and in buffers:
    /// the simulator's framing of its IP packet.
    fn wire_of(&self, len: usize) -> u64 {
        self.net.framing.wire(len.saturating_sub(frame::ETH_HDR) as u32) as u64
    }

    /// Host `h`'s kernel sent `bytes` on its interface: into its NIC queue, or dropped when that is full.
    pub fn on_host_frame(&mut self, now: Time, h: u32, bytes: &[u8]) {
        self.now = now;
        self.counters.host_frames += 1;
        let Kind::Ipv4(info) = frame::parse(bytes) else {
            self.counters.foreign += 1;
            return;
        };
        if frame::host_of_ip(info.dst).is_none_or(|d| d as usize >= self.net.hosts.len()) {
            self.counters.foreign += 1;
            return;
        }
        let port = self.host_port[h as usize];
        let wire = self.wire_of(bytes.len());
        if !self.net.ports[port as usize].eg.has_room(wire) {
            self.counters.nic_drops += 1;
            return;
        }
        let pid = self.store(bytes);
        let pt = &mut self.net.ports[port as usize];
        pt.eg.advance(now);
        pt.eg.reserve(info.prio, wire);
        self.enqueue_egress(now, port, pid, info.prio, info.ecn, wire);
    }

    /// A frame arrived at fabric port `port` from its peer.
    pub fn on_wire_frame(&mut self, now: Time, port: u32, bytes: &[u8]) {
        self.now = now;
        let kind = frame::parse(bytes);
        match kind {
            Kind::Pfc(f) => {
                self.tx[port as usize].stats.pfc_received += 1;
                let before = self.net.ports[port as usize].paused;
                self.net.pfc_receive(now, port, f);
                if before & !self.net.ports[port as usize].paused != 0 {
                    // a resume: frames held by the pause are due from now, not from when they queued
                    self.tx[port as usize].resumed_at = now;
                }
            }
            Kind::Other => self.counters.foreign += 1,
            Kind::Ipv4(info) => match self.tx[port as usize].host {
                Some(h) => {
                    let pid = self.store(bytes);
                    self.counters.delivered += 1;
                    self.out.push(Out { to: Target::Host(h), pid });
                }
                None => self.switch_arrive(now, port, bytes, info),
            },
        }
    }

    fn switch_arrive(&mut self, now: Time, port: u32, bytes: &[u8], info: Ipv4Info) {
        let prio = info.prio;
        let wire = self.wire_of(bytes.len());
        self.pfc_arrival(port, prio);
        let Some(dst) = frame::host_of_ip(info.dst).filter(|&d| (d as usize) < self.net.hosts.len()) else {
            self.counters.foreign += 1;
            return;
        };
        let node = self.net.ports[port as usize].node;
        let Some(out) = self.route(node, self.net.hosts[dst as usize], info) else {
            self.counters.no_route += 1;
            return;
        };
        let pid = self.store(bytes);
        self.meta[pid as usize] = Meta { out, inp: 0, prio: info.prio, ecn: info.ecn, wire, queued_at: now };
        self.arrive(port, pid, out, prio, wire);
    }

    fn route(&mut self, node: u32, dst_node: u32, info: Ipv4Info) -> Option<u32> {
        let crate::fabric::Fabric { routes, nodes, ports, .. } = &mut self.net;
        // (live mode has no faults: every port is up)
        let drain = |p: u32| ports[p as usize].eg.drain_bytes(info.prio);
        nodes[node as usize].route(node, routes, dst_node, info.hash, self.lb, &self.alb, |_| true, drain, &mut self.scratch)
    }

    fn emit_pfc(&mut self, port: u32, f: PfcFrame) {
        let bytes = frame::pfc_frame(port, f);
        let pid = self.store(&bytes);
        let rate = self.net.ports[port as usize].rate;
        let t = &mut self.tx[port as usize];
        t.stats.pfc_sent += 1;
        // the frame shares the wire: the next data frame waits for it
        t.tx_ready += rate.tx_time(self.net.framing.pfc_frame() as u64);
        self.counters.pfc_frames += 1;
        self.out.push(Out { to: Target::Port(port), pid });
    }

    /// Frame `pid` joins egress (or NIC) queue `port`, which already counts its bytes: the marker decides
    /// CE or drop first (`fabric::Fabric::mark`, as in the simulator).
    fn enqueue_egress(&mut self, now: Time, port: u32, pid: PacketId, prio: u8, ecn: u8, wire: u64) {
        let lossless = self.pfc_on && self.pfc_mask & (1 << prio) != 0;
        match self.net.mark(port, prio, ecn, wire, lossless) {
            Verdict::Pass => {}
            Verdict::Mark => {
                if ecn != ECN_CE {
                    frame::set_ce(&mut self.frames[pid as usize]);
                }
                self.counters.ecn_marks += 1;
            }
            Verdict::Drop => {
                self.counters.red_drops += 1;
                self.free.push(pid);
                let pt = &mut self.net.ports[port as usize];
                pt.eg.advance(now);
                pt.eg.release(prio, wire);
                self.left_switch(port, pid, prio, wire);
                return;
            }
        }
        let inp = self.meta[pid as usize].inp;
        self.meta[pid as usize] = Meta { out: port, inp, prio, ecn, wire, queued_at: now };
        self.net.ports[port as usize].eg.enlist(prio, pid, 0, 0, &mut self.links);
    }

    /// Frame `pid` (`prio`, `wire` bytes) left egress `port` (sent or dropped): at a shared-buffer switch
    /// its bytes leave the MMU (`Switch::shared_left`), and the ingress it came in at may resume.
    fn left_switch(&mut self, port: u32, pid: PacketId, prio: u8, wire: u64) {
        if self.net.model() == BufferModel::Shared && self.tx[port as usize].host.is_none() {
            let inp = self.meta[pid as usize].inp;
            self.shared_left(inp, port, prio, wire);
        }
    }

    /// Run the crossbar and the paced transmitters up to `now`. Returns the earliest time something is due
    /// (a transfer's end, a crossbar side freeing, a frame's start or its last bit), if anything is pending.
    pub fn poll(&mut self, now: Time) -> Option<Time> {
        self.now = now;
        for p in 0..self.net.ports.len() {
            if self.net.ports[p].xbar.in_busy && self.tx[p].xbar_done <= now {
                self.xbar_done(p as u32);
            }
        }
        self.xbar_all(now);
        for p in 0..self.net.ports.len() {
            self.transmit(now, p);
        }
        self.net
            .ports
            .iter()
            .zip(&self.tx)
            .filter_map(|(pt, t)| {
                let start = (pt.eg.nonempty & !pt.paused != 0).then(|| t.tx_ready.max(now));
                let end = t.on_wire.map(|(_, e)| e.max(now));
                let xbar_end = pt.xbar.in_busy.then_some(t.xbar_done.max(now));
                // heads waiting for this egress side to free
                let out_free = (pt.waiting && pt.xbar.out_free_at > now).then_some(pt.xbar.out_free_at);
                start.into_iter().chain(end).chain(xbar_end).chain(out_free).min()
            })
            .min()
    }

    /// Every egress whose crossbar side has freed lets its blocked ingresses retry (what the simulator's
    /// `XbarOutFree` event does, at the poll).
    fn xbar_all(&mut self, now: Time) {
        for e in 0..self.net.ports.len() as u32 {
            let x = &mut self.net.ports[e as usize].xbar;
            if x.out_free(now) {
                x.woken();
                self.egress_freed(e);
            }
        }
    }

    /// Run the paced transmitter of port `p` up to `now`: hand over the frame whose serialisation has
    /// ended, start the next.
    fn transmit(&mut self, now: Time, p: usize) {
        loop {
            let t = &mut self.tx[p];
            if let Some((pid, end)) = t.on_wire {
                if now < end {
                    return;
                }
                t.on_wire = None;
                self.out.push(Out { to: Target::Port(p as u32), pid });
            }
            let pt = &self.net.ports[p];
            if pt.eg.nonempty & !pt.paused == 0 || now < t.tx_ready {
                return;
            }
            let meta = &self.meta;
            let (pid, prio, wire, ser) = self.net.dequeue(now, p as u32, &self.links, |q| meta[q as usize].wire).expect("non-empty");
            self.left_switch(p as u32, pid, prio, wire);
            let m = self.meta[pid as usize];
            let pt = &self.net.ports[p];
            let t = &mut self.tx[p];
            // how far behind its paced start a transmitter may catch up: one full frame (a token bucket one
            // frame deep)
            let catch_up = pt.rate.tx_time(self.net.framing.full_frame() as u64);
            let due = t.tx_ready.max(m.queued_at).max(t.resumed_at);
            // a pause between the two frames is the peer's doing, not the pacer's: no sample
            if t.stats.tx_frames > 0 && m.queued_at <= t.tx_ready && t.resumed_at <= t.stats.last_send {
                t.stats.backlog_ideal_ps += t.stats.last_ser.0;
                t.stats.backlog_actual_ps += (now - t.stats.last_send).0;
            }
            t.stats.last_send = now;
            t.stats.last_ser = ser;
            t.stats.late_ns.record((now - due).0 / 1000);
            // paced: the next frame may start one serialisation time after this one's due start, but the
            // transmitter catches up at most one full frame behind the clock
            let floor = now.saturating_sub(catch_up);
            t.tx_ready = due.max(floor) + ser;
            t.stats.tx_frames += 1;
            t.stats.tx_wire_bytes += m.wire;
            t.stats.busy_ps += ser.0;
            t.on_wire = Some((pid, t.tx_ready));
            // room opened in the egress: heads waiting on it may cross
            self.egress_freed(p as u32);
        }
    }

    /// Frames held in all queues (ingress and egress), for the conservation check at the end.
    pub fn queued_frames(&self) -> u64 {
        // a frame crossing the crossbar is still counted by its ingress and already by its egress (reserved)
        self.net.ports.iter().zip(&self.tx).map(|(p, t)| p.ing.pkts as u64 + p.eg.pkts as u64 - p.xbar.in_busy as u64 + t.on_wire.is_some() as u64).sum()
    }
}

#[cfg(test)]
#[path = "fabric_tests.rs"]
mod tests;
