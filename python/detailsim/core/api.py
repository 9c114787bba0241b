"""The Python API: ``detailsim.run(scenario, scheme=None, seed=None, **overrides)``."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .. import _core
from .results import flows_frame, summarize
from .scenario import prepare, require_workload


@dataclass
class Result:
    """One run's results.

    - ``summary``: the dict that ``detailsim run --json`` prints (FCT percentiles per class, drops, …).
    - ``flows``: one row per measured flow: id, class, src, dst (host indices), size (bytes), priority,
      start, end, fct (seconds; null if unfinished), fct_lower (the FCT, or for an unfinished flow its age when
      the run ended: a lower bound), timeouts, retransmits.
    - ``ports``: one row per port: node, port, peer, tier, rate, bytes sent, utilisation (the share of the run the link spent sending; a frame still on the wire at the end counts up to the end), maximum
      ingress / egress occupancy, drops, ECN marks.
    - ``scenario``: the resolved scenario that ran.
    - ``timeseries``: with ``run.sample``, per port queue bytes and per measured flow bytes delivered over
      time (long form, see ``detailsim.core.results.timeseries_frame``); None otherwise.
    """

    summary: dict[str, Any]
    flows: pl.DataFrame
    ports: pl.DataFrame
    scenario: dict[str, Any] = field(repr=False)
    timeseries: pl.DataFrame | None = field(default=None, repr=False)

    def write(self, out: str | Path) -> None:
        from .results import write_outputs

        write_outputs(Path(out), self.summary, self.flows, self.ports, self.scenario, self.timeseries)

    def fct(self) -> pl.DataFrame:
        """The summary's FCT statistics, a row per class (ms; `<m>_lb`: only a lower bound)."""
        return pl.DataFrame([{"class": c, **st} for c, st in self.summary["fct"].items()],
                            infer_schema_length=None)

    def __repr__(self) -> str:
        s, f = self.summary, self.summary["flows"]
        return (f"<Result {s['scenario']} scheme={s['scheme']} seed={s['seed']}: {f['completed']}/{f['started']} flows, "
                f"{s['sim_time_s']:.4g} s simulated, {s['congestion_drops']} congestion drops, {s['timeouts']} timeouts>")

    def _repr_html_(self) -> str:
        """A compact table in Jupyter: the run in one line, then FCT per class."""
        from html import escape

        from .results import BOUNDED, fmt_ms

        s, f = self.summary, self.summary["flows"]
        head = (f"<b>{escape(str(s['scenario']))}</b>, scheme <b>{escape(str(s['scheme']))}</b>, seed {s['seed']}: "
                f"{f['completed']}/{f['started']} flows completed in {s['sim_time_s']:.4g} s simulated "
                f"({s['wall_s']:.2f} s wall); congestion drops {s['congestion_drops']}, timeouts {s['timeouts']}")
        cols = ["class", "count", "unfinished", "mean", "p50", "p99", "p99.9", "max", "mean slowdown"]
        rows = []
        for cls, st in s["fct"].items():
            cells = [escape(cls), st["count"], st.get("unfinished", 0), fmt_ms(st["mean_ms"])]
            cells += [fmt_ms(st.get(f"{m}_ms"), bool(st.get(f"{m}_lb"))) for m in BOUNDED]
            sd = st.get("mean_slowdown")
            cells.append(f"{sd:.2f}" if sd is not None else "-")
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        return (f"<div><p>{head}</p><table><thead><tr>" + "".join(f"<th>{c}</th>" for c in cols)
                + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table><p><small>FCT in ms; &gt;= X: a lower bound "
                "(the rank falls on an unfinished flow)</small></p></div>")


STRICT_ENV = "DETAILSIM_STRICT_INVARIANTS"


def invariant_problems(summary: dict[str, Any]) -> list[str]:
    """What the run's invariants report as violated (empty when all hold)."""
    inv = summary["invariants"]
    out = []
    if not inv["conservation"]:
        out.append("packet conservation violated")
    if not inv["lossless"]:
        links = ", ".join(f"{v['link']} ({v['drops']})" for v in inv["lossless_violations"])
        out.append(f"lossless invariant violated: {inv['lossless_drops']} congestion drops under PFC on {links}")
    return out


def check_invariants(summary: dict[str, Any]) -> None:
    """With DETAILSIM_STRICT_INVARIANTS=1 (the test suite sets it), a violated invariant raises; otherwise
    it is reported in the summary's `invariants` and the CLI warns."""
    problems = invariant_problems(summary)
    if problems and os.environ.get(STRICT_ENV) == "1":
        raise RuntimeError("simulator invariant violated: " + "; ".join(problems))


def _kwargs_to_paths(overrides: dict[str, Any]) -> dict[str, Any]:
    return {k.replace("__", "."): v for k, v in overrides.items()}


def one_thread_unless_set(sc: dict[str, Any]) -> dict[str, Any]:
    """`sc` with `run.threads = 1` where it is left out or "auto" (a sweep's runs share the cores; a traced run)."""
    if sc.get("run", {}).get("threads", "auto") != "auto":
        return sc
    return {**sc, "run": {**sc.get("run", {}), "threads": 1}}


def build(sc: dict[str, Any], pcap: str | Path | None = None, pcap_filter: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The simulator of a prepared scenario dict, built once (building it validates the scenario: a
    `ScenarioError` names the field), and the scenario as it runs: a traced run (`pcap`) on one thread
    unless `run.threads` says otherwise (a split run cannot trace yet), any other with `threads = "auto"`
    unless set (the library's own default is one); the trace filter's names are checked here."""
    if pcap_filter and pcap is None:
        raise _core.ScenarioError("--pcap: required with --pcap-filter")
    if pcap is not None:
        sc = one_thread_unless_set(sc)
    elif "threads" not in sc.get("run", {}):
        sc = {**sc, "run": {**sc.get("run", {}), "threads": "auto"}}
    sim = _core.Simulation(json.dumps(sc))
    require_workload(sc)
    if pcap is not None:
        from ..outputs.pcap import parse_filter

        if not pcap_filter:
            raise _core.ScenarioError("--pcap-filter: required with --pcap (flow=ID, node=NAME, port=FROM:TO or link=A:B)")
        sim.set_trace(json.dumps(parse_filter(pcap_filter)))
    return sim, sc


def execute(
    sc: dict[str, Any],
    name: str,
    progress: Callable[[float, float], None] | None = None,
    pcap: str | Path | None = None,
    pcap_filter: str | None = None,
    built: tuple[Any, dict[str, Any]] | None = None,
) -> Result:
    """Run a prepared scenario dict. `progress(now_s, duration_s)` is called between steps. With `pcap`,
    the frames `pcap_filter` selects are written there (see detailsim.outputs.pcap). `built`: what `build`
    returned for it (the simulator is then not built again)."""
    sim, sc = built if built is not None else build(sc, pcap, pcap_filter)
    t0 = time.perf_counter()
    dur = sim.duration_s
    step = max(dur / 200.0, 1e-4)
    t = 0.0
    while True:
        t += step
        if sim.run_until(t):
            break
        if progress is not None:
            progress(min(sim.now_s, dur), dur)
    wall = time.perf_counter() - t0
    core = json.loads(sim.summary_json())
    flows = flows_frame(sim.flow_columns(), core["classes"], sim.window_s, core["sim_time_s"])
    seed = int(sc.get("run", {}).get("seed", 1))
    summary = summarize(core, flows, name, seed, wall)
    # the parts the run was split in (1: not split), as "auto" chose: like the wall time, not a result
    summary["threads"] = sim.parts
    # a split run's rounds (the windows its parts met after; 0: not split), per simulated ms
    summary["rounds"] = sim.rounds
    summary["rounds_per_sim_ms"] = sim.rounds / (core["sim_time_s"] * 1e3) if sim.rounds and core["sim_time_s"] > 0 else 0.0
    ports = pl.DataFrame(core["ports"]) if core["ports"] else pl.DataFrame()
    check_invariants(summary)
    if pcap is not None:
        from ..outputs.pcap import write_pcap

        summary["pcap"] = {"file": str(pcap), "frames": write_pcap(sim.trace_columns(), pcap)}
    ts = None
    raw = sim.sample_columns()
    if raw is not None:
        from .results import timeseries_frame

        classes_of = dict(zip(flows["id"].to_list(), flows["class"].cast(pl.String).to_list()))
        ts = timeseries_frame(raw, core["ports"], classes_of)
    return Result(summary=summary, flows=flows, ports=ports, scenario=sc, timeseries=ts)


def run(
    scenario: str | Path | dict[str, Any],
    scheme: str | None = None,
    seed: int | None = None,
    *,
    duration: str | None = None,
    set: dict[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
    pcap: str | Path | None = None,
    pcap_filter: str | None = None,
    **overrides: Any,
) -> Result:
    """Run a scenario (a path, a bundled name such as ``"paper/steady"``, or a dict).

    Overrides: ``duration="0.1s"``, ``set={"topology.link_rate": "10Gbps"}``, or keyword arguments with
    ``__`` for dots (``topology__link_rate="10Gbps"``). Raises ``ScenarioError`` naming the field on bad input.
    ``pcap`` / ``pcap_filter`` write a packet capture (``"flow=3"``, ``"node=tor0_0"``, ``"port=agg0_0:core0"``).
    """
    paths = dict(set or {})
    paths.update(_kwargs_to_paths(overrides))
    sc, name = prepare(scenario, scheme=scheme, seed=seed, duration=duration, overrides=paths)
    return execute(sc, name, pcap=pcap, pcap_filter=pcap_filter)


def check_split(
    scenario: str | Path | dict[str, Any],
    scheme: str | None = None,
    seed: int | None = None,
    *,
    duration: str | None = None,
    parts: int = 2,
    set: dict[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
    sets: list[str] | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Whether a run split in ``parts`` parts (``run.threads = parts``) ends as the ordinary run does: run the
    scenario as it is and split in parts taking turns on this thread, with the windows threads use (the
    lookahead across the cuts), and compare the outcomes (the flow table without its ids, and the drop,
    flow, packet, timeout and retransmission counts).
    Returns ``{"window_s", "as_is", "split", "same"}``, or with ``"interaction"`` (the message naming the
    event) when one half affects the other faster than the window. A scenario a split run does not
    support is refused (ScenarioError naming the field). ``sets`` takes the CLI's ``KEY=VALUE`` strings."""
    paths = dict(set or {})
    paths.update(_kwargs_to_paths(overrides))
    sc, _ = prepare(scenario, scheme=scheme, seed=seed, duration=duration, sets=sets, overrides=paths)
    sc.setdefault("run", {})["threads"] = 1
    text = json.dumps(sc)
    a = _core.Simulation(text)
    a.run_until(float("inf"))
    b = _core.Simulation.in_parts(text, parts)
    out: dict[str, Any] = {"window_s": b.split_window_s, "as_is": f"{a.outcome_digest():016x}"}
    try:
        b.run_until(float("inf"))
    except _core.InternalError as e:
        if "split run:" not in str(e):
            raise
        return {**out, "split": None, "same": False, "interaction": str(e)}
    out["split"] = f"{b.outcome_digest():016x}"
    out["same"] = out["split"] == out["as_is"]
    return out
