//! The scenario schema: one definition, validated once; every error names its field.
//!
//! A scenario has four parts (TOML on the Python side, JSON across the binding):
//!
//! ```toml
//! [run]        # duration, seed, warmup, drain
//! [topology]   # kind plus that kind's keys, per-tier link rate / delay / buffers
//! [scheme]     # preset plus policy overrides ([scheme.tcp] for transport knobs)
//! [[workload]] # one table per traffic source: kind plus its keys
//! ```
//!
//! `schema` (the tables as serde reads them), `presets` (resolved schemes and the named presets),
//! `validate` (checks and resolution); this file: the error type and `parse_scenario`.

mod keys;
pub(crate) mod knobs;
mod presets;
mod schema;
mod sections;
mod suggest;
mod validate;

pub use keys::section_keys;
pub use knobs::{knob_table, Knob};
pub use knobs::{AlbOverrides, DibsOverrides, PfcOverrides, RedOverrides, SchemeConfig, TcpOverrides, TimelyOverrides};
pub use presets::*;
pub use schema::*;
pub use sections::{section_table, Field, PiasOverrides, RedTierOverrides, SharedBufferConfig, TopologyConfig, SECTIONS};
// the components' own parameter types, which the scenario maps into
pub use crate::mechanisms::dibs::DibsParams;
pub use crate::mechanisms::ecn::EcnMarking;
pub use crate::mechanisms::forwarding::{AlbChoice, AlbParams, LoadBalancing};
pub use crate::mechanisms::pfc::{PfcParams, WatchdogAction};
pub use crate::mechanisms::queue::{BufferSharing, Scheduling};

use crate::units::{Bytes, RateV};
use detailsim_engine::{Rate, Time};
use serde::Deserialize;
use std::fmt;

/// A scenario that failed validation: the dotted path of the field and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub msg: String,
}

impl fmt::Display for ConfigError {
    /// "field: message", and for a misspelt name the closest allowed one ("; did you mean `x`?", `suggest`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hint = suggest::hint(&self.msg);
        if self.field.is_empty() {
            write!(f, "{}{hint}", self.msg)
        } else {
            write!(f, "{}: {}{hint}", self.field, self.msg)
        }
    }
}

impl std::error::Error for ConfigError {}

pub fn err<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError { field: field.into(), msg: msg.into() })
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text shown in listings.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub run: RunConfig,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub scheme: SchemeConfig,
    #[serde(default)]
    pub workload: Vec<WorkloadConfig>,
    #[serde(default)]
    pub fault: Vec<FaultConfig>,
    /// The scheme `parse_scenario` resolved (preset plus knobs, PFC's priorities from the workloads), so that
    /// building the simulation does not resolve it again; None for a scenario not read by `parse_scenario`.
    #[serde(skip)]
    pub resolved_scheme: Option<Scheme>,
}

/// Parse and validate a scenario given as JSON (the binding's input format).
pub fn parse_scenario(json: &str) -> Result<Scenario, ConfigError> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = e.into_inner().to_string();
        // serde_json appends " at line L column C": meaningless for a scenario written in TOML.
        let msg = match inner.find(" at line ") {
            Some(i) => inner[..i].to_string(),
            None => inner,
        };
        // a path inside a workload, marked by its deserializer: join it to the workload's path
        if let Some(rest) = msg.strip_prefix(SUBPATH) {
            if let Some((sub, m)) = rest.split_once(SUBPATH) {
                let field = match (path.is_empty(), sub.is_empty()) {
                    (_, true) => path,
                    (true, false) => sub.to_string(),
                    (false, false) if sub.starts_with('[') => format!("{path}{sub}"),
                    (false, false) => format!("{path}.{sub}"),
                };
                return ConfigError { field, msg: m.to_string() };
            }
        }
        ConfigError { field: path, msg }
    })?;
    sc.topology.validate_keys()?;
    for (i, w) in sc.workload.iter().enumerate() {
        w.validate(i)?;
    }
    for (i, f) in sc.fault.iter().enumerate() {
        f.validate(i)?;
    }
    resolve_pias(&mut sc)?;
    let mut scheme = sc.scheme.resolve()?;
    if scheme.flow_control == FlowControl::Pfc && sc.scheme.pfc.priorities.is_none() {
        sc.scheme.pfc.priorities = Some(used_priorities(&sc, &scheme));
        sc.scheme.pfc.from_workloads = true;
        scheme = sc.scheme.resolve()?;
    }
    if sc.run.duration.0 == Time::ZERO {
        return err("run.duration", "must be positive");
    }
    if sc.run.warmup.0 >= sc.run.duration.0 {
        return err("run.warmup", "must be shorter than run.duration");
    }
    if matches!(sc.run.threads, Threads::N(n) if !(1..=MAX_PARTS).contains(&n)) {
        return err("run.threads", format!("must be 1 to {MAX_PARTS} or \"auto\" (N: the run split in N parts, each on its own thread)"));
    }
    if sc.run.event_order == EventOrder::Push {
        return err("run.event_order", "\"push\" was removed: every run keeps the node order (\"node\", the only value; leave the field out)");
    }
    if sc.run.max_events == Some(0) {
        return err("run.max_events", "must be at least 1 (or left out: no limit)");
    }
    if sc.run.max_wall.is_some_and(|d| d.0 < Time::from_ms(1)) {
        return err("run.max_wall", "must be at least 1ms");
    }
    if sc.run.sample.is_some_and(|d| d.0 < Time::from_us(1)) {
        return err("run.sample", "must be at least 1us");
    }
    sc.resolved_scheme = Some(scheme);
    Ok(sc)
}

/// The priorities the scenario's packets can carry: each workload's (every row of a flow list), and under
/// MLFQ tagging every level a flow may be demoted to below its own (at most 7). Priority 0 when there is no
/// workload. These are the lossless priorities of a PFC scheme that does not list its own.
pub fn used_priorities(sc: &Scenario, scheme: &Scheme) -> Vec<u8> {
    let mut mask = 0u8;
    for w in &sc.workload {
        match w {
            WorkloadConfig::Retrieval(c) => mask |= 1 << c.priority,
            WorkloadConfig::Background(c) => mask |= 1 << c.priority,
            WorkloadConfig::Sequential(c) => mask |= 1 << c.priority,
            WorkloadConfig::PartitionAggregate(c) => mask |= 1 << c.priority,
            WorkloadConfig::Incast(c) => mask |= 1 << c.priority,
            WorkloadConfig::Cdf(c) => mask |= 1 << c.priority,
            WorkloadConfig::Flows(f) => f.rows.iter().for_each(|r| mask |= 1 << r.priority.min(7)),
        }
    }
    if mask == 0 {
        mask = 1;
    }
    // MLFQ demotes a flow one level per threshold it passes: at most as many thresholds as the table's
    // queues less one when they are derived at build time
    let levels = match sc.scheme.pias.as_ref() {
        Some(c) if c.source.is_none() => c.queues.unwrap_or(8).saturating_sub(1) as u8,
        _ => scheme.tcp.mlfq.len() as u8,
    };
    let base = mask;
    for p in 0..8u8 {
        if base & (1 << p) != 0 {
            for k in 0..=levels {
                mask |= 1 << (p + k).min(7);
            }
        }
    }
    (0..8).filter(|p| mask & (1 << p) != 0).collect()
}

/// The presets `[scheme.pias]` configures.
pub const PIAS_PRESETS: &[&str] = &["pias", "detail_pias"];

/// The PIAS presets' demotion thresholds (`scheme.tcp.mlfq_thresholds`), with or without a `[scheme.pias]`
/// table (an absent table is the defaults: "optimal", 8 queues). Resolved here when the scenario says
/// enough: a list, or a method with a size distribution and a load (the table's own `cdf` / `points` /
/// `load`, else the first cdf workload's). Otherwise `source` stays None and the simulator derives them at
/// build time from the traffic every workload offers (`Sim::derive_mlfq`: flow lists, retrievals,
/// workflows, incasts and cdf workloads by rate). `scheme.tcp.mlfq_thresholds` given without a table is
/// used as it is. Other presets ignore the table.
fn resolve_pias(sc: &mut Scenario) -> Result<(), ConfigError> {
    let table = sc.scheme.pias.take();
    if !PIAS_PRESETS.contains(&sc.scheme.preset.as_str()) {
        return Ok(());
    }
    if table.is_none() && sc.scheme.tcp.mlfq_thresholds.is_some() {
        return Ok(());
    }
    let mut cfg = table.unwrap_or_default();
    cfg.check_keys()?;
    let queues = cfg.queues.unwrap_or(8);
    cfg.queues = Some(queues);
    let source = match cfg.thresholds.clone().unwrap_or(PiasThresholds::Method("optimal".into())) {
        PiasThresholds::List(v) => {
            let source =
                MlfqSource { method: "list".into(), queues: v.len() as u32 + 1, load: None, offered_load: None, from: "scheme.pias.thresholds".into() };
            sc.scheme.tcp.mlfq_thresholds = Some(v);
            Some(source)
        }
        PiasThresholds::Method(m) => {
            let w = sc.workload.iter().enumerate().find_map(|(i, w)| match w {
                WorkloadConfig::Cdf(c) => Some((i, c)),
                _ => None,
            });
            let points = cfg.points.as_deref().or(w.map(|(_, c)| c.points.as_slice()));
            let cdf = cfg.cdf.clone().or(w.and_then(|(_, c)| c.cdf.clone())).unwrap_or_default();
            let load = match (cfg.load, w.and_then(|(i, c)| c.load.map(|l| (l, i)))) {
                (Some(l), _) => Some((l, "scheme.pias.load".to_string())),
                (None, Some((l, i))) => Some((l, format!("workload[{i}].load"))),
                (None, None) => None,
            };
            match (points, load) {
                (Some(points), Some((load, field))) => {
                    if !(load > 0.0 && load < 1.0) {
                        return err(field, format!("a load in (0, 1) (the PIAS thresholds are derived from it), got {load}"));
                    }
                    let sol = crate::mechanisms::pias::solve(points, &cdf, load, queues, &m)
                        .map_err(|e| ConfigError { field: "scheme.pias.thresholds".into(), msg: e })?;
                    sc.scheme.tcp.mlfq_thresholds = Some(sol.thresholds_bytes.into_iter().map(Bytes).collect());
                    let from = match (&cfg.cdf, w) {
                        (Some(c), _) => format!("scheme.pias.cdf ({c})"),
                        (None, Some((i, _))) => format!("workload[{i}] (cdf {cdf})"),
                        (None, None) => "scheme.pias.points".into(),
                    };
                    Some(MlfqSource { method: m, queues, load: Some(load), offered_load: None, from })
                }
                (Some(_), None) if cfg.cdf.is_some() || cfg.points.is_some() => {
                    return err("scheme.pias.load", "required with scheme.pias.cdf: the load the thresholds are derived for, in (0, 1)");
                }
                // no distribution with a load here: the simulator derives it from the workloads' offered traffic
                _ => {
                    if m == "paper" {
                        return err("scheme.pias.thresholds", "\"paper\" (the PIAS authors' published thresholds) needs a websearch or datamining cdf workload with a load (or scheme.pias.cdf and scheme.pias.load)");
                    }
                    if cfg.load.is_some() {
                        return err(
                            "scheme.pias.load",
                            "given without a size distribution: add scheme.pias.cdf, or leave the load out to derive both from the workloads",
                        );
                    }
                    cfg.thresholds = Some(PiasThresholds::Method(m));
                    None
                }
            }
        }
    };
    cfg.source = source;
    sc.scheme.pias = Some(cfg);
    Ok(())
}

pub fn rate_of(v: Option<RateV>) -> Option<Rate> {
    v.map(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pias_scenario(pias: &str, preset: &str) -> String {
        format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": 4}},
                "scheme": {{"preset": "{preset}", "pias": {pias}}},
                "workload": [{{"kind": "cdf", "cdf": "test", "points": [[0, 0], [1000, 0.5], [100000, 1]], "load": 0.5}}]}}"#
        )
    }

    #[test]
    fn the_core_alone_resolves_pias_thresholds() {
        let pts = [[0.0, 0.0], [1000.0, 0.5], [100000.0, 1.0]];
        let sc = parse_scenario(&pias_scenario(r#"{"thresholds": "optimal", "queues": 4}"#, "pias")).unwrap();
        let want = crate::mechanisms::pias::solve(&pts, "test", 0.5, 4, "optimal").unwrap().thresholds_bytes;
        assert_eq!(want.len(), 3);
        assert_eq!(sc.scheme.tcp.mlfq_thresholds.unwrap().iter().map(|b| b.0).collect::<Vec<_>>(), want);
        // the table's own load overrides the workload's
        let sc = parse_scenario(&pias_scenario(r#"{"load": 0.9}"#, "pias")).unwrap();
        let want = crate::mechanisms::pias::solve(&pts, "test", 0.9, 8, "optimal").unwrap().thresholds_bytes;
        assert_eq!(sc.scheme.tcp.mlfq_thresholds.unwrap().iter().map(|b| b.0).collect::<Vec<_>>(), want);
        // other presets ignore the table
        assert!(parse_scenario(&pias_scenario(r#"{"queues": 4}"#, "dctcp")).unwrap().scheme.tcp.mlfq_thresholds.is_none());
        let e = parse_scenario(&pias_scenario(r#"{"queues": 9}"#, "pias")).unwrap_err();
        assert_eq!(e.field, "scheme.pias.queues");
        let e = parse_scenario(&pias_scenario(r#"{"thresholds": "best"}"#, "pias")).unwrap_err();
        assert_eq!(e.field, "scheme.pias.thresholds");
        let e = parse_scenario(&pias_scenario(r#"{"load": 1.5}"#, "pias")).unwrap_err();
        assert_eq!(e.field, "scheme.pias.load");
        let e = parse_scenario(&pias_scenario(r#"{"thresholds": 3}"#, "pias")).unwrap_err();
        assert_eq!(e.field, "scheme.pias.thresholds");
        assert!(e.msg.contains("a list of byte thresholds; got 3"), "{}", e.msg);
        let e = parse_scenario(&pias_scenario(r#"{"thresholds": ["10KB", "lots"]}"#, "pias")).unwrap_err();
        assert!(e.msg.starts_with("threshold 1: "), "{}", e.msg);
        let sc = parse_scenario(&pias_scenario(r#"{"thresholds": ["10KB", 20000]}"#, "pias")).unwrap();
        assert_eq!(sc.scheme.tcp.mlfq_thresholds.unwrap().iter().map(|b| b.0).collect::<Vec<_>>(), vec![10 * 1024, 20000]);
    }
    fn e(json: &str) -> String {
        parse_scenario(json).unwrap_err().to_string()
    }
    #[test]
    fn errors_name_the_field() {
        let m = e(r#"{"topology": {"kind": "fattree", "k": 4, "link_rate": "-1Gbps"}}"#);
        assert!(m.starts_with("topology.link_rate: "), "{m}");
        let m = e(r#"{"topology": {"kind": "fatree"}}"#);
        assert!(m.starts_with("topology.kind: unknown topology"), "{m}");
        let m = e(r#"{"topology": {"kind": "fattree", "bogus": 1}}"#);
        assert!(m.contains("bogus"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch", "k": 4}}"#);
        assert!(m.starts_with("topology.k: not a key"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "nope"}}"#);
        assert!(m.starts_with("scheme.preset: unknown scheme"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "run": {"duration": "10 parsecs"}}"#);
        assert!(m.starts_with("run.duration: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": -5, "sizes": ["2KB"]}]}"#);
        assert!(m.starts_with("workload[0].rate: "), "{m}");
        // paths inside a workload survive its tagged deserialization
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": 5, "sizes": ["2KB", {}]}]}"#);
        assert!(m.starts_with("workload[0].sizes[1]: invalid type: map"), "{m}");
        let m =
            e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": "x", "start_s": 0}]}]}"#);
        assert!(m.starts_with("workload[0].rows[0].size_bytes: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "retrieval", "rate": 5, "sizes": ["2KB"], "bogus": 1}]}"#);
        assert!(m.starts_with("workload[0].bogus: unknown field"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "nope"}]}"#);
        assert!(m.starts_with("workload[0].kind: unknown workload \"nope\"; allowed: retrieval"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"rate": 5}]}"#);
        assert!(m.starts_with("workload[0].kind: required"), "{m}");
    }
    #[test]
    fn periods_below_a_nanosecond_and_endless_runs_are_refused() {
        let base = r#"{"topology": {"kind": "single_switch"}, "#;
        let m = e(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"watchdog_timeout": "1ps"}}}}}}"#));
        assert!(m.starts_with("scheme.pfc.watchdog_timeout: must be at least 1ns"), "{m}");
        let m = e(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"deadlock_check": "999ps"}}}}}}"#));
        assert!(m.starts_with("scheme.pfc.deadlock_check: must be at least 1ns"), "{m}");
        // 0s switches the deadlock check off
        parse_scenario(&format!(r#"{base}"scheme": {{"preset": "detail", "pfc": {{"deadlock_check": "0s"}}}}}}"#)).unwrap();
        let m = e(&format!(
            r#"{base}"workload": [{{"kind": "retrieval", "rate": 5, "sizes": ["2KB"], "burst_period": "1ps", "burst_length": "1ps", "burst_rate": 9}}]}}"#
        ));
        assert!(m.starts_with("workload[0].burst_period: must be at least 1ns"), "{m}");
        let m = e(&format!(r#"{base}"run": {{"sample": "10ps"}}}}"#));
        assert!(m.starts_with("run.sample: must be at least 1us"), "{m}");
        let m = e(&format!(r#"{base}"run": {{"max_events": 0}}}}"#));
        assert!(m.starts_with("run.max_events: "), "{m}");
        let m = e(&format!(r#"{base}"run": {{"duration": "18000000s"}}}}"#));
        assert!(m.starts_with("run.duration: ") && m.contains("at most 1000000s"), "{m}");
        let m = e(&format!(r#"{base}"workload": [{{"kind": "retrieval", "rate": 5, "sizes": ["2KB", "inf"]}}]}}"#));
        assert!(m.starts_with("workload[0].sizes[1]: must be 1B to 2^50 B"), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch", "link_rate": "1000Tbps"}}"#);
        assert!(m.starts_with("topology.link_rate: ") && m.contains("at most 100Tbps"), "{m}");
    }
    #[test]
    fn flow_rows_name_their_csv_row() {
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "source": "f.csv",
            "rows": [{"src": 0, "dst": 1, "size_bytes": 10, "start_s": 0.0, "priority": 9}]}]}"#);
        assert!(m.starts_with("workload[0].file: f.csv row 1: priority: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "source": "flow.txt", "lines": [2, 7],
            "rows": [{"src": 0, "dst": 1, "size_bytes": 10, "start_s": 0.0}, {"src": 0, "dst": 1, "size_bytes": 10, "start_s": 0.0, "priority": 9}]}]}"#);
        assert!(m.starts_with("workload[0].file: flow.txt line 7: priority: "), "{m}");
        let m = e(r#"{"topology": {"kind": "single_switch"}, "workload": [{"kind": "flows", "rows": []}]}"#);
        assert!(m.starts_with("workload[0].rows: must list at least one flow"), "{m}");
    }
    #[test]
    fn presets_resolve() {
        let sc = parse_scenario(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "fh", "tcp": {"rto_min": "200ms"}}}"#).unwrap();
        let s = sc.scheme.resolve().unwrap();
        assert_eq!(s.tcp.rto_min, Time::from_ms(200));
        assert_eq!(s.tcp.rto_initial, Time::from_ms(200));
        // lowering the minimum of a 200 ms preset lowers the initial RTO with it
        let sc = parse_scenario(r#"{"topology": {"kind": "single_switch"}, "scheme": {"preset": "lps", "tcp": {"rto_min": "1ms"}}}"#).unwrap();
        assert_eq!(sc.scheme.resolve().unwrap().tcp.rto_initial, Time::from_ms(1));
        assert_eq!(s.load_balancing, LoadBalancing::FlowHash);
    }
}
