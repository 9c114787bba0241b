"""Plots and the HTML report: files are written, and the report renders in headless Chromium with every
image loaded."""

from __future__ import annotations

import re
import shutil
import subprocess

import matplotlib.image as mpimg
import numpy as np
import pytest

from conftest import ROOT, run_cli

SWEEP = ROOT / "tests" / "data" / "sweep3x3x2.toml"
# the sweep a new user tries first (issue 52): five schemes, three loads, two seeds, web search on a 10 Gbps
# fat tree with shared-buffer switches
SWEEP5 = ROOT / "tests" / "data" / "sweep_first.toml"


def _swept(tmp_path_factory, sweep):
    out = tmp_path_factory.mktemp(sweep.stem) / "store"
    run_cli("sweep", str(sweep), "--out", str(out), check=True)
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return _swept(tmp_path_factory, SWEEP)


@pytest.fixture(scope="module")
def store5(tmp_path_factory):
    return _swept(tmp_path_factory, SWEEP5)


def test_plot_writes_png_and_svg(store, tmp_path):
    res = run_cli("plot", str(store), "--out", str(tmp_path / "plots"), check=True)
    files = res.stdout.split()
    names = {f.rsplit("/", 1)[1] for f in files}
    for stem in ["cdf_retrieval_2KB", "cdf_retrieval_8KB", "cdf_retrieval_32KB", "percentile_p999_vs_workload.rate",
                 "reduction_p999_over_fh", "ccdf_retrieval_2KB", "ccdf_retrieval_8KB", "ccdf_retrieval_32KB", "slowdown_by_size"]:
        assert f"{stem}.png" in names and f"{stem}.svg" in names, stem
    img = mpimg.imread(tmp_path / "plots" / "reduction_p999_over_fh.png")
    assert img.shape[0] > 200 and np.std(img) > 0.01  # not blank
    assert (tmp_path / "plots" / "cdf_retrieval_8KB.svg").read_text().lstrip().startswith("<?xml")


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is required (make test installs Debian's chromium)"
    return exe


def test_report_renders_in_headless_chromium(store, tmp_path):
    html = tmp_path / "report.html"
    run_cli("report", str(store), "-o", str(html), check=True)
    text = html.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained
    pngs = text.count("data:image/png;base64,")
    assert pngs == 11  # per class (4) a CCDF and a CDF, slowdown by size, percentile against load, reduction
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([chromium(), *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120).stdout
    total = int(re.search(r'data-images="(\d+)"', dom).group(1))
    loaded = int(re.search(r'data-images-loaded="(\d+)"', dom).group(1))
    assert total == pngs and loaded == total, (total, loaded)
    shot = tmp_path / "shot.png"
    subprocess.run([chromium(), *flags, "--window-size=1280,2000", f"--screenshot={shot}", html.as_uri()],
                   capture_output=True, timeout=120, check=True)
    img = mpimg.imread(shot)
    assert img.shape[:2] == (2000, 1280)
    # the plots put colour on the page: many pixels are neither white nor grey
    rgb = img[..., :3]
    coloured = (rgb.max(axis=2) - rgb.min(axis=2)) > 0.2
    assert coloured.mean() > 0.01


def test_a_cdf_of_millions_draws_a_few_thousand_points_and_its_tail_exactly():
    from detailsim.outputs.plots import cdf_points

    assert (cdf_points(2500) == np.arange(2500)).all()
    n = 20_000_000
    keep = cdf_points(n)
    assert len(keep) <= 3000 and keep[0] == 0 and keep[-1] == n - 1
    assert (np.diff(keep) > 0).all()
    assert set(range(n - 1000, n)) <= set(keep.tolist())  # p99.9 of a million flows and above, every rank
    # the body's gaps are even: no stretch of the curve is skipped
    body = keep[keep < n - 1000]
    assert np.diff(body).max() <= n // 1999 + 1


def test_the_report_of_plots_already_drawn_reads_no_flow_table(store, tmp_path):
    """`reproduce` draws a store's plots once and embeds them: the report then reads only the summary and
    the FCT table, and plotting reads only the flow columns it draws (a store of 20 million flows was
    killed at 24 GB drawing its plots whole)."""
    from detailsim.outputs.plots import plot_store
    from detailsim.outputs.report import build_report
    from detailsim.core.sweep import read_store

    files = plot_store(store, tmp_path / "p")
    html = build_report(store, tmp_path / "r.html", plots_dir=tmp_path / "p").read_text()
    assert html.count("data:image/png;base64,") == sum(f.suffix == ".png" for f in files) == 11
    full = read_store(store)["flows"]
    narrow = read_store(store, columns=["scheme", "class", "fct", "nope"], tables=("flows",))
    assert list(narrow) == ["flows"] and narrow["flows"].columns == ["scheme", "class", "fct"]
    assert narrow["flows"].sort(["scheme", "class", "fct"], nulls_last=True).equals(
        full.select("scheme", "class", "fct").sort(["scheme", "class", "fct"], nulls_last=True))


def test_the_first_sweep_a_user_tries_renders_tails_every_scheme_and_a_pooled_table(store5, tmp_path):
    """Five schemes x three loads x two seeds: the report renders in headless Chromium with CCDFs, slowdown
    by size and the pooled table; every figure draws every scheme at every load (the reduction every one
    but its baseline), one colour per scheme and one line style per load across figures; no interval
    reaches zero or below."""
    import json

    import polars as pl

    from detailsim.core.pooled import pooled_table
    from detailsim.core.sweep import read_store
    from detailsim.outputs.plots import draw_store, make_styles

    schemes = ["dctcp", "detail", "pias", "dcqcn", "hpcc"]
    loads = [0.3, 0.5, 0.7]
    drawn = draw_store(store5, tmp_path / "p", baseline="dctcp")
    names = [d.name for d in drawn]
    assert {"ccdf_small", "ccdf_medium", "ccdf_large", "slowdown_by_size", "percentile_p999_vs_workload.0.load",
            "reduction_p999_over_dctcp"} <= set(names), names
    listing = json.loads((tmp_path / "p" / "plots.json").read_text())
    assert [x["name"] for x in listing] == names
    for d in drawn:
        assert not d.note, d.note
        have = {v["scheme"] for v in d.values}
        want = set(schemes) - ({"dctcp"} if d.name.startswith("reduction") else set())
        assert have == want, (d.name, have)
        if not d.name.startswith("percentile"):  # the others draw one series per (scheme, load)
            assert len(d.values) == len(want) * len(loads), (d.name, len(d.values))
    st = make_styles(["scheme", "workload.0.load"], {"scheme": schemes, "workload.0.load": loads})
    assert len(set(st.colours.values())) == 5 and len({v[0] for v in st.dashes.values()}) == 3
    # intervals over seeds never at or below zero
    flows = read_store(store5, tables=("flows",))["flows"]
    t = pooled_table(flows, ["scheme", "workload.0.load"])
    assert set(t["scheme"]) == set(schemes) and set(t["class"]) == {"small", "medium", "large"}
    assert t["p999_lb"].any()  # the large flows still running at the end: lower bounds, shown as such
    for c in [c for c in t.columns if c.endswith("_lo")]:
        lo = t[c].drop_nulls()
        assert lo.len() > 0 and (lo > 0).all(), c
        both = t.filter(pl.col(c).is_not_null())
        assert (both[c] <= both[c.replace("_lo", "_hi")]).all()
    html = tmp_path / "r.html"
    run_cli("report", str(store5), "-o", str(html), "--baseline", "dctcp", check=True)
    text = html.read_text()
    assert "seeds pooled" in text and text.count('<table class="pooled">') == 1
    pngs = text.count("data:image/png;base64,")
    assert pngs == sum(1 for d in drawn for f in d.files if f.suffix == ".png")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([chromium(), *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert int(re.search(r'data-images-loaded="(\d+)"', dom).group(1)) == pngs
    assert dom.count("<tr>") > 45  # the pooled table's rows, the runs and the FCT table
    shot = tmp_path / "shot.png"
    subprocess.run([chromium(), *flags, "--window-size=1280,3000", f"--screenshot={shot}", html.as_uri()],
                   capture_output=True, timeout=120, check=True)
    img = mpimg.imread(shot)
    rgb = img[..., :3]
    assert ((rgb.max(axis=2) - rgb.min(axis=2)) > 0.2).mean() > 0.01  # the figures' colours are on the page


def test_a_series_a_figure_cannot_draw_is_named_in_its_note():
    from detailsim.outputs.plots import Drawn, make_styles, note_left_out

    st = make_styles(["scheme", "load"], {"scheme": ["a", "b"], "load": [1, 2]})
    d = Drawn("ccdf_large", ["a, load=1", "a, load=2", "b, load=1"],
              [{"scheme": "a", "load": 1}, {"scheme": "a", "load": 2}, {"scheme": "b", "load": 1}])
    note_left_out(d, ["scheme", "load"], st, "a")
    assert d.note == "ccdf_large: 1 series not drawn (no flow of class large): b, load=2"
    r = Drawn("reduction_p999_over_a", ["b, load=1", "b, load=2"], [{"scheme": "b", "load": 1}, {"scheme": "b", "load": 2}])
    note_left_out(r, ["scheme", "load"], st, "a")
    assert r.note == ""  # the baseline is never a reduction's series


def test_a_missing_baseline_is_a_visible_note_not_a_silent_gap(store, tmp_path):
    res = run_cli("plot", str(store), "--out", str(tmp_path / "p"), "--baseline", "dctcp", check=True)
    assert "no reduction plot: the baseline scheme 'dctcp' is not in this sweep" in res.stderr
    html = tmp_path / "r.html"
    run_cli("report", str(store), "-o", str(html), "--baseline", "dctcp", check=True)
    assert "no reduction plot: the baseline scheme &#39;dctcp&#39; is not in this sweep" in html.read_text()


def test_intervals_over_seeds_are_geometric_and_never_reach_zero():
    from detailsim.core.pooled import seed_interval

    # two seeds far apart: a t-interval on the values themselves would reach about -50
    lo, hi = seed_interval([1.0, 10.0])
    assert 0 < lo < 1.0 and hi > 10.0
    assert abs(lo * hi - 10.0) < 1e-9  # symmetric on the log scale around the geometric mean sqrt(10)
    assert seed_interval([3.0]) is None and seed_interval([2.0, None, float("nan")]) is None
    a, b = seed_interval([5.0, 5.0, 5.0])
    assert a == pytest.approx(5.0) and b == pytest.approx(5.0)


def test_slowdown_percentiles_per_size_bin_are_nearest_rank_and_flag_unfinished_flows():
    import polars as pl

    from detailsim.outputs.plots import binned_slowdown, parse_size_bins, size_edges

    # bin 0: sizes 1000, slowdowns 1..100; bin 1: size 10^6, slowdowns 1..9 and one unfinished flow aged 50x ideal
    rows = [{"size": 1000, "fct": float(i), "fct_lower": float(i), "ideal": 1.0} for i in range(1, 101)]
    rows += [{"size": 10**6, "fct": float(i), "fct_lower": float(i), "ideal": 1.0} for i in range(1, 10)]
    rows += [{"size": 10**6, "fct": None, "fct_lower": 50.0, "ideal": 1.0}]
    f = pl.DataFrame(rows).with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"), pl.lit("x").alias("s"))
    edges = size_edges(f["size"].to_numpy(), [0, 10_000, 10**7])
    b = binned_slowdown(f, ["s"], edges).sort("bin")
    assert b["flows"].to_list() == [100, 10]
    assert b["p50"].to_list() == [50.0, 5.0] and b["p95"].to_list() == [95.0, 50.0] and b["p99"].to_list() == [99.0, 50.0]
    assert b["p50_lb"].to_list() == [False, False] and b["p99_lb"].to_list() == [False, True]
    assert parse_size_bins("12") == 12 and parse_size_bins("0,10KB,1MB") == [0.0, 10240.0, 1048576.0]
    for bad in ["0", "10KB", "1MB,10KB", "1XB,2KB"]:
        with pytest.raises(ValueError, match="--size-bins"):
            parse_size_bins(bad)


def test_slowdown_by_size_bins_only_flows_with_an_ideal_fct(tmp_path):
    """A workflow row (no ideal FCT) of size 0, as one cut off before its first byte is, stays out of the
    size bins (the frontends_first reading of page_creation failed on it: a log-spaced bin from 0)."""
    import polars as pl

    from detailsim.outputs.plots import make_styles, plot_slowdown_by_size

    rows = [{"scheme": "fh", "class": "retrieval/2KB", "size": 2048 * (1 + i % 4), "fct": 1e-3 * (1 + i % 7), "fct_lower": 1e-3 * (1 + i % 7),
             "ideal": 2e-4} for i in range(40)]
    rows += [{"scheme": "fh", "class": "workflow/sequential", "size": 0, "fct": None, "fct_lower": 5e-3, "ideal": None}]
    f = pl.DataFrame(rows).with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"))
    drawn = plot_slowdown_by_size(f, ["scheme"], tmp_path, make_styles(["scheme"], {"scheme": ["fh"]}))
    assert [d.name for d in drawn] == ["slowdown_by_size"] and drawn[0].files and all(p.exists() for p in drawn[0].files)
    assert drawn[0].series and not drawn[0].note


def test_the_pooled_table_comes_as_markdown_csv_and_a_polars_frame(store, tmp_path):
    import io

    import polars as pl

    import detailsim

    st = detailsim.open_store(store)
    frame = st.pooled()
    assert isinstance(frame, pl.DataFrame) and frame.height == 3 * 3 * 4  # scheme x rate x class
    # the rows in the sweep's order (fh, lps, detail) and classes by size
    assert frame["scheme"].unique(maintain_order=True).to_list() == ["fh", "lps", "detail"]
    assert frame["class"].to_list()[:4] == ["background", "retrieval/2KB", "retrieval/8KB", "retrieval/32KB"]
    assert (frame["seeds"] == 2).all() and (frame["count"] > 0).all()
    md = run_cli("analyze", "pooled", str(store), check=True).stdout
    lines = [x for x in md.splitlines() if x.startswith("|")]
    assert len(lines) == 2 + frame.height and "p99.9 (ms)" in lines[0] and "slowdown p99" in lines[0]
    assert "[" in lines[2]  # intervals shown
    csv = run_cli("analyze", "pooled", str(store), "--format", "csv", check=True).stdout
    back = pl.read_csv(io.StringIO(csv))
    assert back.height == frame.height and {"p999_ms", "p999_lo", "p999_hi", "sd_p99"} <= set(back.columns)
    assert back["p999_ms"].to_list() == pytest.approx(frame["p999_ms"].to_list())
    assert repr(st).startswith("<Store ") and "18 runs (18 finished, 0 failed)" in repr(st)
    assert st._repr_html_().count("<tr>") == 1 + frame.height


def test_a_result_is_one_line_in_a_terminal_and_a_table_in_a_notebook():
    import detailsim

    r = detailsim.run("examples/incast", duration="1ms")
    text = repr(r)
    assert "\n" not in text and len(text) < 200 and "16/16 flows" in text
    html = r._repr_html_()
    assert html.count("<tr>") == 1 + len(r.summary["fct"]) and "mean slowdown" in html
    assert r.fct()["class"].to_list() == list(r.summary["fct"])


def test_a_reproduction_report_states_the_rule_and_draws_the_papers_numbers_beside_the_measured(store, tmp_path):
    """A store with claims: the report states the grading code's own rule, each claim's label, quoted
    sentence and citation by paper name and section, and a figure of the paper's numbers beside the
    measured ones (every claim with a number placed, the others named in a note)."""
    import json
    import shutil

    from detailsim.outputs.plots import claim_row, plot_claims
    from detailsim.repro.grading import RULE

    claims = json.loads((ROOT / "docs" / "reproduction" / "claims.json").read_text())
    steady = [c for c in claims if c["experiment"] == "steady"]
    drawn = plot_claims(steady, tmp_path)[0]
    placed = [c["id"] for c in steady if claim_row(c) is not None]
    assert drawn.series == placed and len(placed) >= 10
    assert all(c["id"] in drawn.note for c in steady if c["id"] not in placed)
    row = claim_row(next(c for c in steady if c["id"] == "steady.fig9_fh_p50"))
    assert row["ref"] == 1.0 and row["band"] == pytest.approx((0.75, 1.25)) and row["x"] == pytest.approx(1.94 / 2.2, rel=0.02)
    s = tmp_path / "store"
    shutil.copytree(store, s)
    (s / "claims.json").write_text(json.dumps(steady))
    html = run_cli("report", str(s), "-o", str(tmp_path / "r.html"), check=True) and (tmp_path / "r.html").read_text()
    assert RULE in html
    assert 'alt="claims"' in html
    for c in steady:
        assert c["label"] in html and c["claim"] in html
    assert "DeTail (technical report) §6.3 Microbenchmarks, line" in html and "000_76fdfa378bc5f2cf.txt" not in html


def test_a_reproduction_table_sorts_numbers_and_quantities_by_value():
    import polars as pl

    from detailsim.outputs.plots import natural_key, pooled_percentiles
    from detailsim.repro.reproduce import markdown_table

    vals = ["10ms", "1ms", "200ms", "5ms", "500us"]
    flows = pl.DataFrame({"rto": [v for v in vals for _ in range(3)], "class": ["incast"] * 15,
                          "fct": [0.001 * (i + 1) for i in range(15)], "fct_lower": [0.001 * (i + 1) for i in range(15)]})
    md = markdown_table(pooled_percentiles(flows, ["rto"]), ["rto"], ["incast"])
    order = [line.split("|")[1].strip() for line in md.splitlines()[2:]]
    assert order == ["500us", "1ms", "5ms", "10ms", "200ms"], order
    assert sorted(["retrieval/32KB", "retrieval/2KB", "retrieval/8KB"], key=natural_key) == ["retrieval/2KB", "retrieval/8KB", "retrieval/32KB"]
    assert sorted(["1Gbps", "100Mbps", "10Gbps"], key=natural_key) == ["100Mbps", "1Gbps", "10Gbps"]
