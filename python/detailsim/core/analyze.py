"""The paper's Section 2 analysis, with no network: Monte Carlo over an FCT distribution.

- partition-aggregate: a workflow of N workers, each finishing after an independent draw; how many
  miss the deadline (distribution over trials);
- sequential: N retrievals one after another; the distribution of their sum, its 99.9th percentile and
  the probability of missing the deadline;
- the inverse question: how many sequential retrievals fit under the deadline at the 99.9th percentile.

The distribution comes from simulated flows (a run's --out directory, a sweep store, or a flows Parquet
file; optionally one class and a filter such as scheme=detail), drawn by resampling the measured FCTs, or
from a CDF file (lines "<fct> <cumulative probability>", probability 0..1 or 0..100, linear
interpolation between points).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .._core import ScenarioError

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


@dataclass
class Dist:
    """An FCT distribution in seconds: resampled values, or an inverse CDF."""

    values: np.ndarray | None = None
    cdf_x: np.ndarray | None = None
    cdf_p: np.ndarray | None = None
    source: str = ""

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.values is not None:
            return rng.choice(self.values, size=shape, replace=True)
        u = rng.random(shape)
        return np.interp(u, self.cdf_p, self.cdf_x)

    def describe(self) -> str:
        if self.values is not None:
            return f"{len(self.values)} simulated FCTs from {self.source}"
        return f"CDF {self.source} ({len(self.cdf_x)} points)"


def load_cdf(path: Path, unit: str) -> Dist:
    from .cdf import numeric_rows

    # (the first column is the FCT, the last the cumulative probability)
    rows = [(nums[0], nums[-1]) for _, nums in numeric_rows(path, "--fct-from", "a CDF: lines of '<fct> <cumulative probability>'")]
    if len(rows) < 1:
        raise ScenarioError(f"--fct-from: {path}: no points")
    x = np.array([r[0] for r in rows]) * UNITS[unit]
    p = np.array([r[1] for r in rows])
    if p.max() > 1.0 + 1e-9:
        p = p / 100.0
    if np.any(np.diff(x) < 0) or np.any(np.diff(p) < 0) or p[-1] < 1 - 1e-9:
        raise ScenarioError(f"--fct-from: {path}: the CDF must be non-decreasing and end at 1 (or 100)")
    if p[0] > 0:
        x = np.concatenate([[x[0]], x])
        p = np.concatenate([[0.0], p])
    return Dist(cdf_x=x, cdf_p=p, source=str(path))


def load_flows(path: Path, cls: str | None, where: list[str]) -> Dist:
    if path.is_dir():
        files = [path / "flows.parquet"] if (path / "flows.parquet").exists() else sorted((path / "flows").glob("*.parquet"))
    else:
        files = [path]
    if not files:
        raise ScenarioError(f"--fct-from: {path} holds no flows (a run's --out directory, a sweep store, or a .parquet file)")
    try:
        df = pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")
    except (pl.exceptions.PolarsError, OSError) as e:
        raise ScenarioError(f"--fct-from: cannot read {str(path)!r} as Parquet flows: {(str(e).strip().splitlines() or ['?'])[0]}") from None
    if "class" not in df.columns or "fct" not in df.columns:
        raise ScenarioError(f"--fct-from: {path} is not a flow table (no `class` and `fct` columns)")
    df = df.with_columns(pl.col("class").cast(pl.String))
    if cls:
        if cls not in df["class"].unique().to_list():
            raise ScenarioError(f"--class: no flows of class {cls!r}; classes: {', '.join(sorted(df['class'].unique().to_list()))}")
        df = df.filter(pl.col("class") == cls)
    for w in where:
        k, eq, v = w.partition("=")
        if not eq:
            raise ScenarioError(f"--where {w!r}: expected COLUMN=VALUE, e.g. scheme=detail")
        if k not in df.columns:
            raise ScenarioError(f"--where: no column {k!r}; columns: {', '.join(df.columns)}")
        col = df[k]
        val: Any = v
        if col.dtype.is_numeric():
            try:
                val = float(v)
            except ValueError:
                raise ScenarioError(f"--where {w!r}: column {k!r} holds numbers, got {v!r}") from None
        df = df.filter(pl.col(k) == val)
    x = df["fct"].drop_nulls().to_numpy()
    if len(x) == 0:
        raise ScenarioError("--fct-from: no completed flows match")
    return Dist(values=x, source=str(path) + (f" [{cls}]" if cls else ""))


def load_dist(src: str, cls: str | None = None, where: list[str] | None = None, unit: str = "ms") -> Dist:
    path = Path(src)
    if not path.exists():
        raise ScenarioError(f"--fct-from: no such file or directory {src!r}")
    if path.is_dir() or path.suffix == ".parquet":
        return load_flows(path, cls, where or [])
    return load_cdf(path, unit)


def partition_aggregate(d: Dist, workers: int, deadline: float, trials: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    misses = (d.sample(rng, (trials, workers)) > deadline).sum(axis=1)
    counts = np.bincount(misses, minlength=workers + 1)
    return {
        "workers": workers, "deadline_s": deadline, "trials": trials,
        "mean_misses": float(misses.mean()),
        "p_all_met": float((misses == 0).mean()),
        "p999_misses": int(np.sort(misses)[int(np.ceil(0.999 * trials)) - 1]),
        "distribution": {int(k): int(v) for k, v in enumerate(counts) if v},
    }


def sequential(d: Dist, n: int, deadline: float | None, trials: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    total = np.sort(d.sample(rng, (trials, n)).sum(axis=1))
    out = {"retrievals": n, "trials": trials, "mean_s": float(total.mean()),
           "p99_s": float(total[int(np.ceil(0.99 * trials)) - 1]), "p999_s": float(total[int(np.ceil(0.999 * trials)) - 1])}
    if deadline is not None:
        out["deadline_s"] = deadline
        out["p_miss"] = float((total > deadline).mean())
    return out


def fit_sequential(d: Dist, deadline: float, trials: int, seed: int, max_n: int = 100_000) -> dict[str, Any]:
    """The largest N whose sequential completion's 99.9th percentile is within the deadline."""
    def ok(n: int) -> bool:
        return n == 0 or sequential(d, n, None, trials, seed)["p999_s"] <= deadline
    lo, hi = 0, 1
    while hi <= max_n and ok(hi):
        lo, hi = hi, hi * 2
    hi = min(hi, max_n + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return {"deadline_s": deadline, "trials": trials, "max_sequential_retrievals": lo}
