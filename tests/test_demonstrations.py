"""Demonstrations (`detailsim demonstrate`): each declared one is a valid sweep, a run measures every
variant's classes with intervals over seeds and timeout counts, and the store the docs quote is what the
runs measured."""

from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import ROOT, run_cli
from detailsim.repro.demonstrations import DEMOS, DOC_DEMOS, Demo, measure, run_demo
from detailsim.core.sweep import load_sweep, read_store


def test_every_declared_demonstration_is_a_sweep_whose_runs_validate():
    for d in DEMOS.values():
        sw = load_sweep(d.spec())
        assert len(sw.runs) == len(d.variants) * d.seeds, d.id
        assert {r.params["variant"] for r in sw.runs} == set(d.variants)
        for r in sw.runs:  # every variant's keys reach its scenario
            want = d.variants[r.params["variant"]]
            if "scheme" in want:
                assert r.scenario["scheme"]["preset"] == want["scheme"], (d.id, r.params)


def test_variants_that_set_different_keys_are_refused():
    d = Demo("bad", (), "", "paper/steady", {"a": {"scheme": "fh"}, "b": {"scheme": "fh", "workload.0.rate": 10}})
    with pytest.raises(ValueError, match="variant 'b'"):
        d.spec()


def test_a_demonstration_measures_its_variants_from_its_own_runs(tmp_path):
    d = Demo("tiny", ("steady.fh_timeouts",), "two schemes on a short steady run", "paper/steady",
             {"fh": {"scheme": "fh"}, "detail": {"scheme": "detail"}}, seeds=2,
             set={"run.duration": "3ms", "workload.0.rate": 500}, classes=("retrieval/8KB",))
    rec = run_demo(d, tmp_path)
    assert set(rec["measured"]) == {"fh", "detail"}
    f = read_store(tmp_path / "tiny")["flows"]
    for v in ("fh", "detail"):
        got = rec["measured"][v]
        assert list(got) == ["retrieval/8KB"]
        g = f.filter((pl.col("variant") == v) & (pl.col("class") == "retrieval/8KB"))
        s = got["retrieval/8KB"]
        assert s["count"] + s["unfinished"] == g.height > 0
        assert s["p999_ci"] is not None and s["p999_ms"] >= s["p50_ms"] > 0
        assert s["timeouts_pct"] == pytest.approx(float((g["timeouts"] > 0).mean()) * 100)
        # every measured flow in the mean, an unfinished one at its age (a lower bound of the mean)
        assert s["mean_all_lb_ms"] == pytest.approx(float(g.select(pl.coalesce("fct", "fct_lower").mean()).item()) * 1e3)
        ranked = sorted(g["timeouts"].to_list())
        assert s["timeouts_p999"] == ranked[-(-len(ranked) * 999 // 1000) - 1]  # nearest rank
    # resumed: nothing runs again and the measurement is the same
    assert measure(tmp_path / "tiny")["fh"]["retrieval/8KB"] == run_demo(d, tmp_path)["measured"]["fh"]["retrieval/8KB"]


def test_the_stored_demonstrations_are_declared_and_name_their_claims():
    stored = json.loads((ROOT / DOC_DEMOS).read_text())
    claims = {c["id"] for c in json.loads((ROOT / "docs/reproduction/claims.json").read_text())}
    for k, rec in stored.items():
        d = DEMOS[k]
        assert rec["command"] == d.command() and rec["variants"] == json.loads(json.dumps(d.variants)) and rec["seeds"] == d.seeds
        assert set(rec["measured"]) == set(d.variants)
        assert set(d.claims) <= claims, k


def test_an_unknown_demonstration_is_refused():
    res = run_cli("demonstrate", "nope")
    assert res.returncode != 0 and "unknown demonstration 'nope'" in res.stderr and "scatter_fh_around_link" in res.stderr
