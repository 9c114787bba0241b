"""The keys of `[run]`, `[[workload]]` (per kind) and `[[fault]]` as `detailsim reference` shows them: unit,
default and a one-line meaning (docs/scenarios.md says more). The keys themselves are the core's:
tests/test_docs.py checks that each section here lists exactly the keys the core's structs accept
(`_core.section_keys`), plus the ones the Python front end reads (`FRONT_END`), so a key added to the core
and not here fails the tests."""

from __future__ import annotations

# section -> [(key, unit, default, meaning)]
KEYS: dict[str, list[tuple[str, str, str, str]]] = {
    "run": [
        ("duration", "duration", '"0.1s"', "arrival window: measured flows start in [0, duration)"),
        ("seed", "integer", "1", "master seed; every random stream derives from (seed, component, purpose)"),
        ("warmup", "duration", '"0s"', "flows starting before this run but are not measured"),
        ("drain", "duration", '"1s"', "after duration, how long the run may go on for measured flows to finish (the rest are unfinished)"),
        ("keep_load", "bool", "false", "open-loop workloads keep starting (unmeasured) flows after duration"),
        ("measure_from", "duration", "none", "start of the goodput window (window_bytes, window_goodput_bps)"),
        ("measure_to", "duration", "none", "end of the goodput window"),
        ("sample", "duration >= 1 us", "none", "write a time series of queues and flow bytes every interval"),
        ("max_events", "integer >= 1", "none", "end the run after this many events, marked incomplete"),
        ("max_wall", "duration >= 1 ms", "none", "end the run after this much wall-clock time, marked incomplete"),
        ("event_order", '"node"', '"node"', "how events at the same picosecond are ordered (the only order)"),
        ("threads", '1-64 or "auto"', '"auto" (CLI, detailsim.run)', "split the run in N parts on N threads; results never depend on it"),
    ],
    "fault": [
        ("kind", "link_down, degrade, ignore_pause", "required", "what happens to the link"),
        ("link", 'two node names or "<tier>#<i>"', "required", "the link, e.g. [\"agg0_0\", \"core0\"] or \"agg_core#0\""),
        ("at", "duration", '"0s"', "when the fault starts"),
        ("rate", "rate", "none", "the degraded rate (degrade only)"),
    ],
}

_ARRIVALS = [
    ("start", "duration", '"0s"', "first arrivals after this time"),
    ("stop", "duration", "run.duration", "no arrivals after this time"),
    ("burst_period", "duration", "none", "bursty arrivals: every period, for burst_length, at burst_rate"),
    ("burst_length", "duration", "none", "how long each burst lasts"),
    ("burst_rate", "per second", "none", "the arrival rate during a burst (rate otherwise)"),
]
_FRONTENDS = [
    ("rate", "per second", "required", "arrivals per second at each front-end (Poisson)"),
    ("weights", "list of numbers", "equal", "probability weights of the sizes (or fan-outs)"),
    ("priority", "0..7", "0", "priority of requests, responses and their ACKs"),
    ("pattern", "all_to_all, front_to_back", "see kind", "who requests from whom"),
    ("frontends", "integer", "half the servers", "how many servers are front-ends (front_to_back)"),
    ("frontend_layout", "spread, first", "spread", "where the front-ends sit in the server list"),
]
_REQUEST = [("request_size", "size", '"10B"', "the request a response answers"),
            ("server_time", "duration", '"0s"', "the responder's time from a request's arrival to its response")]

KEYS.update({
    "workload.retrieval": [("sizes", "list of sizes", "required", "response sizes"),
                           *_FRONTENDS, *_REQUEST, *_ARRIVALS],
    "workload.background": [
        ("flows_per_server", "integer", "1", "closed loop: flows each server keeps running"),
        ("rate", "flows per second per server", "none (closed loop)", "open loop: Poisson flow arrivals"),
        ("size", "size", '"1MB"', "flow size"),
        ("sizes", "list of sizes", "none", "a size mix instead of size"),
        ("weights", "list of numbers", "equal", "probability weights of sizes"),
        ("priority", "0..7", "1", "priority of the flows"),
    ],
    "workload.flows": [
        ("file", "path", "none", "CSV src,dst,size_bytes,start_s[,priority] (read by the front end)"),
        ("rows", "list of tables", "none", "the same rows inline"),
        ("class", "name", '"flow"', "class of these flows"),
        ("source", "name", "set by the front end", "the file the rows came from (for error messages)"),
        ("lines", "list of integers", "set by the front end", "each row's line in another simulator's file"),
    ],
    "workload.hpcc_flows": [
        ("file", "path", "required", "the HPCC simulator's flow.txt"),
        ("priority", "0..7", "the flow's priority group", "priority of every flow of the file"),
        ("class", "name", '"flow"', "class of these flows"),
    ],
    "workload.htsim_cm": [
        ("file", "path", "required", "a csg-htsim connection matrix"),
        ("priority", "0..7", "0", "priority of every flow of the file"),
        ("class", "name", '"flow"', "class of these flows"),
        ("start_unit", "ps, ns, us, ms, s", '"ps"', "the unit of the matrix's start times (csg-htsim's loader reads picoseconds)"),
    ],
    "workload.sequential": [("length", "integer", "10", "retrievals per workflow, one after another"),
                            ("sizes", "list of sizes", "required", "response sizes"),
                            *_FRONTENDS, *_REQUEST, *_ARRIVALS],
    "workload.partition_aggregate": [("fanouts", "list of integers", "[10, 20, 40]", "fan-outs, drawn by weights"),
                                     ("size", "size", '"2KB"', "each response's size"),
                                     *_FRONTENDS, *_REQUEST, *_ARRIVALS],
    "workload.incast": [
        ("receiver", "host index", "0", "the host that fetches"),
        ("senders", "integer", "all other hosts", "how many servers send (the first ones other than the receiver)"),
        ("total", "size", '"1MB"', "bytes fetched per incast, split evenly over the senders"),
        ("repeats", "integer", "1", "how many incasts, one after another"),
        ("gap", "duration", '"1ms"', "pause after one incast completes before the next"),
        ("start", "duration", '"0s"', "when the first incast starts"),
        ("priority", "0..7", "0", "priority of the flows"),
        *_REQUEST,
    ],
    "workload.cdf": [
        ("cdf", "name or path", "required", "websearch, datamining, websearch_bytes, datamining_fine, hadoop, or a file"),
        ("points", "list of [bytes, probability]", "from cdf", "the CDF itself (the front end fills it)"),
        ("load", "0 < load <= 1", "required unless rate", "target load on each host's link (or load_tier's)"),
        ("load_tier", "tier name", '"host"', "the tier the load refers to"),
        ("rate", "per second", "none", "flows per second per host instead of load"),
        ("client", "host index", "none", "client/server: requests from this host, responses drawn from the CDF"),
        ("request_size", "size", "10 (bytes)", "the request's size (with client)"),
        ("server_time", "duration", "none", "the server's time from a request's arrival to its response (with client)"),
        ("priority", "0..7", "0", "priority of the flows"),
        ("start", "duration", '"0s"', "first arrivals after this time"),
        ("stop", "duration", "run.duration", "no arrivals after this time"),
    ],
})

# keys the Python front end reads and turns into the core's (a flow file into rows, other simulators'
# files into a flows workload)
FRONT_END = {"workload.flows": {"file"}, "workload.hpcc_flows": {"file", "priority", "class"},
             "workload.htsim_cm": {"file", "priority", "class", "start_unit"}}

WORKLOAD_KINDS = [s.split(".", 1)[1] for s in KEYS if s.startswith("workload.")]


def table(section: str) -> str:
    rows = ["| key | unit | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{k}` | {u} | {d} | {m} |" for k, u, d, m in KEYS[section]]
    return "\n".join(rows)
