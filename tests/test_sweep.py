"""Sweeps: expansion, the results store, kill -9 and resume, failures, an external Dask cluster, and
reading the store with polars, pandas and DuckDB."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import ROOT, run_cli
from detailsim.core.sweep import Run, load_sweep, read_store, run_sweep, finished_runs

SWEEP = ROOT / "tests" / "data" / "sweep3x3x2.toml"
DASK = Path(sys.executable).parent / "dask"


def check_store(out: Path, n: int = 18) -> dict[str, pl.DataFrame]:
    t = read_store(out)
    s = t["summary"]
    assert s.height == n and s["run_id"].n_unique() == n
    combos = set(zip(s["scheme"], s["workload.rate"], s["seed"]))
    assert combos == set(itertools.product(["fh", "lps", "detail"], [500, 1000, 2000], [1, 2]))
    f = t["flows"]
    # every flow row carries its run's parameters, and every run's flows are there exactly once
    joined = f.join(s.select("run_id", pl.col("scheme").alias("s_scheme"), pl.col("workload.rate").alias("s_rate"),
                             pl.col("seed").alias("s_seed"), "flows_started"), on="run_id")
    assert joined.height == f.height
    assert (joined["scheme"] == joined["s_scheme"]).all() and (joined["workload.rate"] == joined["s_rate"]).all()
    assert (joined["seed"] == joined["s_seed"]).all()
    per_run = f.group_by("run_id").agg(pl.len().alias("rows"), pl.col("id").n_unique().alias("ids"))
    per_run = per_run.join(s.select("run_id", "flows_started"), on="run_id")
    assert (per_run["rows"] == per_run["flows_started"]).all() and (per_run["rows"] == per_run["ids"]).all()
    assert t["fct"]["run_id"].n_unique() == n
    return t


def test_expansion_and_validation(tmp_path):
    sw = load_sweep(SWEEP)
    assert len(sw.runs) == 18 and len({r.run_id for r in sw.runs}) == 18
    assert sw.axes == ["scheme", "workload.rate", "seed"]
    r = sw.runs[0]
    assert r.scenario["workload"][0]["rate"] == r.params["workload.rate"]
    assert r.scenario["workload"][1]["size"] == "64KB"  # [set] "workload.size" reached the background only
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "paper/steady"\n[axes]\n"topology.link_rate" = ["1Gbps", "-5Gbps"]\n')
    res = run_cli("sweep", str(bad), "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and res.stderr.startswith("error: topology.link_rate:"), res.stderr
    assert not (tmp_path / "o").exists()
    z = tmp_path / "zip.toml"
    z.write_text('base = "paper/steady"\n[[zip]]\n"workload.rate" = [1, 2]\n"run.duration" = ["1ms"]\n')
    res = run_cli("sweep", str(z), "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "equal lengths" in res.stderr


def test_zip_axes(tmp_path):
    z = tmp_path / "zip.toml"
    z.write_text('base = "examples/incast"\nseeds = [3]\n[axes]\nscheme = ["fh", "lps"]\n'
                 '[[zip]]\n"topology.link_rate" = ["1Gbps", "10Gbps"]\n"topology.buffer" = ["128KB", "1MB"]\n')
    sw = load_sweep(z)
    assert len(sw.runs) == 4
    assert {(r.params["topology.link_rate"], r.params["topology.buffer"]) for r in sw.runs} == {("1Gbps", "128KB"), ("10Gbps", "1MB")}


def test_sweep_3x3x2(tmp_path):
    out = tmp_path / "store"
    res = run_cli("sweep", str(SWEEP), "--out", str(out), "--workers", "2", check=True)
    assert "18 done now" in res.stdout
    check_store(out)
    # a second time without --resume is refused; with it, nothing reruns
    res = run_cli("sweep", str(SWEEP), "--out", str(out))
    assert res.returncode == 2 and "--resume" in res.stderr
    res = run_cli("sweep", str(SWEEP), "--out", str(out), "--resume", check=True)
    assert "0 done now, 18 already finished" in res.stdout


def test_kill_9_then_resume_loses_and_duplicates_nothing(tmp_path):
    out = tmp_path / "store"
    slow = tmp_path / "slow.toml"
    slow.write_text(SWEEP.read_text().replace('"run.duration" = "3ms"', '"run.duration" = "60ms"'))
    p = subprocess.Popen([sys.executable, "-m", "detailsim.cli", "sweep", str(slow), "--out", str(out), "--workers", "2"],
                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        t0 = time.time()
        while len(finished_runs(out)) < 4 and time.time() - t0 < 120:
            time.sleep(0.02)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    done_before = len(finished_runs(out))
    assert 4 <= done_before < 18, done_before
    res = run_cli("sweep", str(slow), "--out", str(out), "--resume", "--workers", "2", check=True)
    assert f"{18 - done_before} done now, {done_before} already finished" in res.stdout
    check_store(out)


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    sw = load_sweep(SWEEP)
    sw.runs = sw.runs[:3]
    broken = Run("brokenrun000", {"scheme": "fh", "workload.rate": 0, "seed": 9}, {"topology": {"kind": "nope"}}, "broken")
    sw.runs.append(broken)
    counts = run_sweep(sw, tmp_path / "o", workers=1, progress=False)
    assert counts == {"done": 3, "failed": 1, "skipped": 0}
    err = json.loads((tmp_path / "o" / "failed" / "brokenrun000.json").read_text())
    assert "topology.kind" in err["error"] and err["params"]["seed"] == 9
    assert finished_runs(tmp_path / "o") == {r.run_id for r in sw.runs[:3]}


def test_external_dask_cluster(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([str(DASK), "scheduler", "--scheduler-file", str(sched_file), "--port", "0", "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        t0 = time.time()
        while not sched_file.exists() and time.time() - t0 < 60:
            time.sleep(0.1)
        time.sleep(0.2)
        addr = json.loads(sched_file.read_text())["address"]
        assert addr.startswith("tcp://127.0.0.1") or addr.startswith("tcp://")
        procs.append(subprocess.Popen([str(DASK), "worker", addr, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        out = tmp_path / "store"
        res = run_cli("sweep", str(SWEEP), "--out", str(out), "--scheduler", addr, check=True, timeout=300)
        assert "18 done now" in res.stdout
        check_store(out)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_store_is_readable_by_pandas_and_duckdb(tmp_path):
    pd = pytest.importorskip("pandas")
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "store"
    run_cli("sweep", str(SWEEP), "--out", str(out), check=True)
    s = pd.read_parquet(out / "summary")
    assert len(s) == 18 and set(s["scheme"]) == {"fh", "lps", "detail"}
    flows = pl.read_parquet(out / "flows" / "*.parquet")
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}/flows/*.parquet')").fetchall()[0][0]
    assert n == flows.height
    p99 = duckdb.sql(
        f"SELECT scheme, quantile_disc(fct, 0.99) AS p99 FROM read_parquet('{out}/flows/*.parquet') "
        "WHERE fct IS NOT NULL GROUP BY scheme ORDER BY scheme").fetchall()
    assert [r[0] for r in p99] == ["detail", "fh", "lps"]


def test_run_ids_follow_the_resolved_scenario(tmp_path):
    # the same parameters over a different base scenario are different runs: --resume must not mix them
    spec = {"base": "paper/steady", "seeds": [1], "axes": {"scheme": ["fh", "lps"]}}
    a = load_sweep(spec)
    b = load_sweep({**spec, "set": {"run.duration": "0.01s"}})
    assert [r.params for r in a.runs] == [r.params for r in b.runs]
    assert {r.run_id for r in a.runs}.isdisjoint({r.run_id for r in b.runs})
    assert [r.run_id for r in a.runs] == [r.run_id for r in load_sweep(spec).runs]  # and stable


def test_a_long_flow_list_reaches_run_0_whole(tmp_path):
    """The manifest shortens a `flows` workload's rows for the record; run 0's own scenario keeps all of them."""
    spec = tmp_path / "pings.toml"
    spec.write_text('description = "pings"\nbase = "paper/pias_endhost"\n\n[set]\n"run.duration" = "0.05s"\n\n'
                    '[axes]\nscheme = ["tcp", "dctcp"]\n')
    out = tmp_path / "store"
    run_cli("sweep", str(spec), "--out", str(out), check=True)
    t = read_store(out)
    pings = t["flows"].filter(pl.col("class") == "ping")
    # 60 of the CSV's 200 pings start within 20-50 ms; both runs, run 0 included, have every one of them
    assert pings.group_by("run_id").len()["len"].to_list() == [60, 60]
    manifest = json.loads((out / "sweep.json").read_text())
    rows = manifest["base_scenario"]["workload"][1]["rows"]
    assert len(rows) == 21 and rows[-1] == "... 180 more rows"


def test_an_axis_inside_a_table_set_for_every_run_changes_each_run_alone():
    # a table in [set] and an axis on one of its keys: every run gets its own value (the table was shared by
    # the runs, and each axis value overwrote the others': every run ran the last one)
    from detailsim.core.sweep import load_sweep

    sw = load_sweep({"base": "paper/steady", "set": {"workload.1": {"kind": "background", "rate": 10, "size": "1MB", "priority": 1}},
                     "axes": {"workload.1.rate": [1.5, 2, 3]}})
    assert [r.scenario["workload"][1]["rate"] for r in sw.runs] == [1.5, 2, 3]
    assert [r.params["workload.1.rate"] for r in sw.runs] == [1.5, 2, 3]
