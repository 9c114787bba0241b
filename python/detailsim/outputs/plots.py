"""Plots of a results store (PNG and SVG, matplotlib's Agg backend):

- ``cdf_<class>``: CDF of FCT per class, one line per series (the swept parameters other than the seed;
  seeds are pooled);
- ``percentile_<metric>``: a percentile (or the mean) against a numeric swept parameter, a panel per class, a line per
  series of the other parameters;
- ``reduction_<metric>``: the reduction of each scheme over a baseline scheme, (base − x) / base, bars per
  class -- the DeTail paper's kind of figure.

Percentiles are nearest-rank values over all measured flows of all seeds of a series, unfinished ones
included and ranked by how long they had run when the run ended (`results.censored_stats`): a value that
is only a lower bound (its rank falls on an unfinished flow) is drawn as an open upward triangle, a
reduction that is only a bound as a hatched bar, and a CDF counts unfinished flows in its denominator, so
it stops below 1 (its legend says how many did not finish). With more than one seed, the percentile and
reduction plots carry error bars: the half-width of the 95% Student-t interval of the same value computed
on each seed alone.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ..core.results import class_stats_of  # noqa: E402
from ..core.sweep import read_store  # noqa: E402

METRICS = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
LABELS = {"p50": "median", "p99": "99th percentile", "p999": "99.9th percentile", "mean": "mean"}


def sweep_axes(out: Path, summary: pl.DataFrame) -> list[str]:
    """The swept parameters (other than the seed) that take more than one value."""
    m = json.loads((Path(out) / "sweep.json").read_text())
    hide = set(m["spec"].get("hide", []))
    return [a for a in m["axes"] if a != "seed" and a not in hide and a in summary.columns and summary[a].n_unique() > 1]


def _label(keys: list[str], values: tuple[Any, ...]) -> str:
    if not keys:
        return "all runs"
    return ", ".join(f"{v}" if k == "scheme" else f"{k}={v}" for k, v in zip(keys, values))


def pooled_percentiles(flows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per (keys, class), seeds pooled: `censored_stats` over all measured flows (nearest-rank p50 / p99 /
    p99.9 and max in ms, each with its `<metric>_lb` lower-bound flag; the mean over finished flows),
    `count` finished, `unfinished` and `measured` flows."""
    rows = []
    allf = flows.with_columns(pl.col("class").cast(pl.String))
    for key, g in allf.group_by([*keys, "class"], maintain_order=True):
        st = class_stats_of(g)
        rows.append({**dict(zip([*keys, "class"], key)), **st, "measured": st["count"] + st["unfinished"]})
    return pl.DataFrame(rows, infer_schema_length=None)


def seed_ci(flows: pl.DataFrame, keys: list[str], metrics: tuple[str, ...] = ("mean", "p50", "p99", "p999")) -> pl.DataFrame | None:
    """Per (keys, class): the half-width of the 95% t-interval over seeds of each metric (columns
    `<metric>_ci`, ms), each seed's value computed on that seed's flows alone; None with fewer than two seeds."""
    from ..repro.grading import ci95

    if "seed" not in flows.columns or flows["seed"].n_unique() < 2:
        return None
    per = pooled_percentiles(flows, [*keys, "seed"])
    rows = []
    for key, g in per.group_by([*keys, "class"], maintain_order=True):
        rows.append({**dict(zip([*keys, "class"], key)), **{f"{m}_ci": ci95(g[f"{m}_ms"].to_list()) for m in metrics}})
    return pl.DataFrame(rows)


def reduction_ci(flows: pl.DataFrame, keys: list[str], baseline: str, metric: str) -> pl.DataFrame | None:
    """Per (keys, class) of the schemes other than `baseline`: the 95% t-interval half-width over seeds of the
    reduction of `metric` over the baseline (percentage points), each seed's reduction from its own flows."""
    from ..repro.grading import ci95

    if "seed" not in flows.columns or flows["seed"].n_unique() < 2 or "scheme" not in keys:
        return None
    red = reduction_table(pooled_percentiles(flows, [*keys, "seed"]), [*keys, "seed"], baseline, metric)
    rows = []
    for key, g in red.group_by([*keys, "class"], maintain_order=True):
        rows.append({**dict(zip([*keys, "class"], key)), "reduction_ci": ci95(g["reduction_pct"].to_list())})
    return pl.DataFrame(rows) if rows else None


def ci_of(ci: pl.DataFrame | None, col: str, where: dict[str, Any]) -> float:
    """The value of `col` in the row of `ci` matching `where` (NaN if none)."""
    if ci is None:
        return float("nan")
    q = ci
    for k, v in where.items():
        q = q.filter(pl.col(k) == v)
    return float(q[col][0]) if q.height and q[col][0] is not None else float("nan")


def _save(fig: plt.Figure, d: Path, name: str) -> list[Path]:
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    fig.savefig(paths[0], dpi=110, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def cdf_points(n: int, body: int = 2000, tail: int = 1000) -> np.ndarray:
    """Which of n sorted values a CDF draws: all of them up to body + tail; beyond, `body` evenly spaced
    ranks and the last `tail` exactly (the top 1000 ranks hold p99.9 of a million flows), so a store of
    millions of flows draws a curve that looks the same in a few thousand points."""
    if n <= body + tail:
        return np.arange(n)
    return np.unique(np.concatenate([np.linspace(0, n - 1, body).astype(np.int64), np.arange(n - tail, n)]))


def plot_cdfs(flows: pl.DataFrame, keys: list[str], d: Path, max_series: int = 12) -> list[Path]:
    out: list[Path] = []
    allf = flows.with_columns(pl.col("class").cast(pl.String))
    done = allf.filter(pl.col("fct").is_not_null())
    for cls in sorted(done["class"].unique().to_list()):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        g = allf.filter(pl.col("class") == cls)
        series = g.group_by(keys, maintain_order=True) if keys else [((), g)]
        for i, (key, s) in enumerate(sorted(series, key=lambda kv: tuple((str(type(x)), x) for x in kv[0]))):
            if i >= max_series:
                break
            # over all measured flows: unfinished ones are above every time shown, so the curve stops below 1
            x = np.sort(s["fct"].drop_nulls().to_numpy()) * 1e3
            y = np.arange(1, len(x) + 1) / s.height
            keep = cdf_points(len(x))
            x, y = x[keep], y[keep]
            left = s.height - len(x)
            label = _label(keys, key if isinstance(key, tuple) else (key,)) + (f" ({left} unfinished)" if left else "")
            ax.step(x, y, where="post", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("flow completion time (ms)")
        ax.set_ylabel("CDF")
        ax.set_title(f"FCT CDF: {cls}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        out += _save(fig, d, f"cdf_{_safe(cls)}")
    return out


def plot_percentile_vs(stats: pl.DataFrame, x: str, keys: list[str], metric: str, d: Path, ci: pl.DataFrame | None = None) -> list[Path]:
    others = [k for k in keys if k != x]
    classes = sorted(stats["class"].unique().to_list())
    fig, axes = plt.subplots(1, len(classes), figsize=(4.2 * len(classes), 3.8), squeeze=False)
    for ax, cls in zip(axes[0], classes):
        g = stats.filter(pl.col("class") == cls)
        series = g.group_by(others, maintain_order=True) if others else [((), g)]
        for key, s in sorted(series, key=lambda kv: tuple((str(type(v)), v) for v in kv[0])):
            s = s.sort(x)
            label = _label(others, key if isinstance(key, tuple) else (key,))
            err = [ci_of(ci, f"{metric}_ci", {k: r[k] for k in [*keys, "class"]}) for r in s.iter_rows(named=True)]
            if ci is not None and any(np.isfinite(err)):
                line = ax.errorbar(s[x].to_list(), s[f"{metric}_ms"].to_list(), yerr=np.nan_to_num(err), marker="o", capsize=3, label=label).lines[0]
            else:
                (line,) = ax.plot(s[x].to_list(), s[f"{metric}_ms"].to_list(), marker="o", label=label)
            lb = s.filter(pl.col(f"{metric}_lb")) if f"{metric}_lb" in s.columns else s.clear()
            if lb.height:
                # lower bounds: the rank falls on an unfinished flow
                ax.plot(lb[x].to_list(), lb[f"{metric}_ms"].to_list(), linestyle="none", marker="^", markersize=11,
                        markerfacecolor="white", color=line.get_color(), label=f"{label}: lower bound (unfinished flows)")
        ax.set_title(cls)
        ax.set_xlabel(x)
        ax.set_ylabel(f"{LABELS[metric]} FCT (ms)")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=8)
    return _save(fig, d, f"percentile_{metric}_vs_{_safe(x)}")


def reduction_table(stats: pl.DataFrame, keys: list[str], baseline: str, metric: str) -> pl.DataFrame:
    """The reduction of `metric` over the baseline scheme, (base - x) / base in percent, per (keys, class),
    with `reduction_bound`: null when both are exact, "lower" when only the baseline's value is a lower
    bound (the true reduction is at least this), "upper" when only the scheme's is (at most this),
    "unknown" when both are."""
    others = [k for k in keys if k != "scheme"]
    lb = f"{metric}_lb"
    has_lb = lb in stats.columns
    base = stats.filter(pl.col("scheme") == baseline).select(
        [*others, "class", pl.col(f"{metric}_ms").alias("base"), (pl.col(lb) if has_lb else pl.lit(False)).alias("_blb")])
    joined = stats.filter(pl.col("scheme") != baseline).join(base, on=[*others, "class"], how="inner")
    xlb = pl.col(lb) if has_lb else pl.lit(False)
    bound = (pl.when(pl.col("_blb") & xlb).then(pl.lit("unknown")).when(pl.col("_blb")).then(pl.lit("lower"))
             .when(xlb).then(pl.lit("upper")).otherwise(pl.lit(None, dtype=pl.String)))
    return joined.with_columns(((pl.col("base") - pl.col(f"{metric}_ms")) / pl.col("base") * 100).alias("reduction_pct"),
                               bound.alias("reduction_bound")).drop("_blb")


def fmt_reduction(v: float, bound: str | None, ci: float = float("nan")) -> str:
    """A reduction in a table: 45 ± 3%, >= 45% (a lower bound), <= 45% (an upper bound), ? 45% (both ends bounds)."""
    pre = {"lower": ">= ", "upper": "<= ", "unknown": "? "}.get(bound or "", "")
    return pre + f"{v:.0f}" + (f" ± {ci:.0f}" if math.isfinite(ci) else "") + "%"


def plot_reduction(stats: pl.DataFrame, keys: list[str], baseline: str, metric: str, d: Path, ci: pl.DataFrame | None = None) -> list[Path]:
    red = reduction_table(stats, keys, baseline, metric)
    if red.height == 0:
        return []
    others = [k for k in keys if k != "scheme"]
    red = red.sort(["scheme", *others]).with_columns(pl.struct(["scheme", *others]).map_elements(
        lambda r: _label(["scheme", *others], tuple(r.values())), return_dtype=pl.String).alias("series"))
    classes = sorted(red["class"].unique().to_list())
    series = red["series"].unique(maintain_order=True).to_list()
    fig, ax = plt.subplots(figsize=(max(6.4, 1.2 * len(classes) * max(1, len(series)) / 2), 4.2))
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        rows = [red.filter((pl.col("series") == s) & (pl.col("class") == c)) for c in classes]
        ys = [r["reduction_pct"][0] if r.height else np.nan for r in rows]
        err = [ci_of(ci, "reduction_ci", {k: r[k][0] for k in ["scheme", *others, "class"]}) if r.height else np.nan for r in rows]
        has = ci is not None and any(np.isfinite(err))
        bars = ax.bar(np.arange(len(classes)) + i * width - 0.4 + width / 2, ys, width, label=s,
                      yerr=np.nan_to_num(err) if has else None, capsize=3 if has else 0)
        for b, r in zip(bars, rows):
            if r.height and r["reduction_bound"][0] is not None:
                b.set_hatch("//")  # only a bound: a percentile it compares is a lower bound
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(classes)), classes, rotation=15)
    ax.set_ylabel(f"reduction of {LABELS[metric]} over {baseline} (%)")
    ax.set_title(f"{LABELS[metric]} FCT: reduction over {baseline}" + (" (hatched: a bound)" if red["reduction_bound"].is_not_null().any() else ""))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, d, f"reduction_{metric}_over_{_safe(baseline)}")


def plot_store(out: str | Path, plots_dir: str | Path | None = None, baseline: str = "fh",
               metric: str = "p999", x: str | None = None) -> list[Path]:
    """Write every plot that fits the store's axes; returns the files written."""
    out = Path(out)
    d = Path(plots_dir) if plots_dir else out / "plots"
    d.mkdir(parents=True, exist_ok=True)
    summary = read_store(out, tables=("summary",))["summary"]
    if summary.height == 0:
        return []
    keys = sweep_axes(out, summary)
    # only the columns the plots read: a store of millions of flows must not be held whole
    t = {"summary": summary, **read_store(out, columns=[*keys, "seed", "class", "fct", "fct_lower"], tables=("flows",))}
    stats = pooled_percentiles(t["flows"], keys)
    files = plot_cdfs(t["flows"], keys, d)
    numeric = [k for k in keys if t["summary"][k].dtype.is_numeric()]
    xs = [x] if x else numeric[:1]
    ci = seed_ci(t["flows"], keys)
    for xa in xs:
        files += plot_percentile_vs(stats, xa, keys, metric, d, ci)
    if "scheme" in keys and baseline in t["summary"]["scheme"].to_list():
        files += plot_reduction(stats, keys, baseline, metric, d, reduction_ci(t["flows"], keys, baseline, metric))
    return files


# --- a single run directory (`detailsim run --out DIR`) ---------------------------------------------------

def plot_timeseries(ts: pl.DataFrame, d: Path, max_ports: int = 8, max_flows: int = 12) -> list[Path]:
    """``queues``: egress (solid) and ingress (dashed) bytes over time of the busiest ports;
    ``throughput``: goodput over time per class, and per flow when a run has few measured flows."""
    files: list[Path] = []
    ports = ts.filter(pl.col("kind") == "port")
    if ports.height:
        busiest = (ports.group_by(["node", "port", "peer"]).agg((pl.col("egress_bytes") + pl.col("ingress_bytes")).max().alias("m"))
                   .filter(pl.col("m") > 0).sort(["m", "node", "port"], descending=[True, False, False]).head(max_ports))
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for i, row in enumerate(busiest.iter_rows(named=True)):
            g = ports.filter((pl.col("node") == row["node"]) & (pl.col("port") == row["port"])).sort("t")
            colour = f"C{i % 10}"
            ax.plot(g["t"] * 1e3, g["egress_bytes"] / 1024, color=colour, label=f"{row['node']}→{row['peer']}")
            if g["ingress_bytes"].max() > 0:
                ax.plot(g["t"] * 1e3, g["ingress_bytes"] / 1024, color=colour, linestyle="--", linewidth=0.8)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("queue (KB; solid egress, dashed ingress)")
        ax.set_title("queue occupancy of the busiest ports")
        if busiest.height:
            ax.legend(fontsize=7)
        files += _save(fig, d, "queues")
    flows = ts.filter(pl.col("kind") == "flow").sort(["flow", "t"])
    if flows.height:
        rate = flows.with_columns(
            ((pl.col("bytes_delivered").cast(pl.Int64).diff().over("flow")) * 8
             / pl.col("t").diff().over("flow")).alias("bps")).drop_nulls("bps")
        fig, ax = plt.subplots(figsize=(8, 4.5))
        per_class = rate.group_by(["class", "t"]).agg(pl.col("bps").sum()).sort("t")
        for i, cls in enumerate(sorted(per_class["class"].drop_nulls().unique().to_list())):
            g = per_class.filter(pl.col("class") == cls)
            ax.plot(g["t"] * 1e3, g["bps"] / 1e9, color=f"C{i % 10}", label=f"{cls} (all flows)", linewidth=1.8)
        ids = rate["flow"].unique().sort().to_list()
        if len(ids) <= max_flows:
            for fid in ids:
                g = rate.filter(pl.col("flow") == fid)
                ax.plot(g["t"] * 1e3, g["bps"] / 1e9, linewidth=0.7, alpha=0.6, label=f"flow {fid}")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("goodput (Gbit/s)")
        ax.set_title("throughput over time")
        ax.legend(fontsize=7)
        files += _save(fig, d, "throughput")
    return files


def plot_run(run_dir: str | Path, plots_dir: str | Path | None = None) -> list[Path]:
    """Plots of one run directory: FCT CDF per class, and with a time series (``run.sample``) queues and
    throughput over time."""
    run_dir = Path(run_dir)
    d = Path(plots_dir) if plots_dir else run_dir / "plots"
    d.mkdir(parents=True, exist_ok=True)
    flows = pl.read_parquet(run_dir / "flows.parquet")
    files: list[Path] = []
    if flows.filter(pl.col("fct").is_not_null()).height:
        files += plot_cdfs(flows.with_columns(pl.lit("run").alias("series")), ["series"], d)
    ts_path = run_dir / "timeseries.parquet"
    if ts_path.exists():
        files += plot_timeseries(pl.read_parquet(ts_path), d)
    return files
