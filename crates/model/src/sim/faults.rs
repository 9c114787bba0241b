//! Faults: a link shut down or degraded, from the start or at a given time, and a neighbour whose
//! transmitter ignores PFC pauses. What each does to the network is `Fabric`'s (`fabric/faults.rs`);
//! here, when it happens and what the run does about it (drops counted, blocked heads retry, PFC checks,
//! each at the part of a split run that holds the port). Routing reconverges at once when a link goes down,
//! as in the paper's asymmetric-topology experiments.

use crate::fabric::switch::Switch as _;
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
                for p in self.fab.degrade(f.link, rate, &self.scheme.pfc) {
                    if self.fab.pfc.get(p as usize).is_some_and(|st| st.ingress.enabled) && self.act_at(p) {
                        self.pfc_check(p);
                    }
                }
            }
            FaultKind::IgnorePause(egress) => {
                self.fab.ignore_pause(egress);
                // it forgets any pause in force
                if let Some(e) = self.fab.lid(egress) {
                    if self.act_at(e) {
                        self.pfc_apply(e, 0, 0xff);
                    }
                }
            }
        }
    }

    /// Whether a fault acts at port `p` (local index) here (always, but in a part of a split run the nodes of
    /// the other parts are theirs: there the fault only changes what all keep, rates, flags and routes);
    /// with the node order the events it schedules there come from the port's node.
    fn act_at(&mut self, p: u32) -> bool {
        let node = self.fab.ports[p as usize].node;
        if !self.owns(node) {
            return false;
        }
        self.act_as(node);
        true
    }

    /// Shut a link down (`Fabric::link_down`): the packets it took count as dropped, and blocked heads retry.
    pub(crate) fn link_down(&mut self, link: u32) {
        let mut dropped = Vec::new();
        let pkts = &self.pkts;
        let Some((ends, released)) = self.fab.link_down(self.now, link, pkts, |p| pkts.get(p).wire as u64, &mut dropped) else { return };
        self.pfc_paused -= released;
        for (p, pid) in dropped {
            if self.fab.shared() {
                let (prio, wire) = (self.pkts.get(pid).prio, self.pkts.get(pid).wire as u64);
                self.shared_release(p, pid, prio, wire);
            }
            self.rec.counters.drop(DropCause::LinkDown);
            self.fab.port_ctr[p as usize].drops += 1;
            self.pkts.release(pid);
        }
        // blocked ingress heads may point at the dead port: let every switch ingress retry (and reroute)
        for &p in &ends {
            let ws = self.fab.drain_waiters(p);
            for (_, w) in ws {
                if self.act_at(w) {
                    self.xbar_try(w);
                }
            }
        }
        let switch_ports: Vec<u32> = (0..self.fab.ports.len() as u32).filter(|&p| self.fab.nodes[self.fab.ports[p as usize].node as usize].is_switch).collect();
        for p in switch_ports {
            if self.fab.ports[p as usize].ing.nonempty != 0 && self.act_at(p) {
                self.xbar_try(p);
            }
        }
    }
}
