//! The rounds of a split run: what each part reports at a barrier, the next round that every part decides
//! alike from the reports (`decide`), and who runs the rounds: a thread per part, or the parts taking turns
//! on the calling thread (`Drive`). Whoever runs them, the results are the same.

use super::{merge, Msg, Sweep};
use crate::config::{ConfigError, Scenario};
use crate::fabric::switch::Switch as _;
use crate::sim::barrier::{Barrier, FailOnUnwind, OtherPartFailed, Pace, Stretch};
use crate::sim::Sim;
use detailsim_engine::Time;
use std::sync::Mutex;

/// What each part reports at a barrier.
#[derive(Debug, Clone, Default)]
struct Report {
    next: Option<Time>,
    /// `Part::hold`: the part is done (its end, if the others are done by then).
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
            let g = if sim.pfc_paused > 0 { sim.pause_graph() } else { Default::default() };
            (p.next_sweep, sim.pfc_paused, g)
        });
        Report { next, hold: p.hold, now: sim.now, graph }
    }
}

/// After a barrier: a part that held at its end but is not done after all (a flow that completes here
/// arrived with another part's messages) is not done.
fn release(sim: &mut Sim) {
    if !(sim.clock.arrivals_over && sim.rec.active_measured == 0) {
        sim.split.part.as_mut().expect("a part").hold = None;
    }
}

/// What every part knows alike about the run's progress: part `i` has run every event before `ran[i]`,
/// and `last[i]` is what it ran to in the last round.
#[derive(Debug, Clone)]
struct Plan {
    ran: Vec<Time>,
    last: Vec<Option<Time>>,
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

/// `run.threads = N`: the other parts, and what drives them all, kept in the first between calls of
/// `run_until`.
pub(crate) struct Parts {
    pub(super) others: Vec<Sim>,
    plan: Plan,
    drive: Drive,
    pace: Pace,
    /// `Drive::Alternate`: stretches run so far (odd ones on threads).
    stretches: u64,
}

/// Who runs the parts' rounds. Whichever does, the results are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// Taking turns on the calling thread.
    Turns,
    /// A thread per part, always.
    Threads,
    /// A thread per part or one thread, whichever is faster now (`Pace`; `run.threads = N`).
    Paced,
    /// For tests of the hand-over: this many rounds on threads, then as many taking turns, and so on.
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

/// A simulation split in `n` parts driven by `drive`: the first part, holding the others. `Sim::run_until`
/// drives them all; when the run ends the first takes the others' results.
pub(crate) fn split(sc: &Scenario, n: u8, drive: Drive) -> Result<Sim, ConfigError> {
    let mut a = Sim::build(sc, Some((0, n)))?;
    // the topology, its wiring and the routes are the same for every part: built once, shared
    let shared = *a.split.shared.take().expect("the first part keeps what the others share");
    let p = a.split.part.as_ref().expect("a part");
    let layout =
        std::sync::Arc::new(super::Layout { of: p.of.clone(), lookahead: p.lookahead, grid: a.clock.grid, wheel: a.clock.wheel, alb_margin: a.fold.margin });
    let mut others = (1..n).map(|k| Sim::build_sharing(sc, Some((k, n)), Some((shared.clone(), layout.clone())))).collect::<Result<Vec<_>, _>>()?;
    // what the set-up sent (a host's first frames, due at a switch in another part) arrives before the
    // first window
    deliver(&mut std::iter::once(&mut a).chain(others.iter_mut()).collect::<Vec<_>>());
    let plan = plan(&a, n as usize);
    a.split.parts = Some(Box::new(Parts { others, plan, drive, pace: Pace::new(), stretches: 0 }));
    a.split.n = n;
    Ok(a)
}

impl Sim {
    /// `run_until` of a split run: rounds until the run ends (the parts' results joined here) or the next
    /// window starts after `limit`.
    pub(crate) fn run_parts_until(&mut self, limit: Time) -> bool {
        let mut parts = self.split.parts.take().expect("a split run");
        parts.plan.limit = limit;
        loop {
            let Parts { others, plan, drive, pace, stretches } = &mut *parts;
            let mut all: Vec<&mut Sim> = std::iter::once(&mut *self).chain(others.iter_mut()).collect();
            let (ended, rounds) = match *drive {
                Drive::Turns => taking_turns(&mut all, plan, Until::End),
                Drive::Threads => on_threads(&mut all, plan, u64::MAX),
                Drive::Alternate(n) => {
                    *stretches += 1;
                    if stretches.is_multiple_of(2) {
                        taking_turns(&mut all, plan, Until::Rounds(n))
                    } else {
                        on_threads(&mut all, plan, n)
                    }
                }
                Drive::Paced => {
                    let events = |all: &[&mut Sim]| all.iter().map(|s| s.rec.counters.events).sum::<u64>();
                    let (t0, before) = (std::time::Instant::now(), events(&all));
                    let stretch = pace.next();
                    let (ended, rounds) = match stretch {
                        Stretch::One(d) => taking_turns(&mut all, plan, Until::Wall(t0 + d)),
                        Stretch::Two(n) => on_threads(&mut all, plan, n),
                    };
                    pace.count(matches!(stretch, Stretch::One(_)), rounds, events(&all) - before, t0.elapsed().as_nanos() as u64);
                    (ended, rounds)
                }
            };
            self.split.rounds += rounds;
            match ended {
                Ended::End(now) => {
                    merge::merge(self, std::mem::take(&mut parts.others), now);
                    return true;
                }
                Ended::Pause => {
                    self.split.parts = Some(parts);
                    return false;
                }
                Ended::Rounds => {}
            }
        }
    }

    /// A split run's window: the lookahead (None if the run is not split).
    pub fn split_window(&self) -> Option<Time> {
        self.split.parts.as_ref().map(|p| p.plan.lookahead)
    }

    /// Rounds the parts of a split run ran (the windows they met after; 0: not split).
    pub fn split_rounds(&self) -> u64 {
        self.split.rounds
    }

    /// How many parts the run is split in (1: not split).
    pub fn split_parts(&self) -> usize {
        self.split.n.max(1) as usize
    }
}

/// A round: the parts given a limit run their events up to and including it (or their hold, if `hold`);
/// what they send must not be due before `window_end`; all keep `sweep` for their next PFC sweep.
enum Step {
    Run {
        limit: Vec<Option<Time>>,
        window_end: Time,
        hold: bool,
        sweep: Option<Sweep>,
    },
    End {
        now: Time,
    },
    /// The next window starts after the limit of this call of `run_until`.
    Pause,
}

/// The next round, from every part's report (each thread decides alike). The ordinary run with the node
/// order ends with the grid interval in which arrivals are over and no measured flow runs, when no event
/// is left, or at its end. So: while no part is done all run windows of the lookahead; a part that is
/// done holds at its end, and runs after the others, never ahead of them (they may end the run in the
/// window they run); when all are done, those behind run to the latest hold and the run ends there.
fn decide(r: &[Report], p: &mut Plan) -> Step {
    let sweep = sweep(r, p);
    match decide_run(r, p) {
        Step::Run { limit, window_end, hold, .. } => Step::Run { limit, window_end, hold, sweep },
        end => end,
    }
}

/// Every part has run every event before its next PFC sweep, all at the same time: what it needs of the
/// whole fabric.
fn sweep(r: &[Report], p: &Plan) -> Option<Sweep> {
    let t0 = r[0].graph.as_ref()?.0;
    let mut pieces = Vec::with_capacity(r.len());
    let mut paused = 0;
    for x in r {
        let (t, n, g) = x.graph.as_ref()?;
        if *t != t0 {
            return None;
        }
        paused += n;
        pieces.push(g);
    }
    let cycle = (paused > 0 && p.deadlock_check).then(|| crate::sim::pfc::pause_cycle(p.ports, &crate::sim::pfc::PauseGraph::join(&pieces)));
    Some(Sweep { paused, cycle: cycle.flatten() })
}

fn decide_run(r: &[Report], p: &mut Plan) -> Step {
    let n = r.len();
    for (i, x) in r.iter().enumerate() {
        if let Some(l) = p.last[i].take() {
            // it ran every event up to the limit, or (told to hold) to its hold
            let l = if p.held { x.hold.map_or(l, |h| h.min(l)) } else { l };
            p.ran[i] = p.ran[i].max(Time(l.0 + 1));
        }
    }
    // part i has events left before `upto` that it has not run
    let behind = |i: usize, upto: Time, ran: &[Time]| r[i].next.is_some_and(|t| t < upto) && ran[i] < upto;
    // the parts `who` names run to `limit`
    let run = |who: &dyn Fn(usize) -> bool, limit: Time, window_end: Time, hold: bool, p: &mut Plan| {
        p.last = (0..n).map(|i| who(i).then_some(limit)).collect();
        p.held = hold;
        Step::Run { limit: p.last.clone(), window_end, hold, sweep: None }
    };
    let most = |ran: &[Time]| ran.iter().copied().max().expect("parts");
    if r.iter().all(|x| x.hold.is_some()) {
        // all are done: the run ends at the latest hold, which all run to. Those behind catch up to the
        // part furthest on first (no part is more than a window behind it, and what they send is due
        // after its progress), then all run windows to the end together; a part running ahead alone to
        // the end would leave the others more than a window behind, and what they send could be due in
        // its past (a packet across the cut lost)
        let end = r.iter().filter_map(|x| x.hold).max().expect("parts");
        let upto = Time(end.0 + 1);
        let target = most(&p.ran).min(upto);
        let late: Vec<bool> = (0..n).map(|i| behind(i, target, &p.ran)).collect();
        if late.contains(&true) {
            return run(&|i| late[i], Time(target.0 - 1), target, false, p);
        }
        p.ran.iter_mut().for_each(|t| *t = (*t).max(target));
        let next = (0..n).filter(|&i| behind(i, upto, &p.ran)).filter_map(|i| r[i].next).min();
        let Some(e) = next else { return Step::End { now: end } };
        let start = e.max(target);
        let mut wend = Time(start.0.saturating_add(p.lookahead.0)).min(upto);
        if let Some(dt) = p.sweep_every {
            wend = wend.min(Time((start.0 / dt.0 + 1) * dt.0));
        }
        return run(&|_| true, Time(wend.0 - 1), wend, false, p);
    }
    // the parts behind the furthest one that is not done (they held, or run after it) catch up first: it is
    // not done, so the run goes on past where they held
    let ahead = (0..n).filter(|&i| r[i].hold.is_none()).map(|i| p.ran[i]).max().expect("a part not done");
    let late: Vec<bool> = (0..n).map(|i| behind(i, ahead, &p.ran)).collect();
    if late.contains(&true) {
        return run(&|i| late[i], Time(ahead.0 - 1), ahead, false, p);
    }
    p.ran.iter_mut().for_each(|t| *t = (*t).max(ahead));
    let earliest = r.iter().filter_map(|x| x.next).min();
    let Some(e) = earliest.filter(|&e| e <= p.end_limit) else {
        if earliest.is_some() {
            return Step::End { now: p.end_limit };
        }
        let (now, g) = (r.iter().map(|x| x.now).max().expect("parts"), p.grid.0);
        return Step::End { now: Time((now.0 / g).saturating_add(1).saturating_mul(g).saturating_sub(1).max(now.0)).min(p.end_limit) };
    };
    let start = e.max(ahead);
    if start > p.limit {
        return Step::Pause;
    }
    let mut end = Time(start.0.saturating_add(p.lookahead.0)).min(Time(p.end_limit.0.saturating_add(1)));
    if let Some(dt) = p.sweep_every {
        // a window ends at the next PFC sweep: its barrier sees the whole fabric as the sweep does
        end = end.min(Time((start.0 / dt.0 + 1) * dt.0));
    }
    // the parts not done run this window first (they may end the run in it)
    run(&|i| r[i].hold.is_none(), Time(end.0 - 1), end, true, p)
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

fn plan(sim: &Sim, n: usize) -> Plan {
    Plan {
        sweep_every: sim.pfc_on().then(|| sim.pfc_sweep_interval()),
        deadlock_check: sim.scheme.pfc.deadlock_check > Time::ZERO,
        ports: sim.fab.wiring.port_node.len(),
        ran: vec![Time::ZERO; n],
        last: vec![None; n],
        held: true,
        limit: Time::MAX,
        lookahead: sim.split.part.as_ref().expect("a part").lookahead,
        grid: sim.clock.grid,
        end_limit: sim.clock.end_limit,
    }
}

/// What the threads of a split run share: each part's messages for each other part (`mail[from * n + to]`),
/// the reports (in two slots that alternate, so that one round's are read while the next round's are
/// written), and the barrier.
struct Shared {
    n: usize,
    mail: Vec<Mutex<Vec<Msg>>>,
    reports: [Mutex<Vec<Report>>; 2],
    barrier: Barrier,
}

/// Run part `me` for `rounds` rounds (or until the run ends or pauses), meeting the other threads twice a
/// round: after running (then each takes what the others sent it, in part order, applies it and reports)
/// and after reporting (then all decide the next round alike).
fn drive(sim: &mut Sim, me: usize, mut p: Plan, rounds: u64, s: &Shared) -> ((Ended, u64), Plan) {
    let _fail = FailOnUnwind(&s.barrier);
    let mut arrivals = 0u64;
    let mut meet = || {
        arrivals += 1;
        s.barrier.wait(arrivals);
    };
    s.reports[0].lock().expect("reports")[me] = Report::of(sim);
    meet();
    for k in 0..rounds as usize {
        let r = s.reports[k % 2].lock().expect("reports").clone();
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
            let out = &mut sim.split.part.as_mut().expect("a part").out;
            for (to, m) in out.iter_mut().enumerate().filter(|(_, m)| !m.is_empty()) {
                std::mem::swap(&mut *s.mail[me * s.n + to].lock().expect("mail"), m);
            }
        }
        meet();
        for from in (0..s.n).filter(|&f| f != me) {
            let slot = &s.mail[from * s.n + me];
            let mut msgs = std::mem::take(&mut *slot.lock().expect("mail"));
            if !msgs.is_empty() {
                sim.receive(&mut msgs);
            }
            // (emptied, it goes back with its room: the sender's next swap takes it for its next messages)
            *slot.lock().expect("mail") = msgs;
        }
        release(sim);
        s.reports[(k + 1) % 2].lock().expect("reports")[me] = Report::of(sim);
        meet();
    }
    ((Ended::Rounds, rounds), p)
}

/// `rounds` rounds with a thread per part (the first part's on this one, the others' on scoped threads
/// for this call), or fewer if the run ends or pauses; how it ended and the rounds run.
fn on_threads(all: &mut [&mut Sim], plan: &mut Plan, rounds: u64) -> (Ended, u64) {
    let n = all.len();
    let shared = Shared {
        n,
        mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
        reports: [Mutex::new(vec![Report::default(); n]), Mutex::new(vec![Report::default(); n])],
        barrier: Barrier::new(n as u64),
    };
    let (first, rest) = all.split_first_mut().expect("parts");
    let (ended, p) = std::thread::scope(|sc| {
        let shared = &shared;
        let threads: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(k, sim)| {
                let p = plan.clone();
                sc.spawn(move || drive(sim, k + 1, p, rounds, shared))
            })
            .collect();
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(first, 0, plan.clone(), rounds, shared)));
        let mut results = vec![mine];
        results.extend(threads.into_iter().map(|t| t.join()));
        // the run's failure is the part's that failed first (the others stopped for it)
        let failed = results.iter().position(|r| r.as_ref().is_err_and(|e| !e.is::<OtherPartFailed>())).or_else(|| results.iter().position(|r| r.is_err()));
        if let Some(i) = failed {
            let Err(e) = results.swap_remove(i) else { unreachable!() };
            std::panic::resume_unwind(e);
        }
        let mut results = results.into_iter().map(|r| r.expect("no part failed"));
        let mine = results.next().expect("the first part");
        debug_assert!(results.all(|theirs| theirs.0 == mine.0), "every part decides alike");
        mine
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
fn taking_turns(all: &mut [&mut Sim], p: &mut Plan, until: Until) -> (Ended, u64) {
    for k in 0.. {
        let over = match until {
            Until::End => false,
            Until::Rounds(n) => k >= n,
            Until::Wall(t) => std::time::Instant::now() >= t,
        };
        if over {
            return (Ended::Rounds, k);
        }
        let reports: Vec<Report> = all.iter().map(|s| Report::of(s)).collect();
        match decide(&reports, p) {
            Step::End { now } => return (Ended::End(now), k),
            Step::Pause => return (Ended::Pause, k),
            Step::Run { limit, window_end, hold, sweep } => {
                for (sim, l) in all.iter_mut().zip(&limit) {
                    if sweep.is_some() {
                        sim.split.part.as_mut().expect("a part").sweep = sweep.clone();
                    }
                    if let Some(l) = *l {
                        run_window(sim, l, window_end, hold);
                    }
                }
                deliver(all);
                all.iter_mut().for_each(|s| release(s));
            }
        }
    }
    unreachable!()
}

/// Each part takes what the others sent it, in part order (as on threads); the emptied lists go back to
/// their senders with their room.
fn deliver(all: &mut [&mut Sim]) {
    let n = all.len();
    for to in 0..n {
        for from in (0..n).filter(|&f| f != to) {
            let out = &mut all[from].split.part.as_mut().expect("a part").out[to];
            if !out.is_empty() {
                let mut msgs = std::mem::take(out);
                all[to].receive(&mut msgs);
                all[from].split.part.as_mut().expect("a part").out[to] = msgs;
            }
        }
    }
}

/// Run a scenario (JSON) split in `parts` parts, driven by `drive`, whatever its `run.threads`; returns a
/// simulation holding the whole run's results (flow table, counters, ports, summary) as the ordinary run
/// would.
pub fn run_in_parts(json: &str, parts: u8, drive: Drive) -> Result<Sim, ConfigError> {
    let mut sim = build_in_parts(json, parts, drive)?;
    sim.run();
    Ok(sim)
}

/// A scenario (JSON) built split in `parts` parts, driven by `drive`, not run yet (`detailsim check-split`
/// runs it taking turns: what threads do, on one).
pub fn build_in_parts(json: &str, parts: u8, drive: Drive) -> Result<Sim, ConfigError> {
    let sc = crate::config::parse_scenario(json)?;
    split(&sc, parts, drive)
}
