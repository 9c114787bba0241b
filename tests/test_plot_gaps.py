"""A figure with a point that has no value (no flow of that class finished at that parameter) draws a gap
there instead of failing (`plot_percentile_vs`, which `detailsim reproduce` draws for every sweep)."""

from __future__ import annotations

import polars as pl

from detailsim.outputs.plots import make_styles, plot_percentile_vs


def test_a_point_without_a_value_is_a_gap_in_the_line(tmp_path):
    stats = pl.DataFrame({"scheme": ["a"] * 3, "load": [0.2, 0.4, 0.6], "class": ["small"] * 3, "p99_ms": [1.0, None, 3.0]})
    per_seed = pl.DataFrame({"scheme": ["a"] * 6, "load": [0.2, 0.2, 0.4, 0.4, 0.6, 0.6], "class": ["small"] * 6,
                             "seed": [1, 2] * 3, "p99_ms": [0.9, 1.1, None, None, 2.8, 3.2]})
    styles = make_styles(["scheme", "load"], {"scheme": ["a"], "load": [0.2, 0.4, 0.6]})
    drawn = plot_percentile_vs(stats, "load", ["scheme", "load"], "p99", tmp_path, styles, per_seed)
    files = [f for d in drawn for f in d.files]
    assert files and all(f.exists() and f.stat().st_size > 0 for f in files)
