"""Workloads and faults of the reproductions: bursty arrivals, workflows, incast, tier-named faults,
infinite buffers without retransmission, and the Section 2 analysis."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import detailsim
from conftest import assert_invariants, run_cli

FT = {"kind": "fattree", "k": 4}


def test_bursty_arrivals_follow_the_rate_profile():
    sc = {"run": {"duration": "0.5s", "drain": "50ms"}, "topology": FT,
          "workload": [{"kind": "retrieval", "rate": 100, "burst_period": "100ms", "burst_length": "20ms",
                        "burst_rate": 1000, "sizes": ["1KB"]}]}
    r = detailsim.run(sc)
    start = r.flows["start"].to_numpy()
    in_burst = ((start % 0.1) < 0.02).sum()
    out_burst = len(start) - in_burst
    # 16 servers x 5 periods: 1000/s x 20 ms = 20 per server per burst, 100/s x 80 ms = 8 outside
    assert in_burst == pytest.approx(16 * 5 * 20, rel=0.1)
    assert out_burst == pytest.approx(16 * 5 * 8, rel=0.15)


def test_sequential_workflows():
    sc = {"run": {"duration": "0.05s"}, "topology": FT,
          "workload": [{"kind": "sequential", "rate": 50, "length": 10, "sizes": ["4KB", "12KB"]}]}
    r = detailsim.run(sc, scheme="detail")
    f = r.flows
    wf = f.filter(pl.col("class") == "workflow/sequential")
    ret = f.filter(pl.col("class").cast(pl.String).str.starts_with("retrieval/"))
    assert wf.height > 10 and wf["fct"].null_count() == 0
    assert ret.height == 10 * wf.height
    assert ((wf["size"] >= 10 * 4096) & (wf["size"] <= 10 * 12288)).all()
    assert (wf["src"] % 2 == 0).all()  # front-ends are every other server (frontend_layout = "spread")
    # a retrieval row runs from its back-end (the data source, an odd server) to its front-end
    assert (ret["src"] % 2 == 1).all() and (ret["dst"] % 2 == 0).all() and wf["src"].n_unique() > 1
    # a chain of ten retrievals takes at least ten times the fastest retrieval
    assert wf["fct"].min() >= 10 * ret["fct"].min()
    assert_invariants(r.summary)


def test_partition_aggregate_workflows():
    sc = {"run": {"duration": "0.05s"}, "topology": {"kind": "detail128"},
          "workload": [{"kind": "partition_aggregate", "rate": 20, "fanouts": [10, 40], "size": "2KB"}]}
    r = detailsim.run(sc, scheme="detail")
    s = r.summary["fct"]
    n10, n40 = s["workflow/partition-aggregate/10"]["count"], s["workflow/partition-aggregate/40"]["count"]
    assert s["workflow/partition-aggregate"]["count"] == n10 + n40
    assert s["retrieval/2KB"]["count"] == 10 * n10 + 40 * n40
    wf = r.flows.filter(pl.col("class") == "workflow/partition-aggregate/40")
    assert (wf["size"] == 40 * 2048).all()
    # waiting for the last of 40 takes longer than for the last of 10
    assert s["workflow/partition-aggregate/40"]["p50_ms"] > s["workflow/partition-aggregate/10"]["p50_ms"]
    with pytest.raises(detailsim.ScenarioError, match=r"^workload\[0\]\.fanouts: fan-out 40 exceeds the 8 back-ends"):
        detailsim.run({**sc, "topology": FT})


def test_incast_repeats_one_after_another():
    sc = {"run": {"duration": "1s"}, "topology": {"kind": "single_switch", "hosts": 17},
          "workload": [{"kind": "incast", "senders": 16, "total": "1MB", "repeats": 5, "gap": "2ms"}]}
    r = detailsim.run(sc, scheme="lps")
    inc = r.flows.filter(pl.col("class") == "incast").sort("start")
    assert inc.height == 5 and (inc["size"] == 2**20).all()
    assert (inc["start"][1:].to_numpy() >= inc["end"][:-1].to_numpy() + 0.002 - 1e-12).all()
    # 1 MB through one 1 Gbps port: at least 8.4 ms each
    assert inc["fct"].min() >= 2**20 * 8 / 1e9
    assert r.summary["fct"]["retrieval/64KB"]["count"] == 5 * 16


def test_link_down_at_a_time_reroutes():
    sc = {"run": {"duration": "20ms"}, "topology": {"kind": "detail128"},
          "fault": [{"kind": "link_down", "link": "agg_core#0", "at": "5ms"}],
          "workload": [{"kind": "retrieval", "rate": 1000, "sizes": ["8KB"]}]}
    r = detailsim.run(sc, scheme="fh")
    p = r.ports.filter((pl.col("node") == "agg0_0") & (pl.col("peer") == "core0"))
    assert p["up"][0] is False
    assert r.summary["flows"]["completed"] == r.summary["flows"]["started"]
    assert r.summary["drops"]["no_route"] == 0
    with pytest.raises(detailsim.ScenarioError, match=r"^fault\[0\]\.link: \"agg_core#99\": tier \"agg_core\" has 32 links"):
        detailsim.run({**sc, "fault": [{"kind": "link_down", "link": "agg_core#99"}]})


def test_infinite_buffers_without_retransmission():
    r = detailsim.run("paper/scatter", scheme="scatter", duration="5ms")
    s = r.summary
    assert s["drops"]["ingress_buffer"] == 0 and s["retransmits"] == 0 and s["timeouts"] == 0
    assert s["flows"]["completed"] == s["flows"]["started"]
    assert r.ports["max_ingress_bytes"].max() > 0


def test_analyze_against_closed_forms(tmp_path):
    const = tmp_path / "const.cdf"
    const.write_text("1.0 0\n1.0 1\n")  # every FCT is exactly 1 ms
    res = run_cli("analyze", "workflow", "--fct-from", str(const), "--sequential", "10", "--deadline", "200ms", "--json", check=True)
    assert json.loads(res.stdout)["p999_s"] == pytest.approx(0.010)
    res = run_cli("analyze", "workflow", "--fct-from", str(const), "--deadline", "200.5ms", "--json", check=True)
    assert json.loads(res.stdout)["max_sequential_retrievals"] == 200
    uni = tmp_path / "uniform.cdf"
    uni.write_text("0 0\n2 100\n")  # uniform on [0, 2] ms, probabilities in percent
    res = run_cli("analyze", "workflow", "--fct-from", str(uni), "--workers", "40", "--deadline", "1.5ms", "--json", check=True)
    out = json.loads(res.stdout)
    assert out["mean_misses"] == pytest.approx(40 * 0.25, rel=0.02)  # binomial(40, 1/4)
    assert out["p_all_met"] == pytest.approx(0.75**40, abs=1e-3)
    assert sum(out["distribution"].values()) == 10_000


def test_analyze_from_simulated_flows(tmp_path):
    run_cli("run", "paper/steady", "--duration", "0.01s", "--out", str(tmp_path / "o"), check=True)
    flows = pl.read_parquet(tmp_path / "o" / "flows.parquet").filter(pl.col("class") == "retrieval/8KB")
    x = flows["fct"].drop_nulls().to_numpy()
    d = float(np.quantile(x, 0.9))
    res = run_cli("analyze", "workflow", "--fct-from", str(tmp_path / "o"), "--class", "retrieval/8KB",
                  "--workers", "10", "--deadline", f"{d * 1e3}ms", "--json", check=True)
    miss = (x > d).mean()
    assert json.loads(res.stdout)["mean_misses"] == pytest.approx(10 * miss, rel=0.1)
    bad = run_cli("analyze", "workflow", "--fct-from", str(tmp_path / "o"), "--class", "nope", "--workers", "3", "--deadline", "1ms")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --class:")


def test_keep_load_measures_the_same_flows_under_continued_load():
    sc = {"run": {"duration": "200ms", "drain": "2s"},
          "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 4},
          "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.6}]}
    a = detailsim.run(sc)
    b = detailsim.run({**sc, "run": {**sc["run"], "keep_load": True}})
    fa, fb = a.flows.sort("id"), b.flows.sort("id")
    print(f"flows {fa.height} / {fb.height}; packets created {a.summary['packets']['created']} / {b.summary['packets']['created']}; "
          f"mean FCT {fa['fct'].mean() * 1e3:.3f} / {fb['fct'].mean() * 1e3:.3f} ms; end {a.summary['sim_time_s']:.4f} / {b.summary['sim_time_s']:.4f} s")
    # the same arrival streams: the measured flows are the same flows (sizes, ends, start times)
    assert fa.height == fb.height > 20 and (fa["size"] == fb["size"]).all() and (fa["start"] == fb["start"]).all()
    assert (fb["start"] < 0.2).all() and fb["fct"].is_not_null().all()
    # ... but later flows keep arriving (unmeasured) while they finish, and slow them down
    assert b.summary["packets"]["created"] > a.summary["packets"]["created"]
    assert fb["fct"].sum() > fa["fct"].sum()
    assert_invariants(b.summary)


def test_client_server_pattern_sends_every_response_to_the_client():
    # the PIAS testbed's pattern: host 3 requests, a random other host answers with a CDF-sized flow
    sc = {"run": {"duration": "2s", "drain": "1s"}, "topology": {"kind": "single_switch", "hosts": 8, "link_rate": "1Gbps"},
          "scheme": {"preset": "dctcp"},
          "workload": [{"kind": "cdf", "points": [[10_000, 0], [30_000, 1]], "load": 0.4, "client": 3, "request_size": 100}]}
    r = detailsim.run(sc)
    assert_invariants(r.summary)
    f = r.flows
    assert (f["dst"] == 3).all() and (f["src"] != 3).all()
    assert sorted(f["src"].unique().to_list()) == [0, 1, 2, 4, 5, 6, 7]
    # load 0.4 of the client's 1 Gbps link, mean 20 KB: 0.4e9 / 8 / 20,000 = 2,500 requests/s
    assert f.height == pytest.approx(2 * 2500, rel=0.05)
    assert (f["size"] >= 10_000).all() and (f["size"] <= 30_000).all()
    # the response is timed from the request's start: at least a round trip plus the response's transmission
    assert (f["fct"] > f["size"] * 8 / 1e9).all()
    with pytest.raises(detailsim.ScenarioError, match=r"workload\[0\].client"):
        detailsim.run({**sc, "workload": [{**sc["workload"][0], "client": 8}]})
