"""DCTCP, DIBS, PIAS (MLFQ tagging and the threshold solver) and CDF workloads."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import detailsim
from conftest import assert_invariants, run_cli
from detailsim.core.cdf import load_points, mean_bytes
from detailsim.core.pias import bound, fractions_of, optimal_fractions, solve

K = 30 * 1024


def test_solver_hand_computed_k2():
    # T(a) = rho (a + (1 - a)^2 / (1 - rho a)); at rho = 0.5, dT/da = 0 gives a^2 - 4a + 2 = 0: a = 2 - sqrt 2
    (s1,) = optimal_fractions(0.5, 2, grid=20000)
    assert s1 == pytest.approx(2 - 2**0.5, abs=1e-4)


def continuous_optimum(rho: float, k: int) -> float:
    """Independent check: coordinate descent with golden-section line searches on the continuous S."""
    s = np.linspace(0, 1, k + 1)[1:-1].copy()
    for _ in range(200):
        for i in range(len(s)):
            lo = s[i - 1] if i else 0.0
            hi = s[i + 1] if i + 1 < len(s) else 1.0
            a, b = lo, hi
            phi = (5**0.5 - 1) / 2
            for _ in range(60):
                c, d = b - phi * (b - a), a + phi * (b - a)
                sc, sd = s.copy(), s.copy()
                sc[i], sd[i] = c, d
                if bound(sc, rho) < bound(sd, rho):
                    b = d
                else:
                    a = c
            s[i] = (a + b) / 2
    return bound(s, rho)


@pytest.mark.parametrize("rho, k", [(0.8, 8), (0.5, 4), (0.7, 3)])
def test_solver_matches_an_independent_optimisation(rho, k):
    s = optimal_fractions(rho, k)
    assert bound(s, rho) == pytest.approx(continuous_optimum(rho, k), abs=1e-5)
    if (rho, k) == (0.8, 8):  # the spec's numbers
        assert np.allclose(s, [0.23, 0.42, 0.57, 0.69, 0.80, 0.88, 0.95], atol=0.011)


def test_thresholds_map_back_to_the_fractions():
    points = load_points("websearch")
    r = solve(points, "websearch", 0.8, 8, "optimal")
    assert np.allclose(fractions_of(points, r["thresholds_bytes"]), r["fractions"], atol=1e-4)
    assert r["bound"] < solve(points, "websearch", 0.8, 8, "equal-split")["bound"]
    out = json.loads(run_cli("pias-thresholds", "--cdf", "websearch", "--load", "0.8", "--json", check=True).stdout)
    assert [o["method"] for o in out] == ["optimal", "equal-split", "paper"]
    assert out[2]["thresholds_packets"] == [46, 1084, 1717, 1943, 1989, 1999, 2001]


def test_bundled_cdfs_have_the_documented_means():
    assert mean_bytes(load_points("websearch")) == pytest.approx(1141 * 1460, rel=1e-3)
    assert mean_bytes(load_points("datamining")) == pytest.approx(5116.6 * 1460, rel=1e-3)


def dumbbell(scheme: str):
    rows = [{"src": i, "dst": 4 + i, "size_bytes": 8 * 2**20, "start_s": 0.0} for i in range(4)]
    r = detailsim.run({"run": {"duration": "1ms", "drain": "5s"}, "topology": {"kind": "dumbbell", "left": 4, "right": 4},
                       "scheme": {"preset": scheme, "tcp": {"rwnd": "16MB"}}, "workload": [{"kind": "flows", "rows": rows}]})
    b = r.ports.filter((pl.col("node") == "left") & (pl.col("peer") == "right")).row(0, named=True)
    return r, b["tx_bytes"] * 8 / (1e9 * r.flows["end"].max()), b["mean_egress_bytes"]


def test_dctcp_keeps_the_queue_near_k_at_full_utilisation():
    r, util, q = dumbbell("dctcp")
    print(f"DCTCP: utilisation {util:.4f}, mean bottleneck queue {q:.0f} B (K = {K} B)")
    assert util >= 0.95 and 0.5 * K <= q <= 2 * K
    assert r.summary["drops"]["ingress_buffer"] == 0 and r.summary["ecn_marks"] > 0
    r2, util2, q2 = dumbbell("tcp")
    print(f"NewReno: utilisation {util2:.4f}, mean bottleneck queue {q2:.0f} B")
    assert q2 > 3 * K  # NewReno fills the buffer


def test_dibs_detours_exactly_the_packets_that_would_be_dropped():
    # 15 senders, 1 MB incasts into 16 KB buffers: DIBS detours at the ingress buffer that overflows, so with
    # the detour cap not reached nothing is lost (detouring on a full egress instead lost packets here)
    sc = {"run": {"duration": "20ms", "drain": "1s"}, "topology": {"kind": "fattree", "k": 4, "buffer": "16KB"},
          "workload": [{"kind": "incast", "total": "1MB", "senders": 15, "repeats": 5, "gap": "1ms"}]}
    cap = 200
    s = detailsim.run(sc, scheme="dibs", set={"scheme.dibs.max_detours": cap}).summary
    hist = s["dibs"]["detours_per_packet"]
    print(f"detours {s['dibs']['detours']}, most detours of one packet {len(hist) - 1}, drops {s['drops']}")
    assert s["dibs"]["detours"] > 1000
    assert len(hist) - 1 < cap and s["drops"]["detour_limit"] == 0
    assert s["congestion_drops"] == 0
    assert s["timeouts"] == 0
    # every packet that was detoured was one the ingress buffer could not hold: without DIBS they are drops
    d = detailsim.run(sc, scheme="dctcp", set={"scheme.tcp.fast_retransmit": False}).summary
    assert d["drops"]["ingress_buffer"] > 0


def test_dibs_detours_instead_of_dropping_in_an_incast():
    sc = {"run": {"duration": "50ms", "drain": "1s"}, "topology": {"kind": "fattree", "k": 4, "buffer": "32KB"},
          "workload": [{"kind": "incast", "total": "300KB", "senders": 15, "repeats": 20, "gap": "1ms"}]}
    a = detailsim.run(sc, scheme="dctcp").summary
    b = detailsim.run(sc, scheme="dibs").summary
    print(f"DCTCP drops {a['drops']['ingress_buffer']}, query p99 {a['fct']['incast']['p99_ms']:.2f} ms; "
          f"DIBS drops {b['drops']['ingress_buffer']}, detours {b['dibs']['detours']}, p99 {b['fct']['incast']['p99_ms']:.2f} ms")
    assert a["drops"]["ingress_buffer"] > 50
    assert b["congestion_drops"] <= a["congestion_drops"] / 20
    assert b["dibs"]["detours"] > 0 and sum(b["dibs"]["detours_per_packet"][1:]) > 0
    assert b["fct"]["incast"]["p99_ms"] < a["fct"]["incast"]["p99_ms"]
    assert_invariants(b)


def test_pias_beats_dctcp_on_small_web_search_flows():
    base = {"run": {"duration": "0.3s", "drain": "3s"},
            "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 8, "uplink_rate": "4Gbps"},
            "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.8}]}
    d = detailsim.run({**base, "scheme": {"preset": "dctcp"}}).summary["fct"]
    p = detailsim.run({**base, "scheme": {"preset": "pias", "pias": {"thresholds": "optimal"}}}).summary["fct"]
    print(f"small flows mean FCT: DCTCP {d['small']['mean_ms']:.3f} ms, PIAS {p['small']['mean_ms']:.3f} ms")
    assert p["small"]["mean_ms"] < d["small"]["mean_ms"]


def test_mlfq_tags_packets_by_bytes_sent(tmp_path):
    sc = {"run": {"duration": "1ms"}, "topology": {"kind": "single_switch", "hosts": 2},
          "scheme": {"preset": "pias", "tcp": {"mlfq_thresholds": ["10KB", "100KB"]}},
          "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 200 * 1024, "start_s": 0}]}]}
    pcap = tmp_path / "f.pcap"
    detailsim.run(sc, pcap=pcap, pcap_filter="port=h0:sw")
    import dpkt

    dscp = []
    with open(pcap, "rb") as fh:
        for _, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.ethernet.Ethernet(buf).data
            if len(ip.data.data):
                dscp.append(ip.tos >> 5)
    # priority 0, 1, 2 (class selectors CS0, CS1, CS2, as live mode sends them) as the flow passes 10 KB and 100 KB
    assert dscp[0] == 0 and dscp[-1] == 2 and set(dscp) == {0, 1, 2}
    assert dscp == sorted(dscp)  # demotion only, never promotion


def test_cdf_workload_offers_the_target_load():
    r = detailsim.run({"run": {"duration": "1s", "drain": "0s"}, "topology": {"kind": "single_switch", "hosts": 16},
                       "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.3}]})
    f = r.flows
    # Poisson arrivals at load x link rate / mean size per host: count the flows (the byte total of a
    # heavy-tailed mix over one second is too noisy to test)
    expected = 0.3 * 1e9 / (8 * mean_bytes(load_points("websearch"))) * 16 * 1.0
    assert f.height == pytest.approx(expected, rel=0.12)
    assert set(f["class"].cast(pl.String).unique()) <= {"small", "medium", "large"}
    assert (f.filter(pl.col("class") == "small")["size"] <= 100 * 1024).all()
    assert f["size"].min() >= 6 * 1460  # web search's smallest flows are 6 packets


def test_las_serves_the_least_attained_flow_first():
    # two long flows into one port keep its queue busy; a short flow arrives later
    rows = [{"src": 1, "dst": 0, "size_bytes": 4 * 2**20, "start_s": 0.0},
            {"src": 3, "dst": 0, "size_bytes": 4 * 2**20, "start_s": 0.0},
            {"src": 2, "dst": 0, "size_bytes": 20 * 1024, "start_s": 0.005}]
    sc = {"run": {"duration": "10ms", "drain": "1s"}, "topology": {"kind": "single_switch", "hosts": 4},
          # NewReno on both, so that the long flow keeps a full queue in front of the short one
          "scheme": {"tcp": {"rwnd": "1MB", "congestion_control": "new_reno", "ecn": False}},
          "workload": [{"kind": "flows", "rows": rows}]}
    fifo = detailsim.run(sc, scheme="dctcp").flows.sort("id")
    las = detailsim.run(sc, scheme="las").flows.sort("id")
    short_fifo, short_las = fifo["fct"][2], las["fct"][2]
    print(f"20 KB flow behind a 4 MB one: FIFO {short_fifo * 1e3:.3f} ms, LAS {short_las * 1e3:.3f} ms")
    assert short_las < short_fifo / 2
    assert max(las["fct"][:2]) >= 0.99 * max(fifo["fct"][:2])  # the long flows do not gain


def test_las_on_web_search_is_close_to_pias_for_small_flows():
    base = {"run": {"duration": "0.3s", "drain": "3s"},
            "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 8, "uplink_rate": "4Gbps"},
            "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.8}]}
    d = detailsim.run({**base, "scheme": {"preset": "dctcp"}}).summary["fct"]["small"]["mean_ms"]
    las = detailsim.run({**base, "scheme": {"preset": "las"}}).summary["fct"]["small"]["mean_ms"]
    print(f"small flows mean FCT: DCTCP {d:.3f} ms, LAS {las:.3f} ms")
    assert las < d / 2
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.scheduling"):
        detailsim.run({**base, "scheme": {"preset": "lps", "scheduling": "las"}})


def test_pfabric_serves_the_shortest_remaining_flow_and_drops_the_longest():
    rows = [{"src": 1, "dst": 0, "size_bytes": 4 * 2**20, "start_s": 0.0},
            {"src": 3, "dst": 0, "size_bytes": 4 * 2**20, "start_s": 0.0},
            {"src": 2, "dst": 0, "size_bytes": 20 * 1024, "start_s": 0.005}]
    sc = {"run": {"duration": "10ms", "drain": "1s"}, "topology": {"kind": "single_switch", "hosts": 4},
          "workload": [{"kind": "flows", "rows": rows}]}
    pf = detailsim.run(sc, scheme="pfabric")
    dc = detailsim.run(sc, scheme="dctcp")
    f, g = pf.flows.sort("id"), dc.flows.sort("id")
    s = pf.summary
    print(f"20 KB flow behind two 4 MB ones: pFabric {f['fct'][2] * 1e3:.3f} ms (slowdown {f['slowdown'][2]:.2f}), "
          f"DCTCP {g['fct'][2] * 1e3:.3f} ms; priority drops {s['drops']['priority']}, "
          f"queue limit {s['fabric']['queue_limit_bytes']} B = 2 x BDP {s['fabric']['bdp_bytes']} B")
    assert f.height == 3 and f["fct"].is_not_null().all()
    # the short flow preempts both long ones at the switch and the NIC: near its ideal, never dropped
    assert f["slowdown"][2] < 1.3 and f["retransmits"][2] == 0
    assert f["fct"][2] < g["fct"][2] / 2
    # the long flows collide in a tiny queue: pFabric drops their packets rather than queueing them
    lim = s["fabric"]["queue_limit_bytes"]
    assert lim == round(2 * s["fabric"]["bdp_bytes"]) and s["drops"]["priority"] > 0
    sw = pf.ports.filter(pl.col("node") == "sw")
    assert sw["max_egress_bytes"].max() <= lim
    assert_invariants(s)
    # the long flows still finish about as late as under DCTCP: the bottleneck stays busy
    assert f["fct"][:2].max() < 1.25 * g["fct"][:2].max()


def test_pfabric_and_l2dct_presets_resolve_and_refuse_pfc():
    sc = {"topology": {"kind": "single_switch", "hosts": 2}, "run": {"duration": "1ms"}}
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.scheduling"):
        detailsim.run({**sc, "scheme": {"preset": "pfabric", "flow_control": "pfc"}})
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.queue_limit_bdp"):
        detailsim.run({**sc, "scheme": {"preset": "pfabric", "queue_limit_bdp": -1}})
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.queue_limit"):
        detailsim.run({**sc, "scheme": {"preset": "pfabric", "queue_limit": "100B"}})
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.tcp.rto_rtts"):
        detailsim.run({**sc, "scheme": {"preset": "pfabric", "tcp": {"rto_rtts": -2}}})
    out = run_cli("schemes", check=True).stdout
    assert "pfabric" in out and "l2dct" in out


def test_load_on_a_named_tier():
    # 2 leaves x 4 hosts, one spine, all links 10 Gbps: 4 of a host's 7 destinations are across the spine,
    # each such flow crosses 2 of the 2 leaf-spine links (capacity 2 x 2 x 10 Gbps). The same load on the
    # tier instead of the host links scales the arrival rate by 40 / (8/7 x 8) / 10 = 0.4375.
    sc = {"run": {"duration": "0.2s", "drain": "0s"},
          "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 4, "host_rate": "10Gbps", "uplink_rate": "10Gbps"},
          "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.2}]}
    host = detailsim.run(sc).summary["flows"]["started"]
    tier = detailsim.run({**sc, "workload": [{**sc["workload"][0], "load_tier": "leaf_spine"}]}).summary["flows"]["started"]
    print(f"flows started: load on host links {host}, on the leaf-spine tier {tier} ({tier / host:.4f}, expected 0.4375)")
    # the same arrival streams scaled in time: the counts differ only by the last arrival per host
    assert abs(tier - 0.4375 * host) <= 8
    with pytest.raises(detailsim.ScenarioError, match=r"^workload\[0\]\.load_tier: .*tiers: host, leaf_spine"):
        detailsim.run({**sc, "workload": [{**sc["workload"][0], "load_tier": "core"}]})


@pytest.mark.parametrize("name", ["paper/pias_websearch", "paper/pias_datamining", "paper/pias_oversubscribed"])
def test_pias_fabrics_have_the_papers_base_rtt(name):
    # the spec: base RTT across the spine 85.2 us (a full segment there, an ACK back, idle fabric)
    f = detailsim.run(name, set={"run.duration": "0.1ms"}).summary["fabric"]
    assert f["base_rtt_s"] == pytest.approx(85.2e-6, rel=0.01)
    assert f["bdp_bytes"] == pytest.approx(10e9 / 8 * 85.2e-6, rel=0.01)


def test_ideal_fct_follows_each_links_rate_and_delay():
    # the PIAS fabric's host links carry 20.2 us, its uplinks 0.2 us: an idle-fabric FCT computed with the
    # sender's link everywhere overestimates cross-spine flows, and slowdowns would fall below 1
    r = detailsim.run("paper/pias_websearch", scheme="pias", set={"run.duration": "0.002s"})
    f = r.flows
    assert f.height > 20 and f["slowdown"].min() >= 1 - 1e-9
    assert (f.filter(pl.col("timeouts") == 0)["slowdown"] < 1.0005).sum() > 0  # uncontended flows reach 1
    # a lone cross-spine flow on the same fabric: one frame's store-and-forward latency, exactly
    one = detailsim.run({**_pias_fabric(), "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 143, "size_bytes": 1000, "start_s": 0}]}]})
    # 2 host links (10 Gbps, 20.2 us) + 2 uplinks (40 Gbps, 0.2 us) + 3 crossbar passes, no lookup delay
    wire = 1000 + 40 + 38  # payload, TCP/IP headers, Ethernet framing
    xbar = 3 * wire * 8 / (40e9 * one.scenario["topology"].get("speedup", 1.0))
    expect = 2 * (wire * 8 / 10e9 + 20.2e-6) + 2 * (wire * 8 / 40e9 + 0.2e-6)
    assert one.flows["ideal"][0] == pytest.approx(one.flows["fct"][0], rel=1e-9)
    assert one.flows["ideal"][0] >= expect and one.flows["ideal"][0] <= expect + xbar + 1e-9


def _pias_fabric() -> dict:
    from detailsim.core.scenario import prepare

    sc, _ = prepare("paper/pias_websearch", scheme="dctcp")
    sc.pop("workload")
    sc["scheme"].pop("pias", None)
    return sc


def test_pias_thresholds_for_other_traffic():
    # the core resolves [scheme.pias]; the summary reports the thresholds in force
    def used(**over):
        over = {"scheme.pias.thresholds": "optimal", **over}
        return detailsim.run("paper/pias_websearch", set={"run.duration": "1us", "run.drain": "1us", **over}).summary["mlfq_thresholds_bytes"]

    # the bundled leaf-spine scenario runs the PIAS-NS2 scripts' thresholds (web search: packets of 1460 B)
    bundled = detailsim.run("paper/pias_websearch", set={"run.duration": "1us", "run.drain": "1us"}).summary["mlfq_thresholds_bytes"]
    assert bundled == [p * 1460 for p in (46, 1084, 1717, 1943, 1989, 1999, 2001)]
    web, dm = used(), used(**{"scheme.pias.cdf": "datamining"})
    want = solve(load_points("datamining"), "datamining", 0.8, 8, "optimal")["thresholds_bytes"]
    assert dm == want != web
    assert web == solve(load_points("websearch"), "websearch", 0.8, 8, "optimal")["thresholds_bytes"]
    assert used(**{"scheme.pias.load": 0.5}) == solve(load_points("websearch"), "websearch", 0.5, 8, "optimal")["thresholds_bytes"]
    assert used(**{"scheme.pias.thresholds": "equal-split", "scheme.pias.queues": 4}) == \
        solve(load_points("websearch"), "websearch", 0.8, 4, "equal-split")["thresholds_bytes"]
    assert used(**{"scheme.pias.thresholds": ["10KB", "1MB"]}) == [10 * 1024, 1 << 20]
    assert detailsim.run("paper/pias_websearch", scheme="dctcp", set={"run.duration": "1us", "run.drain": "1us"}).summary["mlfq_thresholds_bytes"] == []
    from detailsim.core.scenario import prepare

    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.pias.load"):
        prepare("paper/pias_websearch", overrides={"scheme.pias.load": 1.5})