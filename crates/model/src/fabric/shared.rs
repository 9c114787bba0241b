//! The shared-buffer switch's steps (`BufferModel::Shared`), written once and driven by both the simulator
//! and the live forwarder through `fabric::switch::Switch::arrive`: the switch's MMU (`mechanisms::mmu`)
//! admits an arrival, charged to the port and priority it came in on and to its egress, and the packet
//! enters the egress queue at once (an output-queued switch: no ingress queue, no crossbar); its bytes leave
//! the MMU when it leaves the egress (sent or dropped). Under PFC each step returns the PAUSE / UNPAUSE the
//! MMU calls for at the ingress, already recorded by the port's component.
//!
//! ```text
//!   arrival ─► shared_admits ─┬─ ok ──────────────► shared_charge (PFC?) ─► reserve ─► mark (egress) ─► enlist
//!                             └─ refused ─► DIBS: detour_port ─┘   or drop
//!   frame sent / dropped at the egress ─► shared_release (PFC?)
//! ```
//!
//! DIBS's choice of a detour port (`detour_port`) is here too: both buffer models detour through it.

use super::Fabric;
use crate::mechanisms::mmu::Refusal;
use crate::mechanisms::pfc::PfcFrame;
use detailsim_engine::Time;

impl Fabric {
    /// The switch owning `port`, and its first global port index (the MMU counts ports from it).
    #[inline(always)]
    fn switch_of(&self, port: u32) -> (usize, u32) {
        let node = self.ports[port as usize].node as usize;
        (node, self.nodes[node].port_base)
    }

    /// Whether the MMU of the switch owning ingress `port` admits `wire` bytes of priority `prio` bound to
    /// egress `out`, and the egress queue's own bound (`scheme.queue_limit`: drop-tail beyond it) holds them
    /// (a refusal there is the egress's: `Refusal::Egress`).
    #[inline]
    pub fn shared_admits(&self, port: u32, out: u32, prio: u8, wire: u64) -> Result<(), Refusal> {
        let (node, base) = self.switch_of(port);
        let mmu = self.mmu[node].as_ref().expect("a switch has an MMU");
        let fits = self.ports[out as usize].eg.fits(prio, wire);
        mmu.admits((port - base) as usize, (out - base) as usize, prio as usize, wire).and(if fits { Ok(()) } else { Err(Refusal::Egress) })
    }

    /// Charge an admitted arrival (`wire` bytes of `prio`, in at `port`, out at `out`) to the MMU; under
    /// PFC (`pfc_on`) the frame ingress `port` must send now, if any.
    #[inline]
    pub fn shared_charge(&mut self, now: Time, port: u32, out: u32, prio: u8, wire: u64, pfc_on: bool) -> Option<PfcFrame> {
        let (node, base) = self.switch_of(port);
        self.mmu[node].as_mut().expect("a switch has an MMU").charge((port - base) as usize, (out - base) as usize, prio as usize, wire);
        if !pfc_on || !self.pfc[port as usize].ingress.enabled {
            return None;
        }
        self.shared_pfc(now, node, port - base, port)
    }

    /// Egress `out` holds room for `wire` bytes of `prio` from `now` (the arrival enters it next).
    #[inline(always)]
    pub fn reserve_egress(&mut self, now: Time, out: u32, prio: u8, wire: u64) {
        let e = &mut self.ports[out as usize];
        e.eg.advance(now);
        e.eg.reserve(prio, wire);
    }

    /// A packet that came in at `inp_lp` (the switch-local index of its ingress; `prio`, `wire` bytes) left
    /// egress `out` (sent or dropped there): its bytes leave the MMU; under PFC the ingress (global index) and
    /// the frame it must send now (it may resume), if any. Nothing happens at a node without an MMU (a host).
    #[inline]
    pub fn shared_release(&mut self, now: Time, inp_lp: u32, out: u32, prio: u8, wire: u64, pfc_on: bool) -> Option<(u32, PfcFrame)> {
        let (node, base) = self.switch_of(out);
        let m = self.mmu[node].as_mut()?;
        m.release(inp_lp as usize, (out - base) as usize, prio as usize, wire);
        let inp = base + inp_lp;
        if !pfc_on || !self.pfc[inp as usize].ingress.enabled {
            return None;
        }
        Some((inp, self.shared_pfc(now, node, inp_lp, inp)?))
    }

    /// A shared-buffer switch's ingress `port` (`lp` on switch `node`), under PFC: the PAUSE / UNPAUSE its
    /// MMU calls for now.
    #[inline(never)]
    fn shared_pfc(&mut self, now: Time, node: usize, lp: u32, port: u32) -> Option<PfcFrame> {
        let sent = self.pfc[port as usize].ingress.sent;
        let f = self.mmu[node].as_ref().expect("a switch has an MMU").pfc_frame(lp as usize, sent)?;
        Some(self.pfc[port as usize].ingress.send(now, f))
    }

    /// DIBS: a uniformly random port of `node` other than `out` that leads to a switch, is up, whose egress
    /// queue can take `wire` bytes of `prio` now and, at a shared-buffer switch, whose MMU admits the packet
    /// (charged to `inp_lp`, the switch-local port it came in on). Draws from the switch's random stream.
    pub fn detour_port(&mut self, node: u32, inp_lp: usize, out: u32, prio: u8, wire: u64) -> Option<u32> {
        let (base, n) = (self.nodes[node as usize].port_base, self.nodes[node as usize].nports);
        // the switch's random stream is lent to the component while the port test reads the node table
        let mut rng = self.nodes[node as usize].rng.clone();
        let (ports, nodes) = (&self.ports, &self.nodes);
        let mmu = self.mmu.get(node as usize).and_then(|m| m.as_ref());
        let ok = |lp: u32| {
            let p = base + lp;
            let pt = &ports[p as usize];
            p != out
                && pt.up
                && nodes[pt.peer_node as usize].is_switch
                && pt.eg.fits(prio, wire)
                && mmu.is_none_or(|m| m.admits(inp_lp, lp as usize, prio as usize, wire).is_ok())
        };
        let pick = crate::mechanisms::dibs::pick(n, ok, &mut rng).map(|lp| base + lp);
        self.nodes[node as usize].rng = rng;
        pick
    }
}
