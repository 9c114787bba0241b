//! The CIOQ switch (DeTail's architecture) and the transmit side shared with host NICs.
//!
//! Arrival: forwarding engine picks the output port (flow hash or packet scatter over the acceptable
//! ports) → ingress queue of the arrival port (tail drop when its buffer is full) → crossbar, one packet
//! at a time per ingress port at `speedup` × line rate, only when the egress queue has room (otherwise the
//! head of that priority waits: head-of-line blocking) → egress queue (optional ECN marking) → link.

use crate::config::{EcnMarking, LoadBalancing};
use crate::packet::{PacketId, ECN_CE, ECN_ECT};
use crate::routing;
use crate::sim::{Ev, Sim};
use crate::stats::DropCause;
use detailsim_engine::Time;

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Sim {
    /// Choose the output port (global index) of packet `pid` at switch `node`.
    #[inline]
    fn route(&mut self, node: u32, pid: PacketId) -> Option<u32> {
        let (dst, hash) = {
            let p = self.pkts.get(pid);
            (p.dst, p.hash)
        };
        if self.routes.edge[dst as usize] == node {
            let ep = self.routes.edge_port[dst as usize];
            return self.ports[ep as usize].up.then_some(ep);
        }
        let row = self.routes.row(node, dst);
        let n = routing::count(row);
        if n == 0 {
            return None;
        }
        let nd = &mut self.nodes[node as usize];
        let k = if n == 1 {
            0
        } else {
            match self.scheme.load_balancing {
                LoadBalancing::FlowHash => (mix(hash as u64 ^ nd.salt) % n as u64) as u32,
                LoadBalancing::PacketScatter => nd.rng.below(n as u64) as u32,
            }
        };
        Some(nd.port_base + routing::nth(row, k))
    }

    pub(crate) fn drop_packet(&mut self, pid: PacketId, cause: DropCause, port: Option<u32>) {
        self.counters.drop(cause);
        if let Some(p) = port {
            self.ports[p as usize].drops += 1;
        }
        self.pkts.release(pid);
    }

    /// A packet has arrived at switch port `port` and passed the forwarding engine.
    pub(crate) fn switch_arrive(&mut self, port: u32, pid: PacketId) {
        let node = self.ports[port as usize].node;
        let Some(out) = self.route(node, pid) else {
            self.drop_packet(pid, DropCause::NoRoute, Some(port));
            return;
        };
        let (prio, wire) = {
            let p = self.pkts.get_mut(pid);
            p.out_port = out;
            (p.prio, p.wire as u64)
        };
        let ing = &mut self.ports[port as usize].ing;
        if ing.total + wire > ing.cap {
            self.drop_packet(pid, DropCause::IngressBuffer, Some(port));
            return;
        }
        ing.push(prio, pid, wire);
        self.xbar_try(port);
    }

    /// Start moving the highest-priority movable head of ingress `inp` across the crossbar.
    pub(crate) fn xbar_try(&mut self, inp: u32) {
        if self.ports[inp as usize].xbar_busy {
            return;
        }
        let mut mask = self.ports[inp as usize].ing.nonempty;
        while mask != 0 {
            let prio = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            let pid = *self.ports[inp as usize].ing.q[prio as usize].front().unwrap();
            let (out, wire) = {
                let p = self.pkts.get(pid);
                (p.out_port, p.wire as u64)
            };
            let e = &mut self.ports[out as usize];
            if e.eg.total + e.eg_reserved + wire <= e.eg.cap {
                e.eg_reserved += wire;
                let node = e.node;
                let ip = &mut self.ports[inp as usize];
                ip.ing.pop(prio);
                ip.xbar_busy = true;
                ip.xbar_pkt = pid;
                let dt = self.nodes[node as usize].xbar_rate.tx_time(wire);
                self.schedule(self.now + dt, Ev::XbarDone { port: inp });
                return;
            } else if !e.waiters.contains(&inp) {
                e.waiters.push(inp);
            }
        }
    }

    pub(crate) fn xbar_done(&mut self, inp: u32) {
        let pid = self.ports[inp as usize].xbar_pkt;
        let (out, prio, wire) = {
            let p = self.pkts.get(pid);
            (p.out_port, p.prio, p.wire as u64)
        };
        {
            let ip = &mut self.ports[inp as usize];
            ip.xbar_busy = false;
            ip.xbar_pkt = crate::sim::NO;
            ip.ing.release(prio, wire);
        }
        self.ports[out as usize].eg_reserved -= wire;
        self.egress_enqueue(out, pid);
        self.tx_try(out);
        self.xbar_try(inp);
    }

    /// Put a packet in an egress queue (switch port or host NIC), marking ECN if configured.
    /// The caller has checked room.
    #[inline]
    pub(crate) fn egress_enqueue(&mut self, port: u32, pid: PacketId) {
        let marking = self.scheme.ecn_marking;
        let k = self.scheme.ecn_threshold;
        let p = self.pkts.get_mut(pid);
        let (prio, wire) = (p.prio, p.wire as u64);
        let pt = &mut self.ports[port as usize];
        if marking != EcnMarking::None && p.ecn == ECN_ECT {
            let occ = match marking {
                EcnMarking::PerQueue => pt.eg.bytes[prio as usize],
                _ => pt.eg.total,
            };
            if occ > k {
                p.ecn = ECN_CE;
                pt.ecn_marks += 1;
                self.counters.ecn_marks += 1;
            }
        }
        pt.eg.push(prio, pid, wire);
    }

    /// Start the next frame on `port` if the transmitter is idle. A `TxDone` event is scheduled only when
    /// a frame is waiting for the transmitter, so a lightly loaded link costs one event per frame.
    pub(crate) fn tx_try(&mut self, port: u32) {
        let now = self.now;
        let pt = &mut self.ports[port as usize];
        if !pt.up {
            return;
        }
        let mask = pt.eg.nonempty & !pt.paused;
        if mask == 0 {
            return;
        }
        if now < pt.tx_busy_until {
            if !pt.tx_event {
                pt.tx_event = true;
                let at = pt.tx_busy_until;
                self.schedule(at, Ev::TxDone { port });
            }
            return;
        }
        let prio = mask.trailing_zeros() as u8;
        let pid = pt.eg.pop(prio);
        let wire = self.pkts.get(pid).wire as u64;
        pt.eg.release(prio, wire);
        pt.tx_bytes += wire;
        pt.tx_packets += 1;
        let ser = pt.rate.tx_time(wire);
        pt.tx_busy_until = now + ser;
        let arrive = pt.tx_busy_until + pt.arrive_after;
        let peer = pt.peer;
        let has_waiters = !pt.waiters.is_empty();
        if pt.eg.nonempty & !pt.paused != 0 && !pt.tx_event {
            pt.tx_event = true;
            let at = pt.tx_busy_until;
            self.schedule(at, Ev::TxDone { port });
        }
        self.counters.link_traversals += 1;
        self.schedule(arrive, Ev::Arrive { port: peer, pkt: pid });
        if has_waiters {
            self.wake_waiters(port);
        }
    }

    /// Room opened in egress `port`: let the blocked ingress ports retry, those whose blocked head has the
    /// highest priority first (the crossbar arbiter honours strict priority), ties in arrival order.
    fn wake_waiters(&mut self, port: u32) {
        let mut ws = std::mem::take(&mut self.ports[port as usize].waiters);
        if ws.len() > 1 {
            let key = |s: &Sim, inp: u32| -> u8 {
                let ing = &s.ports[inp as usize].ing;
                let mut mask = ing.nonempty;
                while mask != 0 {
                    let p = mask.trailing_zeros() as u8;
                    mask &= mask - 1;
                    if s.pkts.get(*ing.q[p as usize].front().unwrap()).out_port == port {
                        return p;
                    }
                }
                u8::MAX
            };
            let mut keyed: Vec<(u8, u32)> = ws.iter().map(|&w| (key(self, w), w)).collect();
            keyed.sort_by_key(|k| k.0);
            ws.clear();
            ws.extend(keyed.into_iter().map(|k| k.1));
        }
        for &w in &ws {
            self.xbar_try(w);
        }
    }

    /// Serialization time of `bytes` on `port`.
    pub fn ser_time(&self, port: u32, bytes: u64) -> Time {
        self.ports[port as usize].rate.tx_time(bytes)
    }
}
