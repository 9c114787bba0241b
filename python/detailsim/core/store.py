"""A results store in Python: ``detailsim.sweep(spec, out)`` runs one, ``detailsim.open_store(out)`` opens
one; both return a `Store`, whose tables are polars frames and which renders as a compact table in Jupyter.

    >>> st = detailsim.sweep("tests/data/sweep_first.toml", "results/first")   # doctest: +SKIP
    >>> st.pooled()                     # scheme x load x class, seeds pooled, with intervals  # doctest: +SKIP
    >>> st.plot()                       # the figures, PNG and SVG, in results/first/plots     # doctest: +SKIP
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import polars as pl

from .._core import ScenarioError
from .pooled import store_pooled
from .sweep import load_sweep, read_store, run_sweep, sweep_axes


class Store:
    """A sweep's results directory: `summary` (a row per run), `fct` (per run and class), `flows` (every
    measured flow; read on demand), the swept parameters `keys`, and `pooled()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / "sweep.json").exists():
            raise ScenarioError(f"store: {str(self.path)!r} is not a sweep results store (no sweep.json)")
        self.manifest = json.loads((self.path / "sweep.json").read_text())
        t = read_store(self.path, tables=("summary", "fct"))
        self.summary: pl.DataFrame = t["summary"]
        self.fct: pl.DataFrame = t["fct"]
        self._flows: pl.DataFrame | None = None

    @property
    def keys(self) -> list[str]:
        """The swept parameters other than the seed that take more than one value."""
        return sweep_axes(self.path, self.summary) if self.summary.height else []

    @property
    def flows(self) -> pl.DataFrame:
        if self._flows is None:
            self._flows = read_store(self.path, tables=("flows",))["flows"]
        return self._flows

    def pooled(self, keys: list[str] | None = None) -> pl.DataFrame:
        """Per series (`keys`, default the swept parameters) and class, seeds pooled: count, unfinished,
        mean, p50, p99, p99.9 (ms) and the slowdown's p50, p99, p99.9, each with its 95% interval over seeds
        (`<m>_lo`, `<m>_hi`; `detailsim.core.pooled`)."""
        return store_pooled(self.path, keys, self._flows)[0]

    def plot(self, plots_dir: str | Path | None = None, **kw: Any) -> list[Path]:
        """Draw the store's figures (`detailsim.outputs.plots.plot_store`); returns the files."""
        from ..outputs.plots import plot_store

        return plot_store(self.path, plots_dir, **kw)

    def report(self, html: str | Path | None = None, **kw: Any) -> Path:
        """Write the self-contained HTML report (default STORE/report.html)."""
        from ..outputs.report import build_report

        return build_report(self.path, html or self.path / "report.html", **kw)

    def _counts(self) -> tuple[int, int]:
        failed = len(list((self.path / "failed").glob("*.json"))) if (self.path / "failed").is_dir() else 0
        return len(self.manifest["runs"]), failed

    def __repr__(self) -> str:
        runs, failed = self._counts()
        return f"<Store {self.path}: {runs} runs ({self.summary.height} finished, {failed} failed), swept {', '.join(self.keys) or 'nothing'}>"

    def _repr_html_(self) -> str:
        """In Jupyter: the store in one line, then the FCT of each series and class (seeds pooled) as a
        compact table of p50 / p99 / p99.9 with their intervals."""
        from .pooled import display_table

        runs, failed = self._counts()
        head = (f"<b>{escape(str(self.path))}</b>: {runs} runs ({self.summary.height} finished, {failed} failed); "
                f"swept {escape(', '.join(self.keys) or 'nothing')}")
        if not self.summary.height:
            return f"<p>{head}</p>"
        t = display_table(self.pooled(), self.keys)
        keep = [*self.keys, "class", "seeds", "count", "unfinished", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "slowdown p99"]
        t = t.select([c for c in keep if c in t.columns])
        rows = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in r) + "</tr>" for r in t.iter_rows())
        return (f"<div><p>{head}</p><table><thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in t.columns)
                + f"</tr></thead><tbody>{rows}</tbody></table><p><small>seeds pooled; [lo, hi]: 95% interval over seeds "
                "(log scale); &gt;= X: a lower bound</small></p></div>")


def open_store(path: str | Path) -> Store:
    """Open a results store written by ``detailsim sweep`` or `sweep`."""
    return Store(path)


def sweep(spec: str | Path | dict[str, Any], out: str | Path, *, workers: int | None = None, resume: bool = False,
          progress: bool = False) -> Store:
    """Run a sweep (a sweep TOML file or the same as a dict) into the store `out` and open it. `resume`:
    continue a sweep already in `out` (finished runs are kept)."""
    sw = load_sweep(spec)
    run_sweep(sw, Path(out), workers=workers, resume=resume, progress=progress)
    return Store(out)
