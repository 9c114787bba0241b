"""Plots of a results store (PNG and SVG, matplotlib's Agg backend, its ``seaborn-v0_8-whitegrid`` style sheet
and colour-blind-safe ``petroff10`` colours):

- ``ccdf_<class>``: the tail: CCDF of FCT and of slowdown (FCT over the flow's ideal FCT) on log-log axes, p99
  and p99.9 marked on every curve;
- ``cdf_<class>``: CDF of FCT per class (the body);
- ``slowdown_by_size``: the slowdown's p50, p95 and p99 per flow-size bin (log-spaced by default), with the 95%
  interval over seeds;
- ``percentile_<metric>_vs_<x>``: a percentile (or the mean) against a numeric swept parameter, a panel per
  class, with the 95% interval over seeds;
- ``reduction_<metric>_over_<baseline>``: the reduction of each scheme over a baseline scheme, (base − x) /
  base, bars per class -- the DeTail paper's kind of figure.

A series is a combination of the swept parameters other than the seed (seeds are pooled). Every figure of
a store draws every series, in one colour per scheme and one line style per value of the other parameters
(the load, say), the same in every figure; legends sit outside the data; a figure that cannot be drawn (no
baseline scheme in the sweep, say) leaves a note in ``plots.json`` that the report shows.

Percentiles are nearest-rank values over all measured flows of all seeds of a series, unfinished ones
included and ranked by how long they had run when the run ended (`results.censored_stats`): a value that
is only a lower bound (its rank falls on an unfinished flow) is drawn as an open marker, a reduction that is
only a bound as a hatched bar, and a CDF counts unfinished flows in its denominator, so it stops below 1
(a CCDF above 0; the legend says how many did not finish). With more than one seed, percentiles carry the
95% interval over seeds of the same value computed on each seed alone, Student's t on the logarithm
(`pooled.seed_interval`: never at or below zero); reductions, which may be negative, the t-interval itself.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

# natural_key, series_values and sweep_axes: the figures' order and series (re-exported for the reproductions)
from ..core.ordering import SIZE_UNITS, natural_key, series_values  # noqa: E402,F401
from ..core.results import class_stats_of, rank_of  # noqa: E402
from ..core.sums import sorted_sum  # noqa: E402
from ..core.sweep import read_store, sweep_axes  # noqa: E402,F401

METRICS = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
LABELS = {"p50": "median", "p99": "99th percentile", "p999": "99.9th percentile", "mean": "mean"}


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


# --- how every figure of a store draws its series ----------------------------------------------------------

# matplotlib's own style sheet for the figures, and its colour-blind-safe ten-colour cycle (Petroff 2021);
# past ten schemes, tab20's colours
STYLE = "seaborn-v0_8-whitegrid"
DASHES: list[Any] = ["-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2, 2, 2))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def palette(n: int) -> list[Any]:
    """`n` distinct colours: petroff10's, then tab20's others; past those, evenly from turbo."""
    base = list(plt.style.library["petroff10"]["axes.prop_cycle"].by_key()["color"])
    extra = [c for c in (matplotlib.colors.to_hex(x) for x in plt.get_cmap("tab20").colors) if c not in base]
    if n > len(base) + len(extra):
        return [plt.get_cmap("turbo")(i / max(n - 1, 1)) for i in range(n)]
    return (base + extra)[:max(n, 1)]


@dataclass
class Styles:
    """One colour per value of `colour_key` (the scheme, where the sweep varies it) and one line style and
    marker per combination of the other swept parameters (e.g. the load), the same in every figure of a
    store."""
    keys: list[str]
    colour_key: str | None
    colours: dict[Any, Any] = field(default_factory=dict)
    dashes: dict[tuple[Any, ...], tuple[Any, str]] = field(default_factory=dict)
    # each key's values in the sweep's order: series are drawn and listed in it
    order: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def dash_keys(self) -> list[str]:
        return [k for k in self.keys if k != self.colour_key]

    def of(self, row: dict[str, Any]) -> dict[str, Any]:
        c = self.colours.get(row.get(self.colour_key)) if self.colour_key else "C0"
        ls, marker = self.dashes.get(tuple(row.get(k) for k in self.dash_keys), ("-", "o"))
        return {"color": c, "linestyle": ls, "marker": marker}


def make_styles(keys: list[str], values: dict[str, list[Any]]) -> Styles:
    """The styles of a store whose series are `keys`, with `values[k]` the values each takes (in the order
    the sweep gives them)."""
    colour_key = "scheme" if "scheme" in keys else (keys[0] if keys else None)
    st = Styles(keys, colour_key)
    st.order = {k: {str(v): i for i, v in enumerate(values[k])} for k in keys}
    if colour_key:
        vs = values[colour_key]
        st.colours = dict(zip(vs, palette(len(vs))))
    combos: list[tuple[Any, ...]] = [()]
    for k in st.dash_keys:
        combos = [(*c, v) for c in combos for v in values[k]]
    st.dashes = {c: (DASHES[i % len(DASHES)], MARKERS[i % len(MARKERS)]) for i, c in enumerate(combos)}
    return st


def _series(df: pl.DataFrame, keys: list[str], styles: "Styles | None" = None) -> list[tuple[dict[str, Any], pl.DataFrame]]:
    """(the series' values, its rows) per combination of `keys`, in the sweep's order of each key's values
    (natural order for values it does not list)."""
    if not keys:
        return [({}, df)]
    groups = [(dict(zip(keys, k if isinstance(k, tuple) else (k,))), g) for k, g in df.group_by(keys, maintain_order=True)]

    def rank(vals: dict[str, Any]) -> tuple[Any, ...]:
        order = styles.order if styles else {}
        return tuple((order.get(k, {}).get(str(vals[k]), 1 << 30), natural_key(vals[k])) for k in keys)
    return sorted(groups, key=lambda kv: rank(kv[0]))


def _legend(fig: plt.Figure, ax: Any, title: str | None = None) -> None:
    """The legend outside the data: to the right of the figure, one entry per line (duplicates dropped)."""
    handles, labels = [], []
    for a in fig.axes:
        for h, lab in zip(*a.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h), labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=7, title=title, title_fontsize=7)


@dataclass
class Drawn:
    """What a figure drew: its series (labels) and, if any, a note of what it could not draw."""
    name: str
    series: list[str]
    # each series' parameter values, as the store's columns hold them
    values: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    files: list[Path] = field(default_factory=list)


def _save(fig: plt.Figure, d: Path, name: str) -> list[Path]:
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    fig.savefig(paths[0], dpi=110)
    fig.savefig(paths[1])
    plt.close(fig)
    return paths


def _figure(ncols: int = 1, width: float = 6.4, height: float = 4.2, **kw: Any) -> tuple[plt.Figure, Any]:
    with plt.style.context(STYLE):
        return plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, layout="constrained", **kw)



def _bytes(v: float, _pos: Any = None) -> str:
    """A size as the scenarios write it (KB = 1024 bytes)."""
    for unit in ("GB", "MB", "KB"):
        if v >= SIZE_UNITS[unit]:
            return f"{v / SIZE_UNITS[unit]:.3g}{unit}"
    return f"{v:g}B"


def parse_size_bins(text: str) -> int | list[float]:
    """`--size-bins`: a number of log-spaced bins ("10") or the edges, sizes separated by commas
    ("0,10KB,100KB,1MB,100MB"; KB = 1024 bytes, as in scenarios)."""
    t = text.strip()
    if t.isdigit():
        n = int(t)
        if not 1 <= n <= 100:
            raise ValueError(f"--size-bins: a number of bins from 1 to 100, got {n}")
        return n
    edges = []
    for part in t.split(","):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", part)
        if not m or m.group(2) not in {"", *SIZE_UNITS}:
            raise ValueError(f"--size-bins: {part.strip()!r} is not a size (e.g. 10KB; units {', '.join(SIZE_UNITS)}); "
                             "give a number of bins or comma-separated edges")
        edges.append(float(m.group(1)) * SIZE_UNITS.get(m.group(2) or "B", 1))
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"--size-bins: at least two edges, ascending; got {text!r}")
    return edges


def _log_axes(ax: Any, x: str | None = "plain", y: str | None = "plain") -> None:
    """Log scales with one label per decade and none on the minor ticks (they overlap otherwise): "plain"
    numbers, "bytes" (1KB, 10KB, ...) or "prob" (0.1, 0.01, 0.001 as powers of ten)."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, LogLocator, NullFormatter

    for which, kind in (("x", x), ("y", y)):
        if kind is None:
            continue
        axis = ax.xaxis if which == "x" else ax.yaxis
        (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        ax.autoscale_view()
        lo, hi = (ax.get_xlim() if which == "x" else ax.get_ylim())
        if kind == "bytes":
            # sizes: powers of two (1KB, 4KB, 16KB, ...), at most seven labels
            axis.set_major_locator(LogLocator(base=2, numticks=7))
        else:
            # under two decades, 1-2-5 steps label the axis; above, one label per decade
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if lo > 0 and hi / lo < 100 else (1.0,)))
        fmt = {"bytes": FuncFormatter(_bytes), "prob": LogFormatterSciNotation()}.get(kind, FuncFormatter(lambda v, _p: f"{v:g}"))
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(NullFormatter())

def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def cdf_points(n: int, body: int = 2000, tail: int = 1000) -> np.ndarray:
    """Which of n sorted values a CDF draws: all of them up to body + tail; beyond, `body` evenly spaced
    ranks and the last `tail` exactly (the top 1000 ranks hold p99.9 of a million flows), so a store of
    millions of flows draws a curve that looks the same in a few thousand points."""
    if n <= body + tail:
        return np.arange(n)
    return np.unique(np.concatenate([np.linspace(0, n - 1, body).astype(np.int64), np.arange(n - tail, n)]))


def _classes(df: pl.DataFrame) -> list[str]:
    return sorted(df.filter(pl.col("fct").is_not_null())["class"].unique().to_list(), key=natural_key)


def plot_cdfs(flows: pl.DataFrame, keys: list[str], d: Path, styles: Styles | None = None) -> list[Drawn]:
    """``cdf_<class>``: the CDF of FCT per class over all measured flows, a line per series."""
    styles = styles or make_styles(keys, series_values(flows, keys))
    out: list[Drawn] = []
    allf = flows.with_columns(pl.col("class").cast(pl.String))
    for cls in _classes(allf):
        with plt.style.context(STYLE):
            fig, axes = _figure()
            ax = axes[0][0]
            labels = []
            values: list[dict[str, Any]] = []
            for vals, s in _series(allf.filter(pl.col("class") == cls), keys, styles):
                # over all measured flows: unfinished ones are above every time shown, so the curve stops below 1
                x = np.sort(s["fct"].drop_nulls().to_numpy()) * 1e3
                y = np.arange(1, len(x) + 1) / s.height
                keep = cdf_points(len(x))
                left = s.height - len(x)
                label = _label(keys, tuple(vals.values())) + (f" ({left} unfinished)" if left else "")
                st = styles.of(vals)
                ax.step(x[keep], y[keep], where="post", label=label, color=st["color"], linestyle=st["linestyle"])
                labels.append(label)
                values.append(vals)
            _log_axes(ax, "plain", None)
            ax.set_xlabel("flow completion time (ms)")
            ax.set_ylabel("CDF")
            ax.set_title(f"FCT CDF: {cls}")
            _legend(fig, ax)
            name = f"cdf_{_safe(cls)}"
            out.append(Drawn(name, labels, values, files=_save(fig, d, name)))
    return out


def _ccdf_panel(ax: Any, vals: np.ndarray, n: int, st: dict[str, Any], label: str) -> None:
    """P(X > x) over n measured flows of which `vals` finished (the unfinished ones are above every value
    shown, so the curve ends at unfinished / n), on log-log axes; its p99 and p99.9 (nearest rank) marked
    where they are exact."""
    x = np.sort(vals)
    if len(x) == 0:
        return
    y = 1.0 - np.arange(1, len(x) + 1) / n
    keep = cdf_points(len(x))
    x, y = x[keep], y[keep]
    pos = y > 0
    ax.step(np.concatenate([[x[0]], x[pos]]), np.concatenate([[1.0], y[pos]]), where="post", label=label,
            color=st["color"], linestyle=st["linestyle"], linewidth=1.3)
    every = np.sort(vals)
    for q, mk in ((0.99, "o"), (0.999, "D")):
        k = rank_of(n, q)
        if k <= len(every):
            ax.plot([every[k - 1]], [1 - q], marker=mk, color=st["color"], markersize=5, linestyle="none")


def plot_ccdfs(flows: pl.DataFrame, keys: list[str], d: Path, styles: Styles) -> list[Drawn]:
    """``ccdf_<class>``: per class, the CCDF of FCT (left) and of slowdown (right) on log-log axes, a line per
    series, p99 (circle) and p99.9 (diamond) marked on each curve and as grey lines across."""
    out: list[Drawn] = []
    allf = flows.with_columns(pl.col("class").cast(pl.String))
    has_sd = "slowdown" in allf.columns and allf["slowdown"].drop_nulls().len() > 0
    for cls in _classes(allf):
        with plt.style.context(STYLE):
            fig, axes = _figure(2 if has_sd else 1, width=5.0, height=4.0)
            labels = []
            values: list[dict[str, Any]] = []
            for vals, s in _series(allf.filter(pl.col("class") == cls), keys, styles):
                st = styles.of(vals)
                left = s.height - s["fct"].drop_nulls().len()
                label = _label(keys, tuple(vals.values())) + (f" ({left} unfinished)" if left else "")
                _ccdf_panel(axes[0][0], s["fct"].drop_nulls().to_numpy() * 1e3, s.height, st, label)
                if has_sd:
                    _ccdf_panel(axes[0][1], s.filter(pl.col("fct").is_not_null())["slowdown"].drop_nulls().to_numpy(), s.height, st, label)
                labels.append(label)
                values.append(vals)
            for ax, what in zip(axes[0], ["flow completion time (ms)", "slowdown (FCT / ideal FCT)"]):
                _log_axes(ax, "plain", "prob")
                ax.set_xlabel(what)
                ax.set_ylabel("fraction of flows slower (CCDF)")
                for q, tag in ((0.99, "p99"), (0.999, "p99.9")):
                    ax.axhline(1 - q, color="0.4", linewidth=0.7, linestyle=":")
                    ax.annotate(tag, (1.0, 1 - q), xycoords=("axes fraction", "data"), xytext=(-2, 2), textcoords="offset points",
                                ha="right", va="bottom", fontsize=7, color="0.3")
            fig.suptitle(f"tail of FCT{' and slowdown' if has_sd else ''}: {cls}", fontsize=10)
            _legend(fig, axes[0][0], title="marks: ● p99, ◆ p99.9")
            name = f"ccdf_{_safe(cls)}"
            out.append(Drawn(name, labels, values, files=_save(fig, d, name)))
    return out


SIZE_QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}


def size_edges(sizes: np.ndarray, bins: int | list[float] = 10) -> np.ndarray:
    """Flow-size bin edges (bytes): `bins` log-spaced bins from the smallest size to the largest, or the
    edges given (ascending); a size falls in [edge_i, edge_i+1), the last bin closed."""
    if not isinstance(bins, int):
        e = np.asarray(sorted(float(b) for b in bins))
        if len(e) < 2:
            raise ValueError("size bins: at least two edges")
        return e
    lo, hi = float(sizes.min()), float(sizes.max())
    if lo == hi:
        return np.array([lo, hi + 1.0])
    return np.geomspace(lo, hi, bins + 1)


def binned_slowdown(flows: pl.DataFrame, keys: list[str], edges: np.ndarray, quantiles: dict[str, float] = SIZE_QUANTILES) -> pl.DataFrame:
    """Per (keys, size bin) over the flows with an ideal FCT: `flows`, the bin's median size, and each
    quantile of the slowdown by nearest rank over all its measured flows (an unfinished one ranked by its
    age over its ideal FCT, a lower bound; `<q>_lb` true when the rank may fall on one)."""
    f = flows.filter(pl.col("ideal").is_not_null() & (pl.col("ideal") > 0))
    idx = np.clip(np.searchsorted(edges, f["size"].to_numpy().astype(float), side="right") - 1, 0, len(edges) - 2)
    inside = (f["size"].to_numpy() >= edges[0]) & (f["size"].to_numpy() <= edges[-1])
    f = f.with_columns(pl.Series("bin", idx), pl.Series("_in", inside)).filter(pl.col("_in"))
    done = pl.col("fct").is_not_null()
    f = f.with_columns(pl.when(done).then(pl.col("slowdown")).otherwise(pl.col("fct_lower") / pl.col("ideal")).alias("_v"),
                       done.alias("_done"))
    n = pl.len().cast(pl.Float64)
    aggs = [pl.len().alias("flows"), pl.col("size").median().alias("size"),
            # finished flows no slower than the youngest unfinished one: ranks up to here are exact
            (pl.col("_v").filter(pl.col("_done")) <= pl.col("_v").filter(~pl.col("_done")).min().fill_null(float("inf"))).sum().alias("_exact")]
    for name, q in quantiles.items():
        k = (n * q - 1e-9).ceil().clip(1, None).cast(pl.Int64)
        aggs += [pl.col("_v").sort().get(k - 1).alias(name), k.alias(f"_{name}_k")]
    g = f.group_by([*keys, "bin"]).agg(aggs)
    g = g.with_columns([(pl.col(f"_{name}_k") > pl.col("_exact")).alias(f"{name}_lb") for name in quantiles])
    return g.drop([c for c in g.columns if c.startswith("_")]).sort([*keys, "bin"])


def intervals_by(per_seed: pl.DataFrame | None, keys: list[str], col: str) -> dict[tuple[Any, ...], tuple[float, float]]:
    """`pooled.seed_interval` of `col` over the seeds of each combination of `keys` in `per_seed` (a row
    per combination and seed), keyed by the combination's values; empty without `per_seed`."""
    from ..core.pooled import seed_interval

    if per_seed is None:
        return {}
    out = {}
    for k, g in per_seed.group_by(keys, maintain_order=True):
        iv = seed_interval(g[col].to_list())
        if iv:
            out[k if isinstance(k, tuple) else (k,)] = iv
    return out


def error_bars(values: list[Any], ivs: list[tuple[float, float] | None]) -> np.ndarray:
    """Matplotlib's asymmetric `yerr` for values with their intervals (none: no bar), never past zero."""
    lo = [max(0.0, v - iv[0]) if iv and v is not None else 0.0 for v, iv in zip(values, ivs)]
    hi = [max(0.0, iv[1] - v) if iv and v is not None else 0.0 for v, iv in zip(values, ivs)]
    return np.array([lo, hi])


def plot_slowdown_by_size(flows: pl.DataFrame, keys: list[str], d: Path, styles: Styles,
                          bins: int | list[float] = 10) -> list[Drawn]:
    """``slowdown_by_size``: the slowdown's p50, p95 and p99 per flow-size bin (all classes), a panel per
    percentile, a line per series at each bin's median size; with several seeds, the 95% interval over seeds
    (`pooled.seed_interval`); an open marker where the value is only a lower bound."""
    if "ideal" not in flows.columns or flows["ideal"].drop_nulls().len() == 0:
        return [Drawn("slowdown_by_size", [], note="slowdown by size: no flow has an ideal FCT")]
    # the edges from the flows that have a slowdown: a workflow (no ideal FCT) cut off before any of its
    # retrievals has delivered a byte has size 0, which a log-spaced bin cannot start from
    sized = flows.filter(pl.col("ideal").is_not_null() & (pl.col("ideal") > 0))
    if sized.height == 0:
        return [Drawn("slowdown_by_size", [], note="slowdown by size: no flow has an ideal FCT")]
    edges = size_edges(sized["size"].to_numpy(), bins)
    pooled = binned_slowdown(flows, keys, edges)
    per_seed = binned_slowdown(flows, [*keys, "seed"], edges) if "seed" in flows.columns and flows["seed"].n_unique() > 1 else None
    intervals = {q: intervals_by(per_seed, [*keys, "bin"], q) for q in SIZE_QUANTILES}
    with plt.style.context(STYLE):
        fig, axes = _figure(len(SIZE_QUANTILES), width=4.3, height=3.8, sharey=True)
        labels = []
        values: list[dict[str, Any]] = []
        for vals, s in _series(pooled, keys, styles):
            st = styles.of(vals)
            label = _label(keys, tuple(vals.values()))
            labels.append(label)
            values.append(vals)
            for ax, q in zip(axes[0], SIZE_QUANTILES):
                x, y = s["size"].to_numpy(), s[q].to_numpy()
                ivs = intervals[q]
                err = error_bars(list(y), [ivs.get((*vals.values(), b)) for b in s["bin"].to_list()]) if per_seed is not None else None
                ax.errorbar(x, y, yerr=err, color=st["color"], linestyle=st["linestyle"], marker=st["marker"], markersize=4,
                            capsize=2, linewidth=1.2, label=label)
                lb = s[f"{q}_lb"].to_numpy()
                if lb.any():
                    ax.plot(x[lb], y[lb], linestyle="none", marker=st["marker"], markersize=8, markerfacecolor="white",
                            color=st["color"], label="_lb")
        for ax, q in zip(axes[0], SIZE_QUANTILES):
            _log_axes(ax, "bytes", "plain")
            ax.set_xlabel("flow size (bytes; each bin at its median)")
            ax.set_title(f"{q} slowdown")
            lims = ax.get_xlim()
            for e in edges[(edges > 0) & (edges >= lims[0]) & (edges <= lims[1])]:
                ax.axvline(e, color="0.7", linewidth=0.6, linestyle=(0, (2, 3)), zorder=0)
        axes[0][0].set_ylabel("slowdown (FCT / ideal FCT)")
        fig.suptitle(f"slowdown by flow size ({len(edges) - 1} bins, {'given edges' if not isinstance(bins, int) else 'log-spaced'};"
                     " bars: 95% interval over seeds; open: a lower bound)", fontsize=9)
        _legend(fig, axes[0][0])
        return [Drawn("slowdown_by_size", labels, values, files=_save(fig, d, "slowdown_by_size"))]


def _seed_values(flows: pl.DataFrame, keys: list[str], metric: str) -> pl.DataFrame | None:
    """Per (keys, class, seed): `metric` (ms) on that seed's flows alone; None with fewer than two seeds."""
    if "seed" not in flows.columns or flows["seed"].n_unique() < 2:
        return None
    return pooled_percentiles(flows, [*keys, "seed"]).select([*keys, "class", "seed", f"{metric}_ms"])


def plot_percentile_vs(stats: pl.DataFrame, x: str, keys: list[str], metric: str, d: Path, styles: Styles,
                       per_seed: pl.DataFrame | None = None) -> list[Drawn]:
    """``percentile_<metric>_vs_<x>``: `metric` against the numeric parameter `x`, a panel per class, a line
    per series of the other parameters; bars: the 95% interval over seeds (`pooled.seed_interval`, never
    below zero); an open triangle where the value is only a lower bound."""
    others = [k for k in keys if k != x]
    classes = sorted(stats["class"].unique().to_list(), key=natural_key)
    ivs = intervals_by(per_seed, [*keys, "class"], f"{metric}_ms")
    with plt.style.context(STYLE):
        fig, axes = _figure(len(classes), width=4.2, height=3.8)
        labels = []
        values: list[dict[str, Any]] = []
        for ax, cls in zip(axes[0], classes):
            for vals, s in _series(stats.filter(pl.col("class") == cls), others, styles):
                s = s.sort(x)
                label = _label(others, tuple(vals.values()))
                st = {**styles.of(vals), "linestyle": "-"}
                ys = s[f"{metric}_ms"].to_list()
                err = error_bars(ys, [ivs.get((*(r[k] for k in keys), cls)) for r in s.iter_rows(named=True)]) if per_seed is not None else None
                # a point with no value (no flow of the class finished there) is a gap in the line
                ax.errorbar(s[x].to_list(), [np.nan if y is None else y for y in ys], yerr=err, capsize=3, label=label, color=st["color"], marker=st["marker"], linestyle="-")
                if label not in labels:
                    labels.append(label)
                    values.append(vals)
                lb = s.filter(pl.col(f"{metric}_lb")) if f"{metric}_lb" in s.columns else s.clear()
                if lb.height:
                    ax.plot(lb[x].to_list(), lb[f"{metric}_ms"].to_list(), linestyle="none", marker="^", markersize=11,
                            markerfacecolor="white", color=st["color"], label="lower bound (unfinished flows)")
            ax.set_title(cls)
            ax.set_xlabel(x)
            ax.set_ylabel(f"{LABELS[metric]} FCT (ms)")
            ax.set_ylim(bottom=0)
        fig.suptitle(f"{LABELS[metric]} FCT against {x}" + (" (bars: 95% interval over seeds, on the log scale)" if per_seed is not None else ""),
                     fontsize=9)
        _legend(fig, axes[0][0])
        name = f"percentile_{metric}_vs_{_safe(x)}"
        return [Drawn(name, labels, values, files=_save(fig, d, name))]


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
    joined = stats.filter(pl.col("scheme") != baseline).join(base, on=[*others, "class"], how="inner", maintain_order="left")
    xlb = pl.col(lb) if has_lb else pl.lit(False)
    bound = (pl.when(pl.col("_blb") & xlb).then(pl.lit("unknown")).when(pl.col("_blb")).then(pl.lit("lower"))
             .when(xlb).then(pl.lit("upper")).otherwise(pl.lit(None, dtype=pl.String)))
    return joined.with_columns(((pl.col("base") - pl.col(f"{metric}_ms")) / pl.col("base") * 100).alias("reduction_pct"),
                               bound.alias("reduction_bound")).drop("_blb")


def fmt_reduction(v: float, bound: str | None, ci: float = float("nan")) -> str:
    """A reduction in a table: 45 ± 3%, >= 45% (a lower bound), <= 45% (an upper bound), ? 45% (both ends bounds)."""
    pre = {"lower": ">= ", "upper": "<= ", "unknown": "? "}.get(bound or "", "")
    return pre + f"{v:.0f}" + (f" ± {ci:.0f}" if math.isfinite(ci) else "") + "%"


def plot_reduction(stats: pl.DataFrame, keys: list[str], baseline: str, metric: str, d: Path, styles: Styles,
                   ci: pl.DataFrame | None = None) -> list[Drawn]:
    """``reduction_<metric>_over_<baseline>``: the reduction of each scheme over the baseline, bars per class
    (a bar per series, coloured by scheme, hatched where only a bound); bars: the 95% t-interval over seeds of
    the per-seed reduction (a reduction may be negative)."""
    name = f"reduction_{metric}_over_{_safe(baseline)}"
    red = reduction_table(stats, keys, baseline, metric)
    if red.height == 0:
        return [Drawn(name, [], note=f"reduction over {baseline}: no series of another scheme shares its parameters")]
    others = [k for k in keys if k != "scheme"]
    classes = sorted(red["class"].unique().to_list(), key=natural_key)
    series = _series(red, ["scheme", *others], styles)
    with plt.style.context(STYLE):
        fig, axes = _figure(1, width=min(14.0, max(6.4, 0.35 * len(classes) * len(series) + 2)), height=4.2)
        ax = axes[0][0]
        width = 0.8 / len(series)
        labels = []
        values: list[dict[str, Any]] = []
        for i, (vals, s) in enumerate(series):
            label = _label(["scheme", *others], tuple(vals.values()))
            labels.append(label)
            values.append(vals)
            rows = [s.filter(pl.col("class") == c) for c in classes]
            ys = [r["reduction_pct"][0] if r.height else np.nan for r in rows]
            err = [ci_of(ci, "reduction_ci", {**vals, "class": c}) for c in classes]
            has = ci is not None and any(np.isfinite(err))
            st = styles.of(vals)
            # a reduction of a positive time is at most 100%: the interval's upper end stops there
            yerr = np.array([np.nan_to_num(err), [max(0.0, min(e, 100.0 - y)) if np.isfinite(y) else 0.0
                                                  for e, y in zip(np.nan_to_num(err), ys)]]) if has else None
            bars = ax.bar(np.arange(len(classes)) + i * width - 0.4 + width / 2, ys, width, label=label, color=st["color"],
                          edgecolor="black", linewidth=0.4, yerr=yerr, capsize=2 if has else 0)
            for b, r in zip(bars, rows):
                if r.height and r["reduction_bound"][0] is not None:
                    b.set_hatch("//")  # only a bound: a percentile it compares is a lower bound
            if others and len(styles.dashes) > 1:
                # one shade of the scheme's colour per value of the other parameters (the load): lighter, higher
                j = list(styles.dashes).index(tuple(vals[k] for k in styles.dash_keys))
                shade = matplotlib.colors.to_rgb(st["color"])
                mix = 0.55 * j / max(len(styles.dashes) - 1, 1)
                for b in bars:
                    b.set_facecolor(tuple(c + (1 - c) * mix for c in shade))
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(np.arange(len(classes)), classes, rotation=15)
        ax.set_ylabel(f"reduction of {LABELS[metric]} over {baseline} (%)")
        ax.set_title(f"{LABELS[metric]} FCT: reduction over {baseline}" + (" (hatched: a bound)" if red["reduction_bound"].is_not_null().any() else ""),
                     fontsize=10)
        _legend(fig, ax)
        return [Drawn(name, labels, values, files=_save(fig, d, name))]


def draw_store(out: str | Path, plots_dir: str | Path | None = None, baseline: str = "fh", metric: str = "p999",
               x: str | None = None, size_bins: int | list[float] = 10) -> list[Drawn]:
    """Every figure that fits the store's axes (module doc), with what each drew; writes ``plots.json`` (the
    figures, their series and notes) beside them."""
    out = Path(out)
    d = Path(plots_dir) if plots_dir else out / "plots"
    d.mkdir(parents=True, exist_ok=True)
    summary = read_store(out, tables=("summary",))["summary"]
    if summary.height == 0:
        return []
    keys = sweep_axes(out, summary)
    spec_axes = json.loads((out / "sweep.json").read_text())["spec"].get("axes", {})
    # only the columns the plots read: a store of millions of flows must not be held whole
    flows = read_store(out, columns=[*keys, "seed", "class", "fct", "fct_lower", "size", "ideal", "slowdown"], tables=("flows",))["flows"]
    styles = make_styles(keys, series_values(summary, keys, spec_axes))
    stats = pooled_percentiles(flows, keys)
    drawn = plot_ccdfs(flows, keys, d, styles) + plot_cdfs(flows, keys, d, styles)
    if "size" in flows.columns:
        drawn += plot_slowdown_by_size(flows, keys, d, styles, size_bins)
    numeric = [k for k in keys if summary[k].dtype.is_numeric()]
    xs = [x] if x else numeric[:1]
    per_seed = _seed_values(flows, keys, metric)
    for xa in xs:
        drawn += plot_percentile_vs(stats, xa, keys, metric, d, styles, per_seed)
    if "scheme" in keys:
        schemes = summary["scheme"].unique().to_list()
        if baseline in schemes:
            drawn += plot_reduction(stats, keys, baseline, metric, d, styles, reduction_ci(flows, keys, baseline, metric))
        else:
            drawn.append(Drawn(f"reduction_{metric}_over_{_safe(baseline)}", [],
                               note=f"no reduction plot: the baseline scheme {baseline!r} is not in this sweep "
                                    f"(schemes: {', '.join(sorted(map(str, schemes), key=natural_key))}; choose one with --baseline)"))
    for dr in drawn:
        note_left_out(dr, keys, styles, baseline)
    (d / "plots.json").write_text(json.dumps([{"name": x.name, "series": x.series, "values": x.values, "note": x.note,
                                               "files": [f.name for f in x.files]} for x in drawn], indent=1, default=str) + "\n")
    return drawn


def note_left_out(dr: Drawn, keys: list[str], styles: Styles, baseline: str) -> None:
    """Add to a figure's note the series of the store it did not draw (no flow of the figure's class, say),
    so that a series missing from a figure is said, never silent."""
    if not dr.values:
        return
    present = set().union(*(v.keys() for v in dr.values))
    have = [k for k in keys if k in present]
    shown = {tuple(str(v.get(k)) for k in have) for v in dr.values}
    combos: list[dict[str, Any]] = [{}]
    for k in have:
        combos = [{**c, k: v} for c in combos for v in sorted(styles.order.get(k, {}), key=lambda x: styles.order[k][x])]
    if dr.name.startswith("reduction_"):
        combos = [c for c in combos if c.get("scheme") != baseline]
    missing = [c for c in combos if tuple(str(c[k]) for k in have) not in shown]
    if missing:
        cls = dr.name.split("_", 1)[1] if dr.name.startswith(("ccdf_", "cdf_")) else ""
        why = f"no flow of class {cls}" if cls else "no flow to draw"
        names = ", ".join(_label(have, tuple(c[k] for k in have)) for c in missing)
        dr.note = (dr.note + "; " if dr.note else "") + f"{dr.name}: {len(missing)} series not drawn ({why}): {names}"


def plot_store(out: str | Path, plots_dir: str | Path | None = None, baseline: str = "fh",
               metric: str = "p999", x: str | None = None, size_bins: int | list[float] = 10) -> list[Path]:
    """Write every plot that fits the store's axes; returns the files written (`draw_store` says what each
    drew and what it left out)."""
    return [f for dr in draw_store(out, plots_dir, baseline, metric, x, size_bins) for f in dr.files]


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
        per_class = rate.group_by(["class", "t"]).agg(sorted_sum(pl.col("bps"))).sort("t")
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
        # one series, named by the run's scheme
        summary = json.loads((run_dir / "summary.json").read_text()) if (run_dir / "summary.json").exists() else {}
        name = str(summary.get("scheme", "run"))
        one = flows.with_columns(pl.lit(name).alias("scheme"))
        styles = make_styles(["scheme"], {"scheme": [name]})
        drawn = plot_ccdfs(one, ["scheme"], d, styles) + plot_cdfs(one, ["scheme"], d, styles)
        if one["ideal"].drop_nulls().len():
            drawn += plot_slowdown_by_size(one, ["scheme"], d, styles)
        files += [f for dr in drawn for f in dr.files]
    ts_path = run_dir / "timeseries.parquet"
    if ts_path.exists():
        files += plot_timeseries(pl.read_parquet(ts_path), d)
    return files


# --- a reproduction's claims --------------------------------------------------------------------------------

VERDICT_COLOURS = {"reproduced": "#1b7837", "direction only": "#e08214", "not reproduced": "#b2182b", "inconclusive": "#777777"}


def claim_row(c: dict[str, Any]) -> dict[str, Any] | None:
    """A claim on the claims figure's common axis, 1 = the paper's number: the rule's band (`grading.bands`;
    a range's two ends' bands joined), the measured value and its 95% interval, each divided by the paper's
    number (a range: the geometric middle of its ends; a bound: the bound). None for a claim without a
    number, a measured range, or a reference of 0."""
    from ..repro.grading import bands

    v, m = c["paper"]["value"], c["measured"]
    if v is None or m["value"] is None or isinstance(m["value"], list):
        return None
    bs = bands(v)
    if isinstance(v, list) and None not in v:
        lo, hi = v
        ref = math.copysign(math.sqrt(abs(lo * hi)), hi) if lo * hi > 0 else (lo + hi) / 2
    else:
        ref = v if not isinstance(v, list) else next(x for x in v if x is not None)
    if not ref:
        return None
    scale = abs(ref)
    return {"id": c["id"], "verdict": c["verdict"], "label": c["label"],
            "band": (min(b.lo for b in bs) / scale, max(b.hi for b in bs) / scale),
            "x": m["value"] / scale, "ci": (m.get("ci95") or 0.0) / scale, "ref": ref / scale}


def plot_claims(claims: list[dict[str, Any]], d: Path, name: str = "claims", lo: float = -1.0, hi: float = 4.0) -> list[Drawn]:
    """``claims``: each claim's paper number (a black tick at 1, its band the rule's, grey) beside what was
    measured (a dot with its 95% interval, coloured by verdict; hollow when the claim is not held out),
    every value divided by the paper's number so that claims of any unit share one axis. Values past the
    axis sit at its edge as arrows. Claims without a number to place are listed in the figure's note."""
    rows = [r for r in (claim_row(c) for c in claims) if r is not None]
    left = [c["id"] for c in claims if claim_row(c) is None]
    note = (f"{len(left)} claim(s) have no number to place (a property, a measured range, or a paper value of 0): "
            + ", ".join(left)) if left else ""
    if not rows:
        return [Drawn(name, [], note=note)]
    with plt.style.context(STYLE):
        fig, axes = _figure(1, width=8.5, height=0.32 * len(rows) + 1.4)
        ax = axes[0][0]
        for i, r in enumerate(reversed(rows)):
            b0, b1 = max(r["band"][0], lo), min(r["band"][1], hi)
            ax.barh(i, b1 - b0, left=b0, height=0.6, color="0.85", edgecolor="none", zorder=1)
            ax.plot([r["ref"]], [i], marker="|", color="black", markersize=12, zorder=2)
            colour = VERDICT_COLOURS.get(r["verdict"], "black")
            x = min(max(r["x"], lo), hi)
            clipped = x != r["x"]
            face = colour if r["label"] == "held out" else "white"
            if r["ci"] and not clipped:
                ax.errorbar([x], [i], xerr=[[min(r["ci"], x - lo)], [min(r["ci"], hi - x)]], color=colour, capsize=2, zorder=3, linestyle="none")
            ax.plot([x], [i], marker=(">" if r["x"] > hi else "<") if clipped else "o", color=colour, markerfacecolor=face,
                    markersize=6, zorder=4, linestyle="none")
        ax.set_yticks(range(len(rows)), [r["id"] for r in reversed(rows)], fontsize=7)
        ax.set_xlim(lo, hi)
        ax.axvline(0, color="0.5", linewidth=0.6)
        ax.set_xlabel("value / the paper's number (1: the paper; grey: the rule's band; bars: 95% interval over seeds)")
        for v, colour in VERDICT_COLOURS.items():
            ax.plot([], [], marker="o", linestyle="none", color=colour, label=v)
        ax.plot([], [], marker="o", linestyle="none", color="black", markerfacecolor="white", label="not held out (calibration, seen, ...)")
        ax.set_title("the paper's numbers and what was measured", fontsize=10)
        _legend(fig, ax)
        return [Drawn(name, [r["id"] for r in rows], note=note, files=_save(fig, d, name))]
