//! A run split in parts (`run.threads = N`; `run_in_parts`): N simulators, one per part of the fabric's
//! nodes (`Sim::partition`: hosts in N contiguous groups, a switch with its neighbours' part, the rest in
//! turn), each holding only its part's state live, exchanging what crosses a cut as messages at a barrier
//! after every window of simulated time. The parts run each on its own thread, or taking turns on one;
//! either way the results are the ordinary run's: the same flow table, row by row, and the same counters,
//! the event count (a fabric-wide event, which runs in every part, counts in the first; a cancelled timer
//! counts in no run) and the peak of packets in flight (counted at the grid's multiples: `merge::peak`)
//! included.
//!
//! ```text
//!   part 0 (hosts 0..n/N, their switches)   part 1          ...   part N-1
//!   ── window [t, t + lookahead): own events, each part alike ──
//!            │ outbox per part                │                     │
//!            └───────────────────────────► barrier ◄────────────────┘
//!      events for another part's nodes (a packet crossing a cut travels with its Arrive), copies of
//!      transfers and flows whose other end is there, rows, credits, releases: each part takes what the
//!      others sent it, in part order, applies it, then all report and decide the next round alike
//! ```
//!
//! Windows are no longer than the lookahead (the shortest delay across any cut) and end at PFC sweeps, so
//! nothing a part sends is due before the barrier that delivers it (a push that would be is a bug, and
//! panics naming it). Records that two ends share are striped: part `me` of N allocates the transfer and
//! flow slots `i` with `i % N == me` and holds copies of other parts' at the same indices, storing only
//! those (`StripedArena`); the sender's copy of a transfer is the one its sender fields live in, the
//! receiver's copy the one its receiver fields live in. A copy's release goes back to its owner as a
//! message. At a sweep's barrier each part hands over its pieces of the pause graph, and all find the same
//! cycle (the watchdog judges each part's own ports). A flow's active count is kept by the part it
//! completes in; a part whose measured flows are done holds at the end of that grid interval and runs
//! after the others, never ahead of them, so the run ends where the ordinary run does (`rounds`). At the
//! end the first part takes the others' results (`merge`), and flow ids and rows take the node order's
//! canonical order (`Sim::canonical_flows`).
//!
//! A fault changes what every part keeps (link flags, rates, routes), and acts at a port (retries, PFC
//! checks) only in the port's part. The measurement window snapshots each flow in the part that receives
//! its data.
//!
//! Not yet supported (refused when the scenario uses them, naming the field): the PFC watchdog's
//! `shutdown` action (a link shut by one part), run guards, incast repeats.

mod merge;
mod rounds;

use crate::config::{ConfigError, Scenario};
use crate::fabric::switch::Switch as _;
use crate::packet::Packet;
pub use crate::sim::barrier::OtherPartFailed;
use crate::sim::{App, Ev, Sim, Transfer, NO};
use detailsim_engine::{StripedArena, Time};
pub use rounds::{build_in_parts, run_in_parts, Drive};
pub(crate) use rounds::{split, Parts};

/// What the first part of a split run works out for every part from the whole fabric it builds (the
/// later parts build only their own ports): the partition, the lookahead, the event grid, the event
/// wheel's shape and the margin of ALB's folds.
#[derive(Debug)]
pub(crate) struct Layout {
    pub of: Vec<u8>,
    pub lookahead: Time,
    pub grid: Time,
    pub wheel: (u32, u32),
    /// `Fold::margin` (`Sim::alb_fold_margin`).
    pub alb_margin: Option<Time>,
}

/// What one part tells another at a barrier.
#[derive(Debug, Clone)]
pub(crate) enum Msg {
    /// An event at a node of another part, with its key (the pusher's order); an `Arrive` carries its packet.
    /// `sent`: when the packet left the sender's store.
    /// `int`: the packet's HPCC telemetry (with `cc = "hpcc"`).
    Event { key: u128, ev: Ev, timer: bool, pkt: Option<Packet>, sent: Time, int: Option<Box<crate::transport::cc::hpcc::IntStack>> },
    /// A transfer whose receiver is in another part: its copy there.
    Transfer { tr: u32, t: Box<Transfer> },
    /// A flow whose other end is in another part: its copy there.
    App { app: u32, a: Box<App> },
    /// Transfer `tr`'s flow completed into row `row` of the receiver's table (for the sender's counts).
    Row { tr: u32, uid: u32, row: u32 },
    /// A closed sender's timeouts and retransmissions, for row `row` of the receiver's part's table.
    Credit { row: u32, to: u32, rtx: u32 },
    /// The receiver's copy of transfer `tr` closed: its owner frees the slot.
    Release { tr: u32, uid: u32 },
    /// The other end's copy of flow `app` completed it: its owner frees the slot.
    ReleaseApp { app: u32, uid: u32 },
}

/// A part's view of the split.
pub(crate) struct Part {
    /// Per node, its part.
    pub of: Vec<u8>,
    /// This part, and how many there are.
    pub me: u8,
    pub n: u8,
    /// Messages for each part (this one's stays empty), sent at the next barrier.
    pub out: Vec<Vec<Msg>>,
    /// The end (exclusive) of the window being run: nothing sent to another part may be due before.
    pub window_end: Time,
    /// The shortest delay with which a node of one part can cause an event at a node of another (a link
    /// across a cut, with the forwarding delay behind it; with PFC, a PAUSE across it): the longest a
    /// window can be.
    pub lookahead: Time,
    /// The run's end.
    pub end_limit: Time,
    /// Arrivals are over and no measured flow that completes in this part runs: the end of the grid
    /// interval in which that came to be, where the ordinary run ends if the whole fabric is done by then
    /// (`Sim::check_finished`). The part stops there unless told to run on (`run_window`).
    pub hold: Option<Time>,
    /// With PFC: the time of the next sweep, and what the barrier before it found of the whole fabric.
    pub next_sweep: Time,
    pub sweep: Option<Sweep>,
    /// The packets in flight in this part's store at the grid's multiples (`Sim::peak_sample`): (index of
    /// the multiple, count from there on), and the corrections for packets that crossed the cut: (index, +1
    /// or -1) from the multiple after the sender let one go to the one from which the receiver counts it.
    /// A multiple's corrections are added up where they come in a row (a packet's `+1` beside the one
    /// before it, a barrier's packets' `-1` at one), so that the list is about as long as the run's
    /// multiples, not its packets across the cut.
    pub peaks: Vec<(u64, u64)>,
    pub moves: Vec<(u64, i64)>,
    /// The tests' way to check that a part that panics ends the run (`DETAILSIM_TEST_PANIC_PART` names
    /// the part): it panics in its first window.
    pub fail_for_test: bool,
}

impl Part {
    /// This part's store holds `live` packets at the grid's multiple `k` (and on, until the next sample).
    pub(crate) fn sampled(&mut self, k: u64, live: u64) {
        if self.peaks.last().is_none_or(|&(_, c)| c != live) {
            self.peaks.push((k, live));
        }
    }

    /// A correction of `d` packets in flight from the grid's multiple `k` on (`moves`).
    fn moved(&mut self, k: u64, d: i64) {
        match self.moves.last_mut() {
            Some((last, sum)) if *last == k => *sum += d,
            _ => self.moves.push((k, d)),
        }
    }
}

/// A record the two ends of a flow share in a split run, kept in a striped arena: transfers and flows.
pub(crate) trait Striped: Clone {
    /// What fills a slot nobody uses (its stripe another part's).
    fn dead(&self) -> Self;
    fn alive(&self) -> bool;
    /// The record's incarnation (a copy is the same record only with the same one).
    fn uid(&self) -> u32;
    /// The node whose part holds the receiver's copy.
    fn receiver(&self) -> u32;
}

impl Striped for Transfer {
    fn dead(&self) -> Self {
        Transfer { alive: false, uid: 0, ..self.clone() }
    }
    fn alive(&self) -> bool {
        self.alive
    }
    fn uid(&self) -> u32 {
        self.uid
    }
    fn receiver(&self) -> u32 {
        self.dst
    }
}

impl Striped for App {
    fn dead(&self) -> Self {
        App { alive: false, uid: 0, ..self.clone() }
    }
    fn alive(&self) -> bool {
        self.alive
    }
    fn uid(&self) -> u32 {
        self.uid
    }
    fn receiver(&self) -> u32 {
        self.dst
    }
}

/// Put `v` at slot `i` of `arena` (another part's record, or the joined one at the end).
fn put_copy<T: Striped>(arena: &mut StripedArena<T>, i: u32, v: T) {
    let dead = v.dead();
    arena.put(i, v, || dead.clone());
}

/// What a part's PFC sweep needs of the whole fabric (`Sim::pfc_sweep`): (port, priority) pairs paused,
/// and the cycle of pauses (`pfc::pause_cycle`) when the deadlock check is on and something is paused.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub paused: u64,
    pub cycle: Option<Vec<u32>>,
}

impl Sim {
    /// This simulation is one part of a split run.
    #[inline]
    pub(crate) fn is_part(&self) -> bool {
        self.split.part.is_some()
    }

    /// This simulation drives the parts of a split run (`run.threads = N`: the first part, with the others).
    #[inline]
    pub(crate) fn drives_parts(&self) -> bool {
        self.split.parts.is_some()
    }

    /// Events go through the part (`part_push`) rather than straight into the queue.
    #[inline(always)]
    pub(crate) fn diverts(&self) -> bool {
        self.split.divert
    }

    /// A part is running a window (`run_until` stops when the window's events are done).
    #[inline]
    pub(crate) fn in_window(&self) -> bool {
        self.split.in_window
    }

    /// The first part of a split run, or an ordinary run: where what every part keeps alike (a fabric-wide
    /// event, a PFC deadlock) counts or is reported once.
    #[inline]
    pub(crate) fn lead_part(&self) -> bool {
        self.split.part.as_ref().is_none_or(|p| p.me == 0)
    }

    /// The id of the `seq`-th flow this simulation opened (from 0): part `me` of a run split in `n` takes
    /// the ids `me` modulo `n`, until `canonical_ids`.
    #[inline]
    pub(crate) fn striped_id(&self, seq: u64) -> u64 {
        match &self.split.part {
            Some(p) => p.n as u64 * seq + p.me as u64,
            None => seq,
        }
    }

    /// This part's store holds `live` packets at the grid's multiple `k` (`Part::sampled`; nothing in an
    /// ordinary run).
    #[inline]
    pub(crate) fn part_sampled(&mut self, k: u64, live: u64) {
        if let Some(p) = self.split.part.as_mut() {
            p.sampled(k, live);
        }
    }

    /// A part whose measured flows are done holds at `at`, the end of this grid interval, unless it held
    /// already: when it holds (None in an ordinary run, which ends there).
    pub(crate) fn part_hold(&mut self, at: Time) -> Option<Time> {
        self.split.part.as_mut().map(|p| *p.hold.get_or_insert(at))
    }

    /// Whether this part samples flow `a` (slot `i`): the part that receives its data, but a flow the other
    /// part opened less than a lookahead ago may have no copy here yet, so the part that opened it samples
    /// it (none of its data can have arrived). Always, in an ordinary run.
    pub(crate) fn samples_flow(&self, i: usize, a: &App) -> bool {
        match self.split.part.as_ref() {
            None => true,
            Some(p) => {
                let (own, recent) = (i % p.n as usize == p.me as usize, a.start + p.lookahead > self.now);
                if self.owns(a.dst) {
                    own || !recent
                } else {
                    own && recent
                }
            }
        }
    }

    /// Packets in flight in the other parts of a split run (for the conservation check at the end).
    #[inline]
    pub(crate) fn in_flight_elsewhere(&self) -> u64 {
        self.split.in_flight_elsewhere
    }

    /// A part at a PFC sweep: the next one comes `dt` later, and this one's view of the whole fabric is what
    /// the barrier before it found (None in an ordinary run, which has it all).
    pub(crate) fn part_sweep(&mut self, dt: Time) -> Option<Sweep> {
        let now = self.now;
        self.split.part.as_mut().map(|p| {
            p.next_sweep = now + dt;
            p.sweep.take().expect("a split run's PFC sweep comes after a barrier")
        })
    }

    /// Whether `node` is in this part (always, in an ordinary run).
    #[inline]
    pub(crate) fn owns(&self, node: u32) -> bool {
        self.split.part.as_ref().is_none_or(|p| p.of[node as usize] == p.me)
    }

    /// Send `m` to the part that holds `node`.
    pub(crate) fn send_to_node(&mut self, node: u32, m: Msg) {
        let p = self.split.part.as_mut().expect("a part");
        let to = p.of[node as usize] as usize;
        p.out[to].push(m);
    }

    /// Send `m` to the part that owns slot `i` of a striped arena (transfers, flows).
    pub(crate) fn send_to_owner(&mut self, i: u32, m: Msg) {
        let p = self.split.part.as_mut().expect("a part");
        p.out[(i % p.n as u32) as usize].push(m);
    }

    /// Whether slot `i` of a striped arena (transfers, flows) is another part's.
    #[inline]
    pub(crate) fn foreign_slot(&self, i: u32) -> bool {
        self.split.part.as_ref().is_some_and(|p| i % p.n as u32 != p.me as u32)
    }

    pub(crate) fn alloc_transfer(&mut self, t: Transfer) -> u32 {
        self.hosts.transfers.alloc(t)
    }

    pub(crate) fn alloc_app(&mut self, a: App) -> u32 {
        self.hosts.apps.alloc(a)
    }

    /// Free transfer `tr`'s slot (already marked dead), or tell its owner to.
    pub(crate) fn release_transfer(&mut self, tr: u32) {
        if self.foreign_slot(tr) {
            let uid = self.hosts.transfers.get(tr).uid;
            self.send_to_owner(tr, Msg::Release { tr, uid });
        } else {
            self.hosts.transfers.release(tr);
        }
    }

    /// Free flow `app`'s slot (already marked dead), or tell its owner to.
    pub(crate) fn release_app(&mut self, app: u32) {
        if self.foreign_slot(app) {
            let uid = self.hosts.apps.get(app).uid;
            self.send_to_owner(app, Msg::ReleaseApp { app, uid });
        } else {
            self.hosts.apps.release(app);
        }
    }

    /// A push in a part: events of this part's nodes go to its queue, the others' to their outbox with this queue's
    /// key (a packet arriving there leaves this part's store with it).
    #[inline]
    pub(crate) fn part_push(&mut self, at: Time, ev: Ev, timer: bool) {
        // (timers go through the general path)
        if !timer && ev.at_own_port() {
            self.q.push(at, ev);
        } else {
            self.part_push_other(at, ev, timer);
        }
    }

    #[cold]
    #[inline(never)]
    fn part_push_other(&mut self, at: Time, ev: Ev, timer: bool) {
        let node = self.event_node(ev);
        if node.is_none_or(|n| self.owns(n)) {
            if timer {
                self.q.push_timer(at, ev);
            } else {
                self.q.push(at, ev);
            }
            return;
        }
        let wend = self.split.part.as_ref().expect("a part").window_end;
        assert!(
            at >= wend,
            "split run: {ev:?} (node {node:?}) due at {} ps, scheduled at {} ps, reaches another part within the window (which ends at {} ps): nodes in different parts interact faster than the grid ({} ps)",
            at.0,
            self.now.0,
            wend.0,
            self.clock.grid.0
        );
        let key = self.q.next_key(at);
        let mut int = None;
        let pkt = match ev {
            Ev::Arrive { pkt, .. } => {
                let p = *self.pkts.get(pkt);
                if self.int_on {
                    int = Some(Box::new(*self.int_at(pkt)));
                }
                self.pkts.release(pkt);
                Some(p)
            }
            _ => None,
        };
        let sent = self.now;
        self.send_to_node(node.expect("an event at a node"), Msg::Event { key, ev, timer, pkt, sent, int });
    }

    /// Apply another part's messages (at a barrier), emptying the list (its room is kept for the next).
    fn receive(&mut self, msgs: &mut Vec<Msg>) {
        // packets that crossed the cut and count here from the multiple after `next_peak` on
        let mut moved = 0i64;
        for m in msgs.drain(..) {
            match m {
                Msg::Event { key, mut ev, timer, pkt, sent, int } => {
                    // the sender named the port by its global index (tagged): here it is a local one
                    if let Ev::Arrive { port, .. }
                    | Ev::TxDone { port, .. }
                    | Ev::XbarDone { port, .. }
                    | Ev::XbarEnd { port }
                    | Ev::XbarOutFree { port }
                    | Ev::DetourDone { port, .. }
                    | Ev::PfcFrame { port, .. } = &mut ev
                    {
                        let g = self.fab.gid(*port);
                        *port = self.fab.lid(g).expect("an event at a port of this part");
                    }
                    if let (Ev::Arrive { pkt: id, .. }, Some(p)) = (&mut ev, pkt) {
                        *id = self.pkts.alloc(p);
                        if let Some(int) = int {
                            *self.int_at(*id) = *int;
                        }
                        // in flight from when the sender let it go (its samples after that leave it out) to
                        // when this part's samples start to count it
                        let g = self.clock.grid.0;
                        let (s, r) = (sent.0 / g + 1, self.clock.next_peak.0 / g);
                        if s != r {
                            self.split.part.as_mut().expect("a part").moved(s, 1);
                            moved += 1;
                        }
                    }
                    if let (Ev::PfcFrame { port, .. }, true) = (ev, self.fold.alb) {
                        self.fold.pfc_way.push((port, Time((key >> 64) as u64)));
                    }
                    self.q.push_keyed(key, ev, timer);
                }
                Msg::Transfer { tr, t } => {
                    let (role, app, app_uid, uid) = (t.role, t.app, t.app_uid, t.uid);
                    put_copy(&mut self.hosts.transfers, tr, *t);
                    if role == crate::sim::Role::Response && app != NO {
                        // the requester's flow learns its response (as `start_transfer` at the responder did)
                        let a = self.hosts.apps.get_mut(app);
                        if a.alive && a.uid == app_uid {
                            a.transfers[1] = tr;
                            a.transfer_uids[1] = uid;
                        }
                    }
                }
                Msg::App { app, a } => {
                    // a flow that completes here is counted here (see `open_app`)
                    if a.measured && a.alive && self.owns(a.dst) {
                        self.rec.active_measured += 1;
                    }
                    put_copy(&mut self.hosts.apps, app, *a);
                }
                Msg::Row { tr, uid, row } => {
                    let t = self.hosts.transfers.get_mut(tr);
                    if t.alive && t.uid == uid {
                        t.row = row;
                        t.app = NO;
                    }
                }
                Msg::Credit { row, to, rtx } => {
                    self.rec.flows.timeouts[row as usize] += to;
                    self.rec.flows.retransmits[row as usize] += rtx;
                }
                Msg::Release { tr, uid } => {
                    let t = self.hosts.transfers.get_mut(tr);
                    if t.alive && t.uid == uid {
                        t.alive = false;
                        t.rcv_open = false;
                        t.app = NO;
                        self.hosts.transfers.release(tr);
                    }
                }
                Msg::ReleaseApp { app, uid } => {
                    let a = self.hosts.apps.get_mut(app);
                    if a.alive && a.uid == uid {
                        a.alive = false;
                        self.hosts.apps.release(app);
                    }
                }
            }
        }
        if moved > 0 {
            let r = self.clock.next_peak.0 / self.clock.grid.0;
            self.split.part.as_mut().expect("a part").moved(r, -moved);
        }
    }

    /// What a split run does not support yet, as the error for the first such field the scenario uses.
    fn refuse_in_parts(&self, sc: &Scenario) -> Result<(), ConfigError> {
        let no = |field: &str, what: &str| crate::config::err(field, format!("{what} is not supported in a run split in parts yet"));
        if self.pfc_on() && self.scheme.pfc.watchdog_action == crate::config::WatchdogAction::Shutdown {
            return no("scheme.pfc.watchdog_action", "\"shutdown\" (a link shut down changes every part's routes)");
        }
        if sc.run.max_events.is_some() || sc.run.max_wall.is_some() {
            return no("run.max_events", "a run guard");
        }
        for (i, w) in self.hosts.workloads.iter().enumerate() {
            if matches!(w, crate::sim::workload::Workload::Incast { repeats_left, .. } if *repeats_left > 1) {
                return no(&format!("workload[{i}].repeats"), "an incast that repeats");
            }
        }
        Ok(())
    }

    /// Set this simulation up as part `me` of a run split in `n` parts (during construction: after the
    /// fabric and the workloads are built, before anything is scheduled for them).
    /// `layout`: a later part's, the first's (the first part works it out from the whole fabric).
    pub(crate) fn make_part(&mut self, sc: &Scenario, me: u8, n: u8, layout: Option<&Layout>) -> Result<(), ConfigError> {
        self.refuse_in_parts(sc)?;
        let w = self.fab.wiring.clone();
        let (of, lookahead) = match layout {
            Some(l) => (l.of.clone(), l.lookahead),
            None => {
                let of = self.partition(n)?;
                let mut lookahead = u64::MAX;
                let margin = self.fold.margin;
                for p in 0..w.port_node.len() {
                    if of[w.port_node[p] as usize] != of[w.peer_node[p] as usize] {
                        lookahead = lookahead.min(self.least_reach(p as u32, margin).0);
                    }
                }
                (of, Time(lookahead.max(self.clock.grid.0)))
            }
        };
        let port_here: Vec<bool> = w.port_node.iter().map(|&n| of[n as usize] == me).collect();
        let fail_for_test = std::env::var("DETAILSIM_TEST_PANIC_PART").is_ok_and(|v| v == me.to_string());
        let out = (0..n).map(|_| Vec::new()).collect();
        // from here on the part holds only its own ports, numbered locally (a later part was built so), and
        // its own transfers and flows (the indices of its stripe, `i % n == me`) with copies of others' whose
        // other end is here
        if !self.fab.is_local() {
            self.fab.localize(&port_here);
        }
        self.hosts.transfers.stripe(n as u32, me as u32);
        self.hosts.apps.stripe(n as u32, me as u32);
        self.split.part = Some(Box::new(Part {
            of,
            me,
            n,
            out,
            // (the set-up's messages are delivered before the first window: `rounds::split`)
            window_end: Time::ZERO,
            lookahead,
            end_limit: self.clock.end_limit,
            hold: None,
            next_sweep: self.pfc_sweep_interval(),
            sweep: None,
            peaks: Vec::new(),
            moves: Vec::new(),
            fail_for_test,
        }));
        self.split.divert = true;
        Ok(())
    }

    /// The parts of a run split in `n`, per node: hosts in `n` contiguous groups by index (host `i` of `h`
    /// in part `i * n / h`), a switch in the part its neighbours agree on (edge switches, then aggregation
    /// switches, as far as that goes), the rest (cores, and switches between parts) in turn. An error when
    /// the fabric has fewer hosts than parts or no link between parts.
    pub(crate) fn partition(&self, n: u8) -> Result<Vec<u8>, ConfigError> {
        const NONE: u8 = u8::MAX;
        let nodes = self.fab.nodes.len();
        let nh = self.fab.hosts.len();
        debug_assert!(n >= 2, "a split run has two parts or more");
        if nh < n as usize {
            let msg = format!("{n} parts need at least {n} hosts; the fabric has {nh}");
            return Err(ConfigError { field: "run.threads".into(), msg });
        }
        let mut of = vec![NONE; nodes];
        for (i, &h) in self.fab.hosts.iter().enumerate() {
            of[h as usize] = (i * n as usize / nh) as u8;
        }
        loop {
            let mut changed = false;
            for s in 0..nodes {
                if of[s] != NONE {
                    continue;
                }
                let nd = &self.fab.nodes[s];
                let mut seen = NONE;
                let mut agree = true;
                for p in nd.port_base..nd.port_base + nd.nports {
                    let k = of[self.fab.ports[p as usize].peer_node as usize];
                    if k != NONE {
                        agree &= seen == NONE || seen == k;
                        seen = k;
                    }
                }
                if agree && seen != NONE {
                    of[s] = seen;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut next = 0u8;
        for k in of.iter_mut().filter(|k| **k == NONE) {
            *k = next;
            next = (next + 1) % n;
        }
        if !self.fab.ports.iter().any(|pt| of[pt.node as usize] != of[pt.peer_node as usize]) {
            return Err(ConfigError { field: "topology".into(), msg: "the fabric has no link between parts to split at".into() });
        }
        Ok(of)
    }
}

#[cfg(test)]
mod tests;
