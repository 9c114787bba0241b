//! Validation and resolution: a scenario's tables checked field by field (every error names its field and
//! what is allowed), and `[scheme]` resolved against its preset.

use super::*;
use crate::units::{Bytes, Dur};
use detailsim_engine::Time;

impl FaultConfig {
    pub fn validate(&self, i: usize) -> Result<(), ConfigError> {
        let f = |k: &str| format!("fault[{i}].{k}");
        if !FAULT_KINDS.contains(&self.kind.as_str()) {
            return err(f("kind"), format!("unknown fault {:?}; allowed: {}", self.kind, FAULT_KINDS.join(", ")));
        }
        match &self.link {
            LinkSel::Nodes(v) if v.len() != 2 => {
                return err(f("link"), "must name the link's two nodes, e.g. [\"agg0_0\", \"core0\"], or a tier link, e.g. \"agg_core#0\"")
            }
            LinkSel::Tier(t) if !t.contains('#') => return err(f("link"), "a tier link is written \"<tier>#<index>\", e.g. \"agg_core#0\""),
            _ => {}
        }
        match (self.kind.as_str(), self.rate) {
            ("degrade", None) => return err(f("rate"), "required for a degraded link, e.g. \"100Mbps\""),
            ("degrade", _) => {}
            (_, Some(_)) => return err(f("rate"), "only applies to kind = \"degrade\""),
            _ => {}
        }
        Ok(())
    }
}

impl TopologyConfig {
    /// Shape keys this kind accepts, and its tier names.
    pub fn kind_keys(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
        Some(match kind {
            "detail128" | "testbed16" => (&[], &["host", "tor_agg", "agg_core"]),
            "fattree" => (&["k"], &["host", "tor_agg", "agg_core"]),
            "leaf_spine" => (&["leaves", "spines", "hosts_per_leaf", "host_rate", "uplink_rate"], &["host", "leaf_spine"]),
            "single_switch" => (&["hosts"], &["host"]),
            "dumbbell" => (&["left", "right", "bottleneck_rate", "bottleneck_delay"], &["host", "bottleneck"]),
            "custom" => (&["nodes", "links"], &["link"]),
            _ => return None,
        })
    }

    pub fn set_keys(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! chk {
            ($($f:ident),*) => { $( if self.$f.is_some() { v.push(stringify!($f)); } )* };
        }
        chk!(k, hosts, leaves, spines, hosts_per_leaf, left, right, host_rate, uplink_rate, bottleneck_rate, bottleneck_delay, nodes, links);
        v
    }

    pub fn validate_keys(&self) -> Result<(), ConfigError> {
        let Some((keys, tiers)) = Self::kind_keys(&self.kind) else {
            return err("topology.kind", format!("unknown topology {:?}; allowed: {}", self.kind, TOPOLOGY_KINDS.join(", ")));
        };
        for k in self.set_keys() {
            if !keys.contains(&k) {
                let mut allowed: Vec<&str> = keys.to_vec();
                allowed.extend(TopologyConfig::common_keys());
                return err(format!("topology.{k}"), format!("not a key of topology kind {:?}; its keys: {}", self.kind, allowed.join(", ")));
            }
        }
        for t in self.tiers.keys() {
            if !tiers.contains(&t.as_str()) {
                return err(format!("topology.tiers.{t}"), format!("unknown tier for topology kind {:?}; its tiers: {}", self.kind, tiers.join(", ")));
            }
        }
        self.check_keys()?;
        if let Some(sb) = &self.shared_buffer {
            if sb.size.is_none() {
                return err("topology.shared_buffer.size", "required: the pool's bytes per switch (e.g. \"4MB\")");
            }
            sb.check_keys()?;
        }
        Ok(())
    }
}

impl SchemeConfig {
    /// Set on `s` every knob this table sets (`knobs.rs`, each checked), its sub-tables' and `[scheme.red]`'s:
    /// what a scenario does to its preset, and a preset to the base scheme.
    pub(crate) fn apply_overrides(&self, s: &mut Scheme) -> Result<(), ConfigError> {
        self.apply(s)?;
        self.apply_tables(s)?;
        self.red.apply_tiers(&mut s.red)?;
        s.red.check()
    }

    /// The scheme: the preset, with every knob the scenario sets applied (`knobs.rs`), then the checks
    /// that relate two knobs.
    pub fn resolve(&self) -> Result<Scheme, ConfigError> {
        let Some(p) = preset(&self.preset) else {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            return err("scheme.preset", format!("unknown scheme {:?}; allowed: {}", self.preset, names.join(", ")));
        };
        let mut s = p.build();
        self.apply_overrides(&mut s)?;
        s.pfc.eight_first = self.pfc.from_workloads;
        // Under PFC a full ingress buffer never meets an arrival (pauses stop the sender first), so
        // priority_eviction changes nothing there: a scenario can set it once for its tail-drop baseline
        // and still run DeTail.
        if s.priority_eviction && s.ingress_sharing != BufferSharing::Shared {
            return err(
                "scheme.priority_eviction",
                format!(
                    "evicts only in a shared ingress buffer, and scheme.ingress_sharing is {} (set it to \"shared\", or priority_eviction = false)",
                    serde_json::to_string(&s.ingress_sharing).unwrap_or_default()
                ),
            );
        }
        if s.scheduling != Scheduling::StrictPriority && s.flow_control == FlowControl::Pfc {
            return err("scheme.scheduling", "las and pfabric scheduling do not combine with PFC (pauses are per priority)");
        }
        if s.alb.t2 < s.alb.t1 {
            return err("scheme.alb.t2", format!("must be at least t1 ({} B)", s.alb.t1));
        }
        if let (Some(p), Some(u)) = (s.pfc.pause_threshold, s.pfc.unpause_threshold) {
            if u >= p {
                return err("scheme.pfc.unpause_threshold", format!("must be below the pause threshold ({p} B)"));
            }
        }
        let (o, t) = (&self.tcp, &mut s.tcp);
        if t.rwnd < t.mss as u64 {
            return err("scheme.tcp.rwnd", "must be at least one MSS");
        }
        if o.rto_min.is_some() && o.rto_initial.is_none() {
            // the initial RTO follows the minimum unless it is set too
            t.rto_initial = t.rto_min;
        }
        if t.rto_max < t.rto_min {
            return err("scheme.tcp.rto_max", "must be at least rto_min");
        }
        Ok(s)
    }
}

impl FlowsConfig {
    /// The field an error about row `j`'s column `k` names: the CSV file and row, or the dotted path.
    pub fn row_field(&self, i: usize, j: usize, k: &str) -> String {
        match (&self.source, self.lines.as_ref().and_then(|l| l.get(j))) {
            (Some(src), Some(line)) => format!("workload[{i}].file: {src} line {line}: {k}"),
            (Some(src), None) => format!("workload[{i}].file: {src} row {}: {k}", j + 1),
            (None, _) => format!("workload[{i}].rows[{j}].{k}"),
        }
    }
}

pub(crate) fn check_rate(f: &dyn Fn(&str) -> String, rate: f64, what: &str) -> Result<(), ConfigError> {
    if !(rate > 0.0 && rate.is_finite()) {
        return err(f("rate"), format!("must be a positive number of {what} per second, got {rate}"));
    }
    Ok(())
}

pub(crate) fn check_mix(f: &dyn Fn(&str) -> String, n: usize, weights: &Option<Vec<f64>>, what: &str) -> Result<(), ConfigError> {
    if let Some(w) = weights {
        if w.len() != n {
            return err(f("weights"), format!("must have one weight per {what} ({n} {what}s, {} weights)", w.len()));
        }
        if w.iter().any(|x| !(*x >= 0.0 && x.is_finite())) || w.iter().sum::<f64>() <= 0.0 {
            return err(f("weights"), "weights must be non-negative with a positive sum");
        }
    }
    Ok(())
}

pub(crate) fn check_prio(f: &dyn Fn(&str) -> String, p: u8) -> Result<(), ConfigError> {
    if p > 7 {
        return err(f("priority"), format!("must be 0 (highest) to 7 (lowest), got {p}"));
    }
    Ok(())
}

pub(crate) fn check_burst(f: &dyn Fn(&str) -> String, (period, length, rate): (Option<Dur>, Option<Dur>, Option<f64>)) -> Result<(), ConfigError> {
    match (period, length, rate) {
        (None, None, None) => Ok(()),
        (Some(p), Some(l), Some(r)) => {
            if p.0 < Time::from_ns(1) {
                return err(f("burst_period"), "must be at least 1ns");
            }
            if l.0 > p.0 {
                return err(f("burst_length"), "must not exceed burst_period");
            }
            if !(r >= 0.0 && r.is_finite()) {
                return err(f("burst_rate"), format!("must be a non-negative number per second, got {r}"));
            }
            Ok(())
        }
        _ => err(f("burst_period"), "burst_period, burst_length and burst_rate go together"),
    }
}

pub(crate) fn check_transfer(field: String, b: u64) -> Result<(), ConfigError> {
    if b == 0 || b > MAX_TRANSFER {
        return err(field, format!("must be 1B to 2^50 B (1024 TB), got {}", if b == u64::MAX { "inf".into() } else { format!("{b}B") }));
    }
    Ok(())
}

pub(crate) fn check_sizes(f: &dyn Fn(&str) -> String, sizes: &[Bytes]) -> Result<(), ConfigError> {
    if sizes.is_empty() {
        return err(f("sizes"), "must list at least one size, e.g. [\"2KB\", \"8KB\", \"32KB\"]");
    }
    for (j, s) in sizes.iter().enumerate() {
        check_transfer(format!("{}[{j}]", f("sizes")), s.0)?;
    }
    Ok(())
}

/// The longest `server_time` a scenario may give (an hour: longer is a mistake, and keeps `now + time`
/// far from overflowing).
const MAX_SERVER_TIME: Time = Time::from_ms(3_600_000);

impl WorkloadConfig {
    /// The responder's time between a request's arrival and its response (`server_time`; zero for the
    /// kinds without requests, and for a `cdf` workload without `client`).
    pub fn server_time(&self) -> Time {
        match self {
            WorkloadConfig::Retrieval(r) => r.server_time.0,
            WorkloadConfig::Sequential(q) => q.server_time.0,
            WorkloadConfig::PartitionAggregate(q) => q.server_time.0,
            WorkloadConfig::Incast(c) => c.server_time.0,
            WorkloadConfig::Cdf(c) => c.server_time.map_or(Time::ZERO, |d| d.0),
            WorkloadConfig::Background(_) | WorkloadConfig::Flows(_) => Time::ZERO,
        }
    }

    pub fn validate(&self, i: usize) -> Result<(), ConfigError> {
        let f = |k: &str| format!("workload[{i}].{k}");
        if self.server_time() > MAX_SERVER_TIME {
            return err(f("server_time"), format!("must be at most 3600 s, got {} s", self.server_time().as_secs_f64()));
        }
        match self {
            WorkloadConfig::Retrieval(r) => {
                check_rate(&f, r.rate, "retrievals")?;
                check_sizes(&f, &r.sizes)?;
                check_mix(&f, r.sizes.len(), &r.weights, "size")?;
                check_prio(&f, r.priority)?;
                check_burst(&f, r.bursts())?;
                check_transfer(f("request_size"), r.request_size.0)?;
            }
            WorkloadConfig::Background(b) => {
                check_prio(&f, b.priority)?;
                if let Some(r) = b.rate {
                    check_rate(&f, r, "background flows")?;
                    if b.flows_per_server.is_some() {
                        return err(f("flows_per_server"), "goes with a closed loop; with `rate` (an open loop) leave it out");
                    }
                }
                check_transfer(f("size"), b.size.0)?;
                if let Some(s) = &b.sizes {
                    check_sizes(&f, s)?;
                    check_mix(&f, s.len(), &b.weights, "size")?;
                } else if b.weights.is_some() {
                    return err(f("weights"), "goes with sizes");
                }
            }
            WorkloadConfig::Sequential(q) => {
                check_rate(&f, q.rate, "workflows")?;
                check_sizes(&f, &q.sizes)?;
                check_mix(&f, q.sizes.len(), &q.weights, "size")?;
                check_prio(&f, q.priority)?;
                check_burst(&f, q.bursts())?;
                if q.length == 0 {
                    return err(f("length"), "must be at least 1 retrieval");
                }
            }
            WorkloadConfig::PartitionAggregate(q) => {
                check_rate(&f, q.rate, "workflows")?;
                if q.fanouts.is_empty() || q.fanouts.contains(&0) {
                    return err(f("fanouts"), "must list positive fan-outs, e.g. [10, 20, 40]");
                }
                check_mix(&f, q.fanouts.len(), &q.weights, "fan-out")?;
                check_prio(&f, q.priority)?;
                check_burst(&f, q.bursts())?;
                check_transfer(f("size"), q.size.0)?;
            }
            WorkloadConfig::Cdf(c) => {
                check_prio(&f, c.priority)?;
                match (c.load, c.rate) {
                    (Some(l), None) if l > 0.0 && l <= 1.0 => {}
                    (Some(l), None) => return err(f("load"), format!("must be in (0, 1], got {l}")),
                    (None, Some(r)) => check_rate(&f, r, "flows")?,
                    _ => return err(f("load"), "give either load (fraction of the host link rate) or rate (flows/s per host)"),
                }
                if c.points.len() < 2 {
                    return err(f("points"), "a CDF needs at least two points");
                }
                let mut last = (f64::NEG_INFINITY, -1.0);
                for (j, [x, p]) in c.points.iter().copied().map(|a| [a[0], a[1]]).enumerate() {
                    if !x.is_finite() || x < 0.0 || !(0.0..=1.0).contains(&p) || x < last.0 || p < last.1 {
                        return err(format!("workload[{i}].points[{j}]"), "sizes and probabilities must be non-decreasing, probabilities within 0..1");
                    }
                    last = (x, p);
                }
                if (last.1 - 1.0).abs() > 1e-9 {
                    return err(f("points"), "the last cumulative probability must be 1");
                }
                if !(last.0 >= 1.0 && last.0 <= MAX_TRANSFER as f64) {
                    return err(f("points"), format!("the largest size must be 1B to 2^50 B (1024 TB), got {} B", last.0));
                }
                if c.client.is_none() && c.request_size.is_some() {
                    return err(f("request_size"), "only applies with client (the client/server pattern)");
                }
                if c.client.is_none() && c.server_time.is_some() {
                    return err(f("server_time"), "only applies with client (the client/server pattern)");
                }
                if let Some(b) = c.request_size {
                    check_transfer(f("request_size"), b.0)?;
                }
                if c.client.is_some() && c.load_tier.as_deref().is_some_and(|t| t != "host") {
                    return err(f("load_tier"), "with client, load refers to the client's link (load_tier = \"host\" or unset)");
                }
            }
            WorkloadConfig::Incast(c) => {
                check_prio(&f, c.priority)?;
                check_transfer(f("total"), c.total.0)?;
                if c.repeats == 0 {
                    return err(f("repeats"), "must be at least 1");
                }
                if c.senders == Some(0) {
                    return err(f("senders"), "must be at least 1");
                }
            }
            WorkloadConfig::Flows(fl) => {
                if fl.rows.is_empty() {
                    return err(format!("workload[{i}].rows"), "must list at least one flow");
                }
                for (j, r) in fl.rows.iter().enumerate() {
                    let g = |k: &str| fl.row_field(i, j, k);
                    check_transfer(g("size_bytes"), r.size_bytes)?;
                    if !(r.start_s >= 0.0 && r.start_s.is_finite()) {
                        return err(g("start_s"), format!("must be a non-negative number of seconds, got {}", r.start_s));
                    }
                    if r.priority > 7 {
                        return err(g("priority"), format!("must be 0 (highest) to 7 (lowest), got {}", r.priority));
                    }
                    if r.src == r.dst {
                        return err(g("dst"), "must differ from src");
                    }
                }
            }
        }
        Ok(())
    }
}
