//! Traffic sources: Poisson data retrievals (optionally bursty), closed-loop background flows, listed
//! flows, sequential and partition-aggregate workflows, and incast.
//!
//! A *workflow* groups retrievals: a sequential one issues its retrievals one after another, a
//! partition-aggregate one issues them all at once and completes with the last response, an incast is a
//! partition-aggregate over a fixed set of senders. Workflows are recorded in the flow table with their
//! own class (`workflow/sequential`, `workflow/partition-aggregate/<fanout>`, `incast`) beside their
//! individual retrievals (`retrieval/<size>`).

use crate::config::{err, ConfigError, FrontendLayout, Pattern, WorkloadConfig};
use crate::sim::{purpose, App, Ev, Role, Sim, NO};
use crate::units::{fmt_bytes, Dur};
use detailsim_engine::{Stream, Time};

/// A Poisson process with an optional periodic burst: rate `burst_rate` during the first `burst_length`
/// of every `burst_period`, `rate` otherwise. Sampled exactly by integrating the piecewise-constant rate.
#[derive(Debug, Clone)]
pub struct Arrivals {
    pub rate: f64,
    pub burst: Option<(Time, Time, f64)>,
    pub start: Time,
    pub stop: Time,
}

impl Arrivals {
    fn new(rate: f64, bursts: (Option<Dur>, Option<Dur>, Option<f64>), start: Time, stop: Time) -> Self {
        let burst = match bursts {
            (Some(p), Some(l), Some(r)) => Some((p.0, l.0, r)),
            _ => None,
        };
        Arrivals { rate, burst, start, stop }
    }

    /// The next arrival after `t`, or None if it would fall at or after `stop`.
    pub fn next(&self, t: Time, r: &mut Stream) -> Option<Time> {
        let mut need = r.exp(1.0); // unit-rate exponential to spend
        let mut now = t.max(self.start);
        loop {
            if now >= self.stop {
                return None;
            }
            let (rate, seg_end) = match self.burst {
                None => (self.rate, self.stop),
                Some((p, l, br)) => {
                    let phase = Time((now.0 - self.start.0) % p.0);
                    if phase < l {
                        (br, now + (l - phase))
                    } else {
                        (self.rate, now + (p - phase))
                    }
                }
            };
            let span = (seg_end - now).as_secs_f64();
            if rate > 0.0 && need <= rate * span {
                let t = now + Time::from_secs_f64(need / rate);
                return (t < self.stop).then_some(t);
            }
            need -= rate * span;
            now = seg_end;
        }
    }
}

/// A discrete distribution over indices (cumulative weights).
#[derive(Debug, Clone)]
pub struct Mix(pub(crate) Vec<f64>);
impl Mix {
    fn new(n: usize, w: &Option<Vec<f64>>) -> Mix {
        let w = w.clone().unwrap_or_else(|| vec![1.0; n]);
        let tot: f64 = w.iter().sum();
        let mut acc = 0.0;
        Mix(w
            .iter()
            .map(|x| {
                acc += x / tot;
                acc
            })
            .collect())
    }
    fn pick(&self, r: &mut Stream) -> usize {
        let u = r.uniform();
        self.0.iter().position(|&c| u < c).unwrap_or(self.0.len() - 1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WfKind {
    Sequential,
    Parallel,
}

/// A workflow in progress.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub uid: u32,
    pub alive: bool,
    pub id: u64,
    pub class: u16,
    pub workload: u32,
    pub kind: WfKind,
    /// The front-end (requester) node and the source index it belongs to.
    pub frontend: u32,
    pub source: u32,
    pub start: Time,
    pub measured: bool,
    /// Sequential: retrievals still to issue after the current one. Parallel: responses outstanding.
    pub left: u32,
    pub bytes: u64,
    pub prio: u8,
    pub timeouts: u32,
    pub retransmits: u32,
}

impl Workflow {
    /// Its flow-table row (front end as both ends; `end` = u64::MAX while unfinished).
    pub fn record(&self, frontend: u32, end: u64) -> crate::stats::FlowRecord {
        crate::stats::FlowRecord {
            id: self.id,
            class: self.class,
            src: frontend,
            dst: frontend,
            size: self.bytes,
            prio: self.prio,
            start: self.start.0,
            end,
            timeouts: self.timeouts,
            retransmits: self.retransmits,
            ideal: 0,
            delivered: self.bytes,
            window: 0,
            input_id: 0,
        }
    }
}

pub enum Workload {
    Retrieval {
        arrivals: Arrivals,
        sizes: Vec<u64>,
        classes: Vec<u16>,
        mix: Mix,
        prio: u8,
        request_size: u64,
        requesters: Vec<u32>,
        responders: Vec<u32>,
        rngs: Vec<Stream>,
    },
    Background {
        class: u16,
        sizes: Vec<u64>,
        mix: Mix,
        prio: u8,
        per_server: u32,
        /// Indexed by host node id.
        rngs: Vec<Option<Stream>>,
    },
    Flows {
        class: u16,
        /// (start, src node, dst node, size, prio, input id), sorted by start.
        rows: Vec<(Time, u32, u32, u64, u8, u64)>,
        /// Per row, the next row with the same sender (NO: none). With the node order each sender walks
        /// its own rows, so no host's event schedules another host's.
        next_same_src: Vec<u32>,
    },
    Sequential {
        arrivals: Arrivals,
        length: u32,
        sizes: Vec<u64>,
        classes: Vec<u16>,
        mix: Mix,
        prio: u8,
        request_size: u64,
        wf_class: u16,
        requesters: Vec<u32>,
        responders: Vec<u32>,
        rngs: Vec<Stream>,
    },
    PartitionAggregate {
        arrivals: Arrivals,
        fanouts: Vec<u32>,
        wf_classes: Vec<u16>,
        mix: Mix,
        size: u64,
        class: u16,
        prio: u8,
        request_size: u64,
        requesters: Vec<u32>,
        responders: Vec<u32>,
        rngs: Vec<Stream>,
    },
    Cdf {
        arrivals: Arrivals,
        /// (bytes, cumulative probability)
        points: Vec<(f64, f64)>,
        classes: [u16; 3],
        prio: u8,
        /// client/server pattern: the client host and the request size
        client: Option<(u32, u64)>,
        rngs: Vec<Stream>,
    },
    Incast {
        receiver: u32,
        senders: Vec<u32>,
        each: u64,
        class: u16,
        wf_class: u16,
        repeats_left: u32,
        gap: Time,
        start: Time,
        prio: u8,
        request_size: u64,
    },
}

fn split(sim: &Sim, i: usize, pattern: Pattern, frontends: Option<u32>, layout: Option<FrontendLayout>) -> Result<(Vec<u32>, Vec<u32>), ConfigError> {
    let nh = sim.fab.hosts.len() as u32;
    Ok(match pattern {
        Pattern::AllToAll => {
            if frontends.is_some() {
                return err(format!("workload[{i}].frontends"), "only applies with pattern = \"front_to_back\"");
            }
            if layout.is_some() {
                return err(format!("workload[{i}].frontend_layout"), "only applies with pattern = \"front_to_back\"");
            }
            (sim.fab.hosts.clone(), sim.fab.hosts.clone())
        }
        Pattern::FrontToBack => {
            let f = frontends.unwrap_or(nh / 2);
            if f == 0 || f >= nh {
                return err(format!("workload[{i}].frontends"), format!("must be between 1 and {} (hosts - 1), got {f}", nh - 1));
            }
            let front: Vec<bool> = match layout.unwrap_or_default() {
                FrontendLayout::First => (0..nh).map(|j| j < f).collect(),
                // host j is a front-end when a multiple of nh / f falls in [j, j + 1): f evenly spaced hosts,
                // the first one host 0 (with f = nh / 2: every other server)
                FrontendLayout::Spread => (0..nh as u64).map(|j| (j * f as u64).div_ceil(nh as u64) < ((j + 1) * f as u64).div_ceil(nh as u64)).collect(),
            };
            let pick = |want: bool| sim.fab.hosts.iter().zip(&front).filter(|(_, &x)| x == want).map(|(&h, _)| h).collect::<Vec<u32>>();
            (pick(true), pick(false))
        }
    })
}

fn comp(w: usize, h: u32) -> u64 {
    ((w as u64) << 32) | h as u64
}

/// The most flows one run may be expected to start (each takes a flow-table row and live state): beyond
/// it the run would not fit in a workstation's memory, and it is refused before it starts.
pub const MAX_EXPECTED_FLOWS: f64 = 50e6;
/// The most closed-loop background flows one run may keep running at once.
pub const MAX_LIVE_BACKGROUND: u64 = 1_000_000;

impl Workload {
    /// An upper bound on the flows this workload starts in the run (Poisson sources at their highest rate).
    pub fn expected_flows(&self) -> f64 {
        let poisson = |a: &Arrivals, sources: usize| {
            let rate = a.burst.map_or(a.rate, |(_, _, r)| a.rate.max(r));
            rate * a.stop.saturating_sub(a.start).as_secs_f64() * sources as f64
        };
        match self {
            Workload::Retrieval { arrivals, rngs, .. } | Workload::Cdf { arrivals, rngs, .. } => poisson(arrivals, rngs.len()),
            Workload::Sequential { arrivals, rngs, length, .. } => poisson(arrivals, rngs.len()) * *length as f64,
            Workload::PartitionAggregate { arrivals, rngs, fanouts, .. } => poisson(arrivals, rngs.len()) * fanouts.iter().copied().max().unwrap_or(1) as f64,
            Workload::Flows { rows, .. } => rows.len() as f64,
            Workload::Incast { senders, repeats_left, .. } => senders.len() as f64 * (*repeats_left as f64 + 1.0),
            Workload::Background { .. } => 0.0,
        }
    }

    /// Refuse a workload (the `i`-th, configured by `cfg`) whose flows would not fit in memory.
    pub fn check_capacity(&self, i: usize, cfg: &WorkloadConfig) -> Result<(), ConfigError> {
        if let Workload::Background { per_server, rngs, .. } = self {
            let live = *per_server as u64 * rngs.iter().filter(|r| r.is_some()).count() as u64;
            if live > MAX_LIVE_BACKGROUND {
                return err(
                    format!("workload[{i}].flows_per_server"),
                    format!("{live} background flows at once; at most {MAX_LIVE_BACKGROUND} (each holds its connection's state)"),
                );
            }
        }
        let n = self.expected_flows();
        if n.is_nan() || n > MAX_EXPECTED_FLOWS {
            let what = match cfg {
                WorkloadConfig::Incast(_) => "repeats",
                WorkloadConfig::Cdf(_) => "load",
                _ => "rate",
            };
            return err(
                format!("workload[{i}].{what}"),
                format!("would start about {n:.3e} flows in this run; at most {MAX_EXPECTED_FLOWS:.0e} fit in memory (lower it, or shorten run.duration)"),
            );
        }
        Ok(())
    }

    pub fn new(sim: &mut Sim, i: usize, cfg: &WorkloadConfig) -> Result<Workload, ConfigError> {
        let nh = sim.fab.hosts.len() as u32;
        let stop_of = |sim: &Sim, s: Option<Dur>| s.map(|d| d.0).unwrap_or(Time::MAX).min(sim.clock.arrivals_stop);
        Ok(match cfg {
            WorkloadConfig::Retrieval(r) => {
                let (requesters, responders) = split(sim, i, r.pattern, r.frontends, r.frontend_layout)?;
                let sizes: Vec<u64> = r.sizes.iter().map(|b| b.0).collect();
                let classes = sizes.iter().map(|&s| sim.rec.classes.id(&format!("retrieval/{}", fmt_bytes(s)))).collect();
                let rngs = requesters.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect();
                Workload::Retrieval {
                    arrivals: Arrivals::new(r.rate, r.bursts(), r.start.0, stop_of(sim, r.stop)),
                    mix: Mix::new(sizes.len(), &r.weights),
                    sizes,
                    classes,
                    prio: r.priority,
                    request_size: r.request_size.0,
                    requesters,
                    responders,
                    rngs,
                }
            }
            WorkloadConfig::Background(b) => {
                let sizes: Vec<u64> = b.sizes.as_ref().map(|v| v.iter().map(|x| x.0).collect()).unwrap_or_else(|| vec![b.size.0]);
                if let Some(rate) = b.rate {
                    // open loop: Poisson arrivals per server of flows whose size is drawn from the mix (a step
                    // CDF through the sizes), each to a uniformly random other server
                    let mut order: Vec<(u64, f64)> = sizes.iter().copied().zip(b.weights.clone().unwrap_or_else(|| vec![1.0; sizes.len()])).collect();
                    order.sort_by_key(|x| x.0);
                    let (total, mut acc): (f64, f64) = (order.iter().map(|x| x.1).sum(), 0.0);
                    let points = order
                        .iter()
                        .flat_map(|&(s, w)| {
                            acc += w;
                            [(s as f64, (acc - w) / total), (s as f64, acc / total)]
                        })
                        .collect();
                    let rngs = sim.fab.hosts.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect();
                    return Ok(Workload::Cdf {
                        arrivals: Arrivals::new(rate, (None, None, None), Time::ZERO, sim.clock.arrivals_stop),
                        points,
                        classes: [sim.rec.classes.id("background"); 3],
                        prio: b.priority,
                        client: None,
                        rngs,
                    });
                }
                let mut rngs = vec![None; sim.fab.topo.nodes.len()];
                for &h in &sim.fab.hosts {
                    rngs[h as usize] = Some(sim.rng.stream(comp(i, h), purpose::BACKGROUND));
                }
                Workload::Background {
                    class: sim.rec.classes.id("background"),
                    mix: Mix::new(sizes.len(), &b.weights),
                    sizes,
                    prio: b.priority,
                    per_server: b.flows_per_server.unwrap_or(1),
                    rngs,
                }
            }
            WorkloadConfig::Flows(f) => {
                let mut rows = Vec::with_capacity(f.rows.len());
                for (j, r) in f.rows.iter().enumerate() {
                    for (v, k) in [(r.src, "src"), (r.dst, "dst")] {
                        if v >= nh {
                            return err(f.row_field(i, j, k), format!("host index must be below {nh} (the topology's host count), got {v}"));
                        }
                    }
                    rows.push((
                        Time::from_secs_f64(r.start_s),
                        sim.fab.hosts[r.src as usize],
                        sim.fab.hosts[r.dst as usize],
                        r.size_bytes,
                        r.priority,
                        r.id.unwrap_or(j as u64 + 1),
                    ));
                }
                rows.sort_by_key(|r| r.0);
                let mut next_same_src = vec![NO; rows.len()];
                let mut last: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
                for (j, r) in rows.iter().enumerate() {
                    if let Some(k) = last.insert(r.1, j) {
                        next_same_src[k] = j as u32;
                    }
                }
                Workload::Flows { class: sim.rec.classes.id(&f.class), rows, next_same_src }
            }
            WorkloadConfig::Sequential(q) => {
                let (requesters, responders) = split(sim, i, q.pattern, q.frontends, q.frontend_layout)?;
                let sizes: Vec<u64> = q.sizes.iter().map(|b| b.0).collect();
                let classes = sizes.iter().map(|&s| sim.rec.classes.id(&format!("retrieval/{}", fmt_bytes(s)))).collect();
                let rngs = requesters.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect();
                Workload::Sequential {
                    arrivals: Arrivals::new(q.rate, q.bursts(), q.start.0, stop_of(sim, q.stop)),
                    length: q.length,
                    mix: Mix::new(sizes.len(), &q.weights),
                    sizes,
                    classes,
                    prio: q.priority,
                    request_size: q.request_size.0,
                    wf_class: sim.rec.classes.id("workflow/sequential"),
                    requesters,
                    responders,
                    rngs,
                }
            }
            WorkloadConfig::PartitionAggregate(q) => {
                let (requesters, responders) = split(sim, i, q.pattern, q.frontends, q.frontend_layout)?;
                let most = *q.fanouts.iter().max().unwrap();
                let min_backends = responders.len() as u32 - (q.pattern == Pattern::AllToAll) as u32;
                if most > min_backends {
                    return err(format!("workload[{i}].fanouts"), format!("fan-out {most} exceeds the {min_backends} back-ends available"));
                }
                let rngs = requesters.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect();
                Workload::PartitionAggregate {
                    arrivals: Arrivals::new(q.rate, q.bursts(), q.start.0, stop_of(sim, q.stop)),
                    wf_classes: q.fanouts.iter().map(|f| sim.rec.classes.id(&format!("workflow/partition-aggregate/{f}"))).collect(),
                    mix: Mix::new(q.fanouts.len(), &q.weights),
                    fanouts: q.fanouts.clone(),
                    size: q.size.0,
                    class: sim.rec.classes.id(&format!("retrieval/{}", fmt_bytes(q.size.0))),
                    prio: q.priority,
                    request_size: q.request_size.0,
                    requesters,
                    responders,
                    rngs,
                }
            }
            WorkloadConfig::Cdf(c) => {
                let points: Vec<(f64, f64)> = c.points.iter().map(|a| (a[0], a[1])).collect();
                let mean = cdf_mean(&points);
                let rate = match (c.load, c.rate) {
                    (Some(load), _) => match c.load_tier.as_deref() {
                        None | Some("host") => {
                            let hr = sim.fab.port_rate(sim.fab.wiring.port_base[sim.fab.hosts[0] as usize]).0 as f64;
                            load * hr / (8.0 * mean.max(1.0))
                        }
                        Some(tier) => {
                            let (crossings, capacity) =
                                sim.fab.tier_crossings(tier).map_err(|m| ConfigError { field: format!("workload[{i}].load_tier"), msg: m })?;
                            // flows/s per host x hosts x bytes x crossings = load x tier capacity
                            load * capacity / (8.0 * mean.max(1.0) * crossings * sim.fab.hosts.len() as f64)
                        }
                    },
                    (_, Some(r)) => r,
                    _ => unreachable!("validated"),
                };
                let client = match c.client {
                    Some(k) if k >= nh => return err(format!("workload[{i}].client"), format!("host index must be below {nh}, got {k}")),
                    Some(_) if nh < 2 => return err(format!("workload[{i}].client"), "needs at least one other host as a server"),
                    Some(k) => Some((sim.fab.hosts[k as usize], c.request_size.unwrap_or_else(crate::config::d_request).0)),
                    None => None,
                };
                let rngs = match client {
                    // the client's link: the same rate formula, one arrival stream
                    Some((h, _)) => vec![sim.rng.stream(comp(i, h), purpose::ARRIVALS)],
                    None => sim.fab.hosts.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect(),
                };
                Workload::Cdf {
                    arrivals: Arrivals::new(rate, (None, None, None), c.start.0, stop_of(sim, c.stop)),
                    points,
                    classes: [sim.rec.classes.id("small"), sim.rec.classes.id("medium"), sim.rec.classes.id("large")],
                    prio: c.priority,
                    client,
                    rngs,
                }
            }
            WorkloadConfig::Incast(c) => {
                if c.receiver >= nh {
                    return err(format!("workload[{i}].receiver"), format!("host index must be below {nh}, got {}", c.receiver));
                }
                let n = c.senders.unwrap_or(nh - 1);
                if n > nh - 1 {
                    return err(format!("workload[{i}].senders"), format!("at most {} (the other hosts), got {n}", nh - 1));
                }
                let receiver = sim.fab.hosts[c.receiver as usize];
                let senders: Vec<u32> = sim.fab.hosts.iter().copied().filter(|&h| h != receiver).take(n as usize).collect();
                let each = c.total.0.div_ceil(n as u64);
                Workload::Incast {
                    receiver,
                    senders,
                    each,
                    class: sim.rec.classes.id(&format!("retrieval/{}", fmt_bytes(each))),
                    wf_class: sim.rec.classes.id("incast"),
                    repeats_left: c.repeats,
                    gap: c.gap.0,
                    start: c.start.0,
                    prio: c.priority,
                    request_size: c.request_size.0,
                }
            }
        })
    }
}

/// Mean of a piecewise-linear CDF given as (value, cumulative probability) points.
pub fn cdf_mean(points: &[(f64, f64)]) -> f64 {
    points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum()
}

/// Inverse-transform sample of a piecewise-linear CDF, rounded up to whole bytes (at least 1).
pub fn cdf_sample(points: &[(f64, f64)], u: f64) -> u64 {
    for w in points.windows(2) {
        let ((x0, p0), (x1, p1)) = (w[0], w[1]);
        if u < p1 && p1 > p0 {
            let x = x0 + (u - p0.max(0.0)).max(0.0) / (p1 - p0) * (x1 - x0);
            return (x.ceil() as u64).max(1);
        }
    }
    (points.last().unwrap().0.ceil() as u64).max(1)
}

/// Size buckets of the PIAS and pFabric evaluations: small (0, 100 KB], medium (100 KB, 10 MB], large.
pub fn size_bucket(bytes: u64) -> usize {
    if bytes <= 100 * 1024 {
        0
    } else if bytes <= 10 * 1024 * 1024 {
        1
    } else {
        2
    }
}

/// A uniformly random element of `set` other than `not` (if it is in the set).
fn pick_other(set: &[u32], not: u32, r: &mut Stream) -> u32 {
    let mine = set.binary_search(&not).ok();
    let n = set.len() as u64 - mine.is_some() as u64;
    let mut k = r.below(n);
    if let Some(m) = mine {
        if k >= m as u64 {
            k += 1;
        }
    }
    set[k as usize]
}

/// `k` distinct random elements of `set` other than `not` (partial Fisher-Yates).
fn pick_distinct(set: &[u32], not: u32, k: u32, r: &mut Stream) -> Vec<u32> {
    let mut pool: Vec<u32> = set.iter().copied().filter(|&x| x != not).collect();
    let k = (k as usize).min(pool.len());
    for j in 0..k {
        let m = j + r.below((pool.len() - j) as u64) as usize;
        pool.swap(j, m);
    }
    pool.truncate(k);
    pool
}

impl Workload {
    /// The host whose flows the workload's event for source `i` starts (the requester, the client, the
    /// flow row's sender, the incast receiver).
    pub(crate) fn source_host(&self, i: u32, hosts: &[u32]) -> u32 {
        match self {
            Workload::Retrieval { requesters, .. } | Workload::Sequential { requesters, .. } | Workload::PartitionAggregate { requesters, .. } => {
                requesters[i as usize]
            }
            Workload::Cdf { client: Some((c, _)), .. } => *c,
            Workload::Cdf { client: None, .. } => hosts[i as usize],
            Workload::Flows { rows, .. } => rows[i as usize].1,
            Workload::Incast { receiver, .. } => *receiver,
            Workload::Background { .. } => unreachable!("background workloads schedule no events"),
        }
    }
}

impl Sim {
    pub(crate) fn workload_start(&mut self, w: u32) {
        let now = self.now;
        let duration = self.clock.arrivals_stop;
        let mut evs: Vec<(Time, u32)> = Vec::new();
        // starts at a node: a part of a split run keeps those at its own nodes (decided after the match)
        let mut at_nodes: Vec<(Time, u32, u32)> = Vec::new();
        match &mut self.hosts.workloads[w as usize] {
            Workload::Retrieval { arrivals, rngs, .. }
            | Workload::Sequential { arrivals, rngs, .. }
            | Workload::PartitionAggregate { arrivals, rngs, .. }
            | Workload::Cdf { arrivals, rngs, .. } => {
                for (i, r) in rngs.iter_mut().enumerate() {
                    if let Some(t) = arrivals.next(arrivals.start, r) {
                        evs.push((t, i as u32));
                    }
                }
                // a part of a split run starts its own sources only (each source draws from its own stream)
                if self.is_part() {
                    evs.retain(|&(_, i)| self.owns(self.hosts.workloads[w as usize].source_host(i, &self.fab.hosts)));
                }
            }
            Workload::Background { per_server, .. } => {
                let n = *per_server;
                for h in self.fab.hosts.clone() {
                    if !self.owns(h) {
                        continue;
                    }
                    // (the host acts: its flows count as its own, and what it pushes (its first frames, due
                    // at other nodes too) is ordered as its own, as in its events)
                    self.set_acting(h + 1);
                    for _ in 0..n {
                        self.start_background(w, h);
                    }
                }
                self.set_acting(0);
            }
            Workload::Flows { rows, .. } => {
                // each sender's first row (a sender walks its own rows: `next_same_src`)
                let mut seen = std::collections::HashSet::new();
                for (j, r) in rows.iter().enumerate() {
                    let t = r.0.max(now);
                    if t < duration && seen.insert(r.1) {
                        at_nodes.push((t, j as u32, r.1));
                    }
                }
            }
            Workload::Incast { start, receiver, .. } => {
                if *start < duration {
                    at_nodes.push((*start, 0, *receiver));
                }
            }
        }
        evs.extend(at_nodes.into_iter().filter(|&(_, _, node)| self.owns(node)).map(|(t, i, _)| (t, i)));
        for (t, i) in evs {
            self.schedule(t, Ev::Workload { w, i });
        }
    }

    pub(crate) fn start_background(&mut self, w: u32, h: u32) {
        let Workload::Background { class, sizes, mix, prio, rngs, .. } = &mut self.hosts.workloads[w as usize] else { unreachable!() };
        let r = rngs[h as usize].as_mut().unwrap();
        let dst = pick_other(&self.fab.hosts, h, r);
        let size = sizes[mix.pick(r)];
        let (class, prio) = (*class, *prio);
        let app = self.open_app(w, class, h, dst, size, prio);
        self.start_transfer(app, Role::OneWay, h, dst, size, prio, None);
    }

    /// Issue one retrieval: a request from `requester` to `responder`, then the response.
    #[allow(clippy::too_many_arguments)]
    fn issue_retrieval(&mut self, w: u32, class: u16, requester: u32, responder: u32, size: u64, prio: u8, req: u64, wf: (u32, u32)) {
        let app = self.open_app(w, class, responder, requester, size, prio);
        // a measured workflow's retrievals are measured, also those issued after `run.duration`
        let inherit = wf.0 != NO && self.hosts.workflows.get(wf.0).measured && !self.hosts.apps.get(app).measured;
        if inherit {
            self.rec.active_measured += 1;
            self.rec.counters.flows_started += 1;
        }
        {
            let a = self.hosts.apps.get_mut(app);
            a.workflow = wf.0;
            a.workflow_uid = wf.1;
            a.request = req;
            a.measured |= inherit;
        }
        self.start_transfer(app, Role::Request, requester, responder, req, prio, None);
    }

    #[allow(clippy::too_many_arguments)]
    fn open_workflow(&mut self, w: u32, class: u16, kind: WfKind, frontend: u32, source: u32, left: u32, prio: u8) -> (u32, u32) {
        let uid = self.next_uid();
        let id = self.next_app_id();
        // incast repeats are closed loop: measured whenever they start after the warm-up
        let closed = matches!(self.hosts.workloads[w as usize], Workload::Incast { .. });
        let measured = self.measuring() || (closed && self.now >= self.clock.warmup);
        if measured {
            self.rec.active_measured += 1;
            self.rec.counters.flows_started += 1;
        }
        let slot = self.hosts.workflows.alloc(Workflow {
            uid,
            alive: true,
            id,
            class,
            workload: w,
            kind,
            frontend,
            source,
            start: self.now,
            measured,
            left,
            bytes: 0,
            prio,
            timeouts: 0,
            retransmits: 0,
        });
        (slot, uid)
    }

    pub(crate) fn workload_event(&mut self, w: u32, i: u32) {
        let now = self.now;
        let mut next: Option<Time> = None;
        match &mut self.hosts.workloads[w as usize] {
            Workload::Retrieval { arrivals, sizes, classes, mix, prio, request_size, requesters, responders, rngs } => {
                let r = &mut rngs[i as usize];
                let requester = requesters[i as usize];
                let responder = pick_other(responders, requester, r);
                let si = mix.pick(r);
                let (size, class, prio, req) = (sizes[si], classes[si], *prio, *request_size);
                next = arrivals.next(now, r);
                self.issue_retrieval(w, class, requester, responder, size, prio, req, (NO, 0));
            }
            Workload::Sequential { arrivals, length, prio, wf_class, requesters, rngs, .. } => {
                let r = &mut rngs[i as usize];
                next = arrivals.next(now, r);
                let (frontend, left, prio, class) = (requesters[i as usize], *length - 1, *prio, *wf_class);
                let wf = self.open_workflow(w, class, WfKind::Sequential, frontend, i, left, prio);
                self.sequential_step(w, wf);
            }
            Workload::PartitionAggregate { arrivals, fanouts, wf_classes, mix, size, class, prio, request_size, requesters, responders, rngs } => {
                let r = &mut rngs[i as usize];
                next = arrivals.next(now, r);
                let frontend = requesters[i as usize];
                let k = mix.pick(r);
                let backends = pick_distinct(responders, frontend, fanouts[k], r);
                let (wfc, size, class, prio, req) = (wf_classes[k], *size, *class, *prio, *request_size);
                let wf = self.open_workflow(w, wfc, WfKind::Parallel, frontend, i, backends.len() as u32, prio);
                for b in backends {
                    self.issue_retrieval(w, class, frontend, b, size, prio, req, wf);
                }
            }
            Workload::Incast { receiver, senders, each, class, wf_class, repeats_left, prio, request_size, .. } => {
                *repeats_left -= 1;
                let (rcv, snd, each, class, wfc, prio, req) = (*receiver, senders.clone(), *each, *class, *wf_class, *prio, *request_size);
                let wf = self.open_workflow(w, wfc, WfKind::Parallel, rcv, 0, snd.len() as u32, prio);
                for s in snd {
                    self.issue_retrieval(w, class, rcv, s, each, prio, req, wf);
                }
            }
            Workload::Cdf { arrivals, points, classes, prio, client: Some((client, req)), rngs } => {
                let r = &mut rngs[i as usize];
                next = arrivals.next(now, r);
                let server = pick_other(&self.fab.hosts, *client, r);
                let size = cdf_sample(points, r.uniform());
                let (class, prio, client, req) = (classes[size_bucket(size)], *prio, *client, *req);
                self.issue_retrieval(w, class, client, server, size, prio, req, (NO, 0));
            }
            Workload::Cdf { arrivals, points, classes, prio, client: None, rngs } => {
                let r = &mut rngs[i as usize];
                next = arrivals.next(now, r);
                let src = self.fab.hosts[i as usize];
                let dst = pick_other(&self.fab.hosts, src, r);
                let size = cdf_sample(points, r.uniform());
                let (class, prio) = (classes[size_bucket(size)], *prio);
                let app = self.open_app(w, class, src, dst, size, prio);
                self.start_transfer(app, Role::OneWay, src, dst, size, prio, None);
            }
            Workload::Flows { class, rows, next_same_src } => {
                let (_, src, dst, size, prio, tag) = rows[i as usize];
                let class = *class;
                let next = next_same_src[i as usize];
                if let Some(t) = rows.get(next as usize).map(|r| r.0) {
                    if t < self.clock.arrivals_stop {
                        self.schedule(t.max(now), Ev::Workload { w, i: next });
                    }
                }
                let app = self.open_app(w, class, src, dst, size, prio);
                self.hosts.apps.get_mut(app).tag = tag;
                self.start_transfer(app, Role::OneWay, src, dst, size, prio, None);
            }
            Workload::Background { .. } => {}
        }
        if let Some(t) = next {
            self.schedule(t, Ev::Workload { w, i });
        }
    }

    /// Issue the next retrieval of a sequential workflow.
    fn sequential_step(&mut self, w: u32, wf: (u32, u32)) {
        let (frontend, source) = {
            let f = self.hosts.workflows.get(wf.0);
            (f.frontend, f.source)
        };
        let Workload::Sequential { sizes, classes, mix, prio, request_size, responders, rngs, .. } = &mut self.hosts.workloads[w as usize] else {
            unreachable!()
        };
        let r = &mut rngs[source as usize];
        let responder = pick_other(responders, frontend, r);
        let si = mix.pick(r);
        let (size, class, prio, req) = (sizes[si], classes[si], *prio, *request_size);
        self.issue_retrieval(w, class, frontend, responder, size, prio, req, wf);
    }

    /// An application flow of workload `w` finished: closed-loop sources start the next one, workflows
    /// advance.
    pub(crate) fn flow_finished(&mut self, a: &App, timeouts: u32, retransmits: u32) {
        let w = a.workload;
        if let Workload::Background { .. } = self.hosts.workloads[w as usize] {
            // the sender starts the next flow when it closes (`sender_close`)
            return;
        }
        if a.workflow == NO {
            return;
        }
        let wfs = self.hosts.workflows.get_mut(a.workflow);
        if !wfs.alive || wfs.uid != a.workflow_uid {
            return;
        }
        wfs.bytes += a.size;
        wfs.timeouts += timeouts;
        wfs.retransmits += retransmits;
        let more = match wfs.kind {
            WfKind::Sequential => {
                if wfs.left > 0 {
                    wfs.left -= 1;
                    true
                } else {
                    false
                }
            }
            WfKind::Parallel => {
                wfs.left -= 1;
                if wfs.left > 0 {
                    return;
                }
                false
            }
        };
        let wf = (a.workflow, a.workflow_uid);
        if more {
            self.sequential_step(w, wf);
            return;
        }
        // the workflow is complete
        let f = self.hosts.workflows.get(wf.0).clone();
        if f.measured {
            let fe = self.host_index(f.frontend);
            let r = f.record(fe, self.now.0);
            self.push_row(&r);
            self.rec.counters.flows_completed += 1;
            self.rec.active_measured -= 1;
        }
        self.hosts.workflows.get_mut(wf.0).alive = false;
        self.hosts.workflows.release(wf.0);
        if let Workload::Incast { repeats_left, gap, .. } = &self.hosts.workloads[w as usize] {
            if *repeats_left > 0 {
                let at = self.now + *gap;
                self.schedule(at, Ev::Workload { w, i: 0 });
            }
        }
    }

    /// Unfinished measured workflows, for the end of the run.
    pub(crate) fn open_workflows(&self) -> Vec<Workflow> {
        let mut v: Vec<Workflow> = self.hosts.workflows.slots().iter().filter(|f| f.alive && f.measured).cloned().collect();
        v.sort_by_key(|f| f.id);
        v
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
