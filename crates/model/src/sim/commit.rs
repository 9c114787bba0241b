//! Committed frames (issue 51's second sanctioned change of tie order): a switch egress whose priority 0
//! no PAUSE can hold sends that priority's frames, first come first served, ahead of every other, so a
//! frame of priority 0 that joins the queue behind a busy transmitter has its start settled the moment it
//! is queued: it starts when the frames before it have gone. It is committed then: its arrival at the
//! peer is scheduled at once, and no `TxDone` event starts it.
//!
//! ```text
//!   without:  enqueue (busy) ─► … TxDone at busy_until ─► frame starts: bytes leave, Arrive (peer) scheduled
//!   with:     enqueue (busy) ─► committed: start = busy_until, busy_until += ser, Arrive (peer) scheduled
//!             its start is lazy: the next read of the egress at or after it (`commit_settle`) lets its
//!             bytes go as of the start (occupancy integral, traversal, port bytes, busy time, trace)
//! ```
//!
//! Committed frames stay at the head of priority 0's list, their bytes in the queue, until their start
//! passes: every read of the egress's bytes settles first (the crossbar's room test and its transfers'
//! starts, a packet entering the egress, the transmitter), so what any of them sees is what the frames'
//! starts would have left. Ingresses waiting for the egress get a `TxStart` event at each committed start
//! (the start that would have woken them has no event: `Sim::commit_wake`). Samples see a frame that
//! starts at the sample's time as not started (they come before the port events of their time), the run's
//! end as started, and a run paused between steps settles what started before the pause.
//!
//! At most `AHEAD` frames are committed ahead of the one on the wire (a deeper chain schedules arrivals
//! far beyond the event wheel's horizon, into its heap); the rest start at a `TxDone` at the chain's end,
//! which commits the next ones as the first of them starts. Lower priorities still start at a `TxDone` (a later frame of priority 0 may overtake them). Not
//! committed: a priority 0 that a PAUSE can hold (PFC's lossless priorities towards a switch), rank
//! disciplines (LAS, pFabric), RED (its average ages with time), DIBS (its detours enter egresses outside
//! the crossbar's turns), faults (a link may die under committed frames), adaptive load balancing (it reads
//! egress bytes at every hop), the egresses with tx hooks (a shared buffer's MMU, HPCC's telemetry), host
//! NICs, and the live forwarder. What changes is the order of events that tie with the starts: a run in
//! which no two events tie gives the uncommitted run's results exactly (`commit_tests.rs`).

use crate::sim::{Ev, Sim};
use detailsim_engine::Time;

/// `Port::commit` bits: priority 0 commits at this egress.
pub(crate) const COMMIT_ON: u8 = 1;
/// Frames are committed and not yet started.
pub(crate) const COMMIT_PENDING: u8 = 2;
/// A `TxStart` event is pending (waiters wait for the next committed start).
pub(crate) const COMMIT_WAKE: u8 = 4;

/// At most this many frames are committed ahead of the one on the wire.
pub(crate) const AHEAD: usize = 4;

/// The committed frames of one egress that have not started, back to back from `from`: their sizes in order, a ring (their packets went on when committed).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pending {
    /// The first's start (ps).
    pub from: u64,
    pub wires: [u32; AHEAD],
    pub head: u8,
    pub len: u8,
}

/// The run's committing: whether it commits, per (local) port its pending frames, and a count.
#[derive(Debug, Clone, Default)]
pub(crate) struct Commit {
    /// The scheme allows committing (`Sim::commit_allowed`).
    pub on: bool,
    pub st: Vec<Pending>,
    /// Frames committed, and `TxStart` events scheduled for waiters.
    pub frames: u64,
    pub wakes: u64,
}

impl Sim {
    /// Whether this run's scheme and scenario let frames commit (see the module's list).
    pub(crate) fn commit_allowed(&self) -> bool {
        use crate::config::{EcnMarking, LoadBalancing, Scheduling};
        self.fab.model() == crate::fabric::BufferModel::Cioq
            && self.scheme.scheduling == Scheduling::StrictPriority
            && self.scheme.ecn_marking != EcnMarking::Red
            && self.scheme.load_balancing != LoadBalancing::Adaptive
            && !self.scheme.dibs.enabled
            && !self.int_on
            && self.faults.is_empty()
    }

    /// The records fit the ports (a part's are its own; called before a stretch of the run), and each
    /// switch egress whose priority 0 no PAUSE can hold commits it.
    #[cold]
    pub(crate) fn commit_ready(&mut self) {
        let n = self.fab.ports.len();
        let lossless = if self.pfc_on_run() { self.scheme.pfc.priorities } else { 0 };
        for i in 0..n {
            let pt = &self.fab.ports[i];
            let (switch, to_host) = (self.fab.nodes[pt.node as usize].is_switch, !self.fab.nodes[pt.peer_node as usize].is_switch);
            // a host sends no PAUSE; a switch pauses its lossless priorities (a host's NIC among its peers)
            let on = !pt.tx_hooks && ((switch && to_host) || lossless & 1 == 0);
            let pt = &mut self.fab.ports[i];
            pt.commit = (pt.commit & !COMMIT_ON) | if on { COMMIT_ON } else { 0 };
        }
        self.commit.st.resize(n, Pending::default());
    }

    fn pfc_on_run(&self) -> bool {
        self.scheme.flow_control == crate::config::FlowControl::Pfc
    }

    /// Egress `port`'s transmitter is busy (`now` before `tx_busy_until`) and priority 0 is queued: its
    /// frames (in practice the one just queued: each is committed as it comes) are committed. Each leaves
    /// the list now, its packet going on to the peer, and its bytes stay in the queue until its start.
    #[inline(never)]
    pub(crate) fn commit_tail(&mut self, port: u32) {
        let traced = self.rec.trace.is_some();
        loop {
            let pt = &mut self.fab.ports[port as usize];
            let st = &mut self.commit.st[port as usize];
            if st.len as usize >= AHEAD {
                break;
            }
            let Some((_, pid)) = pt.eg.pop_next(1, &self.pkts) else { break };
            let start = pt.tx_busy_until;
            debug_assert!(start > self.now);
            let wire = self.pkts.get(pid).wire;
            pt.tx_busy_until = start + pt.ser(wire as u64);
            let (arrive, peer) = (pt.tx_busy_until + pt.arrive_after, pt.peer);
            if pt.commit & COMMIT_PENDING == 0 {
                st.from = start.0;
                pt.commit |= COMMIT_PENDING;
            }
            st.wires[(st.head as usize + st.len as usize) % AHEAD] = wire;
            st.len += 1;
            self.commit.frames += 1;
            if traced {
                self.trace_packet_at(port, pid, start);
            }
            self.schedule(arrive, Ev::Arrive { port: peer, pkt: pid });
        }
        let pt = &self.fab.ports[port as usize];
        if pt.waiting || pt.nic_blocked {
            self.commit_wake(port);
        }
    }

    /// Ingresses wait for egress `port`, which has committed frames: its next start gets an event (as its
    /// `TxDone` would have woken them).
    #[inline(never)]
    pub(crate) fn commit_wake(&mut self, port: u32) {
        if self.fab.ports[port as usize].commit & (COMMIT_PENDING | COMMIT_WAKE) != COMMIT_PENDING {
            return;
        }
        if self.commit.st[port as usize].from <= self.now.0 {
            self.commit_settle(port, true);
        }
        let pt = &mut self.fab.ports[port as usize];
        if pt.commit & COMMIT_PENDING == 0 {
            return;
        }
        pt.commit |= COMMIT_WAKE;
        self.commit.wakes += 1;
        let at = Time(self.commit.st[port as usize].from);
        self.schedule(at, Ev::TxStart { port });
    }

    /// `Ev::TxStart`: a committed frame of `port` starts, and ingresses (at a switch) or senders (at a
    /// host's NIC) may wait for the room it leaves: they go as at a frame's start (`Sim::tx_try`).
    pub(crate) fn tx_start(&mut self, port: u32) {
        self.fab.ports[port as usize].commit &= !COMMIT_WAKE;
        self.commit_settle(port, true);
        if self.fab.ports[port as usize].waiting {
            use crate::fabric::switch::Switch as _;
            self.wake_waiters(port);
        }
        if self.fab.ports[port as usize].nic_blocked {
            self.nic_wake(port);
            if self.fab.ports[port as usize].nic_blocked {
                self.commit_wake(port);
            }
        }
    }

    /// Before host `node`'s NIC queue is read: its committed frames that started by now go.
    #[inline(always)]
    pub(crate) fn settle_nic(&mut self, node: u32) {
        let port = self.fab.nodes[node as usize].port_base;
        self.settle_due(port);
    }

    /// Before egress `port`'s bytes are read: its committed frames that started by now go.
    #[inline(always)]
    pub(crate) fn settle_due(&mut self, port: u32) {
        let pt = &self.fab.ports[port as usize];
        if pt.commit & COMMIT_PENDING != 0 && self.commit.st[port as usize].from <= self.now.0 {
            self.commit_settle(port, true);
        }
    }

    /// The committed frames of `port` that have started by now (`inclusive`: or start now) go: their bytes
    /// leave the queue as of their start, and they count as sent then.
    #[inline(never)]
    pub(crate) fn commit_settle(&mut self, port: u32, inclusive: bool) {
        let now = self.now.0;
        let pt = &mut self.fab.ports[port as usize];
        let st = &mut self.commit.st[port as usize];
        let c = &mut self.fab.tx_count[port as usize];
        while st.len > 0 {
            let from = st.from;
            if from > now || (!inclusive && from == now) {
                return;
            }
            let wire = st.wires[st.head as usize] as u64;
            st.head = ((st.head as usize + 1) % AHEAD) as u8;
            st.len -= 1;
            pt.eg.advance(Time(from));
            pt.eg.release(0, wire);
            let ser = pt.ser(wire);
            pt.tx_busy_ps += ser.0;
            st.from = from + ser.0;
            self.rec.counters.link_traversals += 1;
            c.bytes += wire;
            c.packets += 1;
        }
        pt.commit &= !COMMIT_PENDING;
    }

    /// Every egress's committed frames that started before now (`inclusive`: or start now) go: before a
    /// sample (not inclusive: a sample comes before its time's port events) and when the run pauses.
    #[cold]
    pub(crate) fn commit_settle_all(&mut self, inclusive: bool) {
        for p in 0..self.commit.st.len().min(self.fab.ports.len()) {
            if self.fab.ports[p].commit & COMMIT_PENDING != 0 {
                self.commit_settle(p as u32, inclusive);
            }
        }
    }

    /// The run is over (`now`): committed frames that started by now go; the rest stay queued, as an
    /// uncommitted run leaves them, and the transmitter is busy only to the end of the last frame that
    /// started (the port's utilisation takes off what lies beyond now).
    #[cold]
    pub(crate) fn commit_finish(&mut self) {
        self.commit_settle_all(true);
        for p in 0..self.commit.st.len().min(self.fab.ports.len()) {
            let pt = &mut self.fab.ports[p];
            if pt.commit & COMMIT_PENDING != 0 {
                pt.tx_busy_until = Time(self.commit.st[p].from);
            }
        }
    }
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
