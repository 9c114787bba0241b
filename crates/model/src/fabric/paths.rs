//! Paths between hosts (`Fabric::path_ports`, `one_way`, `ideal_transfer`, `path_bdp`, `fabric_bdp`,
//! `tier_crossings`): one shortest path, each switch's first acceptable port, walked through the routes'
//! port lists and the wiring, or where every link is alike taken as its length (`path_hops`).

use super::Fabric;
use crate::topology;
use detailsim_engine::{Rate, Time};
use std::collections::BTreeMap;

impl Fabric {
    /// The egress ports (global indices) along one shortest path from host `src` to host `dst`: the
    /// sender's NIC, then each switch's first acceptable port. Empty when there is no path.
    pub fn path_ports(&self, src: u32, dst: u32, out: &mut Vec<u32>) {
        out.clear();
        if !self.walk_path(src, dst, |p| out.push(p)) {
            out.clear();
        }
    }

    /// The settled hops (`Packet::hops`) of a packet from host `src` to host `dst` with flow hash `hash`
    /// under load balancing `lb`: at each switch from the sender's on, the port `Node::route` will choose
    /// where nothing but the packet settles it (the edge switch's port to `dst`, the one acceptable port,
    /// or flow hashing's pick: `Forwarder::settled_choice`), up to the first switch where it is not
    /// settled (scatter or ALB among several ports: the switches after it depend on its choice), the
    /// first port that is down, a local index above 62 or `HOPS_HELD` switches. Exact only while the
    /// routes and the links stay as they are: a run with `link_down` faults does not use them.
    pub fn settled_hops(&self, src: u32, dst: u32, hash: u32, lb: crate::config::LoadBalancing) -> u32 {
        let Some(&first) = self.wiring.port_base.get(src as usize) else { return 0 };
        let (mut port, mut hops) = (first, 0u32);
        for i in 0..crate::packet::HOPS_HELD {
            let Some(lp) = self.settled_step(&mut port, dst, hash, lb) else { break };
            hops |= lp << (crate::packet::HOP_BITS * i);
        }
        hops
    }

    /// `settled_hops` of two walks, `(src, dst, hash)` each (a transfer's data and its acknowledgements),
    /// a switch of each in turn: the same two values, while the loads of one walk's chain (the wiring's
    /// peer, the (switch, group) byte, its span, its list) wait beside the other's instead of after them.
    /// At k = 32 most of them miss the caches; one after the other, a flow's two walks took a share of a
    /// run's samples that side by side they nearly halve (docs/benchmarks.md, "A transfer's two walks side
    /// by side").
    pub fn settled_hops_pair(&self, a: (u32, u32, u32), b: (u32, u32, u32), lb: crate::config::LoadBalancing) -> (u32, u32) {
        use crate::packet::{HOPS_HELD, HOP_BITS};
        let w = &*self.wiring;
        let (Some(&pa), Some(&pb)) = (w.port_base.get(a.0 as usize), w.port_base.get(b.0 as usize)) else {
            return (self.settled_hops(a.0, a.1, a.2, lb), self.settled_hops(b.0, b.1, b.2, lb));
        };
        let (mut port_a, mut port_b, mut hops_a, mut hops_b) = (pa, pb, 0u32, 0u32);
        let (mut live_a, mut live_b) = (true, true);
        for i in 0..HOPS_HELD {
            if live_a {
                match self.settled_step(&mut port_a, a.1, a.2, lb) {
                    Some(lp) => hops_a |= lp << (HOP_BITS * i),
                    None => live_a = false,
                }
            }
            if live_b {
                match self.settled_step(&mut port_b, b.1, b.2, lb) {
                    Some(lp) => hops_b |= lp << (HOP_BITS * i),
                    None => live_b = false,
                }
            }
            if !live_a && !live_b {
                break;
            }
        }
        (hops_a, hops_b)
    }

    /// One switch of a settled walk: the switch past egress `port`; its settled local port plus one (a
    /// hop's slot), `port` moved to that port; None where the walk ends there (a host, a choice not
    /// settled, a local index past the slot's bits, a port that is down).
    #[inline(always)]
    fn settled_step(&self, port: &mut u32, dst: u32, hash: u32, lb: crate::config::LoadBalancing) -> Option<u32> {
        let w = &*self.wiring;
        let node = w.peer_node[*port as usize];
        let nd = &self.nodes[node as usize];
        if !nd.is_switch {
            return None;
        }
        let base = w.port_base[node as usize];
        let lp = self.settled_port(node, nd, dst, hash, lb)?;
        // (the link's state is read only where some link is down: at k = 32 its two loads missed the
        // cache on most hops of a flow's first packet)
        if lp + 1 >= 1 << crate::packet::HOP_BITS || (self.links_down != 0 && !self.link_up[w.port_link[(base + lp) as usize] as usize]) {
            return None;
        }
        *port = base + lp;
        Some(lp + 1)
    }

    /// The local port switch `node` (`nd`) sends a packet for host `dst` with flow hash `hash` through,
    /// where nothing but the packet settles it: the edge switch's port to `dst`, else
    /// `Forwarder::settled_choice` over the (switch, group)'s list (the one acceptable port, or flow
    /// hashing's pick). None where the choice draws or reads queues (scatter or ALB among several ports)
    /// or an index is out of range. Shared by `settled_hops` (a flow's hops, once) and the prefetch's
    /// guess of an arrival's output port (`Sim::settled_out`, which may read ahead of the event, hence
    /// every index checked).
    #[inline(always)]
    pub(crate) fn settled_port(&self, node: u32, nd: &super::Node, dst: u32, hash: u32, lb: crate::config::LoadBalancing) -> Option<u32> {
        let r = &self.routes;
        if r.edge.get(dst as usize) == Some(&node) {
            return r.edge_lp.get(dst as usize).copied();
        }
        nd.fwd.settled_choice(lb, r.ports_checked(node, dst)?, hash)
    }

    /// `path_ports` without a list: each egress port of the path in order to `hop`; false when there is no
    /// path (after some calls of `hop`, which the caller then discards).
    #[inline]
    fn walk_path(&self, src: u32, dst: u32, mut hop: impl FnMut(u32)) -> bool {
        // (global indices, from the wiring every part keeps)
        let mut port = self.wiring.port_base[src as usize];
        for _ in 0..=self.nodes.len() {
            hop(port);
            let node = self.wiring.peer_node[port as usize];
            if !self.nodes[node as usize].is_switch {
                return node == dst;
            }
            port = if self.routes.edge[dst as usize] == node {
                self.routes.edge_port[dst as usize]
            } else {
                // the first acceptable port: the first of the (switch, group)'s list, which is ascending (the
                // row's first set bit), read through the one-byte table rather than the rows of bits, which
                // outgrow the caches first (k = 32: 5.2 MB against 655 KB)
                let Some(&lp) = self.routes.ports_checked(node, dst).and_then(|l| l.first()) else { return false };
                self.wiring.port_base[node as usize] + lp
            };
        }
        false
    }

    /// Each link of the path `walk_path` takes from host `src` to host `dst`, as its rate (the current one
    /// with `current`, else as configured) and delay, in order to `hop`; false when there is no path (after
    /// some calls of `hop`, which the caller then discards). Where every link has the same rate and delay
    /// (and no `degrade` fault has changed a current rate) only the path's length matters, which the routes
    /// know between any two edge switches (`Routes::host_links`: the walk's length, since each of its switch
    /// hops takes a port one nearer the destination's edge switch): no walk through the route tables and
    /// the wiring, whose lines are cold in a large fabric.
    #[inline]
    fn path_hops(&self, src: u32, dst: u32, current: bool, mut hop: impl FnMut(Rate, Time)) -> bool {
        if let Some((rate, delay)) = self.uniform.filter(|_| !(current && self.degraded)) {
            if let Some(links) = self.routes.host_links(src, dst) {
                (0..links).for_each(|_| hop(rate, delay));
                return true;
            }
        }
        self.walk_path(src, dst, |port| {
            let link = &self.topo.links[self.link_of(port)];
            hop(if current { self.port_rate(port) } else { link.rate }, link.delay)
        })
    }

    /// Store-and-forward latency of one frame carrying `bytes` of payload along a shortest path from host
    /// `src` to host `dst` in an idle fabric (every link's own rate and delay, each switch's forwarding
    /// delay and, on a CIOQ switch, its crossbar time), and the path's bottleneck rate; None when there is no path.
    pub fn one_way(&self, src: u32, dst: u32, bytes: u64) -> Option<(u64, detailsim_engine::Rate)> {
        let w = self.framing.wire(bytes as u32 + crate::packet::HEADERS) as u64;
        let cioq = self.topo.shared_buffer.is_none();
        let (mut t, mut bottleneck) = (0u64, u64::MAX);
        // the rate of the link before this hop: the switch's crossbar crossing runs at the speedup times the
        // rate of the link the frame came in on (a shared-buffer switch is output-queued: the frame enters
        // its egress queue at once)
        let mut came_in: Option<detailsim_engine::Rate> = None;
        // (from what every part of a split run keeps of every link: its rate now, its delay)
        let found = self.path_hops(src, dst, true, |rate, delay| {
            t += rate.tx_time(w).0 + delay.0;
            bottleneck = bottleneck.min(rate.0);
            if let Some(inr) = came_in {
                t += self.topo.forwarding_delay.0 + if cioq { topology::xbar_rate(inr, self.topo.speedup).tx_time(w).0 } else { 0 };
            }
            came_in = Some(rate);
        });
        (found && came_in.is_some()).then_some((t, detailsim_engine::Rate(bottleneck)))
    }

    /// The completion time, in picoseconds, of `size` bytes from host `src` to host `dst` alone in the healthy
    /// fabric (every link at its configured rate, whatever `degrade` faults did) for a sender that has every
    /// frame ready at once: frames of `mss` payload (the last one shorter), each hop a FIFO transmitter
    /// followed by pure delays (the link's, then the next switch's forwarding delay and, on a CIOQ switch, its
    /// crossbar crossing). Along one shortest path the frames pipeline: the last arrives at the largest, over
    /// the hops b, of the first frame's time to reach b, the full frames back to back at the slowest hop up
    /// to b, the last frame at b and its own latency from there (the longest monotone path through the
    /// frames x hops grid, exact for FIFO hops). With `multipath` (packet scatter, ALB) frames may take
    /// different equal-length paths, sharing only the sender's link: the later of the last full frame's and
    /// the last frame's own arrivals. None when there is no path.
    pub fn ideal_transfer(&self, src: u32, dst: u32, mss: u64, size: u64, multipath: bool) -> Option<u64> {
        let hdr = crate::packet::HEADERS;
        let n = size.div_ceil(mss).max(1);
        let full = self.framing.wire(mss.min(size) as u32 + hdr) as u64;
        let last = self.framing.wire((size - mss * (n - 1)) as u32 + hdr) as u64;
        let cioq = self.topo.shared_buffer.is_none();
        // One pass over the hops. Per hop, for a full frame and the last one: serialization at the link's
        // configured rate, and the pure delays after it until the next hop's transmitter may take the frame
        // (the link's; before another hop the forwarding delay and, on a CIOQ switch, the crossbar's crossing
        // at the speedup times the link's rate): known once the next hop is. At hop b the candidate is
        // prefix_full(b) + full(b) + (n - 2) x slowest(..=b) + (one_way_last - prefix_last(b)); the last
        // frame's whole one-way time is known at the end, so the pass keeps the candidate without it
        // (prefix_full >= prefix_last: a full frame takes no less than the last at every hop).
        struct Hop {
            full: u64,
            last: u64,
            after: [u64; 2],
            rate: Rate,
        }
        let (mut prefix_full, mut prefix_last, mut slowest, mut best) = (0u64, 0u64, 0u64, 0u64);
        let mut first_full = 0u64;
        let mut prev: Option<Hop> = None;
        let close = |h: Hop, next: bool, prefix_full: &mut u64, prefix_last: &mut u64| {
            let mut after = h.after;
            if next {
                let xbar = topology::xbar_rate(h.rate, self.topo.speedup);
                for (a, w) in after.iter_mut().zip([full, last]) {
                    *a += self.topo.forwarding_delay.0 + if cioq { xbar.tx_time(w).0 } else { 0 };
                }
            }
            *prefix_full += h.full + after[0];
            *prefix_last += h.last + after[1];
        };
        let found = self.path_hops(src, dst, false, |rate, delay| {
            let h = Hop { full: rate.tx_time(full).0, last: rate.tx_time(last).0, after: [delay.0; 2], rate };
            if let Some(q) = prev.take() {
                close(q, true, &mut prefix_full, &mut prefix_last);
            } else {
                first_full = h.full;
            }
            slowest = slowest.max(h.full);
            best = best.max(prefix_full - prefix_last + h.full + n.saturating_sub(2) * slowest);
            prev = Some(h);
        });
        let q = prev.filter(|_| found)?;
        close(q, false, &mut prefix_full, &mut prefix_last);
        let (one_way_full, one_way_last) = (prefix_full, prefix_last);
        if n == 1 {
            return Some(one_way_last);
        }
        if multipath {
            let t1 = first_full;
            return Some(((n - 2) * t1 + one_way_full).max((n - 1) * t1 + one_way_last));
        }
        Some(best + one_way_last)
    }

    /// Base RTT between two hosts (a full segment there and a bare ACK back, in an idle fabric) and the
    /// path's bandwidth-delay product at its bottleneck rate, in bytes.
    pub fn path_bdp(&self, src: u32, dst: u32, mss: u64) -> Option<(Time, u64)> {
        let (there, rate) = self.one_way(src, dst, mss)?;
        let rtt = Time(there + self.one_way(dst, src, 0)?.0);
        Some((rtt, (rate.0 as u128 * rtt.0 as u128 / 8 / 1_000_000_000_000) as u64))
    }

    /// The fabric's bandwidth-delay product: the largest of the paths from the first host to the others
    /// (bottleneck rate x base RTT; bytes, and that path's RTT).
    pub fn fabric_bdp(&self, mss: u64) -> (u64, Time) {
        let Some(&h0) = self.hosts.first() else { return (0, Time::ZERO) };
        self.hosts[1..].iter().filter_map(|&h| self.path_bdp(h0, h, mss)).map(|(rtt, bdp)| (bdp, rtt)).max().unwrap_or((0, Time::ZERO))
    }

    /// For a load on a named tier: the mean number of that tier's links a flow between two distinct random
    /// hosts crosses (shortest-path routing), and the tier's capacity in bits/s (both directions).
    pub fn tier_crossings(&self, tier: &str) -> Result<(f64, f64), String> {
        let links: Vec<&topology::LinkSpec> = self.topo.links.iter().filter(|l| l.tier == tier).collect();
        if links.is_empty() {
            let mut names: Vec<&str> = self.topo.links.iter().map(|l| l.tier).collect();
            names.sort_unstable();
            names.dedup();
            return Err(format!("no tier named {tier:?} in this topology; tiers: {}", names.join(", ")));
        }
        let capacity: f64 = links.iter().map(|l| 2.0 * l.rate.0 as f64).sum();
        let on_tier = |p: u32| self.topo.links[self.link_of(p)].tier == tier;
        // Hosts behind one edge switch share the switch part of every path: count it once per ordered pair
        // of edge switches (between representative hosts), the hosts' own links separately.
        let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for &h in &self.hosts {
            groups.entry(self.routes.edge[h as usize]).or_default().push(h);
        }
        let own = |h: u32| on_tier(self.wiring.port_base[h as usize]) as u64;
        let nh = self.hosts.len() as u64;
        let mut crossed: u64 = self.hosts.iter().map(|&h| 2 * (nh - 1) * own(h)).sum();
        let pairs = nh * (nh - 1);
        let mut path = Vec::new();
        for a in groups.values() {
            for b in groups.values() {
                let (s, d) = (a[0], *b.iter().find(|&&x| x != a[0]).unwrap_or(&a[0]));
                if s == d {
                    continue; // a lone host: no pair within its group
                }
                self.path_ports(s, d, &mut path);
                let n = path.iter().filter(|&&p| on_tier(p)).count() as u64;
                let switch_part = n.saturating_sub(own(s) + own(d));
                let pairs_ab = if std::ptr::eq(a, b) { a.len() as u64 * (a.len() as u64 - 1) } else { a.len() as u64 * b.len() as u64 };
                crossed += pairs_ab * switch_part;
            }
        }
        if crossed == 0 {
            return Err(format!("no path between hosts crosses tier {tier:?}"));
        }
        Ok((crossed as f64 / pairs.max(1) as f64, capacity))
    }
}
