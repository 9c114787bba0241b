"""Per-flow bytes delivered, the iperf-style measurement window (goodput, Jain's index per class), time series,
and the plots and report of a single run directory; ns-3's dctcp-example."""

from __future__ import annotations

import polars as pl

import detailsim
from conftest import assert_invariants, run_cli

LONG = {"run": {"duration": "60ms", "drain": "0s", "measure_from": "20ms", "measure_to": "40ms", "sample": "1ms"},
        "topology": {"kind": "dumbbell", "left": 4, "right": 4, "bottleneck_rate": "1Gbps", "link_delay": "5us"},
        "scheme": {"preset": "dctcp"},
        "workload": [
            {"kind": "flows", "class": "long", "rows": [{"src": i, "dst": 4 + i, "size_bytes": 50_000_000, "start_s": 0.0} for i in range(4)]},
            # one short flow done before the window opens, one that starts after it closes
            {"kind": "flows", "class": "short", "rows": [{"src": 0, "dst": 5, "size_bytes": 20_000, "start_s": 0.001},
                                                         {"src": 1, "dst": 6, "size_bytes": 20_000, "start_s": 0.045}]}]}


def test_every_flow_has_bytes_delivered_and_window_goodput():
    r = detailsim.run(LONG)
    f, s = r.flows, r.summary
    longs = f.filter(pl.col("class") == "long")
    assert longs["fct"].null_count() == 4, "the long flows are still running at the end"
    assert (longs["bytes_delivered"] > 0).all() and (longs["bytes_delivered"] < 50_000_000).all()
    short = f.filter(pl.col("class") == "short").sort("start")
    assert short["bytes_delivered"].to_list() == [20_000, 20_000]
    assert short["window_bytes"].to_list() == [0, 0], "outside the window: nothing counted"
    # the four long flows share the 1 Gbps bottleneck in the window: goodput near the payload rate
    g = s["goodput"]["long"]
    print(f"long flows: total {g['total_bps'] / 1e6:.1f} Mbit/s, mean {g['mean_bps'] / 1e6:.1f}, Jain {g['jain']:.4f}")
    payload = 1e9 * 1460 / 1530
    assert 0.9 * payload < g["total_bps"] <= payload * 1.001
    assert abs(g["mean_bps"] - g["total_bps"] / 4) < 1
    assert g["jain"] > 0.95
    assert longs["window_goodput_bps"].sum() == g["total_bps"]
    # window bytes agree with the time series: delivered at 40 ms minus delivered at 20 ms
    ts = r.timeseries.filter(pl.col("kind") == "flow")
    for fid, wb in zip(longs["id"], longs["window_bytes"]):
        x = ts.filter(pl.col("flow") == fid)
        at = {round(t * 1e3): b for t, b in zip(x["t"], x["bytes_delivered"])}
        assert at[40] - at[20] == wb
    assert_invariants(s)


def test_time_series_samples_every_port_and_live_flow():
    r = detailsim.run(LONG)
    ts = r.timeseries
    ports = ts.filter(pl.col("kind") == "port")
    times = sorted(set(round(t * 1e3, 9) for t in ports["t"]))
    assert times[:3] == [0.0, 1.0, 2.0] and times[-1] >= 59
    assert ports.height == len(times) * r.ports.height
    # the bottleneck egress holds DCTCP's queue: marked at 30 KB, bounded by the buffer
    b = ports.filter((pl.col("node") == "left") & (pl.col("peer") == "right"))
    assert 0 < b["egress_bytes"].max() < 200_000
    flows = ts.filter(pl.col("kind") == "flow").sort(["flow", "t"])
    mono = flows.group_by("flow").agg((pl.col("bytes_delivered").diff().drop_nulls() >= 0).all().alias("ok"))
    assert mono["ok"].all(), "cumulative bytes never decrease"


def test_run_directory_plots_and_report(tmp_path):
    out = tmp_path / "run"
    sc = tmp_path / "long.toml"
    rows = ", ".join(f'{{ src = {i}, dst = {4 + i}, size_bytes = 50000000, start_s = 0.0 }}' for i in range(4))
    sc.write_text('[run]\nduration = "60ms"\ndrain = "0s"\nmeasure_from = "20ms"\nmeasure_to = "40ms"\n'
                  '[topology]\nkind = "dumbbell"\nleft = 4\nright = 4\nbottleneck_rate = "1Gbps"\n'
                  '[scheme]\npreset = "dctcp"\n'
                  f'[[workload]]\nkind = "flows"\nclass = "long"\nrows = [{rows}]\n')
    p = run_cli("run", str(sc), "--sample", "2ms", "--out", str(out), "-q")
    assert p.returncode == 0, p.stderr
    assert (out / "timeseries.parquet").exists()
    ts = pl.read_parquet(out / "timeseries.parquet")
    assert set(ts["kind"].unique()) == {"port", "flow"}
    p = run_cli("plot", str(out))
    assert p.returncode == 0, p.stderr
    names = {x.rsplit("/", 1)[-1] for x in p.stdout.split()}
    assert {"queues.png", "throughput.png", "queues.svg", "throughput.svg"} <= names
    p = run_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert p.returncode == 0, p.stderr
    html = (tmp_path / "r.html").read_text()
    assert "throughput" in html and "Goodput in the measurement window" in html


def test_ns3_dctcp_example_short():
    # the bundled ns-3 dctcp-example, cut to its first 0.4 s (the full 5 s run is in docs/validation.md):
    # flows that started by then share the 1 Gbps link to R1 and the 10 Gbps T1-T2 link
    r = detailsim.run("examples/ns3_dctcp", set={"run.duration": "0.3s", "run.drain": "0.1s", "run.measure_from": "0.3s",
                                                  "run.measure_to": "0.4s"})
    s = r.summary
    g = s["goodput"]
    to_r1 = g["s1"]["total_bps"] + g["s3"]["total_bps"]
    print({k: (v["flows"], round(v["total_bps"] / 1e6, 1), v["jain"]) for k, v in g.items()})
    assert 0.9e9 < to_r1 < 1e9, "the T2->R1 bottleneck runs full"
    assert s["drops"]["red"] == 0 and s["congestion_drops"] == 0 and s["ecn_marks"] > 0
    assert g["s2"]["jain"] > 0.95
    assert_invariants(s)
