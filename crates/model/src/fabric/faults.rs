//! Faults as changes of the network: a link shut down, a link degraded, a transmitter that ignores PFC
//! pauses. Each is a method of `Fabric` that changes the ports, their PFC state and the routes, and returns
//! what the driver must act on (the packets the link took down with it, the ports to check); the simulator
//! schedules them (`sim/faults.rs`: when, and which part of a split run acts where).

use super::Fabric;
use crate::mechanisms::pfc::PfcParams;
use crate::mechanisms::queue::Links;
use crate::packet::PacketId;
use detailsim_engine::{Rate, Time};
use std::sync::Arc;

impl Fabric {
    /// Link `link` goes down: both directions stop, with no pause state (the count of (port, priority)
    /// pairs that were paused is returned with its ends, by local index: in a part of a split run, those
    /// it holds), the packets waiting in either egress are
    /// taken off it into `dropped` (port, packet; in queue order, their bytes gone from the queue; bytes still
    /// crossing the crossbar are dropped when they arrive), and routes reconverge at once (the acceptable-port
    /// sets exclude it). None: it was down already.
    pub fn link_down(
        &mut self,
        now: Time,
        link: u32,
        links: &impl Links,
        wire: impl Fn(PacketId) -> u64,
        dropped: &mut Vec<(u32, PacketId)>,
    ) -> Option<(Vec<u32>, u64)> {
        if !self.link_up[link as usize] {
            return None;
        }
        Arc::make_mut(&mut self.link_up)[link as usize] = false;
        self.links_down += 1;
        // (in a part of a split run, the end another part holds is that part's to take down)
        let ends: Vec<u32> = self.link_ports(link).into_iter().filter_map(|g| self.lid(g)).collect();
        let mut released = 0;
        for &p in &ends {
            if let Some(st) = self.pfc.get_mut(p as usize) {
                released += st.egress.release_all(now) as u64;
                st.ingress.sent = 0;
            }
            let pt = &mut self.ports[p as usize];
            pt.up = false;
            pt.paused = 0;
            pt.eg.advance(now);
            while let Some((prio, pid)) = pt.eg.pop_next(0xff, links) {
                pt.eg.release(prio, wire(pid));
                dropped.push((p, pid));
            }
        }
        self.recompute_routes();
        Some((ends, released))
    }

    /// The routes over the links that are up.
    pub fn recompute_routes(&mut self) {
        let is_switch: Vec<bool> = self.nodes.iter().map(|n| n.is_switch).collect();
        let base = &self.wiring.port_base;
        let np: Vec<u32> = self.nodes.iter().map(|n| n.nports).collect();
        let w = &self.wiring;
        let up: Vec<bool> = w.port_link.iter().map(|&l| self.link_up[l as usize]).collect();
        self.routes = std::sync::Arc::new(crate::routing::Routes::compute(&is_switch, base, &np, &w.peer_node, &up));
    }

    /// Link `link` runs at `rate` from now, and so does everything derived from it: crossbar times and,
    /// where the ingress runs PFC (`pfc`: the scheme's parameters), its thresholds, reaction window and
    /// grace (checked lossless when the scenario was built, `Fabric::pfc_setup`). Path BDPs read the port
    /// rates when used. The link's two ports, whose ingresses the driver checks against the new thresholds.
    pub fn degrade(&mut self, link: u32, rate: Rate, pfc: &PfcParams) -> Vec<u32> {
        Arc::make_mut(&mut self.link_rate)[link as usize] = rate;
        self.degraded = true;
        // (in a part of a split run, the ends it holds)
        let ends: Vec<u32> = self.link_ports(link).into_iter().filter_map(|g| self.lid(g)).collect();
        for &p in &ends {
            let speedup = self.topo.speedup;
            self.ports[p as usize].set_rate(rate, speedup);
            if self.pfc.get(p as usize).is_some_and(|st| st.ingress.enabled) {
                let d = self.pfc_derive(pfc, p, rate).expect("checked when the scenario was built");
                self.pfc[p as usize].ingress.install(pfc.priorities, d);
            }
        }
        ends
    }

    /// The transmitter of `egress` (global index) ignores PFC pauses from now (the driver lifts any pause
    /// in force).
    pub fn ignore_pause(&mut self, egress: u32) {
        if let Some(st) = self.lid(egress).and_then(|l| self.pfc.get_mut(l as usize)) {
            st.egress.ignores_pause = true;
        }
        if !self.ignoring_pause.contains(&egress) {
            self.ignoring_pause.push(egress);
        }
    }
}
