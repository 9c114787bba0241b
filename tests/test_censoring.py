"""Censored tails (issue 34): an unfinished flow counts in every percentile as "not finished by the end",
each class says how many flows did not finish, and a percentile whose rank falls on an unfinished flow is a
lower bound (``<metric>_lb`` in JSON and Parquet, ">= X" in tables)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import detailsim
from conftest import run_cli
from detailsim.outputs.plots import pooled_percentiles, reduction_table
from detailsim.repro.reproduce import markdown_table
from detailsim.core.results import censored_stats


def test_percentiles_rank_unfinished_flows_by_their_age():
    # 8 finished flows of 1..8 ms, 2 unfinished that had run 20 and 30 ms when the run ended: N = 10
    s = censored_stats(np.arange(1, 9) * 1e-3, np.array([20e-3, 30e-3]))
    assert (s["count"], s["unfinished"]) == (8, 2)
    assert s["mean_ms"] == pytest.approx(4.5), "the mean is over finished flows; `unfinished` says how many it leaves out"
    assert (s["p50_ms"], s["p50_lb"]) == (5.0, False), "rank 5 of 10: a finished flow faster than every unfinished one"
    # rank 10 of 10 falls on an unfinished flow: only a lower bound, the age of the older one
    assert (s["p99_ms"], s["p99_lb"]) == (30.0, True)
    assert (s["p999_ms"], s["p999_lb"]) == (30.0, True)
    assert (s["max_ms"], s["max_lb"]) == (30.0, True)
    # over finished flows alone (the old way) the p99 would have been 8 ms, reported as exact


def test_a_finished_flow_slower_than_a_young_unfinished_one_is_not_exact():
    # the unfinished flow had run only 2 ms: it may still finish before the 5 ms flow, so rank 3 of 4 is
    # only known to be at least the third value of {1, 2 (age), 3, 5}
    s = censored_stats(np.array([1e-3, 3e-3, 5e-3]), np.array([2e-3]))
    assert (s["p50_ms"], s["p50_lb"]) == (2.0, True)
    assert s["p99_lb"] and s["p99_ms"] == 5.0
    exact = censored_stats(np.array([1e-3, 3e-3, 5e-3]), np.array([]))
    assert (exact["p99_ms"], exact["p99_lb"], exact["max_lb"], exact["unfinished"]) == (5.0, False, False, 0)


def test_an_incast_cut_short_reports_lower_bounds():
    """examples/incast with a 7 ms drain: 1 of 16 flows finishes. Before issue 34 its p99.9 was the one
    finished flow's FCT, reported as exact."""
    r = detailsim.run("examples/incast", set={"run.drain": "7ms"})
    st = r.summary["fct"]["incast"]
    assert (st["count"], st["unfinished"]) == (1, 15)
    assert st["p999_lb"] and st["p99_lb"] and st["p50_lb"] and st["max_lb"]
    end_ms = r.summary["sim_time_s"] * 1e3
    youngest_age = (r.summary["sim_time_s"] - r.flows.filter(pl.col("fct").is_null())["start"].max()) * 1e3
    assert st["p999_ms"] == pytest.approx(youngest_age) and st["p999_ms"] <= end_ms
    assert st["p999_ms"] > r.flows["fct"].drop_nulls().max() * 1e3, "the finished flow's FCT is not the tail"
    # the flow table carries each unfinished flow's age at the end
    u = r.flows.filter(pl.col("fct").is_null())
    assert u.height == 15 and ((u["fct_lower"] - (r.summary["sim_time_s"] - u["start"])).abs() < 1e-12).all()


def test_the_cli_shows_bounds_and_unfinished_flows(tmp_path):
    r = run_cli("run", "examples/incast", "--set", "run.drain=7ms", "--quiet", check=True)
    row = next(line for line in r.stdout.splitlines() if line.startswith("incast"))
    assert row.split()[:3] == ["incast", "1", "15"] and ">= " in row
    j = json.loads(run_cli("run", "examples/incast", "--set", "run.drain=7ms", "--json", check=True).stdout)
    assert j["fct"]["incast"]["p999_lb"] is True and j["fct"]["incast"]["unfinished"] == 15
    done = json.loads(run_cli("run", "examples/incast", "--json", check=True).stdout)["fct"]["incast"]
    assert done["unfinished"] == 0 and not any(done[f"{m}_lb"] for m in ("p50", "p99", "p999", "max"))


def test_sweep_parquet_and_tables_carry_the_flags(tmp_path):
    from detailsim.core.sweep import load_sweep, read_store, run_sweep

    spec = {"name": "cut", "base": "examples/incast", "seeds": 1, "set": {"scheme.tcp.rto_min": "1ms"},
            "axes": {"run.drain": ["7ms", "1s"]}}
    run_sweep(load_sweep(spec), tmp_path / "s", workers=1, progress=False)
    t = read_store(tmp_path / "s")
    fct = t["fct"].sort("run.drain")
    assert fct.schema["p999_lb"] == pl.Boolean
    by = {r["run.drain"]: r for r in fct.iter_rows(named=True)}
    assert by["7ms"]["p999_lb"] and by["7ms"]["unfinished"] > 0
    assert not by["1s"]["p999_lb"] and by["1s"]["unfinished"] == 0
    st = pooled_percentiles(t["flows"], ["run.drain"])
    assert st.filter(pl.col("run.drain") == "7ms")["p999_lb"][0]
    md = markdown_table(st, ["run.drain"], ["incast"])
    line = next(x for x in md.splitlines() if x.startswith("| 7ms"))
    assert ">= " in line


def test_a_reduction_over_a_bound_is_a_bound():
    st = pl.DataFrame({"scheme": ["fh", "detail", "fh", "detail"], "class": ["a", "a", "b", "b"],
                       "p999_ms": [10.0, 4.0, 10.0, 4.0], "p999_lb": [True, False, False, True]})
    red = reduction_table(st, ["scheme"], "fh", "p999").sort("class")
    assert red["reduction_pct"].to_list() == [60.0, 60.0]
    # FH's tail is at least 10 ms: DeTail's cut is at least 60%; DeTail's is at least 4 ms: at most 60%
    assert red["reduction_bound"].to_list() == ["lower", "upper"]


def test_nearest_rank_is_the_rule_where_numpy_inverted_cdf_rounds_up():
    """The nearest rank (the smallest value with at least q of the data at or below it) is computed by
    `results.rank_of`, not by np.quantile(method="inverted_cdf"): numpy takes q * n - 1 in floating point,
    so where q * n lands a hair above an integer (0.07 * 100 = 7.000000000000001) it returns the next
    value. Ours gives the 7th of 100 values; numpy the 8th."""
    import numpy as np

    from detailsim.core.results import QUANTILES, nearest_rank

    v = np.arange(1.0, 101.0)
    assert nearest_rank(v, 0.07) == 7.0
    assert float(np.quantile(v, 0.07, method="inverted_cdf")) == 8.0
    # for the quantiles the tables use, both agree at every n up to 5,000
    for q in QUANTILES.values():
        for n in range(1, 5001):
            x = np.arange(float(n))
            assert nearest_rank(x, q) == float(np.quantile(x, q, method="inverted_cdf")), (q, n)
