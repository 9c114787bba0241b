//! Faults: a link shut down or degraded, from the start or at a given time, and a neighbour whose
//! transmitter ignores PFC pauses. Routing reconverges at once when a link goes down (the acceptable-port
//! sets exclude it), as in the paper's asymmetric-topology experiments.

use crate::fabric::cioq::Switch as _;
use crate::sim::Sim;
use crate::stats::DropCause;


pub use crate::fabric::{Fault, FaultKind};

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
        self.act_as(node);
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
            self.pfc_run.paused -= st.egress.release_all(now) as u64;
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
                self.fab.port_ctr[p as usize].drops += 1;
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
