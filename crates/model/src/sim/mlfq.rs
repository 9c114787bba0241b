//! PIAS's thresholds from the traffic a scenario offers (when it gives no distribution with a load): each
//! workload's flow sizes and flows per second (`Workload::offered`), mixed (`mechanisms::pias::mixture`),
//! and the load they offer on the hosts' links, solved when the simulator is built (`Sim::derive_mlfq`).

use crate::config::{err, ConfigError};
use crate::sim::workload::{Arrivals, Mix, Workload};
use crate::sim::Sim;
use detailsim_engine::Time;

impl Workload {
    /// The flows this workload starts per second and how their sizes are distributed, for deriving PIAS's
    /// thresholds (`Sim::derive_mlfq`); None for the closed-loop background, which has no arrival rate.
    /// A retrieval counts its response, a sequential workflow each of its retrievals, a partition-aggregate
    /// workflow each of its fan-out's responses; a flow list its rows that start within the arrival window
    /// (`arrivals_stop`), over the span from the first to the last start (the whole window when they all
    /// start together); an incast its senders' shares over the window.
    pub fn offered(&self, window: Time) -> Option<(f64, crate::mechanisms::pias::Sizes)> {
        use crate::mechanisms::pias::Sizes;
        let mean_rate = |a: &Arrivals| match a.burst {
            Some((period, length, r)) if period > Time::ZERO => {
                let f = length.0.min(period.0) as f64 / period.0 as f64;
                a.rate * (1.0 - f) + r * f
            }
            _ => a.rate,
        };
        let probs = |m: &Mix| -> Vec<f64> { m.0.iter().scan(0.0, |prev, &c| Some(c - std::mem::replace(prev, c))).collect() };
        let atoms = |sizes: &[u64], m: &Mix| Sizes::Atoms(sizes.iter().copied().zip(probs(m)).collect());
        let secs = window.as_secs_f64().max(1e-12);
        Some(match self {
            Workload::Retrieval { arrivals, sizes, mix, rngs, .. } => (mean_rate(arrivals) * rngs.len() as f64, atoms(sizes, mix)),
            Workload::Sequential { arrivals, sizes, mix, rngs, length, .. } => (mean_rate(arrivals) * rngs.len() as f64 * *length as f64, atoms(sizes, mix)),
            Workload::PartitionAggregate { arrivals, fanouts, mix, rngs, size, .. } => {
                let fan: f64 = fanouts.iter().zip(probs(mix)).map(|(&f, p)| f as f64 * p).sum();
                (mean_rate(arrivals) * rngs.len() as f64 * fan, Sizes::Atoms(vec![(*size, 1.0)]))
            }
            Workload::Cdf { arrivals, points, rngs, .. } => {
                (mean_rate(arrivals) * rngs.len() as f64, Sizes::Cdf(points.iter().map(|&(x, p)| [x, p]).collect()))
            }
            Workload::Flows { rows, .. } => {
                let inside: Vec<&(Time, u32, u32, u64, u8, u64)> = rows.iter().filter(|r| r.0 < window).collect();
                let (Some(first), Some(last)) = (inside.first(), inside.last()) else { return Some((0.0, Sizes::Atoms(Vec::new()))) };
                let span = if last.0 > first.0 { (last.0 - first.0).as_secs_f64() } else { secs };
                (inside.len() as f64 / span, Sizes::Atoms(inside.iter().map(|r| (r.3, 1.0)).collect()))
            }
            Workload::Incast { senders, each, repeats_left, .. } => {
                (senders.len() as f64 * (*repeats_left as f64 + 1.0) / secs, Sizes::Atoms(vec![(*each, 1.0)]))
            }
            Workload::Background { .. } => return None,
        })
    }

    /// The workload's kind as a scenario names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Retrieval { .. } => "retrieval",
            Workload::Background { .. } => "background",
            Workload::Flows { .. } => "flows",
            Workload::Sequential { .. } => "sequential",
            Workload::PartitionAggregate { .. } => "partition_aggregate",
            Workload::Cdf { .. } => "cdf",
            Workload::Incast { .. } => "incast",
        }
    }
}

impl Sim {
    /// The PIAS presets' thresholds where the scenario left them to the traffic (`config::resolve_pias`
    /// set no `source`): the size distribution of every workload's flows weighted by its flows per second
    /// (`Workload::offered`, `pias::mixture`) and the load they offer on the hosts' links (their bytes per
    /// second over the hosts' link capacity, at most 0.99 for the solver), solved by the table's method.
    /// Records where the thresholds in force came from in `scheme.mlfq_source` in every case.
    pub(crate) fn derive_mlfq(&mut self, sc: &crate::config::Scenario) -> Result<(), ConfigError> {
        use crate::config::{MlfqSource, PiasThresholds};
        use crate::mechanisms::pias;
        let Some(cfg) = sc.scheme.pias.as_ref() else {
            if !self.scheme.tcp.mlfq.is_empty() {
                let queues = self.scheme.tcp.mlfq.len() as u32 + 1;
                self.scheme.mlfq_source =
                    Some(MlfqSource { method: "list".into(), queues, load: None, offered_load: None, from: "scheme.tcp.mlfq_thresholds".into() });
            }
            return Ok(());
        };
        if let Some(s) = &cfg.source {
            self.scheme.mlfq_source = Some(s.clone());
            return Ok(());
        }
        let method = match &cfg.thresholds {
            Some(PiasThresholds::Method(m)) => m.clone(),
            _ => "optimal".to_string(),
        };
        let queues = cfg.queues.unwrap_or(8);
        let window = self.clock.arrivals_stop.min(self.clock.duration);
        let mut parts = Vec::new();
        let mut names = Vec::new();
        for (i, w) in self.hosts.workloads.iter().enumerate() {
            if let Some((rate, sizes)) = w.offered(window).filter(|(r, _)| *r > 0.0) {
                names.push(format!("workload[{i}] ({})", w.kind()));
                parts.push((rate, sizes));
            }
        }
        let points = pias::mixture(&parts);
        if points.is_empty() {
            return err(
                "scheme.pias",
                format!(
                    "{} derives its MLFQ thresholds from the sizes of the flows the workloads start, and these start none at a known rate (a closed-loop background has none): add a cdf or flows workload, give [scheme.pias] cdf and load, or list the thresholds (scheme.pias.thresholds = [\"10KB\", ...])",
                    self.scheme.name
                ),
            );
        }
        let bytes_per_s: f64 = parts.iter().map(|(r, d)| r * d.mean()).sum();
        let capacity: f64 = self.fab.hosts.iter().map(|&h| self.fab.port_rate(self.fab.wiring.port_base[h as usize]).0 as f64).sum();
        let offered = 8.0 * bytes_per_s / capacity.max(1.0);
        let load = offered.clamp(1e-6, 0.99);
        let sol = pias::solve(&points, "", load, queues, &method).map_err(|e| ConfigError { field: "scheme.pias.thresholds".into(), msg: e })?;
        self.scheme.tcp.mlfq = sol.thresholds_bytes;
        self.hosts.tcp = std::sync::Arc::new(crate::config::TcpParams { mlfq: self.scheme.tcp.mlfq.clone(), ..(*self.hosts.tcp).clone() });
        self.scheme.mlfq_source =
            Some(MlfqSource { method, queues, load: Some(load), offered_load: Some(offered), from: format!("offered traffic of {}", names.join(", ")) });
        Ok(())
    }
}
