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


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "store"
    run_cli("sweep", str(SWEEP), "--out", str(out), check=True)
    return out


def test_plot_writes_png_and_svg(store, tmp_path):
    res = run_cli("plot", str(store), "--out", str(tmp_path / "plots"), check=True)
    files = res.stdout.split()
    names = {f.rsplit("/", 1)[1] for f in files}
    for stem in ["cdf_retrieval_2KB", "cdf_retrieval_8KB", "cdf_retrieval_32KB", "percentile_p999_vs_workload.rate",
                 "reduction_p999_over_fh"]:
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
    assert text.count("data:image/png;base64,") == 6
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([chromium(), *flags, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120).stdout
    total = int(re.search(r'data-images="(\d+)"', dom).group(1))
    loaded = int(re.search(r'data-images-loaded="(\d+)"', dom).group(1))
    assert total == 6 and loaded == total, (total, loaded)
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
    assert html.count("data:image/png;base64,") == sum(f.suffix == ".png" for f in files) == 6
    full = read_store(store)["flows"]
    narrow = read_store(store, columns=["scheme", "class", "fct", "nope"], tables=("flows",))
    assert list(narrow) == ["flows"] and narrow["flows"].columns == ["scheme", "class", "fct"]
    assert narrow["flows"].sort(["scheme", "class", "fct"], nulls_last=True).equals(
        full.select("scheme", "class", "fct").sort(["scheme", "class", "fct"], nulls_last=True))
