"""The pooled table of a results store: one row per series (the swept parameters other than the seed, e.g.
scheme x load) and class, seeds pooled, each statistic with its 95% interval over seeds.

- `count`, `unfinished`, `seeds`: finished and unfinished flows summed over the seeds, and how many seeds;
- `mean_ms`, `p50_ms`, `p99_ms`, `p999_ms`: over the pooled flows (`results.censored_stats`: nearest rank over
  every measured flow, an unfinished one ranked by its age; `<m>_lb` true when the value is only a lower
  bound); `sd_p50`, `sd_p99`, `sd_p999`: the slowdown's (FCT over the flow's ideal FCT) percentiles, ranked
  the same way;
- `<m>_lo`, `<m>_hi`: the 95% interval over seeds of that statistic, each seed's value computed on its own
  flows (`seed_interval`: Student's t on the logarithm, so it never reaches zero or below); null with fewer
  than two seeds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .results import QUANTILES, censored_stats, class_stats_of
from .sums import ordered

# two-sided 95% quantiles of Student's t by degrees of freedom (the standard table); 1.96 beyond 30
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086,
         25: 2.060, 30: 2.042}


def t975(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom (NaN for df <= 0)."""
    if df <= 0:
        return math.nan
    keys = [k for k in _T975 if k <= df]
    return _T975[max(keys)] if df <= 30 else 1.96


# the statistics of a row, in order: FCT (ms) and slowdown (a ratio)
FCT_STATS = ("mean", "p50", "p99", "p999")
SLOWDOWN_STATS = ("sd_p50", "sd_p99", "sd_p999")
STATS = FCT_STATS + SLOWDOWN_STATS


def seed_interval(values: Sequence[float | None]) -> tuple[float, float] | None:
    """The 95% interval of a positive statistic over seeds: Student's t on the logarithm of the per-seed
    values, exponentiated (a geometric interval, never at or below zero). None with fewer than two positive
    finite values. The same for the values in any order (`core.sums.ordered`)."""
    x = ordered(v for v in values if v is not None and math.isfinite(v) and v > 0)
    if len(x) < 2:
        return None
    logs = np.log(x)
    half = t975(len(x) - 1) * logs.std(ddof=1) / math.sqrt(len(x))
    m = logs.mean()
    return float(math.exp(m - half)), float(math.exp(m + half))


def slowdown_stats(g: pl.DataFrame) -> dict[str, Any]:
    """Nearest-rank slowdown percentiles of `g`'s flows with an ideal FCT: a finished flow by its slowdown,
    an unfinished one by its age over its ideal FCT (a lower bound), as `censored_stats` ranks FCTs."""
    if "ideal" not in g.columns or "slowdown" not in g.columns:
        return {**{s: None for s in SLOWDOWN_STATS}, **{f"{s}_lb": False for s in SLOWDOWN_STATS}}
    h = g.filter(pl.col("ideal").is_not_null() & (pl.col("ideal") > 0))
    done = h["fct"].is_not_null()
    fin = h.filter(done)["slowdown"].to_numpy()
    age = (h.filter(~done)["fct_lower"] / h.filter(~done)["ideal"]).to_numpy() if "fct_lower" in h.columns else None
    # censored_stats works in ms (x 1e3); the ratio goes in divided by 1e3 so that it comes out as is
    st = censored_stats(fin / 1e3, None if age is None else age / 1e3)
    return {**{f"sd_{q}": st[f"{q}_ms"] for q in QUANTILES}, **{f"sd_{q}_lb": st[f"{q}_lb"] for q in QUANTILES}}


def _stats(g: pl.DataFrame) -> dict[str, Any]:
    st = class_stats_of(g)
    st.pop("max_ms"), st.pop("max_lb")
    return {**st, **slowdown_stats(g)}


def _value_col(s: str) -> str:
    return s if s.startswith("sd_") else f"{s}_ms"


def pooled_table(flows: pl.DataFrame, keys: list[str], order: dict[str, list[Any]] | None = None) -> pl.DataFrame:
    """Per (keys, class): the seeds' flows pooled, with each statistic's interval over seeds (module doc).
    `flows` needs class, fct, fct_lower and, for the slowdown, ideal and slowdown; `seed` for intervals.
    Rows in the order `order` gives each key's values (the sweep's), else numbers by value and names with
    their numbers read as numbers (retrieval/2KB before retrieval/32KB)."""
    from .ordering import natural_key

    f = flows.with_columns(pl.col("class").cast(pl.String))
    has_seed = "seed" in f.columns
    rows = []
    for key, g in f.group_by([*keys, "class"], maintain_order=True):
        row: dict[str, Any] = dict(zip([*keys, "class"], key))
        row.update(_stats(g))
        per_seed = [_stats(s) for _, s in g.group_by("seed", maintain_order=True)] if has_seed else []
        row["seeds"] = len(per_seed) if has_seed else 1
        for s in STATS:
            iv = seed_interval([p[_value_col(s)] for p in per_seed]) if len(per_seed) > 1 else None
            row[f"{s}_lo"], row[f"{s}_hi"] = iv if iv else (None, None)
        rows.append(row)
    rank = {k: {str(v): i for i, v in enumerate(vs)} for k, vs in (order or {}).items()}
    rows.sort(key=lambda r: tuple((rank[k].get(str(r[k]), len(rank[k])), natural_key(r[k])) if k in rank else (0, natural_key(r[k]))
                                  for k in [*keys, "class"]))
    cols = [*keys, "class", "seeds", "count", "unfinished"]
    for s in STATS:
        cols += [_value_col(s), f"{s}_lo", f"{s}_hi"] + ([f"{s}_lb"] if s != "mean" else [])
    schema = {c: pl.Float64 for c in cols if c.endswith(("_ms", "_lo", "_hi")) or c.startswith("sd_") and not c.endswith("_lb")}
    df = pl.DataFrame(rows, infer_schema_length=None, schema_overrides=schema)
    return df.select([c for c in cols if c in df.columns])


def _num(v: float) -> str:
    """Three significant digits, no exponent for the values an FCT table holds."""
    return f"{v:.3g}" if 1e-3 <= abs(v) < 1e6 or v == 0 else f"{v:.2e}"


def store_pooled(out: str | Path, keys: list[str] | None = None, flows: pl.DataFrame | None = None) -> tuple[pl.DataFrame, list[str]]:
    """A results store's pooled table and its series keys (default: the swept parameters other than the seed,
    `sweep.sweep_axes`), rows in the sweep's order of each key's values; `flows`: the store's flow table if
    already read (otherwise only the columns the table needs are read: a store may hold millions of flows)."""
    from .ordering import series_values
    from .sweep import read_store, sweep_axes

    out = Path(out)
    summary = read_store(out, tables=("summary",))["summary"]
    k = sweep_axes(out, summary) if keys is None else keys
    if flows is None:
        flows = read_store(out, columns=[*k, "seed", "class", "fct", "fct_lower", "ideal", "slowdown"], tables=("flows",))["flows"]
    spec_axes = json.loads((out / "sweep.json").read_text())["spec"].get("axes", {})
    return pooled_table(flows, k, series_values(summary, k, spec_axes)), k


def _cell(v: Any, lo: Any, hi: Any, lb: bool) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    text = (">= " if lb else "") + _num(v)
    if lo is not None and hi is not None:
        text += f" [{_num(lo)}, {_num(hi)}]"
    return text


def display_table(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The pooled table as text cells: each statistic "value [lo, hi]", ">= " where it is a lower bound."""
    cols: dict[str, list[str]] = {}
    for k in [*keys, "class"]:
        cols[k] = [str(v) for v in df[k].to_list()]
    cols["seeds"] = [str(v) for v in df["seeds"].to_list()]
    cols["count"] = [str(v) for v in df["count"].to_list()]
    cols["unfinished"] = [str(v) for v in df["unfinished"].to_list()]
    names = {"mean": "mean (ms)", "p50": "p50 (ms)", "p99": "p99 (ms)", "p999": "p99.9 (ms)",
             "sd_p50": "slowdown p50", "sd_p99": "slowdown p99", "sd_p999": "slowdown p99.9"}
    for s in STATS:
        v, lo, hi = df[_value_col(s)].to_list(), df[f"{s}_lo"].to_list(), df[f"{s}_hi"].to_list()
        lb = df[f"{s}_lb"].to_list() if f"{s}_lb" in df.columns else [False] * df.height
        cols[names[s]] = [_cell(*t) for t in zip(v, lo, hi, lb)]
    return pl.DataFrame(cols)


NOTE = ("seeds pooled: percentiles are nearest rank over every measured flow of every seed (>= X: a lower bound, "
        "the rank falls on an unfinished flow); [lo, hi]: the 95% interval over seeds, Student's t on the logarithm "
        "of each seed's own value (none with one seed); slowdown: FCT over the flow's ideal FCT.")


def to_markdown(df: pl.DataFrame, keys: list[str]) -> str:
    t = display_table(df, keys)
    lines = ["| " + " | ".join(t.columns) + " |", "|" + "|".join("---" for _ in t.columns) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in t.iter_rows()]
    return "\n".join(lines) + "\n\n" + NOTE + "\n"
