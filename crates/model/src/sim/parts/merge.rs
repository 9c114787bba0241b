//! The end of a split run: the first part takes the others' results (`merge`), as the ordinary run would
//! have them.

use super::{Part, Striped};
use crate::sim::{App, Sim, Transfer, NO};
use detailsim_engine::StripedArena;
use detailsim_engine::Time;

/// A part's samples and corrections (`Part::peaks`, `Part::moves`).
pub(super) type Counted<'a> = (&'a [(u64, u64)], &'a [(u64, i64)]);

/// The peak of packets in flight over the grid's multiples up to the last any part counted at (`last`:
/// each part's last sampled index), from each part's samples and the cuts' corrections: what the one-part
/// run counts at each multiple.
pub(super) fn peak(parts: &[Counted], last: &[u64]) -> u64 {
    let n = parts.len();
    let end = last.iter().copied().max().unwrap_or(0);
    // (index, part or n for a correction, value)
    let mut changes: Vec<(u64, usize, i64)> = Vec::new();
    for (i, (peaks, moves)) in parts.iter().enumerate() {
        changes.extend(peaks.iter().map(|&(k, c)| (k, i, c as i64)));
        changes.extend(moves.iter().map(|&(k, d)| (k, n, d)));
    }
    // (each part's samples, and mostly its corrections, come in order: a stable sort merges the runs)
    changes.sort_by_key(|c| c.0);
    let (mut value, mut total, mut best) = (vec![0i64; n], 0i64, 0i64);
    let mut i = 0;
    while i < changes.len() && changes[i].0 <= end {
        let k = changes[i].0;
        while i < changes.len() && changes[i].0 == k {
            match changes[i] {
                (_, p, d) if p == n => total += d,
                (_, p, c) => {
                    total += c - value[p];
                    value[p] = c;
                }
            }
            i += 1;
        }
        if k >= 1 {
            best = best.max(total);
        }
    }
    best.max(0) as u64
}

/// Join the parts' results into `a` (the first): counters added up, each port's state from its node's
/// part, each transfer's sender fields from its owner and receiver fields from its receiver's part, each
/// flow's record from its owner, the flow tables in part order (ids made canonical first:
/// `canonical_ids`), the unfinished workflows and the PFC reports; then the end of the run (rows of
/// unfinished flows, packet conservation over all parts, the table's canonical order).
pub(super) fn merge(a: &mut Sim, mut others: Vec<Sim>, now: Time) {
    // folded transfers settle (`Sim::fold_finish`) before the ports are joined
    for s in std::iter::once(&mut *a).chain(others.iter_mut()) {
        s.now = now;
        s.fold_finish();
    }
    let mut parts: Vec<Box<Part>> = vec![a.split.part.take().expect("a part")];
    parts.extend(others.iter_mut().map(|o| o.split.part.take().expect("a part")));
    let n = parts.len();
    let g = a.clock.grid.0;
    let last: Vec<u64> = std::iter::once(&*a).chain(&others).map(|s| s.clock.next_peak.0 / g - 1).collect();
    let counted: Vec<Counted> = parts.iter().map(|p| (&p.peaks[..], &p.moves[..])).collect();
    let top = peak(&counted, &last);
    let of = std::mem::take(&mut parts[0].of);
    // what is left of the others once joined goes as soon as it is (the join's peak is the whole fabric's
    // tables beside the parts')
    a.split.in_flight_elsewhere = others.iter().map(|o| o.pkts.live() as u64).sum();
    for o in others.iter_mut() {
        o.pkts = Default::default();
        o.q = Default::default();
    }
    canonical_ids(a, &mut others);
    // the rows of part k's table follow those of the parts before it
    let mut base = vec![0u32; n];
    for k in 1..n {
        base[k] = base[k - 1] + if k == 1 { a.rec.flows.len() } else { others[k - 2].rec.flows.len() } as u32;
    }
    for o in others.iter_mut() {
        let mut rk = std::mem::take(&mut o.order.row_keys);
        a.order.row_keys.append(&mut rk);
        a.rec.samples.append(std::mem::take(&mut o.rec.samples));
        a.rec.counters.add(&o.rec.counters);
        a.rec.active_measured += o.rec.active_measured;
    }
    a.rec.counters.max_packets_in_flight = top;
    // each port's state from its node's part, numbered globally again
    let fabs: Vec<&crate::fabric::Fabric> = std::iter::once(&a.fab).chain(others.iter().map(|o| &o.fab)).collect();
    let joined = crate::fabric::Fabric::joined_ports(&fabs, &of);
    a.fab.set_whole(joined);
    for o in others.iter_mut() {
        let f = &mut o.fab;
        (f.ports, f.pfc, f.markers, f.port_ctr, f.tx_count) = Default::default();
    }
    // a shared-buffer switch's MMU from the part that holds the switch (its books match that part's queues)
    for (n, m) in a.fab.mmu.iter_mut().enumerate() {
        let k = of[n] as usize;
        if k != 0 {
            *m = others[k - 1].fab.mmu[n].clone();
        }
    }
    // the PFC reports in the order the ordinary run makes them (each sweep's by port, then its deadlock
    // report; a packet's after the sweep of its time)
    for o in others.iter_mut() {
        let mut events = std::mem::take(&mut o.rec.pfc_events);
        a.rec.pfc_events.append(&mut events);
    }
    a.rec.pfc_events.sort_by_key(|e| e.order);
    for o in others.iter_mut() {
        a.rec.flows.append(std::mem::take(&mut o.rec.flows));
    }
    // transfers: the owner's copy, with the receiver's fields from the receiver's part
    let arenas: Vec<&StripedArena<Transfer>> = std::iter::once(&a.hosts.transfers).chain(others.iter().map(|o| &o.hosts.transfers)).collect();
    let transfers = join_striped(&arenas, &of, |t, rcv| {
        if let Some(r) = rcv {
            t.rcv = r.rcv.clone();
            (t.rcv_done, t.rcv_open, t.del_token, t.del_event_at) = (r.rcv_done, r.rcv_open, r.del_token, r.del_event_at);
        }
        if t.row != NO {
            t.row += base[of[t.flow_receiver() as usize] as usize];
        }
    });
    a.hosts.transfers = whole(transfers);
    for o in others.iter_mut() {
        o.hosts.transfers = Default::default();
    }
    // flows: the owner's record, with the measurement window's snapshots from the part that receives its
    // data
    let arenas: Vec<&StripedArena<App>> = std::iter::once(&a.hosts.apps).chain(others.iter().map(|o| &o.hosts.apps)).collect();
    let apps = join_striped(&arenas, &of, |x, rcv| {
        if let Some(r) = rcv {
            (x.win_base, x.win_end) = (r.win_base, r.win_end);
        }
    });
    a.hosts.apps = whole(apps);
    for o in others.iter_mut() {
        o.hosts.apps = Default::default();
    }
    for o in &others {
        for f in o.hosts.workflows.slots().iter().filter(|f| f.alive && f.measured) {
            a.hosts.workflows.alloc(f.clone());
        }
    }
    a.now = now;
    a.clock.finished = true;
    a.finalize();
}

/// A striped arena joined from the parts' (`arenas`, in part order): each slot the owner's record (slot
/// `i` is part `i % N`'s), a live one handed to `fix` with the receiver's copy when another part (`of`:
/// per node, its part) holds it.
fn join_striped<T: Striped>(arenas: &[&StripedArena<T>], of: &[u8], mut fix: impl FnMut(&mut T, Option<&T>)) -> Vec<Option<T>> {
    let n = arenas.len();
    let len = arenas.iter().map(|s| s.len()).max().unwrap_or(0);
    (0..len as u32)
        .map(|i| {
            let owner = i as usize % n;
            let mut t = arenas[owner].try_get(i)?.clone();
            if t.alive() {
                let rcv = of[t.receiver() as usize] as usize;
                let copy = if rcv == owner { None } else { arenas[rcv].try_get(i).filter(|r| r.uid() == t.uid()) };
                fix(&mut t, copy);
            }
            Some(t)
        })
        .collect()
}

/// The arena of a whole run from the joined records (by index; an index no part allocated: a dead record).
fn whole<T: Striped>(joined: Vec<Option<T>>) -> StripedArena<T> {
    let Some(dead) = joined.iter().flatten().next().map(|t| t.dead()) else { return StripedArena::new() };
    StripedArena::from_slots(joined.into_iter().map(|t| t.unwrap_or_else(|| dead.clone())).collect())
}

/// Flow ids as the ordinary run with the node order gives them at its end (`Sim::canonical_flows`): each
/// part's ids (part `me` of `n` numbers its `c`-th flow `c * n + me`) mapped to their place among all
/// parts' flows by where they were opened; `a` keeps the joined keys in that order, so that its `finalize`
/// keeps the ids.
fn canonical_ids(a: &mut Sim, others: &mut [Sim]) {
    let n = others.len() + 1;
    let mut all: Vec<((u64, u32, u32), usize, usize)> = Vec::new();
    for (part, sim) in std::iter::once(&*a).chain(others.iter()).enumerate() {
        all.extend(sim.order.open_keys.iter().enumerate().map(|(i, &k)| (k, part, i)));
    }
    all.sort_unstable();
    let mut rank: Vec<Vec<u64>> = std::iter::once(&*a).chain(others.iter()).map(|s| vec![0u64; s.order.open_keys.len()]).collect();
    for (k, &(_, part, i)) in all.iter().enumerate() {
        rank[part][i] = k as u64;
    }
    let canon = |id: &mut u64| *id = rank[(*id % n as u64) as usize][(*id / n as u64) as usize];
    for sim in std::iter::once(&mut *a).chain(others.iter_mut()) {
        sim.rec.flows.id.iter_mut().for_each(canon);
        sim.rec.samples.flow.iter_mut().for_each(canon);
        sim.hosts.workflows.slots_mut().iter_mut().filter(|w| w.alive).for_each(|w| canon(&mut w.id));
        // a flow's record is its owner's: slot i is part i % n's
        sim.hosts.apps.own_mut().filter(|x| x.alive).for_each(|x| canon(&mut x.id));
    }
    a.order.open_keys = all.into_iter().map(|(k, _, _)| k).collect();
}
