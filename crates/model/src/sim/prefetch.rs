//! What the loop asks the caches for before each event (`Sim::prefetch_next`): the next events' packets
//! and ports, what they point to, and in the largest fabrics under flow hashing the output port the next
//! arrival will be routed to. Hints only: nothing here changes a result.
//!
//! ```text
//!   fabric                    stages (events ahead)                what
//!   < L2 / 2,048 B ports      none                                 (the fabric's state sits in the L2)
//!   (1,024 on a 2 MB L2)
//!   < L2 / 256 B ports        1 (the next)                         packet, port's lines, PFC state
//!   (2,048 on a 512 KB L2)
//!   >= L2 / 256 B ports       2 (3 ahead, then the next)           + node, route entry, transfer, fold record,
//!                                                                    ingress's second line, output's lines
//!                                                                    and counters
//!   >= 16,384 as well, FH     3 (5 ahead, 3 ahead, the next)       + the output port the route will take
//! ```

use crate::fabric::switch::Switch as _;
use crate::sim::{Ev, Sim};

/// Fabrics with at least one port per this many bytes of the machine's L2 cache prefetch at all (the first
/// stage, `prefetch_next`). Below it the fabric's ports, packets and events sit in the L2 and the
/// prefetches are instructions that fetch nothing: on the Intel host (2 MB L2) same-binary pairs without
/// them won on paper/steady (448 ports; FH 7 of 7, DeTail 6 of 7, 1.01x) and k = 8 (768 ports; FH 6 of 7,
/// DeTail 7 of 7, 1.02x) and lost on k = 12 (2,592 ports; 2 of 7 and 0 of 7, 0.99x) and k = 16 (6,144; 2 of 7
/// and 1 of 7, 0.94x-0.98x): docs/benchmarks.md, "The first prefetch stage from the L2". 2,048 bytes puts
/// the threshold inside that interval (1,024 ports) and leaves every fabric measured on the AMD host (512 KB
/// L2: 256 ports) prefetching as before.
pub(super) const L2_BYTES_PER_PORT_FIRST: u64 = 2048;

/// The ports from which a fabric prefetches at all on a machine whose L2 holds `l2` bytes (None: not
/// known, `L2_UNKNOWN`).
pub(super) fn prefetch_ports(l2: Option<u64>) -> usize {
    ports_per_l2(l2, L2_BYTES_PER_PORT_FIRST)
}

/// One port per `bytes` of an L2 of `l2` bytes (None: `L2_UNKNOWN`).
fn ports_per_l2(l2: Option<u64>, bytes: u64) -> usize {
    (l2.unwrap_or(L2_UNKNOWN) / bytes).try_into().unwrap_or(usize::MAX)
}

/// Fabrics with at least one port per this many bytes of the machine's L2 cache (one core's, as the kernel
/// gives it: `detailsim_engine::probe::l2_bytes`) prefetch in two stages (`prefetch_next`): their ports,
/// packets and transfers no longer fit in the L2, and fetching the lines the next event's packet points to
/// pays. In smaller fabrics those lines are mostly cached and the extra reads cost more than they save
/// (paper/steady: about 5% slower). A 512 KB L2 (the AMD host the stages were measured on, and the
/// assumption where the kernel does not say) gives 2,048 ports: k = 16 (6,144) on, k = 8 (768) off. A 2 MB
/// L2 (the Intel host of 2026-11-29) gives 8,192, where k = 16 FH lost with the two stages (1 of 7, 2 of 7
/// and 2 of 9 same-binary pairs) and k = 32 won (7 of 7): docs/benchmarks.md, "the deep prefetch's
/// threshold from the L2".
pub(super) const L2_BYTES_PER_PORT: u64 = 256;
/// The L2 assumed where the kernel does not give it.
pub(super) const L2_UNKNOWN: u64 = 512 << 10;

/// The ports from which a fabric prefetches in two stages on a machine whose L2 holds `l2` bytes (None:
/// not known, `L2_UNKNOWN`).
pub(super) fn deep_prefetch_ports(l2: Option<u64>) -> usize {
    ports_per_l2(l2, L2_BYTES_PER_PORT)
}

/// Fabrics with this many ports (a k = 32 fat tree has 49,152) prefetch in three stages where the route is
/// settled by the packet (`prefetch_next`): the output port the route will take, fetched one event
/// ahead. Paired on one binary (docs/benchmarks.md, "The output port prefetched"): on the AMD host k = 32
/// FH won 33 of 40 pairs, k = 16 FH (6,144 ports) 8 of 27; DeTail k = 16 with the three stages' spacing
/// lost 7 of 7; on the Intel host (2 MB L2) k = 16 and k = 20 (12,000 ports) lost (3 of 7 each, 0.97x-0.99x
/// best), k = 24 (20,736), k = 28 and k = 32 won (6, 5 and 6 of 7, 1.06x-1.07x best).
/// So only flow hashing, which settles every hop, runs three: ALB and scatter (whose choices it cannot
/// guess) keep two.
pub(super) const ROUTE_PREFETCH_PORTS: usize = 16_384;

impl Sim {
    /// Start bringing into the cache what the next event will read (its packet, its port's lines, its PFC
    /// state) so that the misses overlap with this event's work. A hint only: it changes no result.
    #[inline(always)]
    pub(super) fn prefetch_next(&self) {
        if !self.clock.prefetch {
            return;
        }
        if !self.clock.deep_prefetch {
            if let Some(&ev) = self.q.peek() {
                self.prefetch_first(ev);
            }
            return;
        }
        // Two stages: the event two after the next gets its packet and port lines fetched; the next one,
        // whose packet and port were asked for two events ago (one event was too short for memory: the
        // second stage then waited on the packet), gets what they point to (the output port and its
        // transmit counters, the route entry, the transfer, the ingress's folded-transfer record) fetched
        // too. A folded transfer's `XbarEnd` (no packet, so nothing in the first stage) gets its record and
        // its ingress's lines here, one event ahead. Under flow hashing, where the packet settles its route,
        // in the largest fabrics three stages, each two events apart: the packet and port (five ahead),
        // what they point to (three ahead), and the output port the route will take (the next).
        if self.clock.route_prefetch {
            if let Some(&ev) = self.q.peek_ahead(4) {
                self.prefetch_first(ev);
            }
            if let Some(&ev) = self.q.peek_ahead(2) {
                self.prefetch_second(ev);
            }
            if let Some(out) = self.q.peek().and_then(|&ev| self.settled_out(ev)) {
                use detailsim_engine::queue::prefetch;
                if let Some(o) = self.fab.ports.get(out as usize) {
                    prefetch(&o.tx_busy_until);
                    o.eg.prefetch_lines();
                }
                if let Some(c) = self.fab.tx_count.get(out as usize) {
                    prefetch(c);
                }
            }
            return;
        }
        if let Some(&ev) = self.q.peek_ahead(2) {
            self.prefetch_first(ev);
        }
        if let Some(&ev) = self.q.peek() {
            self.prefetch_second(ev);
        }
    }

    /// The output port (global index) an arrival at a switch will be routed to, where the packet and the
    /// routes settle it (its settled hop, else `Fabric::settled_port`: the edge switch's port to the host,
    /// the one acceptable port, or flow hashing's pick; not a choice among several ports under scatter or
    /// ALB, which draw or read the candidates' queues): None for other events and choices. Every index is
    /// checked (a prefetch's guess may read ahead of what the event will find).
    #[inline(always)]
    pub(crate) fn settled_out(&self, ev: Ev) -> Option<u32> {
        let Ev::Arrive { port, pkt } = ev else { return None };
        let (pt, p) = (self.fab.ports.get(port as usize)?, self.pkts.slots().get(pkt as usize)?);
        let nd = self.fab.nodes.get(pt.node as usize)?;
        if !nd.is_switch {
            return None;
        }
        if let Some(lp) = crate::packet::settled_hop(p.hops) {
            return Some(nd.port_base + lp);
        }
        let lp = self.fab.settled_port(pt.node, nd, p.dst, p.hash, self.scheme.load_balancing)?;
        Some(nd.port_base + lp)
    }

    /// The second stage (see `prefetch_next`).
    #[inline(always)]
    fn prefetch_second(&self, ev: Ev) {
        use detailsim_engine::queue::prefetch;
        match ev {
            Ev::Arrive { port, pkt } => {
                let (Some(pt), Some(p)) = (self.fab.ports.get(port as usize), self.pkts.slots().get(pkt as usize)) else { return };
                let node = pt.node as usize;
                let Some(nd) = self.fab.nodes.get(node) else { return };
                if nd.is_switch {
                    prefetch(nd);
                    // the arrival settles the ingress's folded transfer first (`settle_in`): its record
                    if let Some(f) = self.fold.ins.get(port as usize) {
                        prefetch(f);
                    }
                    // the ingress's second line (its bytes per priority and list ends), which the packet's
                    // entry and the folded transfer's release write; the first stage fetched the first
                    pt.ing.prefetch_lines();
                    let dst = p.dst as usize;
                    if self.fab.routes.edge.get(dst) == Some(&(node as u32)) {
                        if let Some(ep) = self.fab.routes.edge_lp.get(dst).and_then(|&lp| self.fab.ports.get((nd.port_base + lp) as usize)) {
                            prefetch(ep);
                        }
                    } else if self.scheme.load_balancing == crate::config::LoadBalancing::Adaptive {
                        // ALB reads the row of bits; flow hashing and scatter the port list's entry
                        if let Some(r) = self.fab.routes.row(node as u32, p.dst).first() {
                            prefetch(r);
                        }
                    } else {
                        match self.fab.routes.ports_entry(node as u32, p.dst) {
                            Some(crate::routing::PortsEntry::Pick(e)) => prefetch(e),
                            Some(crate::routing::PortsEntry::Span(e)) => prefetch(e),
                            None => {}
                        }
                    }
                } else if let Some(t) = self.hosts.transfers.try_get(p.tr) {
                    prefetch(t);
                }
            }
            Ev::XbarDone { pkt, .. } => {
                let Some(p) = self.pkts.slots().get(pkt as usize) else { return };
                if let Some(o) = self.fab.ports.get(p.out_port as usize) {
                    prefetch(&o.tx_busy_until);
                    prefetch(&o.eg);
                }
                if let Some(c) = self.fab.tx_count.get(p.out_port as usize) {
                    prefetch(c);
                }
            }
            // a folded transfer's lazy end: its record and its ingress's lines
            Ev::XbarEnd { port } => {
                let (Some(pt), Some(f)) = (self.fab.ports.get(port as usize), self.fold.ins.get(port as usize)) else { return };
                prefetch(f);
                prefetch(&pt.tx_busy_until);
                pt.ing.prefetch_lines();
            }
            _ => {}
        }
    }

    /// What an event will touch first: its packet and its port's lines. Written without a branch on the
    /// kind of port event (the kind of the next event is as good as random, and a branch on it cost about
    /// one misprediction per event): every port event gets the same lines fetched.
    #[inline(always)]
    fn prefetch_first(&self, ev: Ev) {
        use detailsim_engine::queue::prefetch;
        let (port, pkt) = match ev {
            Ev::Arrive { port, pkt } | Ev::TxDone { port, pkt } | Ev::XbarDone { port, pkt } => (port, pkt),
            _ => return,
        };
        let Some(pt) = self.fab.ports.get(port as usize) else { return };
        let pkts = self.pkts.slots();
        if let Some(p) = pkts.get(pkt as usize) {
            prefetch(p);
        }
        prefetch(&pt.tx_busy_until);
        prefetch(&pt.ing);
        prefetch(&pt.eg);
        if self.pfc_on() {
            if let Some(f) = self.fab.pfc.get(port as usize) {
                prefetch(f);
            }
        }
    }
}
