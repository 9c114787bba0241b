//! The fabric: what the simulator and the live forwarder share of a scenario's network, built from the
//! scenario alone (`Fabric::build`): the topology, its ports (queues, crossbar sides, transmitters) and
//! nodes (forwarding state), routes, the PFC state and ECN markers of every port, and the faults that
//! will change it. The simulator (`sim`) keeps one and drives its pipeline with events; the live forwarder
//! (`live`) builds its own from the same scenario.

mod faults;
mod local;
mod paths;
mod pipeline;
mod shared;
pub mod switch;

pub use local::{JoinedPorts, PortIds, REMOTE};

use crate::config::{ConfigError, Scenario, Scheme};
use crate::mechanisms::crossbar::{Crossbar, Waiters};
use crate::mechanisms::ecn::Marker;
use crate::mechanisms::forwarding::Forwarder;
use crate::mechanisms::pfc::PfcPort;
use crate::mechanisms::queue::{EgressQueue, IngressQueue};
use crate::routing::Routes;
use crate::topology::{self, Framing, NodeKind, Topology};
use detailsim_engine::{Rate, RngStreams, Stream, Time};
use std::sync::Arc;

/// How a switch buffers packets: the arms of the switch interface (`fabric::switch`). A buffer policy is one
/// component (`mechanisms`) and one arm here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferModel {
    /// DeTail's combined input-output queued switch: 128 KB-style ingress queues per port, a crossbar with
    /// speedup, egress queues (`mechanisms::queue`, `mechanisms::crossbar`); the steps are
    /// `fabric/pipeline.rs`'s.
    Cioq,
    /// An output-queued switch whose ports draw from one pool, admitted by the switch's MMU
    /// (`mechanisms::mmu`, `[topology.shared_buffer]`); the steps are `fabric/shared.rs`'s.
    Shared,
}

#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Port {
    // Field order is the memory layout (repr(C), cache-line aligned): what every packet touches comes
    // first (one cache line), then the egress and ingress queues (each starts with its per-packet line),
    // then what only set-up, slow paths and reports read.
    /// The transmitter is busy until this time (the end of the frame on the wire).
    pub tx_busy_until: Time,
    /// Link delay plus the receiving switch's forwarding delay.
    pub arrive_after: Time,
    /// `rate.ps_per_byte()` and `xbar_rate.ps_per_byte()` (kept by `set_rate`; 0, the exact division's
    /// path, when that does not fit 32 bits).
    pub tx_ppb: u32,
    pub xbar_ppb: u32,
    /// This port's crossbar sides: the transfer out of its ingress, the transfers into its egress (each
    /// occupies the egress side for frame / `xbar_rate`, so at most speedup x its line rate enters it).
    pub xbar: Crossbar,
    pub peer: u32,
    /// The node this port belongs to (read by every arrival).
    pub node: u32,
    /// Priorities the peer has paused (bit p).
    pub paused: u8,
    pub up: bool,
    /// A `TxDone` event is pending (only scheduled when a frame waits for the transmitter).
    pub tx_event: bool,
    /// Host NIC: transfers are waiting for room in this queue (back-pressure).
    pub nic_blocked: bool,
    /// `waiters` is not empty (kept with it, so that the transmitter and the crossbar test it here instead
    /// of reading the list's line; with the fabric's bit of the port, `Fabric::waiting_far`, by the
    /// fabric's `wait`, `take_round`, `end_round` and `drain_waiters`).
    pub waiting: bool,
    /// Something beyond the queue sees each frame this port sends: a shared-buffer switch's MMU, HPCC's
    /// telemetry (`Sim::tx_hooks`).
    pub tx_hooks: bool,
    /// Priorities whose transfers into this egress may start their frame as they start when it is idle
    /// (`sim/fold.rs`: bit p; none unless the run folds): every priority towards a host or under ALB (which
    /// checks each for a PAUSE, `Sim::fold_alb_idle`), else those no PAUSE can hold.
    pub fold_idle: u8,
    /// Under ALB, an egress towards a switch: a transfer that folds into it idle is checked against the
    /// PAUSEs that could hold its frame, and its bytes are held for ALB to read (`Sim::fold_alb_idle`).
    /// Here (in the first line, beside `fold_idle`) rather than read from the peer node at every fold.
    pub fold_alb: bool,
    /// Time the transmitter has spent serializing frames (each at the rate it was sent at), the frame
    /// still on the wire included; `port_stats` takes off what lies beyond `now`. In the first cache line,
    /// which every transmission writes anyway.
    pub tx_busy_ps: u64,
    pub eg: EgressQueue,
    pub ing: IngressQueue,
    /// Ingress ports of the same switch waiting for this egress (room in its queue, or its crossbar side),
    /// with the priority of their highest head blocked on it. Changed only through `Fabric::wait`,
    /// `Fabric::take_round`, `Fabric::end_round` and `Fabric::drain_waiters`, which keep `waiting` (and the
    /// fabric's bit of it).
    pub(crate) waiters: Waiters,
    /// Line rate (set with `set_rate`).
    pub rate: Rate,
    /// Crossbar rate of this port's side of the switch fabric: speedup x its line rate.
    pub xbar_rate: Rate,
    pub peer_node: u32,
    pub link: u32,
    pub delay: Time,
}

// what every transmission touches stays in the port's first cache line
const _: () = assert!(
    std::mem::offset_of!(Port, tx_busy_ps) + 8 <= 64
        && std::mem::offset_of!(Port, node) < 64
        && std::mem::offset_of!(Port, waiting) < 64
        && std::mem::offset_of!(Port, tx_hooks) < 64
        && std::mem::offset_of!(Port, fold_idle) < 64
        && std::mem::offset_of!(Port, fold_alb) < 64
);
// eight lines in all (`benches/sizes.py` reports a fabric's port state by it)
const _: () = assert!(std::mem::size_of::<Port>() == 512);

impl Port {
    /// Set the line rate and what derives from it here: the crossbar rate at `speedup` and both per-byte times.
    pub fn set_rate(&mut self, rate: Rate, speedup: f64) {
        self.rate = rate;
        self.xbar_rate = topology::xbar_rate(rate, speedup);
        self.tx_ppb = rate.ps_per_byte().try_into().unwrap_or(0);
        self.xbar_ppb = self.xbar_rate.ps_per_byte().try_into().unwrap_or(0);
    }
    /// Serialization time of `wire` bytes on the link.
    #[inline(always)]
    pub fn ser(&self, wire: u64) -> Time {
        self.rate.tx_time_pb(self.tx_ppb as u64, wire)
    }
    /// Crossbar time of `wire` bytes on this port's side of the switch fabric.
    #[inline(always)]
    pub fn xbar_time(&self, wire: u64) -> Time {
        self.xbar_rate.tx_time_pb(self.xbar_ppb as u64, wire)
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    pub is_switch: bool,
    pub port_base: u32,
    pub nports: u32,
    /// The switch's forwarding state (hash salt, ALB round-robin pointer).
    pub fwd: Forwarder,
    pub rng: Stream,
}

#[derive(Debug, Clone)]
pub enum FaultKind {
    LinkDown,
    Degrade(Rate),
    /// The transmitter of this egress port ignores PAUSE frames.
    IgnorePause(u32),
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub kind: FaultKind,
    pub link: u32,
    pub at: Time,
}

impl Fault {
    pub fn ignores_pause(&self) -> bool {
        matches!(self.kind, FaultKind::IgnorePause(_))
    }

    /// The scenario's `[[fault]]`s on this fabric (links found by node names or tier and index).
    pub fn resolve(net: &Fabric, cfgs: &[crate::config::FaultConfig]) -> Result<Vec<Fault>, ConfigError> {
        let mut out = Vec::new();
        for (i, c) in cfgs.iter().enumerate() {
            let find = |name: &str| net.topo.nodes.iter().position(|n| n.name == name);
            let field = format!("fault[{i}].link");
            let (link, a) = match &c.link {
                crate::config::LinkSel::Nodes(v) => {
                    let Some(a) = find(&v[0]) else { return crate::config::err(field, format!("no node named {:?}", v[0])) };
                    let Some(b) = find(&v[1]) else { return crate::config::err(field, format!("no node named {:?}", v[1])) };
                    let Some(link) = net.topo.links.iter().position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a)) else {
                        return crate::config::err(field, format!("no link between {:?} and {:?}", v[0], v[1]));
                    };
                    (link, a)
                }
                crate::config::LinkSel::Tier(t) => {
                    let (tier, idx) = t.split_once('#').unwrap();
                    let Ok(idx) = idx.parse::<usize>() else { return crate::config::err(field, format!("{t:?}: the index after '#' must be a number")) };
                    let of_tier: Vec<usize> = (0..net.topo.links.len()).filter(|&l| net.topo.links[l].tier == tier).collect();
                    let Some(&link) = of_tier.get(idx) else {
                        return crate::config::err(field, format!("{t:?}: tier {tier:?} has {} links in this topology", of_tier.len()));
                    };
                    // a tier link's first node is the one nearer the hosts (e.g. the aggregation switch)
                    (link, net.topo.links[link].a)
                }
            };
            let kind = match c.kind.as_str() {
                "link_down" => FaultKind::LinkDown,
                "degrade" => FaultKind::Degrade(c.rate.unwrap().0),
                _ => {
                    let egress = (net.wiring.port_base[a]..net.wiring.port_base[a] + net.nodes[a].nports)
                        .find(|&p| net.wiring.port_link[p as usize] == link as u32)
                        .unwrap();
                    FaultKind::IgnorePause(egress)
                }
            };
            out.push(Fault { kind, link: link as u32, at: c.at.0 });
        }
        Ok(out)
    }
}

/// Frames and bytes a port has sent (kept beside the ports, four to a cache line, rather than in a line of
/// `Port` that nothing else on the packet path reads).
#[derive(Debug, Clone, Copy, Default)]
pub struct TxCount {
    pub bytes: u64,
    pub packets: u64,
}

impl Node {
    /// The output port (global index) at this switch (node `me`) of a packet to host node `dst`: the edge
    /// switch's port to the host (if `up` says it is up), or the forwarding engine's choice among the
    /// acceptable ports, reading each candidate's egress drain bytes (`drain`, by global port index). The
    /// one routing step of the simulator's and the live switch's pipelines.
    #[allow(clippy::too_many_arguments)] // the packet's fields and the scheme's, read once by the caller
    #[inline(always)]
    pub fn route(
        &mut self,
        me: u32,
        routes: &Routes,
        dst: u32,
        hash: u32,
        lb: crate::config::LoadBalancing,
        alb: &crate::config::AlbParams,
        up: impl Fn(u32) -> bool,
        drain: impl Fn(u32) -> u64,
        scratch: &mut Vec<u32>,
    ) -> Option<u32> {
        if routes.edge[dst as usize] == me {
            let ep = self.port_base + routes.edge_lp[dst as usize];
            return up(ep).then_some(ep);
        }
        let base = self.port_base;
        // ALB reads the row of bits alone; flow hashing and scatter index the list
        let (list, row) = if lb == crate::config::LoadBalancing::Adaptive { (&[][..], routes.row(me, dst)) } else { (routes.ports(me, dst), &[][..]) };
        self.fwd.choose_in(lb, alb, list, row, hash, |lp| drain(base + lp), &mut self.rng, scratch).map(|lp| base + lp)
    }
}

/// The fabric's wiring, the same in every part of a split run.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// Per link, its two ports (its first node's, then its second's).
    pub link_ports: Vec<[u32; 2]>,
    /// Per node, its first port (global index).
    pub port_base: Vec<u32>,
    /// Per port, its link, its node and the node at its other end.
    pub port_link: Vec<u32>,
    pub port_node: Vec<u32>,
    pub peer_node: Vec<u32>,
}

/// What the builds of one scenario share (`Fabric::shareable`).
#[derive(Debug, Clone)]
pub struct Shared {
    pub topo: Arc<Topology>,
    pub wiring: Arc<Wiring>,
    pub routes: Arc<Routes>,
    /// Each link's state (up, rate) as built.
    pub links: (Arc<Vec<bool>>, Arc<Vec<Rate>>),
    /// A part of a split run: the ports it holds (by global index; it builds only their state, numbered
    /// locally).
    pub held: Option<Vec<bool>>,
}

/// A scenario's network (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Fabric {
    pub topo: Arc<Topology>,
    pub framing: Framing,
    pub nodes: Vec<Node>,
    /// Per port, its queues, crossbar sides and transmitter (a part of a split run: its own, numbered
    /// locally, `ids`).
    pub ports: Vec<Port>,
    pub ids: PortIds,
    /// What routes and faults read of every port, also in a part that holds only its own (shared by the
    /// parts), and per link whether it is up.
    pub wiring: Arc<Wiring>,
    /// (shared by the parts of a split run until a fault changes them: `Arc::make_mut`)
    pub link_up: Arc<Vec<bool>>,
    /// Links taken down so far (`link_down`): while none is, every entry of `link_up` holds, and a walk
    /// along the routes (`settled_hops`) need not read it.
    pub links_down: u32,
    pub link_rate: Arc<Vec<Rate>>,
    /// The egress ports whose transmitters ignore PAUSE (`ignore_pause` faults in force; every part keeps
    /// the list, as a drop downstream of another part's port reads it).
    pub ignoring_pause: Vec<u32>,
    /// Host index -> node.
    pub hosts: Vec<u32>,
    /// Shared by the parts of a split run (a fault gives each part a new one).
    pub routes: Arc<Routes>,
    /// Per port, its PFC state (empty without PFC).
    pub pfc: Vec<PfcPort>,
    /// Per port, its egress ECN marker (empty without marking).
    pub markers: Vec<Marker>,
    /// The healthy fabric's BDP (bytes) and base RTT (`fabric_bdp`, before any fault), for queue caps and
    /// the summary; the cap `scheme.queue_limit` / `queue_limit_bdp` put on switch egress queues.
    pub bdp: (u64, Time),
    pub queue_limit: Option<u64>,
    /// Per port, its drop and mark counters, and the frames and bytes it sent (four to a cache line,
    /// rather than in a line of `Port` that nothing else on the packet path reads).
    pub port_ctr: Vec<crate::stats::PortCounters>,
    pub tx_count: Vec<TxCount>,
    /// The arbiter's working space (`cioq::Switch::wake_waiters`): the waiters of the egress whose round
    /// of retries runs, and which egress that is.
    pub(crate) round: Vec<(u8, u32)>,
    pub(crate) round_of: Option<u32>,
    /// In fabrics too large for the L2 (`far_waiting`): per port, `Port::waiting` again as one bit
    /// (`waiting_far`), kept with it. Where a folded transfer's lazy end comes (the next arrival at its
    /// ingress, often long after), the arbiter tests it without reading the egress's first line, which at
    /// k = 32 had mostly left the cache by then; a whole fabric's bits fit a few lines (k = 32: 6 KB).
    /// Empty otherwise: the port's line is cached, and keeping the bits cost more than it saved.
    waited: Vec<u64>,
    /// Shared-buffer switches (`[topology.shared_buffer]`): per node, a switch's MMU (`mmu_setup`); empty
    /// for DeTail's CIOQ switches.
    pub mmu: Vec<Option<crate::mechanisms::mmu::Mmu>>,
    /// Every link's configured rate and delay when all links share them (`Fabric::path_hops`: a path is
    /// then its length), and whether a `degrade` fault has set a link's rate since the build (the current
    /// rates then are not all that one).
    pub uniform: Option<(Rate, Time)>,
    pub degraded: bool,
}

impl Fabric {
    /// The topology's nodes and ports (grouped by node), their queues sized by the topology and the scheme,
    /// routes over every link, and the markers of the scheme's ECN marking (PFC is set up by `pfc_setup`).
    pub fn build(sc: &Scenario, scheme: &Scheme, rng: &RngStreams) -> Result<Fabric, ConfigError> {
        Fabric::build_sharing(sc, scheme, rng, None)
    }

    /// What another build of the same scenario can share with this one, unchanged: the topology, its
    /// wiring and the routes over it (the parts of a split run share them instead of each computing and
    /// keeping its own).
    pub fn shareable(&self) -> Shared {
        Shared {
            topo: self.topo.clone(),
            wiring: self.wiring.clone(),
            routes: self.routes.clone(),
            links: (self.link_up.clone(), self.link_rate.clone()),
            held: None,
        }
    }

    /// `build`, with what another build of the same scenario shares (`shareable`).
    pub fn build_sharing(sc: &Scenario, scheme: &Scheme, rng: &RngStreams, shared: Option<Shared>) -> Result<Fabric, ConfigError> {
        let (topo, routes, shared_wiring, held, shared_links) = match shared {
            Some(s) => (s.topo, Some(s.routes), Some(s.wiring), s.held, Some(s.links)),
            None => (Arc::new(topology::build(&sc.topology)?), None, None, None, None),
        };
        let n = topo.nodes.len();
        // ports grouped by node
        let mut by_node: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        for (li, l) in topo.links.iter().enumerate() {
            by_node[l.a].push((li, true));
            by_node[l.b].push((li, false));
        }
        let mut port_base = vec![0u32; n];
        let mut nports = vec![0u32; n];
        let mut port_of: Vec<[u32; 2]> = vec![[0, 0]; topo.links.len()];
        let mut plist: Vec<(usize, usize, bool)> = Vec::new(); // (node, link, is_a)
        for (node, ls) in by_node.iter().enumerate() {
            port_base[node] = plist.len() as u32;
            nports[node] = ls.len() as u32;
            for &(li, is_a) in ls {
                port_of[li][if is_a { 0 } else { 1 }] = plist.len() as u32;
                plist.push((node, li, is_a));
            }
        }
        let is_switch: Vec<bool> = topo.nodes.iter().map(|x| x.kind == NodeKind::Switch).collect();
        let in_use = crate::config::used_priorities(sc, scheme).len();
        // a shared-buffer switch's pool and its thresholds decide what each queue holds: the per-port sharing
        // knobs do not apply there (a CIOQ scenario run with [topology.shared_buffer] keeps them harmlessly)
        let (eg_parts, ing_parts) = match topo.shared_buffer {
            Some(_) => (1, 1),
            None => (scheme.egress_sharing.parts(in_use), scheme.ingress_sharing.parts(in_use)),
        };
        // (a part of a split run builds only the ports it holds)
        let mut ports = Vec::with_capacity(held.as_ref().map_or(plist.len(), |h| h.iter().filter(|&&x| x).count()));
        let (mut port_link, mut port_node, mut port_peer) = (Vec::new(), Vec::new(), Vec::new());
        for (pi, &(node, li, is_a)) in plist.iter().enumerate() {
            let l = &topo.links[li];
            if shared_wiring.is_none() {
                port_link.push(li as u32);
                port_node.push(node as u32);
                port_peer.push(if is_a { l.b } else { l.a } as u32);
            }
            if held.as_ref().is_some_and(|h| !h[pi]) {
                continue;
            }
            let peer = port_of[li][if is_a { 1 } else { 0 }];
            let peer_node = if is_a { l.b } else { l.a };
            let (ing_cap, eg_cap) = if is_switch[node] { (l.ingress_buffer, l.egress_buffer) } else { (0, topo.host_buffer) };
            let fwd = if is_switch[peer_node] { topo.forwarding_delay } else { Time::ZERO };
            let mut port = Port {
                node: node as u32,
                peer,
                peer_node: peer_node as u32,
                link: li as u32,
                rate: l.rate,
                tx_ppb: 0,
                xbar_ppb: 0,
                delay: l.delay,
                arrive_after: l.delay + fwd,
                eg: EgressQueue::new(eg_cap, scheme.scheduling).sharing(if is_switch[node] { eg_parts } else { 1 }),
                ing: IngressQueue::new(ing_cap).sharing(ing_parts),
                tx_busy_until: Time::ZERO,
                tx_event: false,
                waiting: false,
                xbar: Crossbar::default(),
                xbar_rate: topology::xbar_rate(l.rate, topo.speedup),
                waiters: Waiters::default(),
                nic_blocked: false,
                tx_hooks: false,
                fold_idle: 0,
                fold_alb: false,
                paused: 0,
                up: true,
                tx_busy_ps: 0,
            };
            port.set_rate(l.rate, topo.speedup);
            ports.push(port);
        }
        let nodes: Vec<Node> = (0..n)
            .map(|i| Node {
                is_switch: is_switch[i],
                port_base: port_base[i],
                nports: nports[i],
                fwd: Forwarder::new(rng.stream(i as u64, crate::purpose::SALT).next_u64()),
                rng: rng.stream(i as u64, crate::purpose::SCATTER),
            })
            .collect();
        let wiring =
            shared_wiring.unwrap_or_else(|| Arc::new(Wiring { link_ports: port_of, port_base: port_base.clone(), port_link, port_node, peer_node: port_peer }));
        let (link_up, link_rate) = match &shared_links {
            Some(l) => l.clone(),
            None => (Arc::new(vec![true; topo.links.len()]), Arc::new(topo.links.iter().map(|l| l.rate).collect())),
        };
        let routes = routes.unwrap_or_else(|| {
            let up: Vec<bool> = ports.iter().map(|p| p.up).collect();
            Arc::new(Routes::compute(&is_switch, &port_base, &nports, &wiring.peer_node, &up))
        });
        let hosts: Vec<u32> = topo.hosts().map(|h| h as u32).collect();
        let uniform = topo.links.first().map(|l| (l.rate, l.delay)).filter(|&(r, d)| topo.links.iter().all(|l| l.rate == r && l.delay == d));
        if scheme.ecn_marking == crate::config::EcnMarking::Red {
            let tiers: Vec<&str> = topo.links.iter().map(|l| l.tier).collect();
            for name in scheme.red.tiers.keys() {
                if !tiers.contains(&name.as_str()) {
                    let mut names = tiers.clone();
                    names.sort_unstable();
                    names.dedup();
                    return crate::config::err(
                        format!("scheme.red.tiers.{name}"),
                        format!("no tier of that name in this topology; its tiers: {}", names.join(", ")),
                    );
                }
            }
        }
        let markers = if scheme.ecn_marking != crate::config::EcnMarking::None {
            ports.iter().map(|p| Marker::new(scheme.ecn_marking, scheme.ecn_threshold, scheme.red.for_tier(topo.links[p.link as usize].tier))).collect()
        } else {
            Vec::new()
        };
        let mut fab = Fabric {
            framing: topo.framing,
            topo,
            nodes,
            ports,
            ids: PortIds::default(),
            wiring,
            links_down: link_up.iter().filter(|&&u| !u).count() as u32,
            link_up,
            link_rate,
            ignoring_pause: Vec::new(),
            hosts,
            routes,
            pfc: Vec::new(),
            markers,
            bdp: (0, Time::ZERO),
            queue_limit: None,
            port_ctr: Vec::new(),
            tx_count: Vec::new(),
            round: Vec::new(),
            round_of: None,
            waited: Vec::new(),
            mmu: Vec::new(),
            uniform,
            degraded: false,
        };
        if let Some(h) = held {
            fab.localize(&h);
        }
        Ok(fab)
    }

    /// The network a run starts with, and its faults: `build`, then the checks of the framing against the
    /// host buffers and the MSS, the healthy fabric's BDP, the queue limit, the faults resolved and PFC
    /// set up (checked lossless also at the rates `degrade` faults give). The simulator and the live
    /// forwarder both start from it.
    pub fn for_run(sc: &Scenario, scheme: &Scheme, rng: &RngStreams) -> Result<(Fabric, Vec<Fault>), ConfigError> {
        Fabric::for_run_sharing(sc, scheme, rng, None)
    }

    /// `for_run` with what another build of the same scenario shares (`build_sharing`).
    pub fn for_run_sharing(sc: &Scenario, scheme: &Scheme, rng: &RngStreams, shared: Option<Shared>) -> Result<(Fabric, Vec<Fault>), ConfigError> {
        let mut net = Fabric::build_sharing(sc, scheme, rng, shared)?;
        let frame = net.framing.full_frame() as u64;
        if 2 * frame > net.topo.host_buffer {
            return crate::config::err("topology.host_buffer", format!("must hold at least two full frames ({} B)", 2 * frame));
        }
        if scheme.tcp.mss + crate::packet::HEADERS > net.framing.mtu {
            return crate::config::err("scheme.tcp.mss", format!("MSS + 40B of headers must fit the MTU ({}B)", net.framing.mtu));
        }
        net.bdp = net.fabric_bdp(scheme.tcp.mss as u64);
        net.apply_queue_limit(scheme)?;
        let faults = Fault::resolve(&net, &sc.fault)?;
        let degrades: Vec<(usize, u32, Rate)> =
            faults.iter().enumerate().filter_map(|(i, f)| if let FaultKind::Degrade(r) = f.kind { Some((i, f.link, r)) } else { None }).collect();
        net.pfc_setup(scheme, &degrades)?;
        net.mmu_setup(scheme)?;
        Ok((net, faults))
    }

    /// Host `node`'s NIC queue (its port's egress queue).
    #[inline]
    pub fn nic_queue(&self, node: u32) -> &EgressQueue {
        &self.ports[self.nodes[node as usize].port_base as usize].eg
    }

    /// Whether the switches share one buffer each (`[topology.shared_buffer]`).
    #[inline(always)]
    pub fn shared(&self) -> bool {
        !self.mmu.is_empty()
    }

    /// The switches' buffer model (`fabric::switch::Switch::arrive` takes an arrival into it).
    #[inline(always)]
    pub fn model(&self) -> BufferModel {
        if self.shared() {
            BufferModel::Shared
        } else {
            BufferModel::Cioq
        }
    }

    /// Shared-buffer switches: each switch's MMU, its lossless priorities those of PFC (none without it),
    /// each ingress port's headroom per lossless priority the configured one or, derived from its link,
    /// what may still arrive after its PAUSE is sent (`pfc::headroom`); the egress queues bounded only by
    /// the pool (and `queue_limit`).
    pub fn mmu_setup(&mut self, scheme: &Scheme) -> Result<(), ConfigError> {
        let Some((params, headroom)) = self.topo.shared_buffer.clone() else { return Ok(()) };
        let pfc = scheme.flow_control == crate::config::FlowControl::Pfc;
        let lossless = if pfc { scheme.pfc.priorities } else { 0 };
        if lossless != 0 && self.queue_limit.is_some() {
            let key = if scheme.queue_limit.is_some() { "scheme.queue_limit" } else { "scheme.queue_limit_bdp" };
            return crate::config::err(key, "with shared-buffer switches under PFC a lossless priority cannot be held to a queue limit (it would drop); leave the limit out or make flow_control tail_drop");
        }
        let mut mmu = Vec::with_capacity(self.nodes.len());
        for (n, nd) in self.nodes.iter().enumerate() {
            if !nd.is_switch {
                mmu.push(None);
                continue;
            }
            if nd.port_base == u32::MAX {
                // a switch another part of a split run holds (its MMU is that part's)
                mmu.push(None);
                continue;
            }
            let ports = nd.port_base..nd.port_base + nd.nports;
            let hr: Vec<u64> = ports
                .clone()
                .map(|p| match (headroom, pfc) {
                    (_, false) => 0,
                    (Some(h), true) => h,
                    (None, true) => crate::mechanisms::pfc::headroom(&scheme.pfc, self.pfc_link_view(p, self.ports[p as usize].rate)),
                })
                .collect();
            let m = crate::mechanisms::mmu::Mmu::new(params.clone(), hr, lossless).map_err(|e| ConfigError {
                field: "topology.shared_buffer.size".into(),
                msg: format!(
                    "{} B leave no shared pool at switch {:?}: its reserves ({} B per port and priority) and PFC headroom take {} B; raise the size above that (the pool is what is left), make fewer priorities lossless (scheme.pfc.priorities), or lower reserve or headroom",
                    params.size, self.node_name(n as u32), params.reserve, e.needed - 1
                ),
            })?;
            let cap = params.size.min(crate::mechanisms::queue::MAX_CAP);
            for p in ports {
                self.ports[p as usize].tx_hooks = true;
                let eg = &mut self.ports[p as usize].eg;
                eg.set_cap(self.queue_limit.map_or(cap, |l| l.min(cap)));
            }
            mmu.push(Some(m));
        }
        self.mmu = mmu;
        Ok(())
    }

    /// PFC's state per port: under PFC, each switch ingress's thresholds and delays derived from its link
    /// (`pfc::derive`), checked lossless also at the rates the `degrade` faults (fault index, link, rate)
    /// will give links later.
    pub fn pfc_setup(&mut self, scheme: &Scheme, degrades: &[(usize, u32, Rate)]) -> Result<(), ConfigError> {
        let n = self.ports.len();
        if scheme.flow_control != crate::config::FlowControl::Pfc {
            // no PFC state at all: 448 B a port (22 MB on the k = 32 fat tree, in every part of a split run)
            self.pfc = Vec::new();
            return Ok(());
        }
        let _ = n;
        // (a part of a split run, of the ports it holds; the first part built every port and checked them)
        self.pfc = vec![PfcPort::default(); self.ports.len()];
        let switch_ports: Vec<u32> = (0..self.ports.len() as u32).filter(|&i| self.nodes[self.ports[i as usize].node as usize].is_switch).collect();
        for i in switch_ports {
            // (a host's receive side holds nothing: only switch ingresses send PAUSE)
            let d = self.pfc_derive(&scheme.pfc, i, self.ports[i as usize].rate)?;
            self.pfc[i as usize].ingress.install(scheme.pfc.priorities, d);
        }
        for &(fi, link, rate) in degrades {
            // (a part of a split run checks the ends it holds; the first part, built whole, checked all)
            for p in self.link_ports(link).into_iter().filter_map(|g| self.lid(g)) {
                if self.nodes[self.ports[p as usize].node as usize].is_switch {
                    self.pfc_derive(&scheme.pfc, p, rate)
                        .map_err(|e| ConfigError { field: format!("fault[{fi}].rate"), msg: format!("at {} bit/s: {}", rate.0, e.msg) })?;
                }
            }
        }
        Ok(())
    }

    /// PFC thresholds and delays of switch ingress `port` when its link runs at `rate`.
    pub fn pfc_derive(&self, params: &crate::config::PfcParams, port: u32, rate: Rate) -> Result<crate::mechanisms::pfc::Thresholds, ConfigError> {
        let pt = &self.ports[port as usize];
        let link = self.pfc_link_view(port, rate);
        let name = format!("{}->{}", self.node_name(pt.peer_node), self.node_name(pt.node));
        crate::mechanisms::pfc::derive(params, link, &name)
            .map_err(|e| ConfigError { field: e.param.map_or("scheme.pfc".into(), |p| format!("scheme.pfc.{p}")), msg: e.msg })
    }

    /// Switch ingress `port`'s link as PFC sees it at `rate` (its buffer: the ingress's; with shared
    /// buffers, whose thresholds and headroom are the MMU's, unbounded here: only the delays derived from
    /// the link are used, and the pool's size is checked against the headroom by `mmu_setup`).
    pub fn pfc_link_view(&self, port: u32, rate: Rate) -> crate::mechanisms::pfc::LinkView {
        let pt = &self.ports[port as usize];
        crate::mechanisms::pfc::LinkView {
            rate,
            delay: pt.delay,
            forwarding_delay: self.topo.forwarding_delay,
            max_frame: self.framing.full_frame() as u64,
            pfc_frame: self.framing.pfc_frame() as u64,
            buffer: if self.topo.shared_buffer.is_some() { crate::mechanisms::queue::MAX_CAP } else { pt.ing.cap() },
            parts: pt.ing.parts(),
        }
    }

    /// The two ports of link `link` (global indices; its first node's, then its second's).
    pub fn link_ports(&self, link: u32) -> [u32; 2] {
        self.wiring.link_ports[link as usize]
    }

    /// `scheme.queue_limit` / `queue_limit_bdp`: cap every switch egress queue.
    pub fn apply_queue_limit(&mut self, scheme: &Scheme) -> Result<(), ConfigError> {
        let (key, limit) = match (scheme.queue_limit, scheme.queue_limit_bdp) {
            (Some(b), _) => ("scheme.queue_limit", b),
            (None, Some(k)) => ("scheme.queue_limit_bdp", (self.bdp.0 as f64 * k).round() as u64),
            (None, None) => return Ok(()),
        };
        let frame = self.framing.full_frame() as u64;
        if limit < frame {
            return crate::config::err(key, format!("the queue limit ({limit}B) must hold at least one full frame ({frame}B)"));
        }
        for p in &mut self.ports {
            if self.nodes[p.node as usize].is_switch {
                p.eg.set_cap(p.eg.cap().min(limit));
            }
        }
        self.queue_limit = Some(limit);
        Ok(())
    }

    /// Port `p`'s link, the rate it runs at now (every part of a split run keeps every link's) and the port
    /// at its other end.
    #[inline]
    pub fn link_of(&self, p: u32) -> usize {
        self.wiring.port_link[p as usize] as usize
    }
    #[inline]
    pub fn port_rate(&self, p: u32) -> Rate {
        self.link_rate[self.link_of(p)]
    }
    #[inline]
    pub fn peer_port(&self, p: u32) -> u32 {
        let [a, b] = self.wiring.link_ports[self.link_of(p)];
        if a == p {
            b
        } else {
            a
        }
    }

    /// A node's name.
    pub fn node_name(&self, n: u32) -> &str {
        &self.topo.nodes[n as usize].name
    }
}

impl Fabric {
    /// Ingresses wait for egress `port` (`Port::waiting`), from the fabric's bits where it keeps them
    /// (`far_waiting`) rather than the port's line: for where that line is likely not in the cache.
    #[inline(always)]
    pub fn waiting_far(&self, port: u32) -> bool {
        match self.waited.get(port as usize / 64) {
            Some(w) => w >> (port % 64) & 1 != 0,
            None => self.ports[port as usize].waiting,
        }
    }

    #[inline(always)]
    fn set_waiting(&mut self, port: u32, on: bool) {
        self.ports[port as usize].waiting = on;
        if let Some(w) = self.waited.get_mut(port as usize / 64) {
            let bit = 1u64 << (port % 64);
            *w = if on { *w | bit } else { *w & !bit };
        }
    }

    /// Keep the waiting bits apart from the ports (`waiting_far`), or not (then `waiting_far` reads the
    /// ports). Set once the fabric's size is known, before anything waits; kept when the ports are
    /// numbered locally or joined.
    pub(crate) fn far_waiting(&mut self, on: bool) {
        self.waited = if on { vec![0; self.ports.len().div_ceil(64)] } else { Vec::new() };
        self.index_waiting();
    }

    /// Ingress `inp` waits for egress `out` with a head of priority `prio`.
    #[inline]
    pub fn wait(&mut self, out: u32, prio: u8, inp: u32) {
        self.ports[out as usize].waiters.add(prio, inp);
        self.set_waiting(out, true);
    }

    /// Egress `port`'s waiters in wake-up order, moved into `round` (see `Waiters::take_round`).
    #[inline]
    pub fn take_round(&mut self, port: u32, round: &mut Vec<(u8, u32)>) {
        self.change_waiters(port, |w| w.take_round(round));
    }

    /// Those of `round` still waiting for egress `port` go back (see `Waiters::end_round`).
    #[inline]
    pub fn end_round(&mut self, port: u32, round: &mut Vec<(u8, u32)>) {
        self.change_waiters(port, |w| w.end_round(round));
    }

    /// Egress `port`'s waiters changed by `f`, then its flag and bit set from whether any are left.
    #[inline(always)]
    fn change_waiters(&mut self, port: u32, f: impl FnOnce(&mut Waiters)) {
        let w = &mut self.ports[port as usize].waiters;
        f(w);
        let on = !w.is_empty();
        self.set_waiting(port, on);
    }

    /// Every waiter of egress `port`, removed.
    pub fn drain_waiters(&mut self, port: u32) -> Vec<(u8, u32)> {
        let w = self.ports[port as usize].waiters.drain();
        self.set_waiting(port, false);
        w
    }

    /// The waiting bits, where the fabric keeps them, from the ports' lists (after the ports were numbered
    /// locally or joined).
    pub(crate) fn index_waiting(&mut self) {
        if self.waited.is_empty() {
            return;
        }
        self.waited = vec![0; self.ports.len().div_ceil(64)];
        for p in 0..self.ports.len() as u32 {
            let on = !self.ports[p as usize].waiters.is_empty();
            self.set_waiting(p, on);
        }
    }
}
