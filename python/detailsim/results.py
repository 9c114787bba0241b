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
}


def flows_frame(raw: dict[str, bytes], classes: list[str]) -> pl.DataFrame:
    """Build the flow table from the core's column buffers. Times are in seconds; `end` and `fct` are
    null for flows that had not finished when the run ended."""
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
        }
    )
    df = df.with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"))
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
    # partition-aggregate workflows: per fan-out classes, and all fan-outs together
    pa = [c for c in core["classes"] if c.startswith("workflow/partition-aggregate/")]
    if pa:
        x = done.filter(pl.col("class").cast(pl.String).is_in(pa))["fct"].to_numpy()
        fct["workflow/partition-aggregate"] = fct_stats(x)
    return {
        "scenario": scenario,
        "scheme": core["scheme"],
        "seed": seed,
        "sim_time_s": core["sim_time_s"],
        "wall_s": round(wall_s, 3),
        "events": core["events"],
        "link_traversals": core["link_traversals"],
        "flows": core["flows"],
        "fct": fct,
        "drops": core["drops"],
        "congestion_drops": core["congestion_drops"],
        "timeouts": core["timeouts"],
        "retransmits": core["retransmits"],
        "pfc": core["pfc"],
        "ecn_marks": core["ecn_marks"],
        "dibs": core["dibs"],
        "nic_backpressure": core["nic_backpressure"],
        "fabric": core["fabric"],
        "packets": core["packets"],
        "invariants": core["invariants"],
    }


def write_outputs(out: Path, summary: dict[str, Any], flows: pl.DataFrame, ports: pl.DataFrame, scenario: dict[str, Any]) -> None:
    """Write flows.parquet, ports.parquet, summary.json and scenario.json into `out`, all or nothing:
    everything goes to a temporary directory beside `out` that is renamed into place at the end."""
    out = Path(out)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        flows.write_parquet(tmp / "flows.parquet")
        ports.write_parquet(tmp / "ports.parquet")
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
