//! A run split in two parts (`run.threads = 2`; `run_in_parts`): two simulators, one per half of the
//! fabric's nodes (`Sim::halves`), each holding only its half's state live, exchanging what crosses the cut
//! as messages at a barrier after every window of simulated time. The parts run each on its own thread, or
//! taking turns on one; either way the results are those of the ordinary run with
//! `run.event_order = "node"`: the same flow table, row by row, and the same counters, the event count
//! included (a fabric-wide event, which runs in every part, counts in the first; a cancelled timer counts in
//! no run), but the peak of packets in flight (the parts' peaks added up: an upper bound).
//!
//! ```text
//!   part 0 (hosts 0..n/2, their switches)        part 1 (the rest)
//!   ── window [t, t + lookahead): own events ──  ── window [t, t + lookahead): own events ──
//!            │ outbox                                     │ outbox
//!            └──────────────► barrier ◄───────────────────┘
//!      events for the other half (a packet crossing the cut travels with its Arrive), copies of transfers
//!      and flows whose other end is there, rows, credits, releases: applied, then both report and decide
//!      the next round alike
//! ```
//!
//! Windows are no longer than the cut's lookahead (the shortest delay across it) and end at PFC sweeps, so
//! nothing a part sends is due before the barrier that delivers it (a push that would be is a bug, and
//! panics naming it). Records that two ends share are striped: a part allocates transfer and flow slots
//! of its own parity (`Arena::alloc_in`) and holds copies of the other part's at the same indices
//! (`Arena::put`); the sender's copy of a transfer is the one its sender fields live in, the receiver's
//! copy the one its receiver fields live in. A copy's release goes back to its owner as a message. At a
//! sweep's barrier each part hands over its pieces of the pause graph, and both find the same cycle (the
//! watchdog judges each part's own ports). A flow's active count is kept by the part it completes in; a
//! part whose measured flows are done holds at the end of that grid interval and runs after the other,
//! never ahead of it, so the run ends where the ordinary run does. At the end the first part takes the
//! second's results (`merge`), and flow ids and rows take the node order's canonical order
//! (`Sim::canonical_flows`).
//!
//! A fault changes what both parts keep (link flags, rates, routes) in both, and acts at a port (retries,
//! PFC checks) only in the port's part. The measurement window snapshots each flow in the part that
//! receives its data.
//!
//! Not yet supported (refused when the scenario uses them, naming the field): the PFC watchdog's
//! `shutdown` action (a link shut by one part), samples, run guards, incast repeats, packet traces.

use crate::fabric::cioq::Switch as _;
use crate::config::{ConfigError, Scenario};
use crate::packet::Packet;
use crate::sim::{App, Ev, Sim, Transfer, NO};
use detailsim_engine::Time;
use crate::sim::barrier::{Barrier, FailOnUnwind, Pace, Stretch};
pub use crate::sim::barrier::OtherPartFailed;
use std::sync::Mutex;

/// What one part tells the other at a barrier.
#[derive(Debug, Clone)]
pub(crate) enum Msg {
    /// An event at a node of the other half, with its key (the pusher's order); an `Arrive` carries its packet.
    /// `sent`: when the packet left the sender's store.
    Event { key: u128, ev: Ev, timer: bool, pkt: Option<Packet>, sent: Time },
    /// A transfer whose receiver is in the other half: its copy there.
    Transfer { tr: u32, t: Box<Transfer> },
    /// A flow whose other end is in the other half: its copy there.
    App { app: u32, a: Box<App> },
    /// Transfer `tr`'s flow completed into row `row` of the receiver's table (for the sender's counts).
    Row { tr: u32, uid: u32, row: u32 },
    /// A closed sender's timeouts and retransmissions, for row `row` of the other part's table.
    Credit { row: u32, to: u32, rtx: u32 },
    /// The receiver's copy of transfer `tr` closed: its owner frees the slot.
    Release { tr: u32, uid: u32 },
    /// The other end's copy of flow `app` completed it: its owner frees the slot.
    ReleaseApp { app: u32, uid: u32 },
}

/// A part's view of the split.
pub(crate) struct Part {
    /// Per node, its half.
    pub half: Vec<u8>,
    pub me: u8,
    /// Per port, whether its node is in this half (read by every push of a packet event).
    pub port_here: Vec<bool>,
    /// Messages for the other part, sent at the next barrier.
    pub out: Vec<Msg>,
    /// The end (exclusive) of the window being run: nothing sent to the other part may be due before.
    pub window_end: Time,
    /// The shortest delay with which a node of one half can cause an event at a node of the other (a link
    /// across the cut, with the forwarding delay behind it; with PFC, a PAUSE across it): the longest a
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
}

/// A part's samples and corrections (`Part::peaks`, `Part::moves`).
type Counted<'a> = (&'a [(u64, u64)], &'a [(u64, i64)]);

/// The peak of packets in flight over the grid's multiples up to the last either part counted at (`last`:
/// each part's last sampled index), from each part's samples and the cut's corrections: what the one-part
/// run counts at each multiple.
fn peak(parts: [Counted; 2], last: [u64; 2]) -> u64 {
    let end = last[0].max(last[1]);
    // (index, part or 2 for a correction, value)
    let mut changes: Vec<(u64, usize, i64)> = Vec::new();
    for (i, (peaks, moves)) in parts.iter().enumerate() {
        changes.extend(peaks.iter().map(|&(k, c)| (k, i, c as i64)));
        changes.extend(moves.iter().map(|&(k, d)| (k, 2, d)));
    }
    changes.sort_unstable_by_key(|c| c.0);
    let (mut value, mut moved, mut best) = ([0i64; 2], 0i64, 0i64);
    let mut i = 0;
    while i < changes.len() && changes[i].0 <= end {
        let k = changes[i].0;
        while i < changes.len() && changes[i].0 == k {
            match changes[i] {
                (_, 2, d) => moved += d,
                (_, p, c) => value[p] = c,
            }
            i += 1;
        }
        if k >= 1 {
            best = best.max(value[0] + value[1] + moved);
        }
    }
    best.max(0) as u64
}

/// What a part's PFC sweep needs of the whole fabric (`Sim::pfc_sweep`): (port, priority) pairs paused,
/// and the cycle of pauses (`pfc::pause_cycle`) when the deadlock check is on and something is paused.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub paused: u64,
    pub cycle: Option<Vec<u32>>,
}

impl Sim {
    /// Whether `node` is in this part (always, in an ordinary run).
    #[inline]
    pub(crate) fn owns(&self, node: u32) -> bool {
        self.split.part.as_ref().is_none_or(|p| p.half[node as usize] == p.me)
    }

    /// Send `m` to the other part.
    pub(crate) fn send(&mut self, m: Msg) {
        self.split.part.as_mut().expect("a part").out.push(m);
    }

    /// Whether slot `i` of a striped arena (transfers, flows) is another part's.
    #[inline]
    pub(crate) fn foreign_slot(&self, i: u32) -> bool {
        self.split.part.as_ref().is_some_and(|p| i % 2 != p.me as u32)
    }

    pub(crate) fn alloc_transfer(&mut self, t: Transfer) -> u32 {
        match self.split.part.as_ref().map(|p| p.me as u32) {
            None => self.transfers.alloc(t),
            Some(me) => {
                let dead = Transfer { alive: false, uid: 0, ..t.clone() };
                self.transfers.alloc_in(t, 2, me, || dead.clone())
            }
        }
    }

    pub(crate) fn alloc_app(&mut self, a: App) -> u32 {
        match self.split.part.as_ref().map(|p| p.me as u32) {
            None => self.apps.alloc(a),
            Some(me) => {
                let dead = App { alive: false, uid: 0, ..a.clone() };
                self.apps.alloc_in(a, 2, me, || dead.clone())
            }
        }
    }

    /// Free transfer `tr`'s slot (already marked dead), or tell its owner to.
    pub(crate) fn release_transfer(&mut self, tr: u32) {
        if self.foreign_slot(tr) {
            let uid = self.transfers.get(tr).uid;
            self.send(Msg::Release { tr, uid });
        } else {
            self.transfers.release(tr);
        }
    }

    /// Free flow `app`'s slot (already marked dead), or tell its owner to.
    pub(crate) fn release_app(&mut self, app: u32) {
        if self.foreign_slot(app) {
            let uid = self.apps.get(app).uid;
            self.send(Msg::ReleaseApp { app, uid });
        } else {
            self.apps.release(app);
        }
    }

    /// A push in a part: events of this half go to its queue, the others' to the outbox with this queue's
    /// key (a packet arriving there leaves this part's store with it).
    #[inline]
    pub(crate) fn part_push(&mut self, at: Time, ev: Ev, timer: bool) {
        let here = match ev {
            // a port's own events (and timers, which go through the general path)
            Ev::TxDone { .. } | Ev::XbarDone { .. } | Ev::XbarOutFree { .. } | Ev::DetourDone { .. } => true,
            Ev::Arrive { port, .. } | Ev::PfcFrame { port, .. } => self.split.part.as_ref().expect("a part").port_here[port as usize],
            _ => return self.part_push_other(at, ev, timer),
        };
        if here && !timer {
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
            "split run: {ev:?} (node {node:?}) due at {} ps, scheduled at {} ps, reaches the other part within the window (which ends at {} ps): nodes in different halves interact faster than the grid ({} ps)",
            at.0,
            self.now.0,
            wend.0,
            self.clock.grid.0
        );
        let key = self.q.next_key(at);
        let pkt = match ev {
            Ev::Arrive { pkt, .. } => {
                let p = *self.pkts.get(pkt);
                self.pkts.release(pkt);
                Some(p)
            }
            _ => None,
        };
        let sent = self.now;
        self.send(Msg::Event { key, ev, timer, pkt, sent });
    }

    /// Apply the other part's messages (at a barrier).
    fn receive(&mut self, msgs: Vec<Msg>) {
        for m in msgs {
            match m {
                Msg::Event { key, mut ev, timer, pkt, sent } => {
                    if let (Ev::Arrive { pkt: id, .. }, Some(p)) = (&mut ev, pkt) {
                        *id = self.pkts.alloc(p);
                        // in flight from when the sender let it go (its samples after that leave it out) to
                        // when this part's samples start to count it
                        let g = self.clock.grid.0;
                        let (s, r) = (sent.0 / g + 1, self.clock.next_peak.0 / g);
                        if s != r {
                            self.split.part.as_mut().expect("a part").moves.extend([(s, 1), (r, -1)]);
                        }
                    }
                    self.q.push_keyed(key, ev, timer);
                }
                Msg::Transfer { tr, t } => {
                    let (role, app, app_uid, uid) = (t.role, t.app, t.app_uid, t.uid);
                    let dead = Transfer { alive: false, uid: 0, ..(*t).clone() };
                    self.transfers.put(tr, *t, || dead.clone());
                    if role == crate::sim::Role::Response && app != NO {
                        // the requester's flow learns its response (as `start_transfer` at the responder did)
                        let a = self.apps.get_mut(app);
                        if a.alive && a.uid == app_uid {
                            a.transfers[1] = tr;
                            a.transfer_uids[1] = uid;
                        }
                    }
                }
                Msg::App { app, a } => {
                    // a flow that completes here is counted here (see `open_app`)
                    if a.measured && a.alive && self.owns(a.dst) {
                        self.active_measured += 1;
                    }
                    let dead = App { alive: false, uid: 0, ..(*a).clone() };
                    self.apps.put(app, *a, || dead.clone());
                }
                Msg::Row { tr, uid, row } => {
                    let t = self.transfers.get_mut(tr);
                    if t.alive && t.uid == uid {
                        t.row = row;
                        t.app = NO;
                    }
                }
                Msg::Credit { row, to, rtx } => {
                    self.flows.timeouts[row as usize] += to;
                    self.flows.retransmits[row as usize] += rtx;
                }
                Msg::Release { tr, uid } => {
                    let t = self.transfers.get_mut(tr);
                    if t.alive && t.uid == uid {
                        t.alive = false;
                        t.rcv_open = false;
                        t.app = NO;
                        self.transfers.release(tr);
                    }
                }
                Msg::ReleaseApp { app, uid } => {
                    let a = self.apps.get_mut(app);
                    if a.alive && a.uid == uid {
                        a.alive = false;
                        self.apps.release(app);
                    }
                }
            }
        }
    }

    /// What a split run does not support yet, as the error for the first such field the scenario uses.
    fn refuse_in_parts(&self, sc: &Scenario) -> Result<(), ConfigError> {
        let no = |field: &str, what: &str| crate::config::err(field, format!("{what} is not supported in a run split in two parts yet"));
        if self.pfc_on() && self.scheme.pfc.watchdog_action == crate::config::WatchdogAction::Shutdown {
            return no("scheme.pfc.watchdog_action", "\"shutdown\" (a link shut down changes both parts' routes)");
        }
        if sc.run.max_events.is_some() || sc.run.max_wall.is_some() {
            return no("run.max_events", "a run guard");
        }
        for (i, w) in self.workloads.iter().enumerate() {
            if matches!(w, crate::sim::workload::Workload::Incast { repeats_left, .. } if *repeats_left > 1) {
                return no(&format!("workload[{i}].repeats"), "an incast that repeats");
            }
        }
        Ok(())
    }

    /// Set this simulation up as part `me` of a split run (during construction: after the fabric and the
    /// workloads are built, before anything is scheduled for them).
    pub(crate) fn make_part(&mut self, sc: &Scenario, me: u8) -> Result<(), ConfigError> {
        self.refuse_in_parts(sc)?;
        let half = self.halves().map_err(|m| ConfigError { field: "topology".into(), msg: m })?;
        let port_here = self.fab.ports.iter().map(|p| half[p.node as usize] == me).collect();
        let mut lookahead = u64::MAX;
        for (i, p) in self.fab.ports.iter().enumerate() {
            if half[p.node as usize] != half[p.peer_node as usize] {
                lookahead = lookahead.min(self.least_reach(i as u32).0);
            }
        }
        let lookahead = Time(lookahead.max(self.clock.grid.0));
        let fail_for_test = std::env::var("DETAILSIM_TEST_PANIC_PART").is_ok_and(|v| v == me.to_string());
        self.split.part = Some(Box::new(Part { half, me, port_here, out: Vec::new(), window_end: lookahead, lookahead, end_limit: self.clock.end_limit, hold: None, next_sweep: self.pfc_sweep_interval(), sweep: None, peaks: Vec::new(), moves: Vec::new(), fail_for_test }));
        self.split.divert = true;
        Ok(())
    }
}

/// What each part reports at a barrier.
#[derive(Debug, Clone, Default)]
struct Report {
    next: Option<Time>,
    /// `Part::hold`: the part is done (its end, if the other is done by then).
    hold: Option<Time>,
    now: Time,
    /// With PFC, when the next event is the sweep: its time, this part's pauses and its pieces of the
    /// pause graph (only while something is paused).
    graph: Option<(Time, u64, crate::sim::pfc::PauseGraph)>,
}

impl Report {
    fn of(sim: &Sim) -> Report {
        let p = sim.split.part.as_ref().expect("a part");
        let next = sim.q.peek_time();
        let graph = (sim.pfc_on() && next == Some(p.next_sweep)).then(|| {
            let g = if sim.pfc_run.paused > 0 { sim.pause_graph(|i| p.port_here[i as usize]) } else { Default::default() };
            (p.next_sweep, sim.pfc_run.paused, g)
        });
        Report { next, hold: p.hold, now: sim.now, graph }
    }
}

/// After a barrier: a part that held at its end but is not done after all (a flow that completes here
/// arrived with the other part's messages) is not done.
fn release(sim: &mut Sim) {
    if !(sim.clock.arrivals_over && sim.active_measured == 0) {
        sim.split.part.as_mut().expect("a part").hold = None;
    }
}

/// What both parts know alike about the run's progress: each part has run every event before `ran[i]`,
/// and `last` is what each ran to in the last round.
#[derive(Debug, Clone, Copy)]
struct Plan {
    ran: [Time; 2],
    last: [Option<Time>; 2],
    /// Whether the last round told the parts to stop at their holds.
    held: bool,
    /// With PFC: the sweep's interval (sweeps come at its multiples; windows end there), whether the
    /// deadlock check is on, and the fabric's port count.
    sweep_every: Option<Time>,
    deadlock_check: bool,
    ports: usize,
    /// This call of `run_until` runs no window that starts after this.
    limit: Time,
    lookahead: Time,
    grid: Time,
    end_limit: Time,
}

/// `run.threads = 2`: the second part, and what drives both, kept in the first between calls of `run_until`.
pub(crate) struct Pair {
    other: Sim,
    plan: Plan,
    drive: Drive,
    pace: Pace,
    /// `Drive::Alternate`: stretches run so far (odd ones on two threads).
    stretches: u64,
}

/// Who runs the parts' rounds. Whichever does, the results are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// Taking turns on the calling thread.
    Turns,
    /// Two threads, always.
    Threads,
    /// Two threads or one, whichever is faster now (`Pace`; `run.threads = 2`).
    Paced,
    /// For tests of the hand-over: this many rounds on two threads, then as many taking turns, and so on.
    Alternate(u64),
}

/// How a run of rounds ended.
#[derive(Debug, PartialEq)]
enum Ended {
    /// The run ended at this time.
    End(Time),
    /// The next window starts after the limit of this call of `run_until`.
    Pause,
    /// The rounds asked for are over.
    Rounds,
}

/// A simulation split in two parts (`run.threads = 2`; `threads` false: the parts take turns on this
/// thread): the first part, holding the second. `Sim::run_until` drives both; when the run ends the first
/// takes the second's results.
pub(crate) fn split(sc: &Scenario, drive: Drive) -> Result<Sim, ConfigError> {
    let mut a = Sim::build(sc, Some(0))?;
    let other = Sim::build(sc, Some(1))?;
    let plan = plan(&a);
    a.split.pair = Some(Box::new(Pair { other, plan, drive, pace: Pace::new(), stretches: 0 }));
    Ok(a)
}

impl Sim {
    /// `run_until` of a split run: rounds until the run ends (the parts' results joined here) or the next
    /// window starts after `limit`.
    pub(crate) fn run_pair_until(&mut self, limit: Time) -> bool {
        let mut pair = self.split.pair.take().expect("a split run");
        pair.plan.limit = limit;
        loop {
            let Pair { other, plan, drive, pace, stretches } = &mut *pair;
            let ended = match *drive {
                Drive::Turns => taking_turns(self, other, plan, Until::End).0,
                Drive::Threads => on_two_threads(self, other, plan, u64::MAX).0,
                Drive::Alternate(n) => {
                    *stretches += 1;
                    if stretches.is_multiple_of(2) {
                        taking_turns(self, other, plan, Until::Rounds(n)).0
                    } else {
                        on_two_threads(self, other, plan, n).0
                    }
                }
                Drive::Paced => {
                    let (t0, events) = (std::time::Instant::now(), self.counters.events + other.counters.events);
                    let stretch = pace.next();
                    let (ended, rounds) = match stretch {
                        Stretch::One(d) => taking_turns(self, other, plan, Until::Wall(t0 + d)),
                        Stretch::Two(n) => on_two_threads(self, other, plan, n),
                    };
                    let events = self.counters.events + other.counters.events - events;
                    pace.count(matches!(stretch, Stretch::One(_)), rounds, events, t0.elapsed().as_nanos() as u64);
                    ended
                }
            };
            match ended {
                Ended::End(now) => {
                    merge(self, pair.other, now);
                    return true;
                }
                Ended::Pause => {
                    self.split.pair = Some(pair);
                    return false;
                }
                Ended::Rounds => {}
            }
        }
    }
}

/// A round: the parts named run their events up to and including `limit[i]` (or their hold, if `hold`);
/// what they send must not be due before `window_end`; both keep `sweep` for their next PFC sweep.
enum Step {
    Run { limit: [Option<Time>; 2], window_end: Time, hold: bool, sweep: Option<Sweep> },
    End { now: Time },
    /// The next window starts after the limit of this call of `run_until`.
    Pause,
}

/// The next round, from both parts' reports (both threads decide alike). The ordinary run with the node
/// order ends with the grid interval in which arrivals are over and no measured flow runs, when no event
/// is left, or at its end. So: while neither part is done both run windows of the lookahead; a part that
/// is done holds at its end, and runs after the other, never ahead of it (the other may end the run in
/// the window it runs); when both are done, the one behind runs to the later hold and the run ends there.
fn decide(r: &[Report; 2], p: &mut Plan) -> Step {
    let sweep = sweep(r, p);
    let step = decide_run(r, p);
    match step {
        Step::Run { limit, window_end, hold, .. } => Step::Run { limit, window_end, hold, sweep },
        end => end,
    }
}

/// Both parts have run every event before their next PFC sweep, at the same time: what it needs of the
/// whole fabric.
fn sweep(r: &[Report; 2], p: &Plan) -> Option<Sweep> {
    let (Some((t0, p0, g0)), Some((t1, p1, g1))) = (&r[0].graph, &r[1].graph) else { return None };
    if t0 != t1 {
        return None;
    }
    let paused = p0 + p1;
    let cycle = (paused > 0 && p.deadlock_check).then(|| {
        let mut g = g0.clone();
        g.join(g1);
        crate::sim::pfc::pause_cycle(p.ports, &g)
    });
    Some(Sweep { paused, cycle: cycle.flatten() })
}

#[allow(clippy::needless_range_loop)] // (each loop reads part i and the other, 1 - i)
fn decide_run(r: &[Report; 2], p: &mut Plan) -> Step {
    for i in 0..2 {
        if let Some(l) = p.last[i].take() {
            // it ran every event up to the limit, or (told to hold) to its hold
            let l = if p.held { r[i].hold.map_or(l, |h| h.min(l)) } else { l };
            p.ran[i] = p.ran[i].max(Time(l.0 + 1));
        }
    }
    // part i has events left before `upto` that it has not run
    let behind = |i: usize, upto: Time, ran: [Time; 2]| r[i].next.is_some_and(|t| t < upto) && ran[i] < upto;
    let alone = |i: usize, limit: Time, window_end: Time, hold: bool, p: &mut Plan| {
        let mut l = [None, None];
        l[i] = Some(limit);
        (p.last, p.held) = (l, hold);
        Step::Run { limit: l, window_end, hold, sweep: None }
    };
    if let (Some(h0), Some(h1)) = (r[0].hold, r[1].hold) {
        // both are done: the run ends at the later hold, which both run to. The one behind catches up to the
        // other first (they are never more than a window apart, and what it sends is due after the other's
        // progress), then both run windows to the end together; a part running ahead alone to the end
        // would leave the other more than a window behind, and what that one sends could be due in the
        // past of the first (a packet across the cut lost)
        let end = h0.max(h1);
        let upto = Time(end.0 + 1);
        let lo = usize::from(p.ran[1] < p.ran[0]);
        let catch_up = p.ran[1 - lo].min(upto);
        if behind(lo, catch_up, p.ran) {
            return alone(lo, Time(catch_up.0 - 1), catch_up, false, p);
        }
        p.ran[lo] = p.ran[lo].max(catch_up);
        let next = (0..2).filter(|&i| behind(i, upto, p.ran)).filter_map(|i| r[i].next).min();
        let Some(e) = next else { return Step::End { now: end } };
        let start = e.max(p.ran[0].min(p.ran[1]));
        let mut wend = Time(start.0.saturating_add(p.lookahead.0)).min(upto);
        if let Some(dt) = p.sweep_every {
            wend = wend.min(Time((start.0 / dt.0 + 1) * dt.0));
        }
        let last = Time(wend.0 - 1);
        (p.last, p.held) = ([Some(last), Some(last)], false);
        return Step::Run { limit: p.last, window_end: wend, hold: false, sweep: None };
    }
    // a part behind the other (it held, or runs after it) catches up first, alone: the other is not done,
    // so the run goes on past where it held
    for i in 0..2 {
        if p.ran[i] < p.ran[1 - i] && r[1 - i].hold.is_none() {
            if behind(i, p.ran[1 - i], p.ran) {
                return alone(i, Time(p.ran[1 - i].0 - 1), p.ran[1 - i], false, p);
            }
            p.ran[i] = p.ran[1 - i];
        }
    }
    let earliest = [r[0].next, r[1].next].into_iter().flatten().min();
    let Some(e) = earliest.filter(|&e| e <= p.end_limit) else {
        if earliest.is_some() {
            return Step::End { now: p.end_limit };
        }
        let (now, g) = (r[0].now.max(r[1].now), p.grid.0);
        return Step::End { now: Time((now.0 / g).saturating_add(1).saturating_mul(g).saturating_sub(1).max(now.0)).min(p.end_limit) };
    };
    let start = e.max(p.ran[0].min(p.ran[1]));
    if start > p.limit {
        return Step::Pause;
    }
    let mut end = Time(start.0.saturating_add(p.lookahead.0)).min(Time(p.end_limit.0.saturating_add(1)));
    if let Some(dt) = p.sweep_every {
        // a window ends at the next PFC sweep: its barrier sees the whole fabric as the sweep does
        end = end.min(Time((start.0 / dt.0 + 1) * dt.0));
    }
    let last = Time(end.0 - 1);
    for i in 0..2 {
        if r[i].hold.is_some() {
            // the other runs this window first (it may end the run in it)
            return alone(1 - i, last, end, true, p);
        }
    }
    (p.last, p.held) = ([Some(last), Some(last)], true);
    Step::Run { limit: p.last, window_end: end, hold: true, sweep: None }
}

/// Run a part's events up to and including `limit` (and no further than its hold, if `hold`), sending
/// nothing due before `window_end`.
fn run_window(sim: &mut Sim, limit: Time, window_end: Time, hold: bool) {
    let p = sim.split.part.as_mut().expect("a part");
    assert!(!p.fail_for_test, "DETAILSIM_TEST_PANIC_PART={} is set", p.me);
    p.window_end = window_end;
    // (a part that becomes done while it runs holds there: `check_finished`)
    sim.clock.end_limit = if hold { p.hold.map_or(p.end_limit, |h| h.min(p.end_limit)) } else { p.end_limit };
    sim.split.in_window = true;
    sim.run_until(limit);
    sim.split.in_window = false;
}

fn plan(sim: &Sim) -> Plan {
    Plan {
        sweep_every: sim.pfc_on().then(|| sim.pfc_sweep_interval()),
        deadlock_check: sim.scheme.pfc.deadlock_check > Time::ZERO,
        ports: sim.fab.ports.len(),
        ran: [Time::ZERO; 2],
        last: [None, None],
        held: true,
        limit: Time::MAX,
        lookahead: sim.split.part.as_ref().expect("a part").lookahead, grid: sim.clock.grid, end_limit: sim.clock.end_limit }
}

/// Run part `me` for `rounds` rounds (or until the run ends or pauses), meeting the other thread twice a
/// round: after running (then each takes what the other sent, applies it and reports) and after reporting
/// (then both decide the next round alike). `mine` receives what the other part sends, `theirs` what this
/// one sends; the reports alternate between two slots so that one round's are read while the next
/// round's are written.
#[allow(clippy::too_many_arguments)]
fn drive(sim: &mut Sim, me: usize, mut p: Plan, rounds: u64, mine: &Mutex<Vec<Msg>>, theirs: &Mutex<Vec<Msg>>, reports: &[Mutex<[Report; 2]>; 2], barrier: &Barrier) -> ((Ended, u64), Plan) {
    let _fail = FailOnUnwind(barrier);
    let mut arrivals = 0u64;
    let mut meet = || {
        arrivals += 1;
        barrier.wait(arrivals);
    };
    reports[0].lock().expect("reports")[me] = Report::of(sim);
    meet();
    for k in 0..rounds as usize {
        let r = reports[k % 2].lock().expect("reports").clone();
        let (limit, window_end, hold) = match decide(&r, &mut p) {
            Step::End { now } => return ((Ended::End(now), k as u64), p),
            Step::Pause => return ((Ended::Pause, k as u64), p),
            Step::Run { limit, window_end, hold, sweep } => {
                if sweep.is_some() {
                    sim.split.part.as_mut().expect("a part").sweep = sweep;
                }
                (limit, window_end, hold)
            }
        };
        if let Some(l) = limit[me] {
            run_window(sim, l, window_end, hold);
            std::mem::swap(&mut *theirs.lock().expect("outbox"), &mut sim.split.part.as_mut().expect("a part").out);
        }
        meet();
        let msgs = std::mem::take(&mut *mine.lock().expect("inbox"));
        sim.receive(msgs);
        release(sim);
        reports[(k + 1) % 2].lock().expect("reports")[me] = Report::of(sim);
        meet();
    }
    ((Ended::Rounds, rounds), p)
}

/// `rounds` rounds on two threads (the second part's on a scoped thread for this call), or fewer if the
/// run ends or pauses; how it ended and the rounds run.
fn on_two_threads(a: &mut Sim, b: &mut Sim, plan: &mut Plan, rounds: u64) -> (Ended, u64) {
    let (to_a, to_b) = (Mutex::new(Vec::new()), Mutex::new(Vec::new()));
    let reports = [Mutex::new([Report::default(), Report::default()]), Mutex::new([Report::default(), Report::default()])];
    let barrier = Barrier::new(2);
    let p = *plan;
    let (ended, p) = std::thread::scope(|s| {
        let other = s.spawn(|| drive(b, 1, p, rounds, &to_b, &to_a, &reports, &barrier));
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(a, 0, p, rounds, &to_a, &to_b, &reports, &barrier)));
        let theirs = other.join();
        match (mine, theirs) {
            (Ok(mine), Ok(theirs)) => {
                debug_assert_eq!(mine.0, theirs.0, "both parts decide alike");
                mine
            }
            // the run's failure is the part's that failed first (the other stopped for it)
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => std::panic::resume_unwind(e),
            (Err(e0), Err(e1)) => std::panic::resume_unwind(if e0.is::<OtherPartFailed>() { e1 } else { e0 }),
        }
    });
    *plan = p;
    ended
}

/// How long the parts take turns.
enum Until {
    End,
    Rounds(u64),
    Wall(std::time::Instant),
}

/// Rounds with the parts taking turns on this thread, until the run ends or pauses or `until` says;
/// how it ended and the rounds run.
fn taking_turns(a: &mut Sim, b: &mut Sim, p: &mut Plan, until: Until) -> (Ended, u64) {
    for k in 0.. {
        let over = match until {
            Until::End => false,
            Until::Rounds(n) => k >= n,
            Until::Wall(t) => std::time::Instant::now() >= t,
        };
        if over {
            return (Ended::Rounds, k);
        }
        match decide(&[Report::of(a), Report::of(b)], p) {
            Step::End { now } => return (Ended::End(now), k),
            Step::Pause => return (Ended::Pause, k),
            Step::Run { limit, window_end, hold, sweep } => {
                if sweep.is_some() {
                    a.split.part.as_mut().expect("a part").sweep = sweep.clone();
                    b.split.part.as_mut().expect("a part").sweep = sweep;
                }
                for (sim, l) in [(&mut *a, limit[0]), (&mut *b, limit[1])] {
                    if let Some(l) = l {
                        run_window(sim, l, window_end, hold);
                    }
                }
                let (ma, mb) = (std::mem::take(&mut a.split.part.as_mut().expect("a part").out), std::mem::take(&mut b.split.part.as_mut().expect("a part").out));
                a.receive(mb);
                b.receive(ma);
                release(a);
                release(b);
            }
        }
    }
    unreachable!()
}

/// Run a scenario (JSON, with `run.event_order = "node"`) split in two parts, on two threads or
/// (`threads` false) taking turns on this one, whatever its `run.threads`; returns a simulation holding
/// the whole run's results (flow table, counters, ports, summary) as the ordinary run would.
pub fn run_in_parts(json: &str, drive: Drive) -> Result<Sim, ConfigError> {
    let mut sim = build_in_parts(json, drive)?;
    sim.run();
    Ok(sim)
}

/// A scenario (JSON, with `run.event_order = "node"`) built split in two parts, driven by `drive`, not run
/// yet (`detailsim check-split` runs it taking turns: what two threads do, on one).
pub fn build_in_parts(json: &str, drive: Drive) -> Result<Sim, ConfigError> {
    let sc = crate::config::parse_scenario(json)?;
    split(&sc, drive)
}

impl Sim {
    /// A split run's window: the cut's lookahead (None if the run is not split).
    pub fn split_window(&self) -> Option<Time> {
        self.split.pair.as_ref().map(|p| p.plan.lookahead)
    }
}

/// Join the two parts' results into `a`: counters added up, each port's state from its half's part, each
/// transfer's sender fields from its owner and receiver fields from its receiver's part, each flow's
/// record from its owner, both flow tables (ids made canonical first: `canonical_ids`), the unfinished
/// workflows and the PFC reports; then the end of the run (rows of unfinished flows, packet conservation
/// over both parts, the table's canonical order).
fn merge(a: &mut Sim, mut b: Sim, now: Time) {
    let pa = a.split.part.take().expect("a part");
    let pb = b.split.part.take().expect("a part");
    let g = a.clock.grid.0;
    let top = peak([(&pa.peaks, &pa.moves), (&pb.peaks, &pb.moves)], [a.clock.next_peak.0 / g - 1, b.clock.next_peak.0 / g - 1]);
    let half = pa.half;
    canonical_ids(a, &mut b);
    let mut rk = std::mem::take(&mut b.order.row_keys);
    a.order.row_keys.append(&mut rk);
    a.sampling.samples.append(std::mem::take(&mut b.sampling.samples));
    a.counters.add(&b.counters);
    a.counters.max_packets_in_flight = top;
    a.active_measured += b.active_measured;
    for p in 0..a.fab.ports.len() {
        if half[a.fab.ports[p].node as usize] == 1 {
            a.fab.ports[p] = b.fab.ports[p].clone();
            a.fab.tx_count[p] = b.fab.tx_count[p];
            a.fab.port_ctr[p] = b.fab.port_ctr[p];
            if let Some(f) = b.fab.pfc.get(p) {
                a.fab.pfc[p] = f.clone();
            }
        }
    }
    // the PFC reports in the order the ordinary run makes them (each sweep's by port, then its deadlock
    // report; a packet's after the sweep of its time)
    let mut events = std::mem::take(&mut b.pfc_run.events);
    a.pfc_run.events.append(&mut events);
    a.pfc_run.events.sort_by_key(|e| e.order);
    // rows of part 1's table follow part 0's
    let base = a.flows.len() as u32;
    a.flows.append(std::mem::take(&mut b.flows));
    // transfers: the owner's copy, with the receiver's fields from the receiver's part
    let n = a.transfers.slots().len().max(b.transfers.slots().len());
    for i in 0..n {
        let (own, other) = if i % 2 == 0 { (&a.transfers, &b.transfers) } else { (&b.transfers, &a.transfers) };
        let Some(mut t) = own.slots().get(i).cloned() else { continue };
        if t.alive {
            let rcv_part = half[t.dst as usize] as usize;
            if rcv_part != i % 2 {
                if let Some(r) = other.slots().get(i).filter(|r| r.uid == t.uid) {
                    t.rcv = r.rcv.clone();
                    (t.rcv_done, t.rcv_open, t.del_token, t.del_event_at) = (r.rcv_done, r.rcv_open, r.del_token, r.del_event_at);
                }
            }
            if t.row != NO && half[t.flow_receiver() as usize] == 1 {
                t.row += base;
            }
        }
        let dead = Transfer { alive: false, uid: 0, ..t.clone() };
        a.transfers.put(i as u32, t, || dead.clone());
    }
    // flows: the owner's record (an odd slot part 1's), with the measurement window's snapshots from the
    // part that receives its data
    let n = a.apps.slots().len().max(b.apps.slots().len());
    for i in 0..n {
        let (own, other) = if i % 2 == 0 { (&a.apps, &b.apps) } else { (&b.apps, &a.apps) };
        let Some(mut x) = own.slots().get(i).cloned() else { continue };
        if x.alive && half[x.dst as usize] as usize != i % 2 {
            if let Some(r) = other.slots().get(i).filter(|r| r.uid == x.uid) {
                (x.win_base, x.win_end) = (r.win_base, r.win_end);
            }
        }
        let dead = App { alive: false, uid: 0, ..x.clone() };
        a.apps.put(i as u32, x, || dead.clone());
    }
    for f in b.workflows.slots().iter().filter(|f| f.alive && f.measured) {
        a.workflows.alloc(f.clone());
    }
    a.split.in_flight_elsewhere = b.pkts.live() as u64;
    a.now = now;
    a.clock.finished = true;
    a.finalize();
}

/// Flow ids as the ordinary run with the node order gives them at its end (`Sim::canonical_flows`): each
/// part's ids (its own count) mapped to their place among both parts' flows by where they were opened;
/// `a` keeps the joined keys in that order, so that its `finalize` keeps the ids.
fn canonical_ids(a: &mut Sim, b: &mut Sim) {
    let mut all: Vec<((u64, u32, u32), usize, usize)> = Vec::with_capacity(a.order.open_keys.len() + b.order.open_keys.len());
    for (part, keys) in [&a.order.open_keys, &b.order.open_keys].into_iter().enumerate() {
        all.extend(keys.iter().enumerate().map(|(i, &k)| (k, part, i)));
    }
    all.sort_unstable();
    let mut rank = [vec![0u64; a.order.open_keys.len()], vec![0u64; b.order.open_keys.len()]];
    for (k, &(_, part, i)) in all.iter().enumerate() {
        rank[part][i] = k as u64;
    }
    // a part's id is even (the first part's) or odd (the second's): its count twice, plus the part
    let canon = |id: &mut u64| *id = rank[(*id % 2) as usize][(*id / 2) as usize];
    for sim in [&mut *a, &mut *b] {
        sim.flows.id.iter_mut().for_each(canon);
        sim.sampling.samples.flow.iter_mut().for_each(canon);
        sim.workflows.slots_mut().iter_mut().filter(|w| w.alive).for_each(|w| canon(&mut w.id));
    }
    // a flow's record is its owner's: an even slot part 0's, an odd one part 1's
    a.apps.slots_mut().iter_mut().step_by(2).filter(|x| x.alive).for_each(|x| canon(&mut x.id));
    b.apps.slots_mut().iter_mut().skip(1).step_by(2).filter(|x| x.alive).for_each(|x| canon(&mut x.id));
    a.order.open_keys = all.into_iter().map(|(k, _, _)| k).collect();
}

#[cfg(test)]
#[path = "parts_tests.rs"]
mod tests;
