"""Reproductions: listed, runnable, and each writes its store, plots, table, claims and report."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from conftest import run_cli

NAMES = ["calibrate", "scatter", "incast", "verification", "steady", "steady_closed_background", "pfc_alone", "bursty", "long_flows", "disconnected",
         "degraded", "sequential", "sequential_first", "partition_aggregate", "partition_aggregate_first", "page_creation", "dibs_incast",
         "pias_testbed", "pias_memcached", "pias_endhost", "pias_queues", "pias_thresholds", "pias_mismatch", "pias_websearch",
         "pias_datamining", "pias_leafspine", "pias_las", "pias_oversubscribed", "modern_steady", "modern_bursty", "modern_fattree",
         "roce_incast", "roce_convergence"]
CLAIM_KEYS = {"id", "experiment", "claim", "quote", "source", "label", "label_note", "paper", "measured", "check", "direction_matches", "direction_over_interval", "verdict", "resolve"}


def test_list_names_every_evaluation():
    r = run_cli("reproduce", "--list", check=True)
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    # and the group that runs DeTail beside DCQCN and HPCC
    assert listed == [*NAMES, "modern"]
    assert "runs modern_steady, modern_bursty, modern_fattree" in r.stdout


def test_unknown_reproduction():
    r = run_cli("reproduce", "fig99")
    assert r.returncode == 2 and "unknown reproduction" in r.stderr


def test_update_docs_takes_all_or_a_declared_readings_run_and_never_quick(tmp_path):
    """The docs quote full runs: one reproduction alone is stored only as part of a declared reading."""
    r = run_cli("reproduce", "scatter", "--update-docs", "--out", str(tmp_path))
    assert r.returncode == 2 and "a declared --reading NAME's run of one reproduction or all" in r.stderr
    r = run_cli("reproduce", "scatter", "--reading", "rto_linux", "--quick", "--update-docs", "--out", str(tmp_path))
    assert r.returncode == 2 and "not --quick" in r.stderr
    assert not any(tmp_path.iterdir())  # refused before anything ran


def test_a_quick_reproduction_writes_everything(tmp_path):
    r = run_cli("reproduce", "degraded", "--quick", "--out", str(tmp_path), check=True, timeout=600)
    d = tmp_path / "degraded"
    assert "| claim | paper (where; source) | measured (95% CI) | how measured | label | verdict |" in r.stdout
    assert (d / "table.md").read_text().startswith("## degraded")
    claims = json.loads((d / "claims.json").read_text())
    assert claims and all(set(c) == CLAIM_KEYS for c in claims)
    assert all(c["id"].startswith("degraded.") and c["paper"]["where"] in ("Figure 13", "Section 6.4") for c in claims)
    # one seed (--quick): no confidence interval, so nothing with a number is decided, and nothing is checked
    assert all(c["measured"]["seeds"] == 1 and c["measured"]["ci95"] is None and c["check"] is None for c in claims)
    assert all(c["verdict"] == "inconclusive" and "at least 2 seeds" in c["resolve"] for c in claims if c["paper"]["value"] is not None)
    pngs = sorted(p.name for p in (d / "plots").glob("*.png"))
    assert "reduction_p999_over_fh.png" in pngs and any(p.startswith("cdf_") for p in pngs)
    assert (d / "plots" / "reduction_p999_over_fh.svg").exists()
    html = (d / "report.html").read_text()
    # the store's figures and the claims figure (the paper's numbers beside the measured ones)
    assert "Reproduction claims" in html and html.count("data:image/png;base64,") == len(pngs) + 1 and 'alt="claims"' in html
    assert any(p.startswith("ccdf_") for p in pngs) and "slowdown_by_size.png" in pngs
    assert len(list((d / "summary").glob("*.parquet"))) == 3


def test_reproduce_all_quick(tmp_path):
    """Every experiment, shortened: a PNG each (the calibration and the combined leaf-spine claims have
    none) and the combined README (about four minutes here)."""
    r = run_cli("reproduce", "all", "--quick", "--out", str(tmp_path), "--quiet", check=True, timeout=1200)
    for n in NAMES:
        assert f"## {n}:" in r.stdout
        if n not in ("calibrate", "pias_leafspine"):
            assert list((tmp_path / n / "plots").glob("*.png")), n
            assert (tmp_path / n / "report.html").exists()
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("# Reproductions (quick)") and "claims graded held out under the equivalence rule" in readme
    claims = json.loads((tmp_path / "claims.json").read_text())
    demos = {"calibrate", "steady_closed_background", "sequential_first", "partition_aggregate_first", "pias_websearch", "pias_datamining",
             "modern_steady", "modern_bursty"}
    assert {c["experiment"] for c in claims} == set(NAMES) - demos
    assert (tmp_path / "calibrate" / "calibration.json").exists()
    # the PIAS experiments plot mean FCT (what their claims are about), the DeTail ones the 99.9th percentile
    assert (tmp_path / "pias_websearch" / "plots" / "percentile_mean_vs_workload.load.png").exists()
    assert (tmp_path / "pias_websearch" / "plots" / "reduction_mean_over_dctcp.png").exists()
    assert (tmp_path / "steady" / "plots" / "reduction_p999_over_fh.png").exists()


def test_claims_carry_a_confidence_interval_and_a_convergence_check(tmp_path, monkeypatch):
    """With several seeds each claim's value is pooled, its 95% CI comes from the per-seed values, and the
    convergence check grades the first half of the seeds alone."""
    from detailsim.repro import reproduce as rp

    r = rp.Repro("tiny", "four seeds of a short steady run", "paper/steady", {"scheme": ["fh", "detail"], "workload.rate": [1000, 2000]}, seeds=4,
                 set={"run.duration": "0.01s", **rp.NO_ECN}, claims=rp.steady_claims)
    monkeypatch.setitem(rp.REPROS, "tiny", r)
    rp.reproduce("tiny", tmp_path, progress=False)
    claims = json.loads((tmp_path / "tiny" / "claims.json").read_text())
    assert {c["label"] for c in claims} == {"calibration", "held out", "by construction"}
    for c in claims:
        assert set(c) == CLAIM_KEYS and c["measured"]["seeds"] == 4
        assert c["check"]["how"] == "seeds 1-2 of 4", c["id"]
    # the pooled median cut at 2000/s matches what the table shows, and its check is the same on seeds 1-2
    flows = rp.read_store(tmp_path / "tiny")["flows"]
    p50 = next(c for c in claims if c["id"] == "tiny.fig9_p50_cut")
    st = rp.class_stats(flows, ["scheme", "workload.rate"])
    assert p50["measured"]["value"] == float(f"{rp.cut(st, 'retrieval/8KB', 'p50', **{'workload.rate': 2000}):.4g}")
    half = rp.class_stats(flows.filter(pl.col("seed") <= 2), ["scheme", "workload.rate"])
    assert p50["check"]["value"] == float(f"{rp.cut(half, 'retrieval/8KB', 'p50', **{'workload.rate': 2000}):.4g}")
    # the table gives every value with its 95% interval over the seeds: the t-interval of the seeds' values
    from detailsim.repro.grading import ci95

    per = [rp.class_stats(flows.filter(pl.col("seed") == sd), ["scheme", "workload.rate"]) for sd in (1, 2, 3, 4)]
    want = ci95([rp.pct(p, "retrieval/8KB", "p99", scheme="fh", **{"workload.rate": 2000}) for p in per])
    row = next(ln for ln in (tmp_path / "tiny" / "table.md").read_text().splitlines() if ln.startswith("| fh | 2000 | retrieval/8KB |"))
    p99_cell = row.split("|")[8].strip()
    assert p99_cell == f"{rp.pct(st, 'retrieval/8KB', 'p99', scheme='fh', **{'workload.rate': 2000}):.3f} ± {want:.3f}", row


def test_more_seeds_run_only_the_new_ones(tmp_path, monkeypatch):
    """A reproduction given more seeds keeps the runs its store already holds."""
    from detailsim.repro import reproduce as rp

    def tiny(seeds: int) -> rp.Repro:
        return rp.Repro("tiny", "a short steady run", "paper/steady", {"scheme": ["fh"]}, seeds=seeds,
                        set={"run.duration": "0.005s"}, converge="none")
    monkeypatch.setitem(rp.REPROS, "tiny", tiny(2))
    rp.reproduce("tiny", tmp_path, progress=False)
    first = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "tiny" / "summary").glob("*.parquet")}
    monkeypatch.setitem(rp.REPROS, "tiny", tiny(3))
    rp.reproduce("tiny", tmp_path, progress=False)
    now = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "tiny" / "summary").glob("*.parquet")}
    assert len(first) == 2 and len(now) == 3 and all(now[k] == v for k, v in first.items())
    # a run that resumed a store says its time is only the rest's, and storing it keeps the earlier full run
    t = json.loads((tmp_path / "tiny" / "timing.json").read_text())
    assert t["experiment"] == "tiny" and t["complete"] is False and t["wall_s"] > 0 and not t["quick"]


def test_each_run_records_its_wall_time_and_the_docs_sum_the_stored_ones(tmp_path, monkeypatch):
    """Issue 49: the full reproduction's wall time is the sum of each experiment's last full run, recorded by
    the run (`timing.json`) and kept by storing it (docs/reproduction/timings.json); quick runs, readings and
    resumed stores do not replace a full run's time."""
    from detailsim.repro import reproduce as rp
    from detailsim.repro.docblocks import block_of

    monkeypatch.setitem(rp.REPROS, "steady", rp.Repro("steady", "a short steady run", "paper/steady", {"scheme": ["fh"]}, seeds=1,
                                                      set={"run.duration": "0.005s"}, converge="none"))
    rp.reproduce("steady", tmp_path, progress=False)
    t = json.loads((tmp_path / "steady" / "timing.json").read_text())
    assert t["complete"] and t["reading"] is None and t["workers"] >= 1 and t["wall_s"] > 0
    # which build of the core ran: the digest of the native module this process loaded
    import hashlib

    from detailsim import _core

    assert t["module"] == hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:12]
    # and on which processor (the VM is not always on the same kind of host)
    from detailsim.machine import processor

    assert t["cpu"] == processor() and t["cpu"]
    old = {"steady": {**t, "wall_s": 99.0}, "incast": {**t, "experiment": "incast", "wall_s": 7.0}}
    merged = rp.merge_timings(old, tmp_path)
    assert merged["steady"]["wall_s"] == t["wall_s"] and merged["incast"]["wall_s"] == 7.0
    for bad in ({"quick": True}, {"reading": "rto_linux"}, {"complete": False}):
        (tmp_path / "steady" / "timing.json").write_text(json.dumps({**t, **bad}))
        assert rp.merge_timings(old, tmp_path)["steady"]["wall_s"] == 99.0, bad
    md = rp.timings_markdown(merged)
    assert f"{len(merged)} of {len(rp.ORDER)} experiments timed: {t['wall_s'] + 7:,.0f} s" in md and "`calibrate`" in md
    assert f"| {t['date']} | {t['cpu'].split(';')[0]} |" in md
    # a record from before the processor was recorded says so
    assert "| not recorded |" in rp.timings_markdown({"incast": {k: v for k, v in t.items() if k != "cpu"}})
    # the generated block in the docs is the stored timings, summed
    root = Path(__file__).resolve().parents[1]
    stored = json.loads((root / rp.DOC_TIMINGS).read_text())
    assert block_of((root / "docs" / "reproduction.md").read_text(), "wall-time", rp.TIMINGS_SOURCE) == rp.timings_markdown(stored)


def test_update_docs_refuses_a_partial_or_quick_run_before_running(tmp_path):
    for args in (["steady"], ["all", "--quick"]):
        r = run_cli("reproduce", *args, "--update-docs", "--out", str(tmp_path))
        assert r.returncode == 2 and "--update-docs takes the full `all` run" in r.stderr
    assert not list(tmp_path.iterdir()), "nothing ran"
    # the docs it rewrites are the project's: from anywhere else it says so before running
    import subprocess

    from conftest import CLI

    out = tmp_path / "out"
    r = subprocess.run([*CLI, "reproduce", "all", "--update-docs", "--out", str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "must run from the project root" in r.stderr and not out.exists()


def test_the_length_check_runs_half_the_arrival_window(tmp_path, monkeypatch):
    from detailsim.repro import reproduce as rp

    r = rp.Repro("tiny", "a short steady run", "paper/steady", {"scheme": ["fh", "detail"], "workload.rate": [1000, 2000]}, seeds=2,
                 set={"run.duration": "0.01s", **rp.NO_ECN}, claims=rp.steady_claims, converge="length")
    monkeypatch.setitem(rp.REPROS, "tiny", r)
    rp.reproduce("tiny", tmp_path, progress=False)
    claims = json.loads((tmp_path / "tiny" / "claims.json").read_text())
    assert all(c["check"]["how"] == "half the arrival window (0.005s against 0.01s)" for c in claims)
    check = rp.read_store(tmp_path / "tiny" / "check")["summary"]
    full = rp.read_store(tmp_path / "tiny")["summary"]
    assert check.height == full.height == 8
    assert 0.4 < check["flows_started"].sum() / full["flows_started"].sum() < 0.6, "half the arrival window, about half the flows"


def test_a_store_another_reproduction_grades_gets_its_length_check(tmp_path, monkeypatch):
    """A store with no claims of its own whose claims another reproduction grades (`uses`, as pias_leafspine
    reads pias_websearch and pias_datamining) runs its convergence check too, and the grader's claims carry
    it (without it they had no check at all)."""
    from detailsim.repro import reproduce as rp

    run = rp.Repro("tinyrun", "a short steady run", "paper/steady", {"scheme": ["fh"]}, seeds=2,
                   set={"run.duration": "0.01s", **rp.NO_ECN}, converge="length")

    def claims(d):
        return [d.claim("p50", "FH's 8 KB median", 1.0, "ms", "Figure 9", lambda st, su: rp.pct(st, "retrieval/8KB", "p50", scheme="fh"),
                        q=rp.Q("detail", 414, "Even the median completion time improved"))]

    use = rp.Repro("tinyuse", "its claims", "", {}, uses=["tinyrun"], claims=claims, converge="length")
    monkeypatch.setitem(rp.REPROS, "tinyrun", run)
    monkeypatch.setitem(rp.REPROS, "tinyuse", use)
    rp.reproduce("tinyrun", tmp_path, progress=False)
    assert (tmp_path / "tinyrun" / "check" / "sweep.json").exists()
    rp.reproduce("tinyuse", tmp_path, progress=False)
    [c] = json.loads((tmp_path / "tinyuse" / "claims.json").read_text())
    assert c["check"]["how"] == "half the arrival window of tinyrun" and c["check"]["value"] is not None


def test_the_figure_8_claim_reads_every_live_run(tmp_path, monkeypatch):
    """verification.sim_vs_implementation: the largest |simulated - live| cut per live-validate run
    (validation.json and the validation-seedN.json beside it), their mean, and an interval over runs."""
    import pytest

    from detailsim.repro import reproduce as rp

    def run(live_detail_ms: float) -> dict:
        def cls(run_ms: float, live_ms: float) -> dict:
            return {m: {"run_ms": run_ms, "live": {"ms": live_ms}} for m in ("p99", "p999")}
        sizes = ("retrieval/2KB", "retrieval/8KB")
        return {"cases": [{"scheme": "fh", "rate": 50, "classes": {c: cls(10.0, 10.0) for c in sizes}},
                          {"scheme": "detail", "rate": 50, "classes": {c: cls(5.0, live_detail_ms) for c in sizes}}]}

    (tmp_path / "validation.json").write_text(json.dumps(run(7.0)))  # simulated cut 50%, live 30%: 20 points
    from detailsim.repro import claims

    monkeypatch.setattr(claims, "LIVE_VALIDATION", tmp_path / "validation.json")
    d = rp.Data("verification", pl.DataFrame(), pl.DataFrame(), [])
    [one] = rp.verification_claims(d)
    assert one.measured_value == pytest.approx(20.0) and one.ci95 is None and one.verdict == "inconclusive"
    (tmp_path / "validation-seed2.json").write_text(json.dumps(run(6.0)))  # 10 points
    (tmp_path / "validation-seed3.json").write_text(json.dumps(run(6.0)))
    [three] = rp.verification_claims(d)
    assert three.seeds == 3 and three.measured_value == pytest.approx(40 / 3, rel=1e-3)
    assert three.ci95 == pytest.approx(4.303 * 5.7735 / 3 ** 0.5, rel=1e-3)
    assert three.to_json()["check"] == {"value": 20.0, "how": "live runs 1-1 of 3", "converged": True}


def test_modern_runs_detail_beside_the_roce_schemes_with_its_tables(tmp_path):
    """`reproduce modern` (quick): the three comparisons, each with the FCT table against DeTail, the slowdown
    table and the fabric table; the fat tree with both workloads at both link rates with the RoCE settings
    scaled, and its HPCC claims graded."""
    r = run_cli("reproduce", "modern", "--quick", "--out", str(tmp_path), "--quiet", check=True, timeout=900)
    for n in ("modern_steady", "modern_bursty", "modern_fattree"):
        md = (tmp_path / n / "table.md").read_text()
        assert f"## {n}:" in r.stdout and "| unfinished | slowdown p50 | slowdown p95 | slowdown p99 |" in md and "| PFC paused / run time |" in md, n
        summ = pl.read_parquet(tmp_path / n / "summary")
        assert sorted(summ["scheme"].unique().to_list()) == ["dcqcn", "dctcp", "detail", "hpcc"], n
        for row in summ.iter_rows(named=True):
            s = json.loads(row["summary_json"])
            assert s["invariants"]["lossless"] and s["invariants"]["conservation"] and s["invariants"]["shared_buffer"], (n, row["scheme"])
    ws = pl.read_parquet(tmp_path / "modern_fattree" / "summary")
    assert sorted(ws["link_rate"].unique().to_list()) == ["100Gbps", "10Gbps"]
    dq = [json.loads(row["summary_json"]) for row in ws.filter(pl.col("scheme") == "dcqcn").iter_rows(named=True)]
    # the scaled DCQCN settings reached the runs: CNPs at both rates under both workloads, and no drop anywhere
    assert len(dq) == 4 and all(s["roce"]["cnps"] > 0 and sum(s["drops"].values()) == 0 for s in dq)
    claims = json.loads((tmp_path / "modern_fattree" / "claims.json").read_text())
    assert [c["id"] for c in claims] == ["modern_fattree.hpcc_short_flows_websearch", "modern_fattree.hpcc_short_flows_hadoop"]
    assert all(c["source"].startswith("cited:hpcc") and c["paper"]["value"] is None for c in claims)
    assert sorted(ws["workload.0.cdf"].unique().to_list()) == ["hadoop", "websearch"]


def test_a_reading_is_set_on_the_detail_scenarios_runs_only():
    from detailsim.repro.reproduce import REPROS

    reading = {"scheme.egress_sharing": "in_use", "scheme.tcp.initial_window": 10}
    assert REPROS["bursty"].sweep_spec(False, reading=reading)["set"]["scheme.egress_sharing"] == "in_use"
    assert "scheme.egress_sharing" not in REPROS["pias_testbed"].sweep_spec(False, reading=reading)["set"], "not a DeTail scenario"
    cal = REPROS["calibrate"].sweep_spec(False, reading=reading)
    assert "scheme.egress_sharing" not in cal["set"] and "scheme.tcp.initial_window" not in cal["set"], "the calibration's grid is its own"


def test_background_in_progress_is_littles_law_on_the_flow_table():
    from detailsim.repro.reproduce import background_in_progress

    # two servers over [0.1, 0.2]: one flow across the whole window, one inside half of it, one unfinished
    # from 0.15, one that ended before the window; a retrieval makes the second server count
    flows = pl.DataFrame({"k": ["a"] * 5, "seed": [1] * 5, "src": [0, 0, 0, 0, 1],
                          "class": ["background"] * 4 + ["retrieval/2KB"],
                          "start": [0.05, 0.12, 0.15, 0.0, 0.1], "end": [0.3, 0.17, None, 0.09, 0.1001]})
    got = background_in_progress(flows, ["k"], (0.1, 0.2))["bg_in_progress"][0]
    assert got == pytest.approx((0.1 + 0.05 + 0.05 + 0.0) / (2 * 0.1))


def test_background_in_progress_does_not_depend_on_the_order_of_the_rows():
    """The calibration's background load (`background_in_progress`, stored in
    docs/reproduction/calibration.json) must be the same to the last bit whatever order its sums meet the
    rows in: a float sum depends on its order, and polars' join and group_by keep none (before the sums
    were sorted, re-running calibrate moved three of its stored loads in the 16th digit, and the same table
    summed 40 times gave two results). Shuffled and in pieces, the result must not move."""
    import numpy as np

    from detailsim.repro.reproduce import background_in_progress

    rng = np.random.default_rng(3)
    n = 60_000
    flows = pl.DataFrame({"k": rng.integers(0, 3, n).astype(str), "seed": rng.integers(1, 7, n), "src": rng.integers(0, 128, n),
                          "class": np.where(rng.random(n) < 0.3, "background", "retrieval/8KB"),
                          "start": rng.random(n) * 0.2, "end": rng.random(n) * 0.3 + 0.05})
    want = background_in_progress(flows, ["k"]).sort("k")["bg_in_progress"].to_list()
    for s in range(6):
        shuffled = flows.sample(fraction=1.0, shuffle=True, seed=s)
        # in pieces, as the runs' tables are concatenated
        pieces = pl.concat([shuffled.slice(i, 7_000) for i in range(0, n, 7_000)], rechunk=False)
        assert background_in_progress(pieces, ["k"]).sort("k")["bg_in_progress"].to_list() == want, s
