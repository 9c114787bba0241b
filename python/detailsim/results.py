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
    "bytes_delivered": "<u8", "window_bytes": "<u8",
}


def flows_frame(raw: dict[str, bytes], classes: list[str], window: tuple[float, float] | None = None) -> pl.DataFrame:
    """Build the flow table from the core's column buffers. Times are in seconds; `end` and `fct` are
    null for flows that had not finished when the run ended. `bytes_delivered`: bytes the receiving
    application got (all of them for a finished flow). With a measurement window (from_s, to_s):
    `window_bytes` delivered inside it and `window_goodput_bps` = window_bytes x 8 / window length
    (iperf-style); null without one."""
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
            "timeouts": cols["timeouts"],
            "retransmits": cols["retransmits"],
            "ideal": pl.Series(np.where(cols["ideal_ps"] > 0, cols["ideal_ps"].astype(np.float64) * PS, np.nan), nan_to_null=True),
            "bytes_delivered": cols["bytes_delivered"],
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


def nearest_rank(sorted_values: np.ndarray, q: float) -> float:
    """The q-quantile by the nearest-rank method: the smallest value with at least q of the data at or below it."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    k = max(1, math.ceil(q * n - 1e-9))
    return float(sorted_values[k - 1])


def fct_stats(fct_s: np.ndarray) -> dict[str, float | int]:
    x = np.sort(fct_s) * 1e3
    if len(x) == 0:
        return {"count": 0, "mean_ms": None, "p50_ms": None, "p99_ms": None, "p999_ms": None, "max_ms": None}  # type: ignore[dict-item]
    return {
        "count": int(len(x)),
        "mean_ms": float(x.mean()),
        "p50_ms": nearest_rank(x, 0.5),
        "p99_ms": nearest_rank(x, 0.99),
        "p999_ms": nearest_rank(x, 0.999),
        "max_ms": float(x[-1]),
    }


def summarize(core: dict[str, Any], flows: pl.DataFrame, scenario: str, seed: int, wall_s: float) -> dict[str, Any]:
    """The run summary, in the documented key order."""
    fct: dict[str, Any] = {}
    done = flows.filter(pl.col("fct").is_not_null())
    for cls in core["classes"]:
        g = done.filter(pl.col("class") == cls)
        fct[cls] = fct_stats(g["fct"].to_numpy())
        sd = g["slowdown"].drop_nulls()
        if sd.len():
            fct[cls]["mean_slowdown"] = float(sd.mean())
    goodput = window_goodput(flows, core["classes"]) if flows["window_bytes"].null_count() < flows.height else None
    # partition-aggregate workflows: per fan-out classes, and all fan-outs together
    pa = [c for c in core["classes"] if c.startswith("workflow/partition-aggregate/")]
    if pa:
        x = done.filter(pl.col("class").cast(pl.String).is_in(pa))["fct"].to_numpy()
        fct["workflow/partition-aggregate"] = fct_stats(x)
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
        "wall_s": round(wall_s, 3),
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
        **({"goodput": goodput} if goodput is not None else {}),
    }


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
