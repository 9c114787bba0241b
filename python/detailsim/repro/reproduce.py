"""Reproductions of the DeTail, DIBS and PIAS papers' evaluations, each a predefined sweep run through the
sweep machinery, with its plot, a Markdown table and its claims graded by the equivalence rule
(`detailsim.repro.grading`).

    detailsim reproduce --list
    detailsim reproduce NAME [--quick] [--out DIR] [--workers N] [--scheduler ADDRESS]
    detailsim reproduce calibrate          # the calibration grid (docs/reproduction.md, "The model")
    detailsim reproduce all --quick

Each writes DIR/NAME/: the results store (Parquet), plots (PNG and SVG), table.md, claims.json,
timing.json (its wall time) and report.html. ``--quick`` shortens every run (one seed, shorter arrival windows) for CI; the full versions
are what docs/reproduction.md quotes. Every claim quotes its paper (file and line in ../shared/papers),
carries a label (held out, calibration, by construction) and a convergence check: its value on half the
seeds, or at half the run length, beside the graded one.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import polars as pl

from .claims import (  # noqa: F401 - re-exported: the reproductions' definitions and claims
    CITED,
    CITED_PREFIX,
    DEGRADE,
    Data,
    FIG9,
    LONG_SIZES,
    MIN_FLOWS,
    PAPERS_DIR,
    Q,
    REL_TOL,
    Repro,
    SIZES,
    background_by_size,
    bursty_claims,
    cut,
    dibs_claims,
    endhost_claims,
    fault_claims,
    incast_claims,
    las_claims,
    leafspine_claims,
    long_flow_claims,
    memcached_claims,
    mismatch_claims,
    oversubscribed_claims,
    page_claims,
    pct,
    pm,
    pfc_alone_claims,
    queues_claims,
    scatter_claims,
    steady_by_rate,
    steady_claims,
    testbed_claims,
    threshold_claims,
    verification_claims,
    workflow_claims,
)
from .grading import Claim, fmt_measured, fmt_value, glance_table
from .modern import (FINDS_SOURCE, MODERN_HANDSHAKE, MODERN_SCHEMES, hpcc_fattree_claims, modern_findings, modern_report,
                     roce_convergence_claims, roce_incast_claims, roce_scaling, roce_scaling_zip)
from .papers import cite
from ..outputs.plots import ci_of, fmt_reduction, natural_key, pooled_percentiles, reduction_ci, reduction_table, seed_ci
from .demonstrations import load_demos
from .docblocks import block_of, render_block
from .readings import READINGS_SOURCE, load_readings, readings_markdown
from ..core.scenario import duration_seconds
from ..core.sweep import read_store, run_store
from ..core.sums import sorted_mean, sorted_sum
from .why import WHY_SOURCE, why_markdown


# ---------------------------------------------------------------- the calibration (issue 49; issue 34 before)

# The grid of the choices the DeTail paper's text leaves open (docs/model.md), in the declared order
# (docs/reproduction.md, "The model, and how it is chosen"): a tie goes to the point listed first, first
# value first. FH alone runs both ingress readings (under PFC the thresholds keep every priority inside its
# eighth, so LPS's and DeTail's runs are the same under both): the scheme and the ingress are zipped.
CAL_GRID: dict[str, list[Any]] = {
    "scheme.tcp.handshake": [True, False],
    "scheme.tcp.initial_window": [1, 3, 10],
    "scheme.tcp.rto_formula": ["rfc6298", "linux"],
    "scheme.egress_sharing": ["eighths", "in_use"],
    "scheme.ingress_sharing": ["shared", "eighths"],
}
# the open-loop background's rates run at every point (flows per second per server); each point takes the
# one whose mean number of background flows in progress per server is closest to one
CAL_BG_RATES = [5, 7, 10, 14, 20]
CAL_ZIP = [{"scheme": ["fh", "fh", "detail"], "scheme.ingress_sharing": ["shared", "eighths", "shared"]}]
CAL_AXES = {k: v for k, v in CAL_GRID.items() if k != "scheme.ingress_sharing"} | {"workload.1.rate": CAL_BG_RATES}
CAL_QUICK: dict[str, list[Any]] = {"scheme.tcp.handshake": [True], "scheme.tcp.initial_window": [3, 10],
                                   "scheme.tcp.rto_formula": ["rfc6298"], "scheme.egress_sharing": ["eighths", "in_use"],
                                   "workload.1.rate": [7, 10]}
# "each server has on average, one 1 MB low-priority background flow" (000:410), read as an open loop
CAL_BACKGROUND = {"kind": "background", "rate": 10, "size": "1MB", "priority": 1}
CAL_METRICS = ("p50", "p99", "p999")
# the background's mean in progress per server is measured over the second half of the arrival window
# (the first half fills the fabric from empty): 0.1-0.2 s in the full run
CAL_WINDOW = (0.1, 0.2)


def background_in_progress(flows: pl.DataFrame, keys: list[str], window: tuple[float, float] = CAL_WINDOW) -> pl.DataFrame:
    """Per (keys): the time-average number of background flows in progress per server over `window`
    (seconds), pooled over the seeds (Little's law on the flow table: each flow's time inside the window,
    unfinished ones to its end, summed, over the window's length and the servers, the hosts that started
    a flow)."""
    t0, t1 = window
    f = flows.with_columns(pl.col("class").cast(pl.String))
    hosts = f.group_by([*keys, "seed"]).agg(pl.col("src").n_unique().alias("hosts"))
    bg = (f.filter(pl.col("class") == "background")
          .with_columns(pl.col("end").fill_null(math.inf).fill_nan(math.inf).alias("_end"))
          .with_columns((pl.min_horizontal(pl.col("_end"), pl.lit(t1)) - pl.max_horizontal(pl.col("start"), pl.lit(t0))).clip(lower_bound=0).alias("_in"))
          .group_by([*keys, "seed"]).agg(sorted_sum(pl.col("_in")).alias("_busy")))
    per = hosts.join(bg, on=[*keys, "seed"], how="left").with_columns(pl.col("_busy").fill_null(0.0))
    # the sums sorted (`core.sums`): before, a table of 60,000 rows summed 40 times gave two results in the
    # last digit
    return per.group_by(keys).agg((sorted_sum(pl.col("_busy")) / (pl.col("hosts").sum() * (t1 - t0))).alias("bg_in_progress"))


def calibration_points(stats: pl.DataFrame) -> list[dict[str, Any]]:
    """Every grid point with Figure 9's six numbers measured at the background rate the text's "on average,
    one" flow in progress picks (the rate whose in-progress count, the geometric mean over both schemes, is
    closest to one in |log2|; ties to the lower rate), its distance (mean |log2(measured / paper)| over both
    schemes' p50 / p99 / p99.9 of 8 KB) and whether it fits (all six within ±25%), best first: the points
    whose background lies within ±25% of one flow in progress first, then the rest; ties (to three
    decimals) in the grid's declared order. `stats` carries `bg_in_progress` (`background_in_progress`);
    a store without the rate axis (before issue 49) is ranked on its own points alone."""
    from itertools import product

    grid = {k: [v for v in vals if v in stats[k].unique().to_list()] for k, vals in CAL_GRID.items() if k in stats.columns}
    rates = sorted(stats["workload.1.rate"].unique().to_list()) if "workload.1.rate" in stats.columns else [None]
    out = []
    for order, combo in enumerate(product(*grid.values())):
        where = dict(zip(grid, combo))

        def at(s: str, rate: Any) -> dict[str, Any]:
            w = dict(where)
            if s != "fh" and "scheme.ingress_sharing" in w:
                w["scheme.ingress_sharing"] = "shared"  # the zip: PFC schemes run one ingress reading
            return w | ({} if rate is None else {"workload.1.rate": rate})

        def load(s: str, rate: Any) -> float:
            q = stats.filter(pl.col("class") == "retrieval/8KB")
            for k, v in at(s, rate).items():
                q = q.filter(pl.col(k) == v)
            q = q.filter(pl.col("scheme") == s)
            return float(q["bg_in_progress"][0]) if q.height and "bg_in_progress" in q.columns and q["bg_in_progress"][0] is not None else math.nan

        loads = {r: {s: load(s, r) for s in FIG9} for r in rates}
        gm = {r: math.sqrt(v["fh"] * v["detail"]) if all(x > 0 for x in v.values()) else math.nan for r, v in loads.items()}
        rate = min(rates, key=lambda r: (abs(math.log2(gm[r])) if gm[r] == gm[r] else math.inf, r if r is not None else 0))
        row: dict[str, Any] = {"point": where, "order": order}
        if rate is not None:
            row["bg_rate"] = rate
            row["bg_in_progress"] = {s: loads[rate][s] for s in FIG9}
            row["bg_ok"] = all(abs(v - 1.0) <= REL_TOL for v in loads[rate].values())
        logs = []
        fits = True
        for s, paper in FIG9.items():
            for m in CAL_METRICS:
                v = pct(stats, "retrieval/8KB", m, scheme=s, **at(s, rate))
                lb = _flag(stats, "retrieval/8KB", f"{m}_lb", scheme=s, **at(s, rate))
                row[f"{s}_{m}"] = v
                row[f"{s}_{m}_lb"] = lb
                logs.append(abs(math.log2(v / paper[m])) if v == v and v > 0 else math.inf)
                fits &= abs(v - paper[m]) <= REL_TOL * paper[m]
        row["distance"] = sum(logs) / len(logs)
        row["fits"] = bool(fits)
        out.append(row)
    return sorted(out, key=lambda r: (not r.get("bg_ok", True), round(r["distance"], 3), r["order"]))


def _flag(stats: pl.DataFrame, cls: str, col: str, **where: Any) -> bool:
    q = stats.filter(pl.col("class") == cls)
    for k, v in where.items():
        q = q.filter(pl.col(k) == v)
    return bool(q[col][0]) if q.height and col in q.columns else False


CAL_SHORT = {"scheme.tcp.handshake": "handshake", "scheme.tcp.initial_window": "IW", "scheme.priority_eviction": "ingress",
             "scheme.egress_sharing": "egress", "scheme.tcp.rto_formula": "RTO", "scheme.ingress_sharing": "FH ingress"}


def _cal_value(k: str, v: Any) -> str:
    if k == "scheme.priority_eviction":
        return "priority eviction" if v else "shared"
    if k == "scheme.egress_sharing":
        return {"shared": "shared", "whole_per_priority": "per priority", "eighths": "eighths", "in_use": "split in use"}.get(v, str(v))
    if k == "scheme.tcp.handshake":
        return "one connection, SYN" if v else "persistent"
    return str(v)


def calibration_table(stats: pl.DataFrame) -> str:
    return calibration_markdown(calibration_points(stats))


def calibration_markdown(pts: list[dict[str, Any]], top: int | None = None) -> str:
    """The calibration's table from its points (best first): all of them, or the `top` best and the worst."""
    fits = sum(p["fits"] for p in pts)
    keys = list(pts[0]["point"]) if pts else []
    bg = bool(pts) and "bg_rate" in pts[0]
    lines = [f"Figure 9 at 2000/s, 8 KB: FH {FIG9['fh']['p50']}/{FIG9['fh']['p99']}/{FIG9['fh']['p999']} ms, DeTail "
             f"{FIG9['detail']['p50']}/{FIG9['detail']['p99']}/{FIG9['detail']['p999']} ms (p50/p99/p99.9). Distance: the mean of "
             f"|log2(measured / paper)| over the six; fits: all six within ±25%. {len(pts)} points, {fits} fit"
             + ("" if fits else " (no point of the grid fits both schemes)") + "; best first:", "",
             "| rank | " + " | ".join(CAL_SHORT[k] for k in keys) + (" | background /s (in progress FH, DeTail)" if bg else "")
             + " | FH p50/p99/p99.9 ms | DeTail p50/p99/p99.9 ms | distance | fits |",
             "|---|" + "---|" * len(keys) + ("---|" if bg else "") + "---|---|---|---|"]
    shown = list(enumerate(pts, 1))
    if top is not None and len(shown) > top + 1:
        shown = shown[:top] + [shown[-1]]
    for i, p in shown:
        vals = [_cal_value(k, p["point"][k]) for k in keys]
        nums = {s: "/".join((">=" if p[f"{s}_{m}_lb"] else "") + f"{p[f'{s}_{m}']:.2f}" for m in CAL_METRICS) for s in FIG9}
        if bg:
            inp = p["bg_in_progress"]
            vals.append(f"{p['bg_rate']} ({inp['fh']:.2f}, {inp['detail']:.2f}){'' if p['bg_ok'] else ' off'}")
        lines.append(f"| {i} | " + " | ".join(vals) + f" | {nums['fh']} | {nums['detail']} | {p['distance']:.3f} | {'yes' if p['fits'] else 'no'} |")
    return "\n".join(lines)


PIAS_SCHEMES = ["tcp", "dctcp", "l2dct", "las", "pias", "pfabric"]

# pias_endhost's long flow: bulk from the sender (host 0) to the first receiver
LONG_FLOW = {"src": 0, "dst": 1, "size_bytes": 10_000_000_000, "start_s": 0.0}

# The paper's NS-3 simulations had no ECN (its TCP model lacked it): DeTail's simulated figures run without
# source ECN; only the 16-server implementation's long-flow experiment (Figure 14) ran with it.
NO_ECN = {"scheme.source_ecn": False, "scheme.tcp.ecn": False}
BURSTS = ["20ms", "40ms", "80ms"]
# what the workflow experiments report: workflows and their retrievals
SEQ_CLASSES = ["workflow/sequential", "retrieval/4KB", "retrieval/8KB", "retrieval/12KB"]
PA_CLASSES = ["workflow/partition-aggregate/10", "workflow/partition-aggregate/20", "workflow/partition-aggregate/40", "retrieval/2KB"]
# the slides' page creation: retrievals of 2, 4, 8, 16 or 32 KB
PAGE_SIZES = ["2KB", "4KB", "8KB", "16KB", "32KB"]
# the background reading docs/model.md rules out (000:410 against 000:426): one closed-loop 1 MB flow per
# server, a new one when it finishes (the model before issue 49)
CLOSED_BACKGROUND = {"kind": "background", "flows_per_server": 1, "size": "1MB", "priority": 1}

def modern_fattree_zip(durations: list[str]) -> list[dict[str, list[Any]]]:
    """modern_fattree's points (by workload): the four schemes, by 10 and 100 Gbps links (with the pool, 100 KB per 10
    Gbps of each of a switch's 8 ports, the RoCE settings scaled to the rate, and the arrival window)."""
    return [{"scheme": MODERN_SCHEMES},
            {"link_rate": ["10Gbps", "100Gbps"], "topology.link_rate": ["10Gbps", "100Gbps"],
             "topology.shared_buffer.size": ["800KB", "8MB"], "run.duration": durations, **roce_scaling_zip([10, 100])}]


# issue 38: one pool per switch, the memory the paper's 12-port ToR has in its per-port buffers (12 x 2 x 128 KB)
MODERN_SHARED_1G = {"topology.shared_buffer.size": "3MB"}

REPROS: dict[str, Repro] = {
    r.name: r
    for r in [
        Repro("calibrate", "The calibration (issue 49): Figure 9's six numbers (FH and DeTail, 8 KB at 2000/s) over the grid of the choices the paper's text leaves open, the open-loop background at the rate that keeps one flow in progress per server (no ECN)",
              "paper/steady", CAL_AXES, zip=CAL_ZIP, seeds=3,
              set={"run.duration": "0.2s", "workload.0.rate": 2000, "workload.1": CAL_BACKGROUND, "scheme.priority_eviction": False, **NO_ECN},
              quick_set={"run.duration": "0.02s"}, quick_axes=CAL_QUICK, classes=["retrieval/8KB"], extra=calibration_table, converge="none", plots=False,
              flow_classes=["retrieval/8KB", "background"]),
        Repro("scatter", "Section 3.3 / Figure 4: packet scatter vs flow hashing, bursty workload, infinite buffers, no retransmission, healthy and degraded",
              "paper/scatter", {"scheme": ["fh", "scatter"]},
              zip=[{"variant": ["healthy", "degraded"], "fault": [[], DEGRADE]}], hide=["fault"], labels=["variant"],
              # a 5 s drain: the degraded link's queue grows through the bursts, and with 1 s its slowest flows
              # were still running (the percentiles only lower bounds)
              set={"run.duration": "0.3s", "run.drain": "5s"}, quick_set={"run.duration": "0.1s"}, claims=scatter_claims),
        Repro("incast", "Section 4.3.4: timeout selection under incast (1 MB from all servers, 25 times), spurious retransmissions",
              "paper/incast", {"workload.0.senders": [16, 64, 128], "scheme.tcp.rto_min": ["1ms", "5ms", "10ms", "200ms"]}, seeds=4,
              set={"topology.hosts": 129}, quick_set={"workload.repeats": 5}, classes=["incast"], claims=incast_claims, plot_x="workload.0.senders"),
        Repro("verification", "Section 6.2 / Figure 8: simulator verification workload on the 16-server testbed topology (no ECN, as the paper's NS-3 runs); "
              "the claim compares our simulator with our implementation (live mode, docs/live.md)",
              "paper/verification", {"scheme": ["fh", "detail"], "workload.rate": [100, 500, 1000, 1500]},
              set={"run.duration": "0.5s", **NO_ECN}, quick_set={"run.duration": "0.1s"}, quick_axes={"workload.rate": [100, 1500]},
              claims=verification_claims, converge="none"),
        Repro("steady", "Figures 9 and 10: the steady workload, 2/8/32 KB at 500, 1000 and 2000 retrievals/s (no ECN); Figure 9 (8 KB at 2000/s) is the calibration set",
              "paper/steady", {"scheme": ["fh", "lps", "detail"], "workload.rate": [500, 1000, 2000]},
              set={"run.duration": "0.2s", **NO_ECN}, quick_set={"run.duration": "0.02s"}, claims=steady_claims, extra=steady_by_rate),
        Repro("steady_closed_background", "A demonstration: the steady workload with one closed-loop 1 MB background flow per server, the reading docs/model.md rules out, instead of the open loop (no ECN)",
              "paper/steady", {"scheme": ["fh", "detail"], "workload.0.rate": [500, 1000, 2000]}, seeds=3,
              set={"run.duration": "0.2s", "workload.1": CLOSED_BACKGROUND, **NO_ECN}, quick_set={"run.duration": "0.02s"},
              extra=steady_by_rate, converge="none"),
        Repro("pfc_alone", "Slides: PFC alone (FH + PFC, no ALB) against FH and DeTail, steady workload (no ECN)",
              "paper/steady", {"scheme": ["fh", "pfc_only", "detail"], "workload.rate": [1000, 2000]},
              set={"run.duration": "0.2s", **NO_ECN}, quick_set={"run.duration": "0.02s"}, quick_axes={"workload.rate": [2000]}, claims=pfc_alone_claims),
        Repro("bursty", "Figure 11: reduction of the 99th / 99.9th percentile over FH, bursty workload, 3 sizes x 3 burst lengths (no ECN)",
              "paper/bursty", {"scheme": ["fh", "lps", "detail"], "workload.burst_length": BURSTS},
              set={"run.duration": "0.3s", **NO_ECN}, quick_set={"run.duration": "0.1s"}, quick_axes={"workload.burst_length": ["40ms"]}, claims=bursty_claims),
        # 16 seeds of 3 s: at least 200 finished flows of every size under every scheme (3 seeds of 1 s held
        # 26-40); a 15 s drain lets FH's slowest 64 MB flows finish (with 5 s, 15 of them did not)
        Repro("long_flows", "Figure 14: long background flows on the 16-server testbed with source ECN: mean FCT of 1/16/64 MB low-priority flows",
              "paper/long_flows", {"scheme": ["fh", "lps", "detail"]}, seeds=16, set={"run.duration": "3s", "run.drain": "15s"},
              quick_set={"run.duration": "0.1s"}, classes=[*SIZES, *LONG_SIZES], claims=long_flow_claims, relabel=background_by_size),
        # more seeds for the fault experiments: with 6, the 99.9th percentiles of DeTail's 2 KB flows and of the
        # degraded page creation moved by more than their intervals between seeds 1-3 and 1-6 (not converged);
        # with a link down, DeTail's 2 KB p99.9 in 80 ms bursts is 15-91 ms seed by seed, and 12 seeds still
        # moved it, 24 the cut's low end (28% -> 43%): 48
        Repro("disconnected", "Figure 12: disconnected core-agg link, bursty workload (no ECN), FH, LPS and DeTail",
              "paper/disconnected", {"scheme": ["fh", "lps", "detail"], "workload.burst_length": BURSTS}, seeds=48, set={"run.duration": "0.3s", **NO_ECN},
              quick_set={"run.duration": "0.1s"}, quick_axes={"workload.burst_length": ["80ms"]}, claims=fault_claims("disconnected")),
        Repro("degraded", "Figure 13: degraded core-agg link (100 Mbps), bursty workload (no ECN), FH, LPS and DeTail",
              "paper/degraded", {"scheme": ["fh", "lps", "detail"], "workload.burst_length": BURSTS}, seeds=12,
              # a 10 s drain: with 1 s, 1,794 of FH's 2 KB flows were still unfinished and the 99.9th percentile only a lower bound
              set={"run.duration": "0.3s", "run.drain": "10s", **NO_ECN},
              quick_set={"run.duration": "0.1s", "run.drain": "1s"}, quick_axes={"workload.burst_length": ["80ms"]}, claims=fault_claims("degraded")),
        Repro("sequential", "Figure 15: sequential workflows, workflow and retrieval completion times (no ECN)",
              "paper/sequential", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.3s", **NO_ECN},
              quick_set={"run.duration": "0.1s"}, classes=SEQ_CLASSES, claims=workflow_claims("sequential")),
        Repro("partition_aggregate", "Figure 16: partition-aggregate workflows, workflow completion per fan-out (no ECN)",
              "paper/partition_aggregate", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.3s", **NO_ECN},
              quick_set={"run.duration": "0.1s"}, classes=PA_CLASSES, claims=workflow_claims("partition_aggregate")),
        # the front-end placement the declaration did not take, so both sides of the choice stand in the docs
        Repro("sequential_first", "A demonstration: sequential workflows with the front-ends in the first half of the servers (pods 0-1), the placement not taken (no ECN)",
              "paper/sequential", {"scheme": ["fh", "detail"]}, seeds=3, set={"run.duration": "0.3s", "workload.0.frontend_layout": "first", **NO_ECN},
              quick_set={"run.duration": "0.1s"}, classes=SEQ_CLASSES, converge="none"),
        Repro("partition_aggregate_first", "A demonstration: partition-aggregate workflows with the front-ends in the first half of the servers (pods 0-1), the placement not taken (no ECN)",
              "paper/partition_aggregate", {"scheme": ["fh", "detail"]}, seeds=3,
              set={"run.duration": "0.3s", "workload.0.frontend_layout": "first", **NO_ECN},
              quick_set={"run.duration": "0.1s"}, classes=PA_CLASSES, converge="none"),
        Repro("page_creation", "Slides 29 and 31: page creation, sequential workflows of retrievals of 2, 4, 8, 16 or 32 KB (the slides' sizes; otherwise Figure 15's setup), healthy and with a degraded core-agg link (no ECN)",
              "paper/sequential", {"scheme": ["fh", "detail"]}, seeds=12,
              zip=[{"variant": ["healthy", "degraded"], "fault": [[], DEGRADE]}], hide=["fault"], labels=["variant"],
              set={"run.duration": "0.3s", "run.drain": "10s", "workload.0.sizes": PAGE_SIZES, **NO_ECN}, quick_set={"run.duration": "0.1s", "run.drain": "1s"},
              classes=["workflow/sequential", *[f"retrieval/{s}" for s in PAGE_SIZES]], claims=page_claims),
        Repro("dibs_incast", "DIBS: 99th query completion time vs incast degree, DCTCP alone vs DIBS + DCTCP, with web-search background",
              "paper/dibs", {"scheme": ["dctcp", "dibs"]},
              zip=[{"incast_degree": [10, 20, 40], "workload.0.fanouts": [[10], [20], [40]]}], labels=["incast_degree"],
              hide=["workload.0.fanouts"], set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.05s"},
              classes=["workflow/partition-aggregate/10", "workflow/partition-aggregate/20", "workflow/partition-aggregate/40", "small", "medium"],
              claims=dibs_claims, baseline="dctcp", plot_x="incast_degree"),
        Repro("pias_testbed", "PIAS vs DCTCP and TCP on the 16-server 1 Gbps testbed (client/server, the switch's 4 MB shared buffer under dynamic thresholds), web search and data mining, loads 0.5-0.8",
              "paper/pias_testbed", {"scheme": ["tcp", "dctcp", "pias"], "workload.load": [0.5, 0.6, 0.7, 0.8],
                                     "workload.cdf": ["websearch", "datamining"]},
              # 160 s per seed: at least 200 flows of every size bucket per point (120 s held 159 large
              # data-mining flows at load 0.5 over 3 seeds); 16 seeds: with 4, the data-mining small-flow p99 cut
              # and the web-search medium-flow cut were undecided (14 and 5 seeds at their spread); 26 seeds:
              # with 16 they still were, under the equivalence rule (26 and 19 seeds at their spread, the
              # stored run of 2026-11-27), so the run takes the larger of the two, as the rule names it
              seeds=26, set={"run.duration": "160s"}, quick_set={"run.duration": "1s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], claims=testbed_claims, baseline="dctcp", metric="mean"),
        Repro("pias_memcached", "memcached-like queries (one client, 15 servers, 1 KB each) with web-search background to the same client, testbed, DCTCP vs PIAS",
              "paper/pias_memcached", {"scheme": ["dctcp", "pias"], "workload.0.rate": [20, 40]},
              zip=[{"background": ["none", "0.5", "0.6", "0.7", "0.8"], "workload.1.load": [1e-9, 0.5, 0.6, 0.7, 0.8]}],
              labels=["background"], hide=["workload.1.load"], seeds=4, set={"run.duration": "30s"}, quick_set={"run.duration": "1s"},
              # the queries only, as the paper reports them (the background's size buckets are not graded)
              classes=["workflow/partition-aggregate/15"], claims=memcached_claims, baseline="dctcp", metric="mean",
              plot_x="background"),
        Repro("pias_endhost", "end-host queueing: pings behind 1 or 8 long flows in the sender's NIC queue, one queue vs PIAS's 2-queue host scheduler (100 KB)",
              "paper/pias_endhost", {},
              zip=[{"variant": ["one queue", "PIAS host scheduler", "one queue, 8 MB host queue"], "scheme": ["tcp", "pias", "tcp"],
                    "topology.host_buffer": ["1530000B", "1530000B", "8MB"]},
                   {"long_flows": [1, 8], "workload.0.rows": [[LONG_FLOW], [LONG_FLOW] * 8]}],
              labels=["variant", "long_flows"], hide=["scheme", "topology.host_buffer", "workload.0.rows"],
              set={"scheme.pias.queues": 2, "scheme.pias.thresholds": ["100KB"], "scheme.ecn_marking": "none"}, seeds=4,
              classes=["ping"], claims=endhost_claims, baseline="one queue", metric="mean", plot_x="long_flows"),
        # more seeds for pias_queues (20) and pias_thresholds (12): with 4, the 4- and 8-queue medium-flow cuts
        # and the 4-queue threshold gain were undecided (7 and 10 seeds at their spread); with 12, the 8-queue
        # cut still was (17)
        Repro("pias_queues", "PIAS on the testbed with 2, 4 and 8 queues against DCTCP, web search at load 0.8",
              "paper/pias_testbed", {},
              zip=[{"variant": ["dctcp", "2 queues", "4 queues", "8 queues"], "scheme": ["dctcp", "pias", "pias", "pias"],
                    "scheme.pias.queues": [8, 2, 4, 8]}],
              labels=["variant"], hide=["scheme", "scheme.pias.queues"], seeds=20, set={"run.duration": "60s"}, quick_set={"run.duration": "1s"},
              classes=["small", "medium", "large"], claims=queues_claims, plot_x="variant", metric="mean"),
        Repro("pias_thresholds", "PIAS thresholds on the testbed: optimal (exact bound minimum) vs equal split, 2 and 4 queues, web search at load 0.8",
              "paper/pias_testbed", {"scheme.pias.thresholds": ["optimal", "equal-split"], "scheme.pias.queues": [2, 4]},
              seeds=12, set={"run.duration": "60s"}, quick_set={"run.duration": "1s"}, classes=["small", "medium", "large"], claims=threshold_claims, metric="mean"),
        Repro("pias_mismatch", "PIAS on the testbed with thresholds mismatched to the traffic (web search run with data-mining thresholds), with and without ECN, against DCTCP, load 0.8",
              "paper/pias_testbed", {},
              zip=[{"variant": ["DCTCP", "matched, ECN", "mismatched, ECN", "mismatched, no ECN"], "scheme": ["dctcp", "pias", "pias", "pias"],
                    "scheme.pias.cdf": ["websearch", "websearch", "datamining", "datamining"],
                    "scheme.ecn_marking": ["per_port", "per_port", "per_port", "none"]}],
              labels=["variant"], hide=["scheme", "scheme.pias.cdf", "scheme.ecn_marking"], seeds=4, set={"run.duration": "60s"}, quick_set={"run.duration": "1s"},
              classes=["small", "medium", "large"], claims=mismatch_claims, plot_x="variant", metric="mean"),
        Repro("pias_websearch", "PIAS vs TCP, DCTCP, L2DCT, LAS and pFabric on the 144-host leaf-spine, web search, loads 0.5-0.8 (its claims: pias_leafspine)",
              "paper/pias_websearch", {"scheme": PIAS_SCHEMES, "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=3,
              set={"run.duration": "0.1s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], baseline="dctcp", metric="mean", converge="length"),
        Repro("pias_datamining", "PIAS vs TCP, DCTCP, L2DCT, LAS and pFabric on the 144-host leaf-spine, data mining, loads 0.5-0.8 (its claims: pias_leafspine)",
              "paper/pias_datamining", {"scheme": PIAS_SCHEMES, "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=3,
              # 0.15 s: every size bucket holds 200 flows; the data-mining cuts still grow with the run length
              # (item 8 of issue 34: 9% / 25% / 37% at 30 / 150 / 500 ms), which the length check shows; a
              # converged length costs about 0.5 s x 181 s of compute per simulated second x 72 runs
              set={"run.duration": "0.15s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], baseline="dctcp", metric="mean", converge="length"),
        Repro("pias_leafspine", "Section 5.3's claims on the 144-host leaf-spine, from the pias_websearch and pias_datamining runs together",
              "", {}, uses=["pias_websearch", "pias_datamining"], claims=leafspine_claims, converge="length"),
        Repro("pias_las", "LAS vs PIAS for long flows under sustained load: web search at 0.8, arrivals kept on (run.keep_load) while the measured flows finish",
              "paper/pias_websearch", {"scheme": ["las", "pias"]}, seeds=3,
              # a 1.5 s drain: with 0.5 s, 19 of LAS's 250 large flows were unfinished (the oldest over 0.5 s),
              # so its mean was a lower bound and the claim inconclusive ("needs a longer drain"); three
              # times the drain, declared before the run
              set={"run.duration": "0.03s", "run.keep_load": True, "run.drain": "1.5s"},
              quick_set={"run.duration": "0.005s", "run.drain": "0.1s"},
              classes=["small", "medium", "large"], claims=las_claims, baseline="las", converge="length"),
        Repro("pias_oversubscribed", "PIAS vs DCTCP on the 3:1 oversubscribed leaf-spine (3 x 48 hosts, 4 spines) with ECMP, web search, loads 0.5-0.8 on the leaf-spine links",
              "paper/pias_oversubscribed", {"scheme": ["tcp", "dctcp", "pias"], "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=5,
              # 0.2 s: with 0.1 s the short-flow cut moved from 30.5% (0.05 s) to 33.2% ± 2.8 (not converged);
              # 5 seeds: with 3 the all-flow cut was undecided (4 at its spread)
              set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], claims=oversubscribed_claims, baseline="dctcp", metric="mean", converge="length"),
        # issue 38: DeTail beside today's lossless fabric (`detailsim reproduce modern` runs the three)
        Repro("modern_steady", "DeTail against DCTCP, DCQCN and HPCC on the DeTail paper's steady workload (2/8/32 KB at 2000 retrievals/s, "
              "1 MB background, 1 Gbps), every switch a 3 MB shared buffer; RoCE settings scaled to 1 Gbps by the declared rule",
              "paper/steady", {}, zip=[{"scheme": MODERN_SCHEMES, "scheme.tcp.handshake": MODERN_HANDSHAKE}], hide=["scheme.tcp.handshake"],
              seeds=8, set={"run.duration": "0.2s", **MODERN_SHARED_1G, **roce_scaling(1)}, quick_set={"run.duration": "0.02s"},
              classes=[*SIZES, "background"], baseline="detail", metric="p99", converge="none", report=modern_report([*SIZES, "background"])),
        Repro("modern_bursty", "DeTail against DCTCP, DCQCN and HPCC on the DeTail paper's bursty workload (40 ms bursts at 2500 retrievals/s "
              "every 100 ms, 1 Gbps), every switch a 3 MB shared buffer; RoCE settings scaled to 1 Gbps",
              "paper/bursty", {}, zip=[{"scheme": MODERN_SCHEMES, "scheme.tcp.handshake": MODERN_HANDSHAKE}], hide=["scheme.tcp.handshake"],
              seeds=8, set={"run.duration": "0.3s", **MODERN_SHARED_1G, **roce_scaling(1)}, quick_set={"run.duration": "0.1s"},
              classes=[*SIZES, "background"], baseline="detail", metric="p99", converge="none", report=modern_report([*SIZES, "background"])),
        Repro("modern_fattree", "DeTail against DCTCP, DCQCN and HPCC on a k = 8 fat tree (128 hosts) of 10 and 100 Gbps links, web search and "
              "Facebook Hadoop (the HPCC paper's two workloads) at load 0.5, shared buffers of 100 KB per 10 Gbps of port; RoCE settings scaled "
              "to the link rate",
              "examples/websearch_fattree", {"workload.0.cdf": ["websearch", "hadoop"]},
              # the arrival window per rate: about 2,000 web-search flows a seed at 10 Gbps, 4,000 at 100 Gbps
              zip=modern_fattree_zip(["40ms", "8ms"]), quick_zip=modern_fattree_zip(["2ms", "0.4ms"]),
              labels=["link_rate"], hide=["topology.link_rate", "topology.shared_buffer.size", "run.duration", *roce_scaling(1)],
              seeds=8, classes=["small", "medium", "large"], baseline="detail", metric="p99", claims=hpcc_fattree_claims,
              report=modern_report(["small", "medium", "large"])),
        # issue 38: checks against the DCQCN and HPCC papers (cited, not files here: docs/reproduction.md, "Cited papers")
        Repro("roce_incast", "DCQCN and HPCC papers: a 16-to-1 incast (1 MB each) into one 25 Gbps port through a 4 MB shared buffer; DCQCN, HPCC, "
              "and RoCE with PFC alone (DCQCN's senders with no marking: line rate until paused)",
              "examples/rdma_incast", {},
              zip=[{"variant": ["DCQCN", "HPCC", "PFC alone"], "scheme": ["dcqcn", "hpcc", "dcqcn"], "scheme.ecn_marking": ["red", "none", "none"]}],
              labels=["variant"], hide=["scheme", "scheme.ecn_marking"], seeds=8, classes=["incast"], claims=roce_incast_claims,
              baseline="PFC alone", metric="p99", plot_x="variant"),
        Repro("roce_convergence", "DCQCN and HPCC papers: two flows into one 25 Gbps port (the second joins 2 ms after the first), goodput over 10-20 ms",
              "examples/roce_two_flows", {"scheme": ["dcqcn", "hpcc"]}, seeds=8, classes=["pair"], claims=roce_convergence_claims,
              baseline="dcqcn", metric="p99"),
    ]
}


def markdown_table(stats: pl.DataFrame, keys: list[str], classes: list[str], baseline: str = "fh", flows: pl.DataFrame | None = None) -> str:
    """Pooled mean (over finished flows), p50 / p99 / p99.9 (over all measured flows, ">=" where a value is
    only a lower bound) per series and class (`unfinished` counts the measured flows still running when the
    run's drain time ran out), with the reduction over FH (">=" / "<=": a bound); given the
    flows of several seeds, each value with the half-width of its 95% t-interval over seeds (the same
    value computed on each seed alone)."""
    has_fh = "scheme" in keys and baseline in stats["scheme"].to_list()
    red = reduction_table(stats, keys, baseline, "p999") if has_fh else None
    red99 = reduction_table(stats, keys, baseline, "p99") if has_fh else None
    ci = seed_ci(flows, keys) if flows is not None else None
    rci = {m: reduction_ci(flows, keys, baseline, m) for m in ("p99", "p999")} if flows is not None and has_fh else {}
    head = [*keys, "class", "flows", "unfinished", "mean ms", "p50 ms", "p99 ms", "p99.9 ms"] + (["cut p99", "cut p99.9"] if has_fh else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {c: i for i, c in enumerate(classes)}
    # numbers and quantities by value (rto_min 1ms, 5ms, 10ms, 200ms), then the classes in their order
    rows = sorted(stats.filter(pl.col("class").is_in(classes)).iter_rows(named=True),
                  key=lambda r: (*(natural_key(r[k]) for k in keys), order[r["class"]]))
    for r in rows:
        where = {k: r[k] for k in [*keys, "class"]}
        cells = [str(r[k]) for k in keys] + [r["class"], str(r["count"]), str(r.get("unfinished") or 0)]
        cells += [(">= " if r.get(f"{m}_lb") else "") + pm(r[f"{m}_ms"], ci_of(ci, f"{m}_ci", where)) for m in ("mean", "p50", "p99", "p999")]
        if has_fh:
            def find(t: pl.DataFrame, m: str) -> str:
                q = t.filter(pl.col("class") == r["class"])
                for k in keys:
                    q = q.filter(pl.col(k) == r[k])
                return fmt_reduction(q["reduction_pct"][0], q["reduction_bound"][0], ci_of(rci.get(m), "reduction_ci", where)) if q.height else ""
            cells += [find(red99, "p99"), find(red, "p999")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def class_stats(flows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pooled statistics per (keys, class) over all measured flows (`plots.pooled_percentiles`: percentiles
    with their lower-bound flags, `count` finished, `unfinished`, `measured`), with `timed_out` (flows with
    at least one timeout)."""
    stats = pooled_percentiles(flows, keys)
    allf = flows.with_columns(pl.col("class").cast(pl.String))
    extra = allf.group_by([*keys, "class"]).agg((pl.col("timeouts") > 0).sum().alias("timed_out"),
                                                (sorted_mean(pl.col("ideal")) * 1e3).alias("ideal_ms"))
    return stats.join(extra, on=[*keys, "class"], how="left", maintain_order="left")


def is_size_bucket(cls: str) -> bool:
    """Whether a flow class is a size bucket (retrievals or background flows of one size, PIAS's small /
    medium / large) rather than a count of workflows, incast rounds or pings."""
    return cls in ("small", "medium", "large") or cls.split("/")[0] in ("retrieval", "background")


def sample_note(stats: pl.DataFrame, keys: list[str], classes: list[str], least: int = MIN_FLOWS) -> str:
    """One line under a table: whether every reported size bucket holds at least `least` flows (measured,
    finished or not) at every point, and the smallest one; or the points that do not."""
    q = stats.filter(pl.col("class").is_in([c for c in classes if is_size_bucket(c)]))
    if not q.height:
        return ""
    n = pl.col("measured").fill_null(pl.col("count"))
    q = q.with_columns(n.alias("_n")).sort("_n")
    def where(r: dict[str, Any]) -> str:
        return ", ".join([*(f"{k} = {r[k]}" for k in keys), r["class"]])
    small = [r for r in q.iter_rows(named=True) if r["_n"] < least]
    if small:
        return (f"**Fewer than {least} flows** in {len(small)} reported size bucket{'s' if len(small) > 1 else ''}: "
                + "; ".join(f"{where(r)}: {r['_n']}" for r in small[:6]) + (" …" if len(small) > 6 else ""))
    r = q.row(0, named=True)
    return f"Every reported size bucket holds at least {least} flows at every point (smallest: {r['_n']}, {where(r)})."


def claims_markdown(claims: list[Claim]) -> str:
    lines = ["| claim | paper (where; source) | measured (95% CI) | how measured | label | verdict |", "|---|---|---|---|---|---|"]
    for c in claims:
        j = c.to_json()
        v = c.verdict + (f" (needs {c.resolve})" if c.resolve else "")
        lines.append(f"| {c.claim} | {fmt_value(c.paper_value, c.unit)} ({c.where}; {cite(c.source)}) | {fmt_measured(j)} | {c.detail} | {c.label} | {v} |")
    return "\n".join(lines)


def _data(name: str, flows: pl.DataFrame, summary: pl.DataFrame, ckeys: list[str]) -> Data:
    per_seed = []
    seeds = sorted(flows["seed"].unique().to_list())
    if len(seeds) > 1:
        for sd in seeds:
            per_seed.append((class_stats(flows.filter(pl.col("seed") == sd), ckeys), summary.filter(pl.col("seed") == sd)))
    return Data(name, class_stats(flows, ckeys), summary, per_seed)


def _load(r: Repro, d: Path) -> tuple[dict[str, pl.DataFrame], list[str]]:
    """A store's tables (relabelled as the paper reports them) and the axes the claims see: every swept axis,
    also one that takes a single value (as in --quick)."""
    t = read_store(d, r.flow_classes, ("id", "dst", "input_id", "window_bytes", "window_goodput_bps", "bytes_delivered", "slowdown")
                   if r.flow_classes else ())
    if r.relabel:
        t["flows"] = r.relabel(t["flows"])
    m = json.loads((d / "sweep.json").read_text())
    ckeys = [a for a in m["axes"] if a != "seed" and a not in r.hide and a in t["flows"].columns]
    return t, ckeys


def _half_duration(r: Repro) -> str:
    return f"{duration_seconds(str(r.set['run.duration']), 'run.duration') / 2:g}s"


def _check_data(name: str, r: Repro, d: Path, t: dict[str, pl.DataFrame], ckeys: list[str], workers: int | None, scheduler: str | None,
                progress: bool, regrade: bool = False, reading: dict[str, Any] | None = None) -> tuple[Data | None, str]:
    """The convergence check's data: the first half of the seeds, or a run of half the arrival window (in
    d/check); and how it was made."""
    if r.converge == "seeds":
        seeds = sorted(t["flows"]["seed"].unique().to_list())
        if len(seeds) < 2:
            return None, ""
        half = seeds[: len(seeds) // 2]
        f = t["flows"].filter(pl.col("seed").is_in(half))
        return _data(name, f, t["summary"].filter(pl.col("seed").is_in(half)), ckeys), f"seeds {half[0]}-{half[-1]} of {len(seeds)}"
    if r.converge == "length":
        dur = _half_duration(r)
        if not regrade:
            run_store(r.sweep_spec(False, duration=dur, reading=reading), d / "check", f"detailsim reproduce {name} (convergence check)", workers, scheduler, progress)
        tc, ck = _load(r, d / "check")
        return _data(name, tc["flows"], tc["summary"], ck), f"half the arrival window ({dur} against {r.set['run.duration']})"
    return None, ""


def _combined(name: str, r: Repro, out: Path, quick: bool) -> tuple[Data, Data | None, str]:
    """A reproduction whose claims read other reproductions' stores (`uses`), each row tagged with its
    `experiment`; and the same for their convergence checks."""
    def tag(parts: list[tuple[str, Data]]) -> Data:
        stats = pl.concat([p.stats.with_columns(pl.lit(n).alias("experiment")) for n, p in parts], how="diagonal_relaxed")
        summ = pl.concat([p.summary.with_columns(pl.lit(n).alias("experiment")) for n, p in parts], how="diagonal_relaxed")
        per = []
        if all(p.per_seed for _, p in parts) and len({len(p.per_seed) for _, p in parts}) == 1:
            for i in range(len(parts[0][1].per_seed)):
                per.append((pl.concat([p.per_seed[i][0].with_columns(pl.lit(n).alias("experiment")) for n, p in parts], how="diagonal_relaxed"),
                            pl.concat([p.per_seed[i][1].with_columns(pl.lit(n).alias("experiment")) for n, p in parts], how="diagonal_relaxed")))
        return Data(name, stats, summ, per)
    main, check = [], []
    how = ""
    for u in r.uses:
        ru, du = REPROS[u], out / u
        if not (du / "sweep.json").exists():
            raise FileNotFoundError(f"reproduce {name}: run `detailsim reproduce {u}` first (its store {du} is missing)")
        t, ck = _load(ru, du)
        main.append((u, _data(u, t["flows"], t["summary"], ck)))
        if not quick and ru.converge == "length" and (du / "check" / "sweep.json").exists():
            tc, ckc = _load(ru, du / "check")
            check.append((u, _data(u, tc["flows"], tc["summary"], ckc)))
            how = "half the arrival window of " + " and ".join(r.uses)
    return tag(main), (tag(check) if len(check) == len(main) and check else None), how


def reproduce(name: str, out: Path, quick: bool = False, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True, regrade: bool = False, reading: dict[str, Any] | None = None) -> str:
    """Run one reproduction into out/name; returns its Markdown (table and claims). `regrade`: run nothing,
    grade the claims again from the runs the store holds (and its convergence check's), without plots.
    `reading`: another reading of the DeTail paper's open choices, set on the DeTail scenarios' runs
    (`Repro.sweep_spec`; docs/model.md)."""
    from ..core.sweep import sweep_axes
    from ..outputs.plots import plot_store
    from ..outputs.report import build_report

    r = REPROS[name]
    d = out / name
    t0, counts = time.monotonic(), None
    if r.uses:
        d.mkdir(parents=True, exist_ok=True)
        data, cdata, how = _combined(name, r, out, quick)
        t, keys, stats = None, [], data.stats
    else:
        source = f"detailsim reproduce {name}{' --quick' if quick else ''}"
        if regrade:
            if not (d / "sweep.json").exists():
                raise FileNotFoundError(f"reproduce {name} --regrade: no store at {d} (run it first)")
            quick = json.loads((d / "sweep.json").read_text())["spec"].get("description", "").endswith("(quick)")
        else:
            if (d / "sweep.json").exists() and json.loads((d / "sweep.json").read_text())["spec"].get("description", "").endswith("(quick)") != quick:
                shutil.rmtree(d)  # an earlier run of the other variant (quick / full): start again
            counts = run_store(r.sweep_spec(quick, reading=reading), d, source, workers, scheduler, progress)
        t, ckeys = _load(r, d)
        keys = [k for k in sweep_axes(d, t["summary"]) if k not in r.hide]
        data = _data(name, t["flows"], t["summary"], ckeys)
        stats = data.stats if ckeys == keys else class_stats(t["flows"], keys)
        # the check also runs for a store whose claims another reproduction grades (`uses`)
        graded = bool(r.claims) or any(name in o.uses and o.claims for o in REPROS.values())
        cdata, how = (None, "") if quick or not graded else _check_data(name, r, d, t, ckeys, workers, scheduler, progress, regrade, reading)
    claims = r.claims(data) if r.claims else []
    if cdata is not None and claims:
        for c, cc in zip(claims, r.claims(cdata)):
            assert c.id == cc.id
            c.set_check(cc.measured_value, how)
    (d / "claims.json").write_text(json.dumps([c.to_json() for c in claims], indent=2))
    if name == "calibrate" and t is not None:
        dur = duration_seconds(str({**r.set, **(r.quick_set if quick else {})}["run.duration"]), "run.duration")
        stats = stats.join(background_in_progress(t["flows"], keys, (dur / 2, dur)), on=keys, how="left", maintain_order="left")
        (d / "calibration.json").write_text(json.dumps(calibration_points(stats), indent=2, default=str) + "\n")
    md = f"## {name}: {r.title}\n\n"
    if t is not None:
        (d / "plots").mkdir(parents=True, exist_ok=True)
        for f in (d / "plots").glob("*") if not regrade else []:
            f.unlink()
        if r.plots and not regrade:
            plot_store(d, d / "plots", x=r.plot_x, baseline=r.baseline, metric=r.metric)
            build_report(d, d / "report.html", baseline=r.baseline, metric=r.metric, plots_dir=d / "plots")
        md += markdown_table(stats, keys, r.classes, r.baseline, t["flows"]) + "\n"
        note = "" if quick else sample_note(stats, keys, r.classes)
        if note:
            md += "\n" + note + "\n"
    else:
        md += f"Claims read from the stores of {', '.join(r.uses)} (their tables are in their own sections).\n"
    if r.extra:
        md += "\n" + r.extra(stats) + "\n"
    if r.report and t is not None:
        md += "\n" + r.report(t["flows"], t["summary"], keys) + "\n"
    if claims:
        md += "\n" + claims_markdown(claims) + "\n"
    (d / "table.md").write_text(md)
    if not regrade:
        (d / "timing.json").write_text(json.dumps(timing_record(name, time.monotonic() - t0, workers, quick, reading, counts), indent=1) + "\n")
    return md


def _commit() -> str | None:
    """The project's commit (short), if this is a git checkout."""
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, cwd=Path(__file__).parent)
    except OSError:
        return None
    return r.stdout.strip() or None


def _module_digest() -> str:
    """The first 12 hex digits of the SHA-256 of the native module this process loaded: which build of the core
    ran, where the commit of the checkout (`_commit`) may be newer than the module's build."""
    import hashlib

    from .. import _core

    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:12]


def timing_record(name: str, wall_s: float, workers: int | None, quick: bool, reading: dict[str, Any] | None,
                  counts: dict[str, int] | None) -> dict[str, Any]:
    """What one reproduction's run took: its wall time (the runs, the convergence check, grading, plots),
    the workers, the commit, the native module's digest (`_module_digest`), the date and the processor it ran
    on (`machine.processor`); `complete` is false when the store resumed runs done before (its time is then
    only the rest's)."""
    from ..machine import processor

    return {"experiment": name, "wall_s": round(wall_s, 1), "workers": workers or os.cpu_count() or 1, "quick": quick,
            "reading": (reading or {}).get("name"), "complete": not (counts or {}).get("skipped"),
            "commit": _commit(), "module": _module_digest(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "cpu": processor()}

# DeTail's evaluations first, then DIBS and PIAS
ORDER = ["calibrate", "scatter", "incast", "verification", "steady", "steady_closed_background", "pfc_alone", "bursty", "long_flows", "disconnected",
         "degraded", "sequential", "sequential_first", "partition_aggregate", "partition_aggregate_first", "page_creation", "dibs_incast",
         "pias_testbed", "pias_memcached", "pias_endhost", "pias_queues", "pias_thresholds", "pias_mismatch", "pias_websearch",
         "pias_datamining", "pias_leafspine", "pias_las", "pias_oversubscribed", "modern_steady", "modern_bursty", "modern_fattree", "roce_incast", "roce_convergence"]
# names that run several reproductions
GROUPS = {"modern": ["modern_steady", "modern_bursty", "modern_fattree"]}
REPROS = {k: REPROS[k] for k in ORDER}


# ---------------------------------------------------------------- generated documentation

DOC_CLAIMS = Path("docs/reproduction/claims.json")


def regrade_stored(claims: list[dict[str, Any]], fresh: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """`claims` (docs/reproduction/claims.json) re-graded from their own numbers under today's rule and labels:
    a held-out claim listed in SEEN is labelled seen; each claim of an experiment `fresh` holds (claims just
    graded from a store) is replaced by the fresh one. The numbers are never changed."""
    from .claims import SEEN, WITHIN
    from .grading import regrade, regrade_resolution

    by_exp: dict[str, list[dict[str, Any]]] = {}
    for c in fresh or []:
        by_exp.setdefault(c["experiment"], []).append(c)
    merged: list[dict[str, Any]] = []
    done: set[str] = set()
    for c in claims:
        e = c["experiment"]
        if e in by_exp:
            if e not in done:
                merged += by_exp[e]
                done.add(e)
            continue
        merged.append(c)
    out = []
    for c in merged:
        c = dict(c)
        if c["label"] == "held out" and c["id"] in SEEN:
            c["label"], c["label_note"] = "seen", SEEN[c["id"]]
        c["verdict"], c["resolve"] = regrade(c, WITHIN.get(c["id"])), regrade_resolution(c, WITHIN.get(c["id"]))
        out.append(c)
    return out


def collect_claims(out: Path, names: list[str] | None = None) -> list[dict[str, Any]]:
    """The claims of every reproduction under `out` (in ORDER), as written to each NAME/claims.json."""
    claims: list[dict[str, Any]] = []
    for n in names or ORDER:
        p = out / n / "claims.json"
        if p.exists():
            claims += json.loads(p.read_text())
    return claims


def convergence_table(claims: list[dict[str, Any]]) -> str:
    """Per experiment: how its values were checked (half the seeds, or half the arrival window), how many of
    its graded values moved by no more than their 95% interval, and the ones that moved more."""
    lines = ["| experiment | checked against | values | within their interval | moved more than their interval |", "|---|---|---|---|---|"]
    by: dict[str, list[dict[str, Any]]] = {}
    for c in claims:
        by.setdefault(c["experiment"], []).append(c)
    for exp, cs in by.items():
        checked = [c for c in cs if c.get("check") and c["check"].get("converged") is not None]
        if not checked:
            why = "one live run (no interval)" if any(c["measured"]["seeds"] < 2 for c in cs) else "not checked"
            lines.append(f"| {exp} | {why} | {len(cs)} | | |")
            continue
        moved = [c for c in checked if not c["check"]["converged"]]
        lines.append(f"| {exp} | {checked[0]['check']['how']} | {len(checked)} | {len(checked) - len(moved)} | "
                     + ("; ".join(f"`{c['id'].split('.', 1)[1]}` {fmt_value(c['check']['value'], c['paper']['unit'])} -> {fmt_value(c['measured']['value'], c['paper']['unit'])}"
                                  for c in moved) or "none") + " |")
    return "\n".join(lines)


def generated_blocks(claims: list[dict[str, Any]]) -> dict[str, str]:
    """What the docs show between their markers: the claims-at-a-glance table, the verdict counts and the
    convergence check."""
    from .grading import counts_line

    return {"claims-glance": glance_table(claims), "claims-counts": counts_line(claims), "convergence": convergence_table(claims)}


DOCS_WITH_BLOCKS = {"docs/reproduction.md": ["claims-counts", "claims-glance", "convergence"], "README.md": ["claims-counts"]}
DOC_CALIBRATION = Path("docs/reproduction/calibration.json")
# each experiment's last full run's wall time (`timing.json` of a store, merged by `update_docs`)
DOC_TIMINGS = Path("docs/reproduction/timings.json")
TIMINGS_SOURCE = "docs/reproduction/timings.json by `detailsim reproduce --update-docs`"


def merge_timings(old: dict[str, Any], out: Path) -> dict[str, Any]:
    """`old` (experiment -> timing) with the full, complete, adopted-model runs `out` holds replacing theirs."""
    new = dict(old)
    for n in ORDER:
        f = out / n / "timing.json"
        if f.exists():
            t = json.loads(f.read_text())
            if not t["quick"] and t["reading"] is None and t["complete"]:
                new[n] = t
    return {n: new[n] for n in ORDER if n in new}


def timings_markdown(timings: dict[str, Any]) -> str:
    """The wall time of the full reproduction (`detailsim reproduce all`, which runs the experiments one
    after another): each experiment's last full run, on the processor it names (the runs before 2026-12-02
    did not record one), and their sum."""
    lines = ["| experiment | wall time | workers | commit | date | processor |", "|---|---|---|---|---|---|"]
    for n, t in timings.items():
        cpu = t.get("cpu", "").split(";")[0] or "not recorded"
        lines.append(f"| `{n}` | {t['wall_s']:,.0f} s | {t['workers']} | {t['commit'] or '?'} | {t['date']} | {cpu} |")
    total = sum(t["wall_s"] for t in timings.values())
    missing = [n for n in ORDER if n not in timings]
    lines.append("")
    if missing:
        lines.append(f"**{len(timings)} of {len(ORDER)} experiments timed: {total:,.0f} s ({total / 3600:.1f} h)** (each its last full run, "
                     f"with the workers shown); the full reproduction's wall time is this plus the experiments not yet timed: "
                     + ", ".join(f"`{n}`" for n in missing) + " (a run of each adds it).")
    else:
        lines.append(f"**The full reproduction: {total:,.0f} s ({total / 3600:.1f} h)**, summed over all {len(ORDER)} experiments (each its "
                     "last full run, with the workers shown).")
    return "\n".join(lines)
# the papers' lines the claims quote (checked by tests/test_grading.py; written from ../shared/papers)
DOC_LINES = Path("docs/reproduction/paper_lines.json")


def paper_lines(claims: list[dict[str, Any]], papers: Path) -> dict[str, str]:
    """Each claim's source line, `file:line` -> the line's text, read from the papers' text files."""
    out: dict[str, str] = {}
    for c in claims:
        if c["source"].startswith(CITED_PREFIX):
            continue  # a paper we do not have as a file (docs/reproduction.md, "Cited papers")
        f, n = c["source"].rsplit(":", 1)
        out[c["source"]] = (papers / f).read_text().splitlines()[int(n) - 1]
    return dict(sorted(out.items(), key=lambda kv: (kv[0].split(":")[0], int(kv[0].split(":")[1]))))
CALIBRATION_SOURCE = "docs/reproduction/calibration.json by `detailsim reproduce --update-docs`"


def doc_plot(d: Path, r: Repro) -> Path | None:
    """The plot docs/reproduction.md shows for a reproduction: its reduction plot, else a percentile plot."""
    plots = sorted((d / "plots").glob("*.png"))
    for want in (f"reduction_{r.metric}_over_{r.baseline}.png", f"percentile_{r.metric}"):
        for p in plots:
            if p.name.startswith(want):
                return p
    return plots[0] if plots else None


def experiments_block(out: Path, root: Path, old: str | None = None) -> str:
    """One section per reproduction: its command, plot, table and graded claims (from OUT/NAME/table.md);
    copies each plot to docs/reproduction/NAME.png. `old`: the block as it stands, whose section of a
    reproduction OUT does not hold is kept as it is."""
    kept = {}
    for sec in re.split(r"(?m)^(?=### )", old or ""):
        if sec.startswith("### "):
            kept[sec[4:].split(":", 1)[0]] = sec.rstrip("\n") + "\n"
    parts = []
    for n in ORDER:
        d = out / n
        if not (d / "table.md").exists():
            if n in kept:
                parts.append(kept[n])
            continue
        r = REPROS[n]
        body = (d / "table.md").read_text().split("\n", 1)[1].strip()
        img = ""
        p = doc_plot(d, r)
        if p is not None:
            shutil.copyfile(p, root / "docs" / "reproduction" / f"{n}.png")
            img = f"![{n}](reproduction/{n}.png)\n\n"
        how = (f"reads {', '.join(r.uses)}" if r.uses else f"base scenario `{r.base}`, {r.seeds} seed{'s' if r.seeds > 1 else ''}"
               + {"seeds": f", checked on the first {r.seeds // 2}", "length": ", checked at half the arrival window"}.get(r.converge, ""))
        parts.append(f"### {n}: {r.title}\n\n`detailsim reproduce {n}` ({how})\n\n{img}{body}\n")
    return "\n".join(parts)


def update_docs(claims: list[dict[str, Any]], root: Path, out: Path | None = None) -> list[Path]:
    """Write `claims` to docs/reproduction/claims.json and regenerate the blocks of the docs that show them
    (and, given the results directory `out`, the per-experiment sections of docs/reproduction.md)."""
    (root / DOC_CLAIMS).parent.mkdir(parents=True, exist_ok=True)
    (root / DOC_CLAIMS).write_text(json.dumps(claims, indent=2) + "\n")
    blocks = generated_blocks(claims)
    written = [root / DOC_CLAIMS]
    papers = (root / PAPERS_DIR).resolve()
    if papers.is_dir():
        (root / DOC_LINES).write_text(json.dumps(paper_lines(claims, papers), indent=1, ensure_ascii=False) + "\n")
        written.append(root / DOC_LINES)
    for rel, names in DOCS_WITH_BLOCKS.items():
        p = root / rel
        text = p.read_text()
        for n in names:
            text = render_block(text, n, blocks[n], rel)
        if rel == "docs/reproduction.md" and block_of(text, "readings", READINGS_SOURCE) is not None:
            text = render_block(text, "readings", readings_markdown(claims, load_readings(root), {n: r.base for n, r in REPROS.items()}), rel, READINGS_SOURCE)
        if rel == "docs/reproduction.md" and block_of(text, "why", WHY_SOURCE) is not None:
            text = render_block(text, "why", why_markdown(claims, load_readings(root), load_demos(root), {n: r.base for n, r in REPROS.items()}), rel, WHY_SOURCE)
        if out is not None and rel == "docs/reproduction.md":
            text = render_block(text, "experiments", experiments_block(out, root, block_of(text, "experiments")), rel)
            cal = out / "calibrate" / "calibration.json"
            if cal.exists():
                shutil.copyfile(cal, root / DOC_CALIBRATION)
                written.append(root / DOC_CALIBRATION)
            if (root / DOC_CALIBRATION).exists():
                points = json.loads((root / DOC_CALIBRATION).read_text())
                text = render_block(text, "calibration", calibration_markdown(points), rel, CALIBRATION_SOURCE)
            old = json.loads((root / DOC_TIMINGS).read_text()) if (root / DOC_TIMINGS).exists() else {}
            timings = merge_timings(old, out)
            if timings:
                (root / DOC_TIMINGS).write_text(json.dumps(timings, indent=1) + "\n")
                written.append(root / DOC_TIMINGS)
            if block_of(text, "wall-time", TIMINGS_SOURCE) is not None:
                text = render_block(text, "wall-time", timings_markdown(timings), rel, TIMINGS_SOURCE)
        if rel == "docs/reproduction.md" and block_of(text, "modern-finds", FINDS_SOURCE) is not None:
            # from the modern_* tables just written (or kept)
            text = render_block(text, "modern-finds", modern_findings(text), rel, FINDS_SOURCE)
        p.write_text(text)
        written.append(p)
    return written
