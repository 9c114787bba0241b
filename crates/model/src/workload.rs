//! Traffic sources: Poisson data retrievals, closed-loop background flows, and listed flows.

use crate::config::{err, ConfigError, Pattern, WorkloadConfig};
use crate::sim::{purpose, Ev, Role, Sim};
use crate::units::fmt_bytes;
use detailsim_engine::{Stream, Time};

pub enum Workload {
    Retrieval {
        rate: f64,
        sizes: Vec<u64>,
        classes: Vec<u16>,
        cum: Vec<f64>,
        prio: u8,
        request_size: u64,
        requesters: Vec<u32>,
        responders: Vec<u32>,
        rngs: Vec<Stream>,
        start: Time,
        stop: Time,
    },
    Background {
        class: u16,
        size: u64,
        prio: u8,
        per_server: u32,
        /// Indexed by host node id.
        rngs: Vec<Option<Stream>>,
    },
    Flows {
        class: u16,
        /// (start, src node, dst node, size, prio), sorted by start.
        rows: Vec<(Time, u32, u32, u64, u8)>,
    },
}

impl Workload {
    pub fn new(sim: &mut Sim, i: usize, cfg: &WorkloadConfig) -> Result<Workload, ConfigError> {
        let nh = sim.hosts.len() as u32;
        let comp = |w: usize, h: u32| ((w as u64) << 32) | h as u64;
        Ok(match cfg {
            WorkloadConfig::Retrieval(r) => {
                let (requesters, responders): (Vec<u32>, Vec<u32>) = match r.pattern {
                    Pattern::AllToAll => {
                        if r.frontends.is_some() {
                            return err(format!("workload[{i}].frontends"), "only applies with pattern = \"front_to_back\"");
                        }
                        (sim.hosts.clone(), sim.hosts.clone())
                    }
                    Pattern::FrontToBack => {
                        let f = r.frontends.unwrap_or(nh / 2);
                        if f == 0 || f >= nh {
                            return err(format!("workload[{i}].frontends"), format!("must be between 1 and {} (hosts - 1), got {f}", nh - 1));
                        }
                        (sim.hosts[..f as usize].to_vec(), sim.hosts[f as usize..].to_vec())
                    }
                };
                let w: Vec<f64> = r.weights.clone().unwrap_or_else(|| vec![1.0; r.sizes.len()]);
                let tot: f64 = w.iter().sum();
                let mut acc = 0.0;
                let cum = w.iter().map(|x| {
                    acc += x / tot;
                    acc
                }).collect();
                let sizes: Vec<u64> = r.sizes.iter().map(|b| b.0).collect();
                let classes = sizes.iter().map(|&s| sim.classes.id(&format!("retrieval/{}", fmt_bytes(s)))).collect();
                let rngs = requesters.iter().map(|&h| sim.rng.stream(comp(i, h), purpose::ARRIVALS)).collect();
                let stop = r.stop.map(|d| d.0).unwrap_or(Time::MAX).min(sim.duration);
                Workload::Retrieval {
                    rate: r.rate,
                    sizes,
                    classes,
                    cum,
                    prio: r.priority,
                    request_size: r.request_size.0,
                    requesters,
                    responders,
                    rngs,
                    start: r.start.0,
                    stop,
                }
            }
            WorkloadConfig::Background(b) => {
                let mut rngs = vec![None; sim.topo.nodes.len()];
                for &h in &sim.hosts {
                    rngs[h as usize] = Some(sim.rng.stream(comp(i, h), purpose::BACKGROUND));
                }
                Workload::Background { class: sim.classes.id("background"), size: b.size.0, prio: b.priority, per_server: b.flows_per_server, rngs }
            }
            WorkloadConfig::Flows(f) => {
                let mut rows = Vec::with_capacity(f.rows.len());
                for (j, r) in f.rows.iter().enumerate() {
                    for (v, k) in [(r.src, "src"), (r.dst, "dst")] {
                        if v >= nh {
                            return err(format!("workload[{i}].rows[{j}].{k}"), format!("host index must be below {nh} (the topology's host count), got {v}"));
                        }
                    }
                    rows.push((Time::from_secs_f64(r.start_s), sim.hosts[r.src as usize], sim.hosts[r.dst as usize], r.size_bytes, r.priority));
                }
                rows.sort_by_key(|r| r.0);
                Workload::Flows { class: sim.classes.id(&f.class), rows }
            }
        })
    }
}

impl Sim {
    pub(crate) fn workload_start(&mut self, w: u32) {
        let now = self.now;
        match &mut self.workloads[w as usize] {
            Workload::Retrieval { rate, rngs, start, stop, .. } => {
                let (rate, start, stop) = (*rate, *start, *stop);
                let mut evs = Vec::new();
                for (i, r) in rngs.iter_mut().enumerate() {
                    let t = start + Time::from_secs_f64(r.exp(1.0 / rate));
                    if t < stop {
                        evs.push((t, i as u32));
                    }
                }
                for (t, i) in evs {
                    self.schedule(t, Ev::Workload { w, i });
                }
            }
            Workload::Background { per_server, .. } => {
                let n = *per_server;
                for h in self.hosts.clone() {
                    for _ in 0..n {
                        self.start_background(w, h);
                    }
                }
            }
            Workload::Flows { rows, .. } => {
                if let Some(r) = rows.first() {
                    let t = r.0.max(now);
                    if t < self.duration {
                        self.schedule(t, Ev::Workload { w, i: 0 });
                    }
                }
            }
        }
    }

    fn start_background(&mut self, w: u32, h: u32) {
        let Workload::Background { class, size, prio, rngs, .. } = &mut self.workloads[w as usize] else { unreachable!() };
        let r = rngs[h as usize].as_mut().unwrap();
        let n = self.hosts.len() as u64;
        let hi = self.hosts.binary_search(&h).unwrap() as u64;
        let mut d = r.below(n - 1);
        if d >= hi {
            d += 1;
        }
        let (class, size, prio) = (*class, *size, *prio);
        let dst = self.hosts[d as usize];
        let app = self.open_app(w, class, h, dst, size, prio);
        self.start_transfer(app, Role::OneWay, h, dst, size, prio);
    }

    pub(crate) fn workload_event(&mut self, w: u32, i: u32) {
        let now = self.now;
        match &mut self.workloads[w as usize] {
            Workload::Retrieval { rate, sizes, classes, cum, prio, request_size, requesters, responders, rngs, stop, .. } => {
                let r = &mut rngs[i as usize];
                let requester = requesters[i as usize];
                // responder: uniform over the responders other than the requester
                let mine = responders.binary_search(&requester).ok();
                let n = responders.len() as u64 - mine.is_some() as u64;
                let mut k = r.below(n);
                if let Some(m) = mine {
                    if k >= m as u64 {
                        k += 1;
                    }
                }
                let responder = responders[k as usize];
                let u = r.uniform();
                let si = cum.iter().position(|&c| u < c).unwrap_or(cum.len() - 1);
                let (size, class, prio, req) = (sizes[si], classes[si], *prio, *request_size);
                let next = now + Time::from_secs_f64(r.exp(1.0 / *rate));
                let stop = *stop;
                let app = self.open_app(w, class, responder, requester, size, prio);
                self.start_transfer(app, Role::Request, requester, responder, req, prio);
                if next < stop {
                    self.schedule(next, Ev::Workload { w, i });
                }
            }
            Workload::Flows { class, rows } => {
                let (_, src, dst, size, prio) = rows[i as usize];
                let class = *class;
                let next = rows.get(i as usize + 1).map(|r| r.0);
                let app = self.open_app(w, class, src, dst, size, prio);
                self.start_transfer(app, Role::OneWay, src, dst, size, prio);
                if let Some(t) = next {
                    if t < self.duration {
                        self.schedule(t.max(now), Ev::Workload { w, i: i + 1 });
                    }
                }
            }
            Workload::Background { .. } => {}
        }
    }

    /// An application flow of workload `w` finished (closed-loop sources start the next one).
    pub(crate) fn flow_finished(&mut self, w: u32, src: u32, _dst: u32) {
        if let Workload::Background { .. } = self.workloads[w as usize] {
            if self.now < self.duration {
                self.start_background(w, src);
            }
        }
    }
}
