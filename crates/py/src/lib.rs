//! The thin PyO3 binding: a scenario as JSON in, columns and a summary out.

use detailsim_engine::Time;
use detailsim_model::{config::PRESETS, Sim};
mod agent;
mod live_io;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A column as little-endian bytes (numpy.frombuffer reads it without per-row Python objects).
fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

/// Large blocks on transparent huge pages (`detailsim_engine::hugepages`): a large fabric's arrays of
/// 2 MiB or more (its ports first) cost fewer page walks.
#[global_allocator]
static ALLOC: detailsim_engine::HugePages = detailsim_engine::HugePages;

create_exception!(_core, ScenarioError, PyValueError, "A scenario failed validation; the message names the field.");
create_exception!(_core, InternalError, PyRuntimeError, "The simulator core failed (a bug): the message says where.");

/// Where the last panic happened (file:line), recorded by the hook installed at import (in whichever
/// thread: a split run's part may fail on a thread of its own; the part that stops for it is not recorded).
static PANIC_AT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Run `f`, turning a panic of the core into InternalError (never a PanicException traceback).
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|e| {
        let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "unknown panic".into());
        let at = std::mem::take(&mut *PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()));
        Err(InternalError::new_err(if at.is_empty() { msg } else { format!("{msg} (at {at})") }))
    })
}

/// One simulation run. Build it from a scenario (JSON), advance it with `run_until`, read the results.
#[pyclass(module = "detailsim._core")]
struct Simulation {
    sim: Sim,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> {
        guarded(|| {
            // the tests' way to check that a panic of the core reaches the user as one line (exit code 3)
            if std::env::var_os("DETAILSIM_TEST_PANIC").is_some() {
                panic!("DETAILSIM_TEST_PANIC is set");
            }
            let sim = Sim::from_json(scenario_json).map_err(|e| ScenarioError::new_err(e.to_string()))?;
            Ok(Simulation { sim })
        })
    }

    /// The scenario built split in `parts` parts that take turns on the calling thread (what threads do, on
    /// one: `detailsim check-split`); an interaction between parts faster than the window raises
    /// InternalError naming it when the run gets there.
    #[staticmethod]
    #[pyo3(signature = (scenario_json, parts = 2))]
    fn in_parts(scenario_json: &str, parts: u8) -> PyResult<Self> {
        guarded(|| {
            let sim = detailsim_model::sim::parts::build_in_parts(scenario_json, parts, detailsim_model::sim::parts::Drive::Turns)
                .map_err(|e| ScenarioError::new_err(e.to_string()))?;
            Ok(Simulation { sim })
        })
    }

    /// A split run's window in seconds (the lookahead across the cuts), None if the run is not split.
    #[getter]
    fn split_window_s(&self) -> Option<f64> {
        self.sim.split_window().map(|w| w.0 as f64 * 1e-12)
    }

    /// How many parts the run is split in (1: not split).
    #[getter]
    fn parts(&self) -> usize {
        self.sim.split_parts()
    }

    /// Rounds a split run's parts ran (the windows they met after; 0: not split).
    #[getter]
    fn rounds(&self) -> u64 {
        self.sim.split_rounds()
    }

    /// A digest of the run's outcome without flow ids (`Sim::outcome_digest`).
    fn outcome_digest(&self) -> u64 {
        self.sim.outcome_digest()
    }

    /// Advance to simulated time `t_s` (seconds) or the end of the run; True when the run has ended.
    fn run_until(&mut self, py: Python<'_>, t_s: f64) -> PyResult<bool> {
        let limit = if t_s.is_finite() { Time::from_secs_f64(t_s.max(0.0)) } else { Time::MAX };
        let sim = &mut self.sim;
        py.detach(|| guarded(|| Ok(sim.run_until(limit))))
    }

    /// Current simulated time in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.now.as_secs_f64()
    }
    /// End of flow arrivals (run.duration) in seconds.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.sim.clock.duration.as_secs_f64()
    }
    /// Latest possible end (duration + drain) in seconds.
    #[getter]
    fn end_limit_s(&self) -> f64 {
        self.sim.clock.end_limit.as_secs_f64()
    }
    #[getter]
    fn finished(&self) -> bool {
        self.sim.clock.finished
    }

    /// Counters, per-port statistics and run facts as a JSON string.
    fn summary_json(&self) -> PyResult<String> {
        guarded(|| Ok(self.sim.summary_json()))
    }

    /// The per-flow table as a dict of little-endian byte buffers (read with numpy.frombuffer):
    /// id u64, class u16, src u32, dst u32, size u64, priority u8, start_ps u64, end_ps u64
    /// (2**64-1 for a flow still running when the run ended), timeouts u32, retransmits u32, ideal_ps u64
    /// (the flow alone in an idle fabric).
    fn flow_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.sim.rec.flows;
        let d = PyDict::new(py);
        d.set_item("id", PyBytes::new(py, &le(&f.id, u64::to_le_bytes)))?;
        d.set_item("class", PyBytes::new(py, &le(&f.class, u16::to_le_bytes)))?;
        d.set_item("src", PyBytes::new(py, &le(&f.src, u32::to_le_bytes)))?;
        d.set_item("dst", PyBytes::new(py, &le(&f.dst, u32::to_le_bytes)))?;
        d.set_item("size", PyBytes::new(py, &le(&f.size, u64::to_le_bytes)))?;
        d.set_item("priority", PyBytes::new(py, &f.priority))?;
        d.set_item("start_ps", PyBytes::new(py, &le(&f.start_ps, u64::to_le_bytes)))?;
        d.set_item("end_ps", PyBytes::new(py, &le(&f.end_ps, u64::to_le_bytes)))?;
        d.set_item("timeouts", PyBytes::new(py, &le(&f.timeouts, u32::to_le_bytes)))?;
        d.set_item("retransmits", PyBytes::new(py, &le(&f.retransmits, u32::to_le_bytes)))?;
        d.set_item("ideal_ps", PyBytes::new(py, &le(&f.ideal_ps, u64::to_le_bytes)))?;
        d.set_item("bytes_delivered", PyBytes::new(py, &le(&f.bytes_delivered, u64::to_le_bytes)))?;
        d.set_item("window_bytes", PyBytes::new(py, &le(&f.window_bytes, u64::to_le_bytes)))?;
        d.set_item("input_id", PyBytes::new(py, &le(&f.input_id, u64::to_le_bytes)))?;
        Ok(d)
    }

    /// The measurement window (from_s, to_s), if the scenario sets one.
    #[getter]
    fn window_s(&self) -> Option<(f64, f64)> {
        self.sim.clock.window.map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64()))
    }

    /// The time series (run.sample) as little-endian column buffers: ports (t_ps u64, port u32, ingress u64,
    /// egress u64; the port index follows the summary's port list) and flows (t_ps u64, id u64,
    /// delivered u64); None without sampling.
    fn sample_columns<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.sim.rec.sample_every.is_none() {
            return Ok(None);
        }
        let s = &self.sim.rec.samples;
        let d = PyDict::new(py);
        d.set_item("port_t_ps", PyBytes::new(py, &le(&s.port_t, u64::to_le_bytes)))?;
        d.set_item("port", PyBytes::new(py, &le(&s.port, u32::to_le_bytes)))?;
        d.set_item("ingress", PyBytes::new(py, &le(&s.ingress, u64::to_le_bytes)))?;
        d.set_item("egress", PyBytes::new(py, &le(&s.egress, u64::to_le_bytes)))?;
        d.set_item("flow_t_ps", PyBytes::new(py, &le(&s.flow_t, u64::to_le_bytes)))?;
        d.set_item("flow", PyBytes::new(py, &le(&s.flow, u64::to_le_bytes)))?;
        d.set_item("delivered", PyBytes::new(py, &le(&s.delivered, u64::to_le_bytes)))?;
        Ok(Some(d))
    }

    /// Capture packets (for pcap export): a JSON object {"flows": [ids], "nodes": [names], "ports": [[from, to]]}.
    fn set_trace(&mut self, spec_json: &str) -> PyResult<()> {
        guarded(|| {
            let spec: detailsim_model::sim::trace::TraceSpec =
                serde_json::from_str(spec_json).map_err(|e| ScenarioError::new_err(format!("--pcap-filter: {e}")))?;
            self.sim.set_trace(&spec).map_err(|e| ScenarioError::new_err(format!("--pcap-filter: {e}")))
        })
    }

    /// The captured frames as little-endian column buffers (see detailsim.pcap), plus node names.
    fn trace_columns<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(t) = &self.sim.rec.trace else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("t_ps", PyBytes::new(py, &le(&t.t_ps, u64::to_le_bytes)))?;
        d.set_item("port", PyBytes::new(py, &le(&t.port, u32::to_le_bytes)))?;
        d.set_item("from", PyBytes::new(py, &le(&t.from, u32::to_le_bytes)))?;
        d.set_item("to", PyBytes::new(py, &le(&t.to, u32::to_le_bytes)))?;
        d.set_item("kind", PyBytes::new(py, &t.kind))?;
        d.set_item("src", PyBytes::new(py, &le(&t.src, u32::to_le_bytes)))?;
        d.set_item("dst", PyBytes::new(py, &le(&t.dst, u32::to_le_bytes)))?;
        d.set_item("sport", PyBytes::new(py, &le(&t.sport, u16::to_le_bytes)))?;
        d.set_item("dport", PyBytes::new(py, &le(&t.dport, u16::to_le_bytes)))?;
        d.set_item("seq", PyBytes::new(py, &le(&t.seq, u64::to_le_bytes)))?;
        d.set_item("len", PyBytes::new(py, &le(&t.len, u32::to_le_bytes)))?;
        d.set_item("flags", PyBytes::new(py, &t.flags))?;
        d.set_item("ecn", PyBytes::new(py, &t.ecn))?;
        d.set_item("prio", PyBytes::new(py, &t.prio))?;
        d.set_item("pause", PyBytes::new(py, &t.pause))?;
        d.set_item("unpause", PyBytes::new(py, &t.unpause))?;
        d.set_item("nodes", self.sim.fab.topo.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>())?;
        d.set_item("is_host", self.sim.fab.topo.nodes.iter().map(|n| n.kind == detailsim_model::topology::NodeKind::Host).collect::<Vec<_>>())?;
        Ok(Some(d))
    }
}

/// The frame plan simulated captures and live mode share (`live::frame`): host `i`'s IPv4 address (as an
/// integer) and MAC address.
#[pyfunction]
fn host_address(i: u32) -> (u32, Vec<u8>) {
    (detailsim_model::live::frame::host_ip(i), detailsim_model::live::frame::host_mac(i).to_vec())
}

/// The 802.1Qbb PFC frame fabric port `port` sends (`live::frame::pfc_frame`): the one encoder of PFC frames.
#[pyfunction]
fn pfc_frame(port: u32, pause: u8, unpause: u8) -> Vec<u8> {
    detailsim_model::live::frame::pfc_frame(port, detailsim_model::mechanisms::pfc::PfcFrame { pause, unpause })
}

/// Nanoseconds per dependent load through `mib` MiB of memory, one cache line per step in a random cycle
/// (`detailsim_engine::probe`): what the machine's memory costs on the day, stored with each benchmark run.
/// `per_page`: one line per 4 KiB page of the `mib` instead (`probe::page_latency_ns`), the same pages
/// through a 64th of the data, which tells a page's translation from the data's distance.
#[pyfunction]
#[pyo3(signature = (mib, steps = 10_000_000, per_page = false))]
fn load_latency_ns(py: Python<'_>, mib: f64, steps: u64, per_page: bool) -> PyResult<f64> {
    if !(mib.is_finite() && (1.0 / 16.0..=4096.0).contains(&mib)) {
        return Err(PyValueError::new_err(format!("mib: {mib} is not a size from 1/16 to 4096 MiB")));
    }
    if !(1..=1_000_000_000).contains(&steps) {
        return Err(PyValueError::new_err(format!("steps: {steps} is not from 1 to 10^9")));
    }
    let bytes = (mib * (1 << 20) as f64) as usize;
    Ok(py.detach(|| if per_page { detailsim_engine::probe::page_latency_ns(bytes, steps) } else { detailsim_engine::probe::load_latency_ns(bytes, steps) }))
}

/// The scheme presets: (name, what it stands for).
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    PRESETS.iter().map(|p| (p.name.to_string(), p.summary.to_string())).collect()
}

/// Every `[scheme]` knob (`config::knob_table`): JSON rows of key, unit, meaning and the value under each
/// preset as the scenario reference shows it.
#[pyfunction]
fn knob_table() -> String {
    let rows: Vec<serde_json::Value> = detailsim_model::config::knob_table()
        .into_iter()
        .map(|(k, by_preset)| serde_json::json!({"key": k.key, "unit": k.unit, "meaning": k.meaning, "presets": by_preset}))
        .collect();
    serde_json::to_string(&rows).expect("serialisable")
}

/// Every key of the scenario sections declared as the knobs are (`config::section_table`:
/// `[topology.shared_buffer]`): JSON rows of key, unit, default and meaning.
#[pyfunction]
fn section_table() -> String {
    let rows: Vec<serde_json::Value> = detailsim_model::config::section_table()
        .into_iter()
        .map(|(key, unit, default, meaning)| serde_json::json!({"key": key, "unit": unit, "default": default, "meaning": meaning}))
        .collect();
    serde_json::to_string(&rows).expect("serialisable")
}

/// The keys each struct-backed section accepts (`config::section_keys`: run, topology, fault and
/// workload.<kind>): a JSON object of section -> keys in declaration order.
#[pyfunction]
fn section_keys() -> String {
    let m: serde_json::Map<String, serde_json::Value> = detailsim_model::config::section_keys().into_iter().map(|(s, k)| (s, serde_json::json!(k))).collect();
    serde_json::to_string(&m).expect("serialisable")
}

/// Validate a scenario (JSON) without running it; raises ScenarioError.
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<()> {
    guarded(|| Sim::from_json(scenario_json).map(|_| ()).map_err(|e| ScenarioError::new_err(e.to_string())))
}

/// PIAS thresholds by `method` for flows of CDF `points` at `load` (the core's solver): a JSON object with
/// method, queues, load, fractions, thresholds_bytes, thresholds_packets and bound.
#[pyfunction]
fn pias_solve(points: Vec<[f64; 2]>, cdf: &str, load: f64, queues: u32, method: &str) -> PyResult<String> {
    let s = detailsim_model::mechanisms::pias::solve(&points, cdf, load, queues, method).map_err(ScenarioError::new_err)?;
    Ok(serde_json::to_string(&s).expect("serialisable"))
}

/// The fractions S_1..S_{K-1} minimising PIAS's bound on a grid of `grid` steps.
#[pyfunction]
fn pias_optimal_fractions(rho: f64, queues: u32, grid: usize) -> PyResult<Vec<f64>> {
    detailsim_model::mechanisms::pias::optimal_fractions(rho, queues, grid).map_err(ScenarioError::new_err)
}

/// PIAS's bound T(S) for interior fractions `s` at load `rho`.
#[pyfunction]
fn pias_bound(s: Vec<f64>, rho: f64) -> f64 {
    detailsim_model::mechanisms::pias::bound(&s, rho)
}

/// S_j = F(alpha_j) for thresholds `alphas` (bytes) under CDF `points`.
#[pyfunction]
fn pias_fractions_of(points: Vec<[f64; 2]>, alphas: Vec<u64>) -> Vec<f64> {
    detailsim_model::mechanisms::pias::fractions_of(&points, &alphas)
}

/// A scenario's network and scheme as a simulated run starts with them (`Fabric::for_run`), refused if live
/// mode cannot run it (`live::Fabric::unsupported`).
fn network(scenario_json: &str) -> PyResult<(detailsim_model::fabric::Fabric, detailsim_model::config::Scheme)> {
    let err = |e: detailsim_model::ConfigError| ScenarioError::new_err(e.to_string());
    let sc = detailsim_model::parse_scenario(scenario_json).map_err(err)?;
    // the live hosts' agents answer a request as it arrives: a modelled server time has no counterpart there
    if let Some(i) = sc.workload.iter().position(|w| w.server_time() > detailsim_engine::Time::ZERO) {
        return Err(ScenarioError::new_err(format!(
            "workload[{i}].server_time: live mode's hosts answer each request as it arrives (their own time is real); remove server_time to run this scenario live"
        )));
    }
    let scheme = sc.scheme.resolve().map_err(err)?;
    let (net, faults) = detailsim_model::fabric::Fabric::for_run(&sc, &scheme, &detailsim_engine::RngStreams::new(sc.run.seed)).map_err(err)?;
    if let Some(why) = detailsim_model::live::Fabric::unsupported(&scheme, net.model(), &faults) {
        return Err(ScenarioError::new_err(why));
    }
    Ok((net, scheme))
}

/// Live mode: the fabric of a scenario as the namespaces need it (JSON): hosts (index, node name, its port,
/// IPv4 address, MAC) and ports (index, node name, peer port, host index or null).
#[pyfunction]
fn live_layout(scenario_json: &str) -> PyResult<String> {
    use detailsim_model::live::frame;
    guarded(|| {
        let (net, scheme) = network(scenario_json)?;
        let fab = detailsim_model::live::Fabric::new(&net, &scheme);
        let ip = |i: u32| std::net::Ipv4Addr::from(frame::host_ip(i)).to_string();
        let mac = |m: [u8; 6]| m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
        let hosts: Vec<serde_json::Value> = (0..fab.net.hosts.len() as u32)
            .map(|h| serde_json::json!({"index": h, "name": net.node_name(fab.net.hosts[h as usize]), "port": fab.host_port[h as usize], "ip": ip(h), "mac": mac(frame::host_mac(h))}))
            .collect();
        let ports: Vec<serde_json::Value> = fab.net.ports.iter().zip(&fab.tx).enumerate()
            .map(|(p, (pt, t))| serde_json::json!({"index": p, "node": net.node_name(pt.node), "peer": pt.peer, "host": t.host, "rate_bps": pt.rate.0, "mac": mac(frame::port_mac(p as u32))}))
            .collect();
        // the hosts' kernel TCP is set as close to the scheme's TCP as Linux allows (docs/live.md)
        let t = &scheme.tcp;
        let tcp = serde_json::json!({"rto_min_ms": t.rto_min.0 as f64 / 1e9, "initial_window": t.initial_window,
            "fast_retransmit": t.fast_retransmit, "delayed_ack": t.delayed_ack, "ecn": t.ecn});
        Ok(serde_json::json!({"hosts": hosts, "ports": ports, "scheme": scheme.name, "tcp": tcp}).to_string())
    })
}

/// Live mode: forward real frames between the fabric namespace's interfaces (`p{port}`, `h{host}`) with the
/// scenario's switch and NIC components until `deadline_s` seconds have passed or `stop_file` exists.
/// Returns the emulator's report (JSON).
#[pyfunction]
#[pyo3(signature = (scenario_json, deadline_s, stop_file, ready_file = None))]
fn live_forward(py: Python<'_>, scenario_json: &str, deadline_s: f64, stop_file: &str, ready_file: Option<&str>) -> PyResult<String> {
    let (net, scheme) = network(scenario_json)?;
    let mut fab = detailsim_model::live::Fabric::new(&net, &scheme);
    let stop = std::path::PathBuf::from(stop_file);
    let ready = ready_file.map(std::path::PathBuf::from);
    let res = py.detach(|| live_io::forward(&mut fab, std::time::Duration::from_secs_f64(deadline_s.max(0.0)), &stop, ready.as_deref()));
    let st = res.map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let name = |n: u32| net.node_name(n).to_string();
    let mut late = detailsim_model::live::fabric::LateHist::default();
    for t in &fab.tx {
        late.merge(&t.stats.late_ns);
    }
    let ports: Vec<serde_json::Value> = fab
        .net
        .ports
        .iter()
        .enumerate()
        .map(|(p, pt)| {
            let stats = &fab.tx[p].stats;
            let achieved =
                if stats.backlog_actual_ps > 0 { pt.rate.0 as f64 * stats.backlog_ideal_ps as f64 / stats.backlog_actual_ps as f64 } else { f64::NAN };
            serde_json::json!({"port": p, "node": name(pt.node), "peer": name(fab.net.ports[pt.peer as usize].node), "rate_bps": pt.rate.0,
            "backlogged_rate_bps": if achieved.is_finite() { serde_json::json!(achieved) } else { serde_json::Value::Null },
            "backlogged_s": stats.backlog_ideal_ps as f64 * 1e-12,
            "tx_frames": stats.tx_frames, "tx_wire_bytes": stats.tx_wire_bytes, "busy_s": stats.busy_ps as f64 * 1e-12,
            "pfc_sent": stats.pfc_sent, "pfc_received": stats.pfc_received,
            "paused_s": fab.net.pfc[p].egress.paused_total(detailsim_engine::Time((st.wall_s * 1e12) as u64)).0 as f64 * 1e-12,
            "max_ingress_bytes": pt.ing.max_total(), "max_egress_bytes": pt.eg.max_total(), "ingress_cap": pt.ing.cap(), "egress_cap": pt.eg.cap()})
        })
        .collect();
    let c = &fab.counters;
    Ok(serde_json::json!({
        "ports": ports,
        "counters": {"host_frames": c.host_frames, "delivered": c.delivered, "forwarded": c.forwarded, "foreign": c.foreign,
            "nic_drops": c.nic_drops, "ingress_drops_lossy": c.ingress_drops_lossy, "ingress_drops_lossless": c.ingress_drops_lossless,
            "red_drops": c.red_drops, "no_route": c.no_route, "ecn_marks": c.ecn_marks, "pfc_frames": c.pfc_frames, "pfc_ignoring": c.pfc_ignoring,
            "queued_at_end": fab.queued_frames()},
        "pacing_late_us": {"p50": late.quantile(0.5) as f64 / 1e3, "p99": late.quantile(0.99) as f64 / 1e3, "max": late.max() as f64 / 1e3, "frames": late.len()},
        "loop": {"wall_s": st.wall_s, "busy_s": st.busy_s, "cpu_s": st.cpu_s, "iterations": st.iterations, "ring_drops": st.ring_drops,
            "send_failures": st.send_failures, "rx_frames": st.rx_frames},
    }).to_string())
}

/// Live mode: host `me`'s traffic agent (run inside its namespace): replays its flows of the plan at
/// `plan_path` over kernel TCP, serves the other hosts, writes JSON-line records to `out`.
#[pyfunction]
fn live_agent(py: Python<'_>, plan_path: &str, me: u32, out: &str) -> PyResult<()> {
    let (plan, out) = (std::path::PathBuf::from(plan_path), std::path::PathBuf::from(out));
    py.detach(|| agent::run(&plan, me, &out)).map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(load_latency_ns, m)?)?;
    m.add_function(wrap_pyfunction!(knob_table, m)?)?;
    m.add_function(wrap_pyfunction!(section_table, m)?)?;
    m.add_function(wrap_pyfunction!(section_keys, m)?)?;
    m.add_function(wrap_pyfunction!(host_address, m)?)?;
    m.add_function(wrap_pyfunction!(pfc_frame, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(live_layout, m)?)?;
    m.add_function(wrap_pyfunction!(live_forward, m)?)?;
    m.add_function(wrap_pyfunction!(live_agent, m)?)?;
    m.add_function(wrap_pyfunction!(pias_solve, m)?)?;
    m.add_function(wrap_pyfunction!(pias_optimal_fractions, m)?)?;
    m.add_function(wrap_pyfunction!(pias_bound, m)?)?;
    m.add_function(wrap_pyfunction!(pias_fractions_of, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    // a panic is reported through InternalError (with its location), not printed to stderr; the previous
    // hook still runs when DETAILSIM_PANIC_TRACE is set (for debugging the core)
    let prev = std::panic::take_hook();
    let verbose = std::env::var_os("DETAILSIM_PANIC_TRACE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        if !info.payload().is::<detailsim_model::sim::parts::OtherPartFailed>() {
            *PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = at;
        }
        if verbose {
            prev(info);
        }
    }));
    Ok(())
}
