//! Topology builders: every kind turns its few keys into a list of nodes and links with per-tier
//! rate, delay and buffers. The simulator wires ports from this description; routing reads it.

use crate::config::{err, ConfigError, TopologyConfig};
use crate::mechanisms::queue::MAX_CAP;
use crate::units::Bytes;
use detailsim_engine::{Rate, Time};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A full-duplex link between nodes `a` and `b` (indices into `Topology::nodes`).
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub tier: &'static str,
    pub rate: Rate,
    pub delay: Time,
    pub ingress_buffer: u64,
    pub egress_buffer: u64,
}

/// Per-frame accounting, one for every frame: the bytes a frame occupies on the link and in buffers are
/// the Ethernet frame (header, 802.1Q tag, FCS) plus its 8 B preamble, without the inter-frame gap, as
/// the DeTail paper counts its "full-size 1530B Ethernet frame" (000_76fdfa378bc5f2cf.txt:319): a packet of
/// `ip_len` bytes occupies `max(ip_len + overhead, min_frame)` (1500 B: 1530 B; a 40 B ACK, SYN or SYN-ACK
/// is padded to the 64 B minimum frame: 72 B), and a PFC frame, a minimum-size MAC control frame,
/// `min_frame` (72 B).
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    pub mtu: u32,
    pub overhead: u32,
    pub min_frame: u32,
}
impl Framing {
    /// A packet of `ip_len` bytes (IP header and payload) on the wire.
    #[inline]
    pub fn wire(&self, ip_len: u32) -> u32 {
        (ip_len + self.overhead).max(self.min_frame)
    }
    /// A PFC frame on the wire.
    #[inline]
    pub fn pfc_frame(&self) -> u32 {
        self.min_frame
    }
    /// A full-size frame (an MTU-sized packet) on the wire.
    #[inline]
    pub fn full_frame(&self) -> u32 {
        self.wire(self.mtu)
    }
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub kind: String,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub forwarding_delay: Time,
    pub speedup: f64,
    pub host_buffer: u64,
    pub framing: Framing,
    /// Shared-buffer switches (`[topology.shared_buffer]`): the pool's settings, and the headroom per
    /// ingress port and lossless priority when set (None: derived from each port's link under PFC).
    pub shared_buffer: Option<(crate::mechanisms::mmu::MmuParams, Option<u64>)>,
}

/// `[topology.shared_buffer]`'s defaults: egress alpha 1 (Choudhury and Hahne's dynamic threshold), PFC
/// alpha 1/8 (the HPCC simulator's `pfc_a_shift` of 3), no reserve, a resume offset of 3 KiB (the HPCC
/// simulator's `SwitchMmu`: `resume_offset = 3 * 1024`).
pub const SHARED_ALPHA: f64 = 1.0;
pub const SHARED_PFC_ALPHA: f64 = 0.125;
pub const SHARED_RESUME_OFFSET: u64 = 3 * 1024;

impl Topology {
    pub fn hosts(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes.iter().enumerate().filter(|(_, n)| n.kind == NodeKind::Host).map(|(i, _)| i)
    }
}

pub const DEFAULT_RATE: Rate = Rate::gbps(1);
/// 0.476 us propagation + 5 us transceiver delay (the DeTail paper's values, modelled together).
pub const DEFAULT_DELAY: Time = Time(5_476_000);
pub const DEFAULT_BUFFER: u64 = 128 * 1024;
pub const DEFAULT_FORWARDING_DELAY: Time = Time(4_224_000);
pub const DEFAULT_SPEEDUP: f64 = 4.0;
/// Rate of one port's side of a switch fabric: `speedup` x the port's line rate.
pub fn xbar_rate(line: Rate, speedup: f64) -> Rate {
    Rate(((line.0 as f64) * speedup).round() as u64)
}
/// Default host NIC queue: 1000 full frames, Linux's default transmit queue length (txqueuelen).
pub const DEFAULT_HOST_BUFFER_FRAMES: u64 = 1000;
/// The largest IP packet, and what a frame adds to it and its least size on the wire (`Framing`).
pub const DEFAULT_MTU: u32 = 1500;
pub const DEFAULT_FRAME_OVERHEAD: u32 = 30;
pub const DEFAULT_MIN_FRAME: u32 = 72;

struct Builder<'a> {
    cfg: &'a TopologyConfig,
    nodes: Vec<NodeSpec>,
    links: Vec<LinkSpec>,
}

impl<'a> Builder<'a> {
    fn node(&mut self, name: String, kind: NodeKind) -> usize {
        self.nodes.push(NodeSpec { name, kind });
        self.nodes.len() - 1
    }
    /// Add a link on `tier`, with kind-specific default rate `kind_rate` (below user tier settings).
    fn link(&mut self, a: usize, b: usize, tier: &'static str, kind_rate: Option<Rate>, kind_delay: Option<Time>) {
        let c = self.cfg;
        let t = c.tiers.get(tier);
        let rate = t.and_then(|t| t.rate).map(|r| r.0).or(kind_rate).or(c.link_rate.map(|r| r.0)).unwrap_or(DEFAULT_RATE);
        let delay = t.and_then(|t| t.delay).map(|d| d.0).or(kind_delay).or(c.link_delay.map(|d| d.0)).unwrap_or(DEFAULT_DELAY);
        let pick = |tier_specific: Option<Bytes>, tier_both: Option<Bytes>, top_specific: Option<Bytes>| {
            tier_specific.or(tier_both).or(top_specific).or(c.buffer).map(|b| b.0).unwrap_or(DEFAULT_BUFFER)
        };
        let ingress_buffer = pick(t.and_then(|t| t.ingress_buffer), t.and_then(|t| t.buffer), c.ingress_buffer);
        let egress_buffer = pick(t.and_then(|t| t.egress_buffer), t.and_then(|t| t.buffer), c.egress_buffer);
        self.links.push(LinkSpec { a, b, tier, rate, delay, ingress_buffer, egress_buffer });
    }
}

fn need(v: Option<u32>, field: &str, what: &str) -> Result<u32, ConfigError> {
    match v {
        Some(x) if x >= 1 => Ok(x),
        Some(x) => err(format!("topology.{field}"), format!("must be at least 1 ({what}), got {x}")),
        None => err(format!("topology.{field}"), format!("required: {what}")),
    }
}

/// Build a fat tree with `pods` pods of `tors` ToRs and `aggs` aggregation switches, `hosts_per_tor`
/// servers per ToR, `cores` core switches and `cores_per_agg` uplinks per aggregation switch:
/// aggregation switch j of every pod connects to cores j*cores_per_agg .. (j+1)*cores_per_agg - 1.
fn fat_tree(b: &mut Builder, pods: u32, tors: u32, aggs: u32, hosts_per_tor: u32, cores_per_agg: u32, kind_rates: [Option<Rate>; 3]) {
    let cores = aggs * cores_per_agg;
    let mut hosts = Vec::new();
    for p in 0..pods {
        for t in 0..tors {
            for h in 0..hosts_per_tor {
                let i = (p * tors + t) * hosts_per_tor + h;
                hosts.push(b.node(format!("h{i}"), NodeKind::Host));
            }
        }
    }
    let mut tor_ids = Vec::new();
    let mut agg_ids = Vec::new();
    for p in 0..pods {
        for t in 0..tors {
            tor_ids.push(b.node(format!("tor{p}_{t}"), NodeKind::Switch));
        }
        for a in 0..aggs {
            agg_ids.push(b.node(format!("agg{p}_{a}"), NodeKind::Switch));
        }
    }
    let core_ids: Vec<usize> = (0..cores).map(|c| b.node(format!("core{c}"), NodeKind::Switch)).collect();
    for (i, &h) in hosts.iter().enumerate() {
        let tor = tor_ids[i / hosts_per_tor as usize];
        b.link(h, tor, "host", kind_rates[0], None);
    }
    for p in 0..pods as usize {
        for t in 0..tors as usize {
            for a in 0..aggs as usize {
                b.link(tor_ids[p * tors as usize + t], agg_ids[p * aggs as usize + a], "tor_agg", kind_rates[1], None);
            }
        }
        for a in 0..aggs as usize {
            for c in 0..cores_per_agg as usize {
                b.link(agg_ids[p * aggs as usize + a], core_ids[a * cores_per_agg as usize + c], "agg_core", kind_rates[2], None);
            }
        }
    }
}

/// The largest fabric accepted (documented in docs/scenarios.md): beyond it the routing tables and ports
/// outgrow a workstation's memory, and a mistyped size would otherwise hang the run while it builds.
pub const MAX_HOSTS: u64 = 100_000;
pub const MAX_NODES: u64 = 200_000;
pub const MAX_LINKS: u64 = 2_000_000;
/// Routing state grows with switches x edge switches (one row per destination edge switch): at most this
/// many bytes of it.
pub const MAX_ROUTING_BYTES: u64 = 2 << 30;

/// Refuse a fabric too large to hold: `field` is the key to name. All arithmetic is checked.
fn check_size(field: &str, hosts: Option<u64>, switches: Option<u64>, links: Option<u64>, edges: Option<u64>) -> Result<(), ConfigError> {
    let (Some(h), Some(s), Some(l), Some(e)) = (hosts, switches, links, edges) else {
        return err(field, "the fabric's size overflows (too many nodes)");
    };
    let nodes = h + s;
    let routing = s.checked_mul(e).and_then(|x| x.checked_mul(8)).and_then(|x| x.checked_add(nodes.checked_mul(e)?.checked_mul(4)?));
    if h > MAX_HOSTS {
        return err(field, format!("{h} hosts; at most {MAX_HOSTS} are supported"));
    }
    if nodes > MAX_NODES || l > MAX_LINKS {
        return err(field, format!("{nodes} nodes and {l} links; at most {MAX_NODES} nodes and {MAX_LINKS} links are supported"));
    }
    match routing {
        Some(r) if r <= MAX_ROUTING_BYTES => Ok(()),
        _ => err(field, format!("the routing tables of {s} switches x {e} edge switches would outgrow {} GB; use fewer switches", MAX_ROUTING_BYTES >> 30)),
    }
}

pub fn build(cfg: &TopologyConfig) -> Result<Topology, ConfigError> {
    cfg.validate_keys()?;
    let mut b = Builder { cfg, nodes: Vec::new(), links: Vec::new() };
    match cfg.kind.as_str() {
        "detail128" => fat_tree(&mut b, 4, 4, 4, 8, 2, [None, None, None]),
        "testbed16" => fat_tree(&mut b, 4, 2, 2, 2, 2, [None, Some(Rate::mbps(500)), Some(Rate::mbps(250))]),
        "fattree" => {
            let k = need(cfg.k, "k", "the fat tree's arity, an even number")?;
            if k % 2 != 0 || k < 2 {
                return err("topology.k", format!("must be an even number >= 2, got {k}"));
            }
            if k > 64 {
                return err("topology.k", format!("at most 64 is supported, got {k}"));
            }
            fat_tree(&mut b, k, k / 2, k / 2, k / 2, k / 2, [None, None, None]);
        }
        "leaf_spine" => {
            let leaves = need(cfg.leaves, "leaves", "number of leaf switches")?;
            let spines = need(cfg.spines, "spines", "number of spine switches")?;
            let hpl = need(cfg.hosts_per_leaf, "hosts_per_leaf", "servers per leaf")?;
            for (v, k) in [(leaves, "leaves"), (spines, "spines"), (hpl, "hosts_per_leaf")] {
                if v == 0 {
                    return err(format!("topology.{k}"), "must be at least 1");
                }
            }
            let (l64, s64, h64) = (leaves as u64, spines as u64, hpl as u64);
            let hosts = l64.checked_mul(h64);
            check_size("topology.leaves", hosts, l64.checked_add(s64), hosts.and_then(|h| h.checked_add(l64.checked_mul(s64)?)), Some(l64))?;
            let hr = cfg.host_rate.map(|r| r.0);
            let ur = cfg.uplink_rate.map(|r| r.0);
            let mut hosts = Vec::new();
            for i in 0..leaves * hpl {
                hosts.push(b.node(format!("h{i}"), NodeKind::Host));
            }
            let l: Vec<usize> = (0..leaves).map(|i| b.node(format!("leaf{i}"), NodeKind::Switch)).collect();
            let s: Vec<usize> = (0..spines).map(|i| b.node(format!("spine{i}"), NodeKind::Switch)).collect();
            for (i, &h) in hosts.iter().enumerate() {
                b.link(h, l[i / hpl as usize], "host", hr, None);
            }
            for &li in &l {
                for &si in &s {
                    b.link(li, si, "leaf_spine", ur, None);
                }
            }
        }
        "single_switch" => {
            let n = need(cfg.hosts, "hosts", "number of servers on the switch")?;
            if n < 2 {
                return err("topology.hosts", "must be at least 2");
            }
            check_size("topology.hosts", Some(n as u64), Some(1), Some(n as u64), Some(1))?;
            let hosts: Vec<usize> = (0..n).map(|i| b.node(format!("h{i}"), NodeKind::Host)).collect();
            let sw = b.node("sw".into(), NodeKind::Switch);
            for h in hosts {
                b.link(h, sw, "host", None, None);
            }
        }
        "dumbbell" => {
            let l = need(cfg.left, "left", "servers on the left switch")?;
            let r = need(cfg.right, "right", "servers on the right switch")?;
            let h = (l as u64).checked_add(r as u64);
            check_size("topology.left", h, Some(2), h.and_then(|h| h.checked_add(1)), Some(2))?;
            let hosts: Vec<usize> = (0..l + r).map(|i| b.node(format!("h{i}"), NodeKind::Host)).collect();
            let ls = b.node("left".into(), NodeKind::Switch);
            let rs = b.node("right".into(), NodeKind::Switch);
            for (i, &h) in hosts.iter().enumerate() {
                b.link(h, if (i as u32) < l { ls } else { rs }, "host", None, None);
            }
            b.link(ls, rs, "bottleneck", cfg.bottleneck_rate.map(|r| r.0), cfg.bottleneck_delay.map(|d| d.0));
        }
        "custom" => {
            let Some(nodes) = &cfg.nodes else { return err("topology.nodes", "required for kind \"custom\": a list of {name, kind = \"host\"|\"switch\"}") };
            let Some(links) = &cfg.links else { return err("topology.links", "required for kind \"custom\": a list of {a, b, rate, delay, buffer}") };
            let nh = nodes.iter().filter(|n| n.kind == "host").count() as u64;
            check_size("topology.nodes", Some(nh), Some(nodes.len() as u64 - nh), Some(links.len() as u64), Some(nodes.len() as u64 - nh))?;
            let mut names = std::collections::HashMap::new();
            for (i, n) in nodes.iter().enumerate() {
                let kind = match n.kind.as_str() {
                    "host" => NodeKind::Host,
                    "switch" => NodeKind::Switch,
                    k => return err(format!("topology.nodes[{i}].kind"), format!("must be \"host\" or \"switch\", got {k:?}")),
                };
                if names.insert(n.name.clone(), i).is_some() {
                    return err(format!("topology.nodes[{i}].name"), format!("duplicate node name {:?}", n.name));
                }
                b.node(n.name.clone(), kind);
            }
            for (i, l) in links.iter().enumerate() {
                let ends = [(&l.a, "a"), (&l.b, "b")].map(|(n, f)| {
                    names.get(n).copied().ok_or_else(|| ConfigError { field: format!("topology.links[{i}].{f}"), msg: format!("no node named {n:?}") })
                });
                let [a, bb] = ends;
                let (a, bb) = (a?, bb?);
                if a == bb {
                    return err(format!("topology.links[{i}]"), "a link must join two different nodes");
                }
                if b.nodes[a].kind == NodeKind::Host && b.nodes[bb].kind == NodeKind::Host {
                    return err(format!("topology.links[{i}]"), format!("joins two hosts ({:?} and {:?}); a host links to a switch", l.a, l.b));
                }
                b.link(a, bb, "link", l.rate.map(|r| r.0), l.delay.map(|d| d.0));
                let last = b.links.last_mut().unwrap();
                if let Some(v) = l.ingress_buffer.or(l.buffer) {
                    last.ingress_buffer = v.0;
                }
                if let Some(v) = l.egress_buffer.or(l.buffer) {
                    last.egress_buffer = v.0;
                }
            }
        }
        _ => unreachable!("validated"),
    }
    let framing = Framing {
        mtu: cfg.mtu.map(|b| b.0 as u32).unwrap_or(DEFAULT_MTU),
        overhead: cfg.frame_overhead.map(|b| b.0 as u32).unwrap_or(DEFAULT_FRAME_OVERHEAD),
        min_frame: cfg.min_frame.map(|b| b.0 as u32).unwrap_or(DEFAULT_MIN_FRAME),
    };
    let topo = Topology {
        kind: cfg.kind.clone(),
        nodes: b.nodes,
        links: b.links,
        forwarding_delay: cfg.forwarding_delay.map(|d| d.0).unwrap_or(DEFAULT_FORWARDING_DELAY),
        speedup: cfg.speedup.unwrap_or(DEFAULT_SPEEDUP),
        host_buffer: cfg.host_buffer.map(|b| b.0).unwrap_or(DEFAULT_HOST_BUFFER_FRAMES * framing.full_frame() as u64),
        framing,
        shared_buffer: cfg.shared_buffer.as_ref().map(|sb| sb.resolve()),
    };
    // every host has exactly one link; buffers must hold a full frame
    let mut deg = vec![0u32; topo.nodes.len()];
    for l in &topo.links {
        deg[l.a] += 1;
        deg[l.b] += 1;
        let full = topo.framing.full_frame() as u64;
        if l.ingress_buffer < full || l.egress_buffer < full {
            return err(format!("topology.tiers.{}.buffer", l.tier), format!("must hold at least one full frame ({full}B)"));
        }
        if !queue_bound_ok(l.ingress_buffer) || !queue_bound_ok(l.egress_buffer) {
            return err(format!("topology.tiers.{}.buffer", l.tier), format!("must be at most {MAX_CAP}B (4 GiB less one byte) or \"inf\""));
        }
    }
    if !queue_bound_ok(topo.host_buffer) {
        return err("topology.host_buffer", format!("must be at most {MAX_CAP}B (4 GiB less one byte) or \"inf\""));
    }
    for (i, n) in topo.nodes.iter().enumerate() {
        if n.kind == NodeKind::Host && deg[i] != 1 {
            return err("topology", format!("host {:?} has {} links; a host must have exactly one", n.name, deg[i]));
        }
    }
    if topo.hosts().count() < 2 {
        return err("topology", "needs at least two hosts");
    }
    // every host must reach every other (a flow between two parts of a split fabric would never finish)
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); topo.nodes.len()];
    for l in &topo.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    let first = topo.hosts().next().expect("two hosts");
    let mut seen = vec![false; topo.nodes.len()];
    let mut stack = vec![first];
    seen[first] = true;
    while let Some(u) = stack.pop() {
        for &v in &adj[u] {
            if !seen[v] {
                seen[v] = true;
                stack.push(v);
            }
        }
    }
    if let Some(h) = topo.hosts().find(|&h| !seen[h]) {
        return err("topology.links", format!("host {:?} cannot reach host {:?}: the fabric is split in parts", topo.nodes[h].name, topo.nodes[first].name));
    }
    Ok(topo)
}

/// A queue can be bounded by up to `MAX_CAP` bytes, or be unbounded ("inf").
fn queue_bound_ok(b: u64) -> bool {
    b <= MAX_CAP || b == u64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;
    fn topo(json: &str) -> Topology {
        let c: TopologyConfig = serde_json::from_str(json).unwrap();
        build(&c).unwrap()
    }
    fn count(t: &Topology, prefix: &str) -> usize {
        t.nodes.iter().filter(|n| n.name.starts_with(prefix)).count()
    }
    #[test]
    fn every_frame_is_counted_one_way() {
        // preamble to FCS, no inter-frame gap, as the paper's 1530 B full frame: a full segment, a bare ACK
        // (padded to the 64 B minimum frame) and a PFC frame (a minimum-size frame) in one accounting
        let f = topo(r#"{"kind": "single_switch", "hosts": 2}"#).framing;
        assert_eq!((f.wire(1500), f.full_frame()), (1530, 1530));
        assert_eq!((f.wire(40), f.wire(46), f.pfc_frame()), (72, 76, 72));
        // a frame overhead that counts the 12 B gap too moves every frame alike
        let g = topo(r#"{"kind": "single_switch", "hosts": 2, "frame_overhead": 42, "min_frame": 84}"#).framing;
        assert_eq!((g.full_frame(), g.wire(40), g.pfc_frame()), (1542, 84, 84));
    }
    #[test]
    fn detail128_shape() {
        let t = topo(r#"{"kind": "detail128"}"#);
        assert_eq!(t.hosts().count(), 128);
        assert_eq!(count(&t, "tor"), 16);
        assert_eq!(count(&t, "agg"), 16);
        assert_eq!(count(&t, "core"), 8);
        // 128 host links, 16 ToR x 4 aggs, 16 aggs x 2 cores
        assert_eq!(t.links.len(), 128 + 64 + 32);
        assert!(t.links.iter().all(|l| l.rate == Rate::gbps(1) && l.ingress_buffer == 131072));
    }
    #[test]
    fn testbed16_rate_limits() {
        let t = topo(r#"{"kind": "testbed16"}"#);
        assert_eq!(t.hosts().count(), 16);
        assert_eq!(t.nodes.len(), 36);
        for l in &t.links {
            let want = match l.tier {
                "host" => Rate::gbps(1),
                "tor_agg" => Rate::mbps(500),
                _ => Rate::mbps(250),
            };
            assert_eq!(l.rate, want);
        }
    }
    #[test]
    fn fattree_k4_and_tiers() {
        let t = topo(r#"{"kind": "fattree", "k": 4, "tiers": {"agg_core": {"rate": "10Gbps", "buffer": "1MB"}}}"#);
        assert_eq!(t.hosts().count(), 16);
        assert_eq!(t.nodes.len(), 36);
        let ac: Vec<_> = t.links.iter().filter(|l| l.tier == "agg_core").collect();
        assert_eq!(ac.len(), 16);
        assert!(ac.iter().all(|l| l.rate == Rate::gbps(10) && l.egress_buffer == 1 << 20));
    }
    #[test]
    fn buffers_beyond_the_queues_32_bit_counts_are_refused_by_name() {
        let bad = |json: &str| {
            let c: TopologyConfig = serde_json::from_str(json).unwrap();
            build(&c).unwrap_err().to_string()
        };
        let e = bad(r#"{"kind": "fattree", "k": 4, "tiers": {"agg_core": {"buffer": "5GB"}}}"#);
        assert!(e.contains("topology.tiers.agg_core.buffer") && e.contains("at most 4294967295B"), "{e}");
        let e = bad(r#"{"kind": "detail128", "host_buffer": "8GB"}"#);
        assert!(e.contains("topology.host_buffer") && e.contains("at most"), "{e}");
        // the largest bound and an unbounded buffer build
        for b in ["4294967295B", "inf"] {
            let ok: TopologyConfig = serde_json::from_str(&format!(r#"{{"kind": "fattree", "k": 4, "buffer": "{b}", "host_buffer": "{b}"}}"#)).unwrap();
            assert!(build(&ok).is_ok(), "{b}");
        }
    }
}
