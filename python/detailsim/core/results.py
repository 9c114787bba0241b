"""Results: the per-flow table, exact percentiles, the summary dict, and writing them out."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

NOT_DONE = 2**64 - 1
PS = 1e-12


COLUMN_TYPES = {
    "id": "<u8", "class": "<u2", "src": "<u4", "dst": "<u4", "size": "<u8", "priority": "u1",
    "start_ps": "<u8", "end_ps": "<u8", "timeouts": "<u4", "retransmits": "<u4", "ideal_ps": "<u8",
    "bytes_delivered": "<u8", "window_bytes": "<u8", "input_id": "<u8",
}


def flows_frame(raw: dict[str, bytes], classes: list[str], window: tuple[float, float] | None = None,
                end_s: float | None = None) -> pl.DataFrame:
    """Build the flow table from the core's column buffers. Times are in seconds; `end` and `fct` are
    null for flows that had not finished when the run ended. `fct_lower`: the FCT of a finished flow; for
    an unfinished one, how long it had run when the run ended at `end_s` (a lower bound on its FCT; 0
    when `end_s` is not given). `bytes_delivered`: bytes the receiving
    application got (all of them for a finished flow). With a measurement window (from_s, to_s):
    `window_bytes` delivered inside it and `window_goodput_bps` = window_bytes x 8 / window length
    (iperf-style); null without one. `input_id`: a flow-list row's id in its input file (null for generated
    flows)."""
    cols = {k: np.frombuffer(raw[k], dtype=t) for k, t in COLUMN_TYPES.items()}
    end_ps, start_ps = cols["end_ps"], cols["start_ps"]
    done = end_ps != np.uint64(NOT_DONE)
    start = start_ps.astype(np.float64) * PS
    end = np.where(done, end_ps.astype(np.float64) * PS, np.nan)
    fct = np.where(done, (np.where(done, end_ps, start_ps) - start_ps).astype(np.float64) * PS, np.nan)
    class_enum = pl.Enum(classes if classes else ["none"])
    df = pl.DataFrame(
        {
            "id": cols["id"],
            "class": pl.Series(np.asarray(classes, dtype=object)[cols["class"]] if len(cols["class"]) else [], dtype=pl.String).cast(class_enum),
            "src": cols["src"],
            "dst": cols["dst"],
            "size": cols["size"],
            "priority": cols["priority"],
            "start": start,
            "end": pl.Series(end, nan_to_null=True),
            "fct": pl.Series(fct, nan_to_null=True),
            "fct_lower": np.where(done, fct, 0.0 if end_s is None else np.maximum(0.0, end_s - start)),
            "timeouts": cols["timeouts"],
            "retransmits": cols["retransmits"],
            "ideal": pl.Series(np.where(cols["ideal_ps"] > 0, cols["ideal_ps"].astype(np.float64) * PS, np.nan), nan_to_null=True),
            "bytes_delivered": cols["bytes_delivered"],
            # a flow-list row's id in its input (htsim's connection id, the HPCC flow file's line, the CSV's
            # data row, from 1); null for generated flows
            "input_id": pl.Series(cols["input_id"], dtype=pl.UInt64).replace(0, None),
        }
    )
    df = df.with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"))
    if window is not None:
        length = window[1] - window[0]
        wb = cols["window_bytes"]
        df = df.with_columns(pl.Series("window_bytes", wb), pl.Series("window_goodput_bps", wb.astype(np.float64) * 8.0 / length))
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.UInt64).alias("window_bytes"), pl.lit(None, dtype=pl.Float64).alias("window_goodput_bps"))
    return df.sort("id")


def rank_of(n: int, q: float) -> int:
    """The 1-based nearest rank of the q-quantile among n values."""
    return max(1, math.ceil(q * n - 1e-9))


def nearest_rank(sorted_values: np.ndarray, q: float) -> float:
    """The q-quantile by the nearest-rank method: the smallest value with at least q of the data at or below it."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    return float(sorted_values[rank_of(n, q) - 1])


QUANTILES = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
# the statistics that may be lower bounds (a `<metric>_lb` flag beside each)
BOUNDED = ("p50", "p99", "p999", "max")


def censored_stats(fct_s: np.ndarray, age_s: np.ndarray | None = None) -> dict[str, Any]:
    """FCT statistics (ms) of one class over all its measured flows, finished or not.

    `fct_s`: the finished flows' FCTs; `age_s`: how long each unfinished flow had run when the run ended
    (seconds), a lower bound on its FCT. Percentiles are nearest-rank over all N measured flows, each ranked
    by what is known of it: a finished flow by its FCT, an unfinished one by its age, so the k-th value is a
    lower bound on the true k-th FCT. It is exact (flag `<metric>_lb` false) when at least k finished flows
    are no slower than the youngest unfinished flow (every unfinished flow then ranks after them, whatever
    its FCT); otherwise the rank falls, or may fall, on an unfinished flow and the value is only a lower
    bound (`<metric>_lb` true, shown as ">= X"). `max` is a lower bound whenever a flow is unfinished.
    `mean_ms` is over the finished flows only; `unfinished` says how many it leaves out. `count` is the
    finished flows."""
    f = np.sort(np.asarray(fct_s, dtype=np.float64)) * 1e3
    c = np.sort(np.asarray(age_s if age_s is not None else [], dtype=np.float64)) * 1e3
    n, m = len(f), len(c)
    out: dict[str, Any] = {"count": int(n), "unfinished": int(m), "mean_ms": float(f.mean()) if n else None}
    if n + m == 0:
        out.update({f"{k}_ms": None for k in BOUNDED})
        out.update({f"{k}_lb": False for k in BOUNDED})
        return out
    every = np.sort(np.concatenate([f, c]))
    exact = int(np.searchsorted(f, c[0], side="right")) if m else n
    for name, q in QUANTILES.items():
        k = rank_of(n + m, q)
        out[f"{name}_ms"] = float(every[k - 1])
        out[f"{name}_lb"] = bool(k > exact)
    out["max_ms"] = float(every[-1])
    out["max_lb"] = bool(m > 0)
    return {k: out[k] for k in ["count", "unfinished", "mean_ms", *(f"{b}_ms" for b in BOUNDED), *(f"{b}_lb" for b in BOUNDED)]}


def fmt_ms(v: float | None, lb: bool = False, fmt: str = "{:.3f}") -> str:
    """A statistic in a table: the value, with ">= " when it is only a lower bound."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return (">= " if lb else "") + fmt.format(v)


def summarize(core: dict[str, Any], flows: pl.DataFrame, scenario: str, seed: int, wall_s: float) -> dict[str, Any]:
    """The run summary, in the documented key order."""
    fct: dict[str, Any] = {}
    for cls in core["classes"]:
        g = flows.filter(pl.col("class") == cls)
        fct[cls] = class_stats_of(g)
        sd = g["slowdown"].drop_nulls()
        if sd.len():
            fct[cls]["mean_slowdown"] = float(sd.mean())
    goodput = window_goodput(flows, core["classes"]) if flows["window_bytes"].null_count() < flows.height else None
    # partition-aggregate workflows: per fan-out classes, and all fan-outs together
    pa = [c for c in core["classes"] if c.startswith("workflow/partition-aggregate/")]
    if pa:
        fct["workflow/partition-aggregate"] = class_stats_of(flows.filter(pl.col("class").cast(pl.String).is_in(pa)))
    return {
        "scenario": scenario,
        "scheme": core["scheme"],
        # the PIAS demotion thresholds in force (the core resolves [scheme.pias]); empty without MLFQ tagging
        "mlfq_thresholds_bytes": core["mlfq_thresholds_bytes"],
        "seed": seed,
        "sim_time_s": core["sim_time_s"],
        # null, or why a guard (run.max_events, run.max_wall) ended the run before its end
        "incomplete": core.get("incomplete"),
        # flow-list rows (CSV or inline) starting at or after the arrival window: they never start
        "flow_rows_not_started": core.get("flow_rows_not_started", []),
        # to the microsecond: the benchmark suite divides by it, and its short cases run for a few ms
        "wall_s": round(wall_s, 6),
        "events": core["events"],
        "link_traversals": core["link_traversals"],
        "flows": core["flows"],
        "fct": fct,
        "drops": core["drops"],
        "congestion_drops": core["congestion_drops"],
        "timeouts": core["timeouts"],
        # of those, timeouts scheme.tcp.spurious_rto_undo found spurious and undid
        "spurious_timeouts": core["spurious_timeouts"],
        "retransmits": core["retransmits"],
        "pfc": core["pfc"],
        "ecn_marks": core["ecn_marks"],
        "dibs": core["dibs"],
        "nic_backpressure": core["nic_backpressure"],
        "fabric": core["fabric"],
        "packets": core["packets"],
        "invariants": core["invariants"],
        # per mechanism the scheme turns on, what it did (PFC's lossless priorities and PAUSEs, ECN marks,
        # DIBS's detours, MLFQ's thresholds in force and where they came from, CNPs and rate cuts, ...)
        "mechanisms": core["mechanisms"],
        # shared-buffer switches only: the largest pool use of any switch, the pool, the PAUSEs sent
        **({"shared_buffer": core["shared_buffer"]} if "shared_buffer" in core else {}),
        # the RoCE schemes only (dcqcn, hpcc): CNPs and NACKs sent, DCQCN's rate cuts
        **({"roce": core["roce"]} if "roce" in core else {}),
        **({"goodput": goodput} if goodput is not None else {}),
    }


def fct_table(fct: dict[str, dict[str, Any]], unit: str = "ms") -> list[str]:
    """The per-class FCT table `detailsim run` and `detailsim live` print: finished and unfinished flows,
    the mean over finished flows, and percentiles over all measured flows (">=": a lower bound)."""
    rows = [f"{'class':<22}{'count':>8}{'unfin.':>8}{'mean':>10}{'p50':>12}{'p99':>12}{'p99.9':>12}{'max':>12}   ({unit})"]
    for cls, s in fct.items():
        cells = [fmt_ms(s.get(f"{m}_ms"), bool(s.get(f"{m}_lb"))) for m in BOUNDED]
        rows.append(f"{cls:<22}{s['count']:>8}{s.get('unfinished', 0):>8}{fmt_ms(s['mean_ms']):>10}" + "".join(f"{c:>12}" for c in cells))
    if any(s.get("unfinished") for s in fct.values()):
        rows.append("unfin.: flows still running at the end (the mean leaves them out); >= X: a lower bound, the rank falls on an unfinished flow")
    return rows


def class_stats_of(g: pl.DataFrame) -> dict[str, Any]:
    """`censored_stats` of the flows of `g` (a flow table's rows, finished or not)."""
    done = g["fct"].is_not_null()
    return censored_stats(g.filter(done)["fct"].to_numpy(), g.filter(~done)["fct_lower"].to_numpy() if "fct_lower" in g.columns else None)


def jain(x: np.ndarray) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 when all are equal, 1/n when one has everything."""
    if len(x) == 0 or not np.any(x):
        return None
    x = x.astype(np.float64)
    return float(x.sum() ** 2 / (len(x) * (x * x).sum()))


def window_goodput(flows: pl.DataFrame, classes: list[str]) -> dict[str, Any]:
    """Per class: flows, total and mean window goodput (bit/s) and Jain's index over the class's flows."""
    out: dict[str, Any] = {}
    for cls in classes:
        g = flows.filter(pl.col("class") == cls)["window_goodput_bps"].to_numpy()
        out[cls] = {"flows": int(len(g)), "total_bps": float(g.sum()) if len(g) else 0.0,
                    "mean_bps": float(g.mean()) if len(g) else None, "jain": jain(g)}
    return out


def timeseries_frame(raw: dict[str, bytes] | None, ports: list[dict[str, Any]], classes_of: dict[int, str]) -> pl.DataFrame | None:
    """The time series in long form: `kind` "port" rows (node, port, peer, ingress_bytes, egress_bytes) and
    "flow" rows (flow id, class, bytes_delivered, cumulative), `t` in seconds."""
    if raw is None:
        return None
    pt = np.frombuffer(raw["port_t_ps"], dtype="<u8").astype(np.float64) * PS
    pidx = np.frombuffer(raw["port"], dtype="<u4")
    names = np.asarray([p["node"] for p in ports] or ["none"], dtype=object)
    peers = np.asarray([p["peer"] for p in ports] or ["none"], dtype=object)
    local = np.asarray([p["port"] for p in ports] or [0], dtype=np.uint32)
    port_rows = pl.DataFrame({
        "t": pt, "kind": pl.Series(["port"] * len(pt), dtype=pl.String),
        "node": pl.Series(names[pidx] if len(pidx) else [], dtype=pl.String),
        "port": local[pidx] if len(pidx) else np.zeros(0, dtype=np.uint32),
        "peer": pl.Series(peers[pidx] if len(pidx) else [], dtype=pl.String),
        "flow": pl.Series([None] * len(pt), dtype=pl.UInt64),
        "class": pl.Series([None] * len(pt), dtype=pl.String),
        "ingress_bytes": np.frombuffer(raw["ingress"], dtype="<u8"),
        "egress_bytes": np.frombuffer(raw["egress"], dtype="<u8"),
        "bytes_delivered": pl.Series([None] * len(pt), dtype=pl.UInt64),
    })
    ft = np.frombuffer(raw["flow_t_ps"], dtype="<u8").astype(np.float64) * PS
    fid = np.frombuffer(raw["flow"], dtype="<u8")
    flow_rows = pl.DataFrame({
        "t": ft, "kind": pl.Series(["flow"] * len(ft), dtype=pl.String),
        "node": pl.Series([None] * len(ft), dtype=pl.String),
        "port": pl.Series([None] * len(ft), dtype=pl.UInt32),
        "peer": pl.Series([None] * len(ft), dtype=pl.String),
        "flow": fid,
        "class": pl.Series([classes_of.get(int(i)) for i in fid], dtype=pl.String),
        "ingress_bytes": pl.Series([None] * len(ft), dtype=pl.UInt64),
        "egress_bytes": pl.Series([None] * len(ft), dtype=pl.UInt64),
        "bytes_delivered": np.frombuffer(raw["delivered"], dtype="<u8"),
    })
    return pl.concat([port_rows, flow_rows], how="vertical")


def write_outputs(out: Path, summary: dict[str, Any], flows: pl.DataFrame, ports: pl.DataFrame, scenario: dict[str, Any],
                  timeseries: pl.DataFrame | None = None) -> None:
    """Write flows.parquet, ports.parquet, summary.json, scenario.json (and timeseries.parquet when sampled)
    into `out`, all or nothing: everything goes to a temporary directory beside `out` that is renamed into
    place at the end."""
    out = Path(out)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        flows.write_parquet(tmp / "flows.parquet")
        ports.write_parquet(tmp / "ports.parquet")
        if timeseries is not None:
            timeseries.write_parquet(tmp / "timeseries.parquet")
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (tmp / "scenario.json").write_text(json.dumps(scenario, indent=2) + "\n")
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            os.replace(out, old / "x")
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
