//! Faults: a link shut down or degraded, from the start or at a given time, and a neighbour whose
//! transmitter ignores PFC pauses. Routing reconverges at once when a link goes down (the acceptable-port
//! sets exclude it), as in the paper's asymmetric-topology experiments.

use crate::config::{err, ConfigError, FaultConfig, LinkSel};
use crate::sim::Sim;
use crate::stats::DropCause;
use detailsim_engine::{Rate, Time};

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

    pub fn resolve(sim: &Sim, cfgs: &[FaultConfig]) -> Result<Vec<Fault>, ConfigError> {
        let mut out = Vec::new();
        for (i, c) in cfgs.iter().enumerate() {
            let find = |name: &str| sim.fab.topo.nodes.iter().position(|n| n.name == name);
            let field = format!("fault[{i}].link");
            let (link, a) = match &c.link {
                LinkSel::Nodes(v) => {
                    let Some(a) = find(&v[0]) else { return err(field, format!("no node named {:?}", v[0])) };
                    let Some(b) = find(&v[1]) else { return err(field, format!("no node named {:?}", v[1])) };
                    let Some(link) = sim.fab.topo.links.iter().position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a)) else {
                        return err(field, format!("no link between {:?} and {:?}", v[0], v[1]));
                    };
                    (link, a)
                }
                LinkSel::Tier(t) => {
                    let (tier, idx) = t.split_once('#').unwrap();
                    let Ok(idx) = idx.parse::<usize>() else { return err(field, format!("{t:?}: the index after '#' must be a number")) };
                    let of_tier: Vec<usize> = (0..sim.fab.topo.links.len()).filter(|&l| sim.fab.topo.links[l].tier == tier).collect();
                    let Some(&link) = of_tier.get(idx) else {
                        return err(field, format!("{t:?}: tier {tier:?} has {} links in this topology", of_tier.len()));
                    };
                    // a tier link's first node is the one nearer the hosts (e.g. the aggregation switch)
                    (link, sim.fab.topo.links[link].a)
                }
            };
            let kind = match c.kind.as_str() {
                "link_down" => FaultKind::LinkDown,
                "degrade" => FaultKind::Degrade(c.rate.unwrap().0),
                _ => {
                    let egress = (sim.fab.nodes[a].port_base..sim.fab.nodes[a].port_base + sim.fab.nodes[a].nports)
                        .find(|&p| sim.fab.ports[p as usize].link == link as u32)
                        .unwrap();
                    FaultKind::IgnorePause(egress)
                }
            };
            out.push(Fault { kind, link: link as u32, at: c.at.0 });
        }
        Ok(out)
    }
}

impl Sim {
    #[inline(never)]
    pub(crate) fn fault_start(&mut self, i: u32) {
        let f = self.faults[i as usize].clone();
        match f.kind {
            FaultKind::LinkDown => self.link_down(f.link),
            FaultKind::Degrade(rate) => {
                // the rate and everything derived from it: PFC thresholds, reaction window and grace (checked
                // lossless at build time); crossbar times and path BDPs read the port rates when used
                for p in self.fab.link_ports(f.link) {
                    let speedup = self.fab.topo.speedup;
                    self.fab.ports[p as usize].set_rate(rate, speedup);
                    if self.fab.pfc[p as usize].ingress.enabled {
                        let d = self.pfc_derive(p, rate).expect("checked when the scenario was built");
                        self.pfc_install(p, d);
                        if self.act_at(p) {
                            self.pfc_check(p);
                        }
                    }
                }
            }
            FaultKind::IgnorePause(egress) => {
                self.fab.pfc[egress as usize].egress.ignores_pause = true;
                // it forgets any pause in force
                if self.act_at(egress) {
                    self.pfc_apply(egress, 0, 0xff);
                }
            }
        }
    }

    /// Whether a fault acts at port `p` here (always, but in a part of a split run the ports of the other
    /// half are the other part's: there the fault only changes what both keep, rates, flags and routes);
    /// with the node order the events it schedules there come from the port's node.
    fn act_at(&mut self, p: u32) -> bool {
        let node = self.fab.ports[p as usize].node;
        if !self.owns(node) {
            return false;
        }
        if self.by_node {
            self.act_as(node);
        }
        true
    }

    /// Shut a link down: both directions stop, queued packets are dropped, routes are recomputed.
    pub(crate) fn link_down(&mut self, link: u32) {
        let ends = self.fab.link_ports(link);
        if !self.fab.ports[ends[0] as usize].up {
            return;
        }
        for &p in &ends {
            let now = self.now;
            let st = &mut self.fab.pfc[p as usize];
            self.pfc_paused -= st.egress.release_all(now) as u64;
            st.ingress.sent = 0;
            let pt = &mut self.fab.ports[p as usize];
            pt.up = false;
            pt.paused = 0;
            pt.eg.advance(now);
            // drop what waits in the egress queue (bytes still crossing the crossbar are dropped on arrival)
            while let Some((prio, pid)) = pt.eg.pop_next(0xff, &self.pkts) {
                let wire = self.pkts.get(pid).wire as u64;
                pt.eg.release(prio, wire);
                self.counters.drop(DropCause::LinkDown);
                self.port_ctr[p as usize].drops += 1;
                self.pkts.release(pid);
            }
        }
        self.recompute_routes();
        // blocked ingress heads may point at the dead port: let every switch ingress retry (and reroute)
        for &p in &ends {
            let ws = self.fab.ports[p as usize].drain_waiters();
            for (_, w) in ws {
                if self.act_at(w) {
                    self.xbar_try(w);
                }
            }
        }
        for p in 0..self.fab.ports.len() as u32 {
            if self.fab.nodes[self.fab.ports[p as usize].node as usize].is_switch && self.fab.ports[p as usize].ing.nonempty != 0 && self.act_at(p) {
                self.xbar_try(p);
            }
        }
    }

    pub(crate) fn recompute_routes(&mut self) {
        let is_switch: Vec<bool> = self.fab.nodes.iter().map(|n| n.is_switch).collect();
        let base: Vec<u32> = self.fab.nodes.iter().map(|n| n.port_base).collect();
        let np: Vec<u32> = self.fab.nodes.iter().map(|n| n.nports).collect();
        let peer: Vec<u32> = self.fab.ports.iter().map(|p| p.peer_node).collect();
        let up: Vec<bool> = self.fab.ports.iter().map(|p| p.up).collect();
        self.fab.routes = crate::routing::Routes::compute(&is_switch, &base, &np, &peer, &up);
    }
}
