//! The fabric: what the simulator and the live forwarder share of a scenario's network, built from the
//! scenario alone (`Fabric::build`): the topology, its ports (queues, crossbar sides, transmitters) and
//! nodes (forwarding state), routes, the PFC state and ECN markers of every port, and the faults that
//! will change it. The simulator (`sim`) keeps one and drives its pipeline with events; the live forwarder
//! (`live`) builds its own from the same scenario.

use crate::config::{ConfigError, Scenario, Scheme};
use crate::mechanisms::crossbar::{Crossbar, Waiters};
use crate::mechanisms::ecn::Marker;
use crate::mechanisms::forwarding::Forwarder;
use crate::mechanisms::pfc::PfcPort;
use crate::mechanisms::queue::{EgressQueue, IngressQueue};
use crate::routing::Routes;
use crate::topology::{self, Framing, NodeKind, Topology};
use detailsim_engine::{Rate, RngStreams, Stream, Time};

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
    /// of reading the list's line).
    pub waiting: bool,
    /// Time the transmitter has spent serializing frames (each at the rate it was sent at), the frame
    /// still on the wire included; `port_stats` takes off what lies beyond `now`. In the first cache line,
    /// which every transmission writes anyway.
    pub tx_busy_ps: u64,
    pub eg: EgressQueue,
    pub ing: IngressQueue,
    /// Ingress ports of the same switch waiting for this egress (room in its queue, or its crossbar side),
    /// with the priority of their highest head blocked on it. Changed only through `Port::wait`,
    /// `Port::take_round`, `Port::end_round` and `Port::drain_waiters`, which keep `waiting`.
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
const _: () = assert!(std::mem::offset_of!(Port, tx_busy_ps) + 8 <= 64 && std::mem::offset_of!(Port, node) < 64 && std::mem::offset_of!(Port, waiting) < 64);

impl Port {
    /// Set the line rate and what derives from it here: the crossbar rate at `speedup` and both per-byte times.
    pub fn set_rate(&mut self, rate: Rate, speedup: f64) {
        self.rate = rate;
        self.xbar_rate = topology::xbar_rate(rate, speedup);
        self.tx_ppb = rate.ps_per_byte().try_into().unwrap_or(0);
        self.xbar_ppb = self.xbar_rate.ps_per_byte().try_into().unwrap_or(0);
    }
    /// Ingress `inp` waits for this egress with a head of priority `prio`.
    #[inline]
    pub fn wait(&mut self, prio: u8, inp: u32) {
        self.waiters.add(prio, inp);
        self.waiting = true;
    }
    /// The waiters in wake-up order, moved into `round` (see `Waiters::take_round`).
    #[inline]
    pub fn take_round(&mut self, round: &mut Vec<(u8, u32)>) {
        self.waiters.take_round(round);
        self.waiting = !self.waiters.is_empty();
    }
    /// Those of `round` still waiting go back (see `Waiters::end_round`).
    #[inline]
    pub fn end_round(&mut self, round: &mut Vec<(u8, u32)>) {
        self.waiters.end_round(round);
        self.waiting = !self.waiters.is_empty();
    }
    /// Every waiter, removed.
    pub fn drain_waiters(&mut self) -> Vec<(u8, u32)> {
        let w = self.waiters.drain();
        self.waiting = false;
        w
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

/// A scenario's network (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Fabric {
    pub topo: Topology,
    pub framing: Framing,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// Host index -> node.
    pub hosts: Vec<u32>,
    pub routes: Routes,
    /// Per port, its PFC state (empty without PFC).
    pub pfc: Vec<PfcPort>,
    /// Per port, its egress ECN marker (empty without marking).
    pub markers: Vec<Marker>,
}

impl Fabric {
    /// The topology's nodes and ports (grouped by node), their queues sized by the topology and the scheme,
    /// routes over every link, and the markers of the scheme's ECN marking (PFC is set up by `pfc_setup`).
    pub fn build(sc: &Scenario, scheme: &Scheme, rng: &RngStreams) -> Result<Fabric, ConfigError> {
        let topo = topology::build(&sc.topology)?;
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
        let mut ports = Vec::with_capacity(plist.len());
        for &(node, li, is_a) in &plist {
            let l = &topo.links[li];
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
                eg: EgressQueue::new(eg_cap, scheme.scheduling).per_priority(is_switch[node] && scheme.egress_per_priority),
                ing: IngressQueue::new(ing_cap),
                tx_busy_until: Time::ZERO,
                tx_event: false,
                waiting: false,
                xbar: Crossbar::default(),
                xbar_rate: topology::xbar_rate(l.rate, topo.speedup),
                waiters: Waiters::default(),
                nic_blocked: false,
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
        let peer_node: Vec<u32> = ports.iter().map(|p| p.peer_node).collect();
        let up: Vec<bool> = ports.iter().map(|p| p.up).collect();
        let routes = Routes::compute(&is_switch, &port_base, &nports, &peer_node, &up);
        let hosts: Vec<u32> = topo.hosts().map(|h| h as u32).collect();
        if scheme.ecn_marking == crate::config::EcnMarking::Red {
            let tiers: Vec<&str> = topo.links.iter().map(|l| l.tier).collect();
            for (name, _) in &scheme.red.tiers {
                if !tiers.contains(&name.as_str()) {
                    let mut names = tiers.clone();
                    names.sort_unstable();
                    names.dedup();
                    return crate::config::err(format!("scheme.red.tiers.{name}"), format!("no tier of that name in this topology; its tiers: {}", names.join(", ")));
                }
            }
        }
        let markers = if scheme.ecn_marking != crate::config::EcnMarking::None {
            ports.iter().map(|p| Marker::new(scheme.ecn_marking, scheme.ecn_threshold, scheme.red.for_tier(topo.links[p.link as usize].tier))).collect()
        } else {
            Vec::new()
        };
        Ok(Fabric { framing: topo.framing, topo, nodes, ports, hosts, routes, pfc: Vec::new(), markers })
    }

    /// PFC's state per port: under PFC, each switch ingress's thresholds and delays derived from its link
    /// (`pfc::derive`), checked lossless also at the rates the `degrade` faults (fault index, link, rate)
    /// will give links later.
    pub fn pfc_setup(&mut self, scheme: &Scheme, degrades: &[(usize, u32, Rate)]) -> Result<(), ConfigError> {
        let n = self.ports.len();
        self.pfc = vec![PfcPort::default(); n];
        if scheme.flow_control != crate::config::FlowControl::Pfc {
            return Ok(());
        }
        for i in 0..n {
            if !self.nodes[self.ports[i].node as usize].is_switch {
                continue; // a host's receive side holds nothing: only switch ingresses send PAUSE
            }
            let d = self.pfc_derive(&scheme.pfc, i as u32, self.ports[i].rate)?;
            self.pfc[i].ingress.install(scheme.pfc.priorities, d);
        }
        for &(fi, link, rate) in degrades {
            for p in self.link_ports(link) {
                if self.nodes[self.ports[p as usize].node as usize].is_switch {
                    self.pfc_derive(&scheme.pfc, p, rate).map_err(|e| ConfigError { field: format!("fault[{fi}].rate"), msg: format!("at {} bit/s: {}", rate.0, e.msg) })?;
                }
            }
        }
        Ok(())
    }

    /// PFC thresholds and delays of switch ingress `port` when its link runs at `rate`.
    pub fn pfc_derive(&self, params: &crate::config::PfcParams, port: u32, rate: Rate) -> Result<crate::mechanisms::pfc::Thresholds, ConfigError> {
        let pt = &self.ports[port as usize];
        let link = crate::mechanisms::pfc::LinkView {
            rate,
            delay: pt.delay,
            forwarding_delay: self.topo.forwarding_delay,
            max_frame: self.framing.wire(self.framing.mtu) as u64,
            buffer: pt.ing.cap,
        };
        let name = format!("{}->{}", self.node_name(pt.peer_node), self.node_name(pt.node));
        crate::mechanisms::pfc::derive(params, link, &name)
    }

    /// The two ports of link `link` (its first node's, then its second's).
    pub fn link_ports(&self, link: u32) -> [u32; 2] {
        let p = (0..self.ports.len() as u32).find(|&p| self.ports[p as usize].link == link).expect("a link has two ports");
        [p, self.ports[p as usize].peer]
    }

    /// A node's name.
    pub fn node_name(&self, n: u32) -> &str {
        &self.topo.nodes[n as usize].name
    }
}
