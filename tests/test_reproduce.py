"""Reproductions: listed, runnable, and each writes its store, plots, table, claims and report."""

from __future__ import annotations

import json

import polars as pl

from conftest import run_cli

NAMES = ["scatter", "incast", "verification", "steady_cdf", "steady", "steady_shared_buffer", "fh_sensitivity", "fh_sensitivity_bursty", "pfc_alone", "bursty", "long_flows",
         "disconnected", "degraded", "sequential", "sequential_first", "partition_aggregate", "partition_aggregate_spread", "dibs_incast", "pias_testbed", "pias_memcached", "pias_endhost",
         "pias_queues", "pias_thresholds", "pias_mismatch", "pias_websearch", "pias_datamining", "pias_las", "pias_oversubscribed"]


def test_list_names_every_evaluation():
    r = run_cli("reproduce", "--list", check=True)
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    assert listed == NAMES


def test_unknown_reproduction():
    r = run_cli("reproduce", "fig99")
    assert r.returncode == 2 and "unknown reproduction" in r.stderr


def test_a_quick_reproduction_writes_everything(tmp_path):
    r = run_cli("reproduce", "degraded", "--quick", "--out", str(tmp_path), check=True, timeout=600)
    d = tmp_path / "degraded"
    assert "| claim | paper (where) | measured (95% CI) | how measured | verdict |" in r.stdout
    assert (d / "table.md").read_text().startswith("## degraded")
    claims = json.loads((d / "claims.json").read_text())
    assert claims and all(set(c) == {"id", "experiment", "claim", "paper", "measured", "direction_matches", "verdict"} for c in claims)
    assert all(c["id"].startswith("degraded.") and c["paper"]["where"] == "Figure 13" for c in claims)
    assert {c["verdict"] for c in claims} <= {"reproduced", "direction only", "not reproduced"}
    # one seed (--quick): no confidence interval
    assert all(c["measured"]["seeds"] == 1 and c["measured"]["ci95"] is None for c in claims)
    pngs = sorted(p.name for p in (d / "plots").glob("*.png"))
    assert "reduction_p999_over_fh.png" in pngs and any(p.startswith("cdf_") for p in pngs)
    assert (d / "plots" / "reduction_p999_over_fh.svg").exists()
    html = (d / "report.html").read_text()
    assert "Reproduction claims" in html and html.count("data:image/png;base64,") == len(pngs)
    assert len(list((d / "summary").glob("*.parquet"))) == 3


def test_reproduce_all_quick(tmp_path):
    """Every experiment, shortened: a PNG each and the combined README (about a minute and a half here)."""
    r = run_cli("reproduce", "all", "--quick", "--out", str(tmp_path), "--quiet", check=True, timeout=900)
    for n in NAMES:
        assert f"## {n}:" in r.stdout
        assert list((tmp_path / n / "plots").glob("*.png")), n
        assert (tmp_path / n / "report.html").exists()
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("# Reproductions (quick)") and "claims graded against the papers' own numbers" in readme
    claims = json.loads((tmp_path / "claims.json").read_text())
    assert {c["experiment"] for c in claims} >= set(NAMES) - {"verification", "steady_shared_buffer", "fh_sensitivity", "fh_sensitivity_bursty", "sequential_first", "partition_aggregate_spread"}
    # the PIAS experiments plot mean FCT (what their claims are about), the DeTail ones the 99.9th percentile
    assert (tmp_path / "pias_websearch" / "plots" / "percentile_mean_vs_workload.load.png").exists()
    assert (tmp_path / "pias_websearch" / "plots" / "reduction_mean_over_dctcp.png").exists()
    assert (tmp_path / "steady" / "plots" / "reduction_p999_over_fh.png").exists()


def test_claims_carry_a_confidence_interval_over_seeds(tmp_path, monkeypatch):
    """With several seeds each claim's value is pooled and its 95% CI comes from the per-seed values."""
    from detailsim import reproduce as rp

    r = rp.Repro("tiny", "two seeds of a short steady run", "paper/steady", {"scheme": ["fh", "detail"]}, seeds=2,
                 set={"run.duration": "0.01s", **rp.NO_ECN}, claims=rp.steady_cdf_claims)
    monkeypatch.setitem(rp.REPROS, "tiny", r)
    rp.reproduce("tiny", tmp_path, progress=False)
    claims = json.loads((tmp_path / "tiny" / "claims.json").read_text())
    assert len(claims) == 9
    for c in claims:
        assert c["measured"]["seeds"] == 2
        assert c["measured"]["ci95"] is not None and c["measured"]["ci95"] >= 0, c["id"]
    # the pooled median cut matches what the table shows
    p50 = next(c for c in claims if c["id"] == "tiny.8kb_p50_cut")["measured"]["value"]
    flows = rp.read_store(tmp_path / "tiny")["flows"]
    st = rp.class_stats(flows, ["scheme"])
    assert p50 == round(rp.cut(st, "retrieval/8KB", "p50"), 3)
    # the table gives every value with its 95% interval over the seeds: the t-interval of the two seeds' values
    from detailsim.grading import ci95

    per = [rp.class_stats(flows.filter(pl.col("seed") == sd), ["scheme"]) for sd in (1, 2)]
    want = ci95([rp.pct(p, "retrieval/8KB", "p99", scheme="fh") for p in per])
    row = next(ln for ln in (tmp_path / "tiny" / "table.md").read_text().splitlines() if ln.startswith("| fh | retrieval/8KB |"))
    p99_cell = row.split("|")[7].strip()
    assert p99_cell == f"{rp.pct(st, 'retrieval/8KB', 'p99', scheme='fh'):.3f} ± {want:.3f}", row
    cuts = next(ln for ln in (tmp_path / "tiny" / "table.md").read_text().splitlines() if ln.startswith("| detail | retrieval/8KB |"))
    assert cuts.rstrip(" |").endswith("%") and cuts.count("±") == 6


def test_update_docs_refuses_a_partial_or_quick_run_before_running(tmp_path):
    for args in (["steady"], ["all", "--quick"]):
        r = run_cli("reproduce", *args, "--update-docs", "--out", str(tmp_path))
        assert r.returncode == 2 and "--update-docs takes the full `all` run" in r.stderr
    assert not list(tmp_path.iterdir()), "nothing ran"
