"""The DeTail stack: PFC (lossless, hop-by-hop push-back, watchdog, deadlock detection), adaptive load
balancing, and the scheme presets built from them."""

from __future__ import annotations

import polars as pl
import pytest

import detailsim
from detailsim.core.scenario import bundled_scenarios
from conftest import assert_invariants

PFC_SCHEMES = ["lps", "detail", "pfc_only"]


def chain(n_switches: int, last_rate: str) -> dict:
    """h_src - s1 - ... - sN - h_dst, the last hop slower."""
    nodes = [{"name": "src", "kind": "host"}, {"name": "dst", "kind": "host"}]
    nodes += [{"name": f"s{i}", "kind": "switch"} for i in range(1, n_switches + 1)]
    links = [{"a": "src", "b": "s1"}]
    links += [{"a": f"s{i}", "b": f"s{i + 1}"} for i in range(1, n_switches)]
    links += [{"a": f"s{n_switches}", "b": "dst", "rate": last_rate}]
    return {"kind": "custom", "nodes": nodes, "links": links}


def ring(n: int) -> dict:
    nodes = [{"name": f"h{i}", "kind": "host"} for i in range(n)] + [{"name": f"s{i}", "kind": "switch"} for i in range(n)]
    links = [{"a": f"h{i}", "b": f"s{i}"} for i in range(n)] + [{"a": f"s{i}", "b": f"s{(i + 1) % n}"} for i in range(n)]
    return {"kind": "custom", "nodes": nodes, "links": links}


@pytest.mark.parametrize("scheme", PFC_SCHEMES)
@pytest.mark.parametrize("name", sorted(bundled_scenarios()))
def test_no_congestion_drop_in_bundled_scenarios(name, scheme):
    r = detailsim.run(name, scheme=scheme, duration="0.01s", set={"run.drain": "0.3s"})
    assert r.summary["drops"]["ingress_buffer"] == 0
    assert r.summary["invariants"]["lossless"] is True
    assert_invariants(r.summary)


@pytest.mark.parametrize("scheme", PFC_SCHEMES)
def test_incast_64_to_1_is_lossless(scheme):
    rows = [{"src": i, "dst": 0, "size_bytes": 32 * 1024, "start_s": 0.0} for i in range(1, 65)]
    sc = {"run": {"duration": "1ms"}, "topology": {"kind": "single_switch", "hosts": 65},
          "scheme": {"preset": scheme}, "workload": [{"kind": "flows", "rows": rows}]}
    r = detailsim.run(sc)
    assert r.summary["flows"]["completed"] == 64
    assert r.summary["drops"]["ingress_buffer"] == 0 and r.summary["timeouts"] == 0
    assert r.summary["pfc"]["pause_frames"] > 0  # 64 x 32 KB = 2 MB into one port: push-back happened


def test_pauses_propagate_hop_by_hop_to_the_sender():
    # eight flows of 512 KB: up to 8 x 128 KB (the receive window) in flight, more than the path's buffers
    rows = [{"src": 0, "dst": 1, "size_bytes": 512 * 1024, "start_s": 0.0}] * 8
    sc = {"run": {"duration": "1ms", "drain": "2s"}, "topology": chain(4, "100Mbps"),
          "scheme": {"preset": "lps"}, "workload": [{"kind": "flows", "rows": rows}]}
    r = detailsim.run(sc)
    assert r.summary["flows"]["completed"] == 8 and r.summary["drops"]["ingress_buffer"] == 0
    p = r.ports
    def port(node, peer):
        return p.filter((pl.col("node") == node) & (pl.col("peer") == peer)).row(0, named=True)
    # every upstream transmitter on the path was paused: s3->s4, s2->s3, s1->s2 and the sender's NIC
    for up, down in [("s3", "s4"), ("s2", "s3"), ("s1", "s2"), ("src", "s1")]:
        assert port(up, down)["pfc_frames_received"] > 0, (up, down)
        assert port(down, up)["pfc_frames_sent"] > 0, (down, up)
        assert port(up, down)["pfc_paused_s"] > 0
        by_prio = port(up, down)["pfc_paused_s_by_priority"]
        assert len(by_prio) == 8 and by_prio[0] > 0  # the flows run at priority 0
        assert sum(by_prio) == pytest.approx(port(up, down)["pfc_paused_s"])
        assert port(down, up)["pfc_pauses_sent_by_priority"][0] > 0
    # the bottleneck sets the pace: 4 MB at 100 Mbps
    assert r.flows["end"].max() == pytest.approx(4 * 2**20 * 1530 / 1460 * 8 / 100e6, rel=0.05)


def degraded_share(scheme: str) -> float:
    r = detailsim.run("paper/steady", scheme=scheme, duration="0.02s",
                      set={"fault": [{"kind": "degrade", "link": ["agg0_0", "core0"], "rate": "100Mbps"}]})
    up = r.ports.filter((pl.col("node") == "agg0_0") & pl.col("peer").str.starts_with("core"))
    slow = up.filter(pl.col("peer") == "core0")["tx_packets"][0]
    assert up.filter(pl.col("peer") == "core0")["rate_bps"][0] == 100_000_000
    return slow / up["tx_packets"].sum()


def test_alb_avoids_a_degraded_link():
    alb, scatter = degraded_share("detail"), degraded_share("lps")
    print(f"share of agg0_0's uplink packets on the degraded link: ALB {alb:.3f}, packet scatter {scatter:.3f}")
    assert scatter > 0.3
    assert alb < scatter / 2


def test_watchdog_catches_a_neighbour_that_ignores_pauses():
    rows = [{"src": i, "dst": 0, "size_bytes": 256 * 1024, "start_s": 0.0} for i in range(1, 9)]
    sc = {"run": {"duration": "1ms", "drain": "1s"}, "topology": {"kind": "single_switch", "hosts": 9},
          "scheme": {"preset": "lps", "pfc": {"watchdog_action": "shutdown"}},
          "fault": [{"kind": "ignore_pause", "link": ["h3", "sw"]}],
          "workload": [{"kind": "flows", "rows": rows}]}
    r = detailsim.run(sc)
    ev = r.summary["pfc"]["watchdog"]
    caught = [e for e in ev if e["kind"] == "ignores_pause"]
    assert [e["ports"] for e in caught] == [["h3->sw"]]
    assert caught[0]["action"] == "shutdown"
    assert r.ports.filter(pl.col("node") == "h3")["up"][0] is False
    assert r.summary["invariants"]["lossless"] is True  # drops are the fault's, not PFC's
    # without the fault nothing is reported
    del sc["fault"]
    assert detailsim.run(sc).summary["pfc"]["watchdog"] == []


def ring_traffic(n: int = 5, flows_per_server: int = 8) -> list[dict]:
    """Each server sends flows to the server two switches clockwise: every ring link carries its own
    switch's flows and the previous switch's transit, a cyclic buffer dependency."""
    return [{"src": i, "dst": (i + 2) % n, "size_bytes": 512 * 1024, "start_s": 0.0}
            for i in range(n) for _ in range(flows_per_server)]


@pytest.mark.parametrize("action", ["report", "shutdown"])
def test_watchdog_reports_a_port_paused_too_long(action):
    sc = {"run": {"duration": "1ms", "drain": "1s"}, "topology": ring(5),
          "scheme": {"preset": "pfc_only", "pfc": {"watchdog_timeout": "20ms", "watchdog_action": action}},
          "workload": [{"kind": "flows", "rows": ring_traffic()}]}
    r = detailsim.run(sc)
    ev = [e for e in r.summary["pfc"]["watchdog"] if e["kind"] == "paused_too_long"]
    assert ev, r.summary["pfc"]
    assert {e["ports"][0] for e in ev} <= {f"s{i}->s{(i + 1) % 5}" for i in range(5)}
    assert all(e["time_s"] >= 0.02 and e["action"] == action for e in ev)
    if action == "shutdown":
        # shutting the link breaks the deadlock: routing goes the other way round, and the packets that were
        # queued for the dead link are recovered by retransmission
        assert r.summary["flows"]["completed"] == 40
        assert r.summary["drops"]["link_down"] > 0
        assert not r.ports.filter(pl.col("peer") == ev[0]["ports"][0].split("->")[1]).filter(
            pl.col("node") == ev[0]["ports"][0].split("->")[0])["up"][0]
    else:
        assert r.summary["flows"]["completed"] == 0


def test_pfc_deadlock_in_a_ring_is_reported_with_its_ports():
    n = 5
    rows = ring_traffic(n)
    sc = {"run": {"duration": "1ms", "drain": "100ms"}, "topology": ring(n), "scheme": {"preset": "pfc_only"},
          "workload": [{"kind": "flows", "rows": rows}]}
    r = detailsim.run(sc)
    dl = r.summary["pfc"]["deadlocks"]
    assert len(dl) == 1
    assert sorted(dl[0]["ports"]) == sorted(f"s{i}->s{(i + 1) % n}" for i in range(n))
    assert r.summary["flows"]["completed"] == 0  # it really is stuck
    # the same traffic on a fabric without the cyclic dependency does not deadlock
    sc["topology"] = {"kind": "single_switch", "hosts": n}
    r2 = detailsim.run(sc)
    assert r2.summary["pfc"]["deadlocks"] == [] and r2.summary["flows"]["completed"] == 8 * n


def test_detail_cuts_the_tail_on_steady():
    kw = dict(duration="0.1s", seed=2)
    fh = detailsim.run("paper/steady", scheme="fh", **kw).summary
    dt = detailsim.run("paper/steady", scheme="detail", **kw).summary
    assert dt["drops"]["ingress_buffer"] == 0 and dt["timeouts"] == 0
    for size in ["2KB", "8KB", "32KB"]:
        a, b = fh["fct"][f"retrieval/{size}"], dt["fct"][f"retrieval/{size}"]
        assert b["p999_ms"] <= 0.5 * a["p999_ms"], size
        assert b["p50_ms"] <= 1.1 * a["p50_ms"], size


def test_schemes_listing_has_the_presets():
    names = [n for n, _ in detailsim._core.presets()]
    assert names[:5] == ["fh", "scatter", "lps", "detail", "pfc_only"] and "alb_only" in names


def test_pfc_thresholds_are_derived_and_checked():
    # eight lossless priorities (listed) do not fit 128 KB at 10 Gbps; by default only the workloads' own are
    # lossless (priority 0 here, one flow), which do
    one = [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    base = {"topology": {"kind": "single_switch", "hosts": 2, "link_rate": "10Gbps"},
            "scheme": {"preset": "detail", "pfc": {"priorities": list(range(8))}}, "workload": one}
    with pytest.raises(detailsim.ScenarioError, match="too small for lossless PFC"):
        detailsim.run(base)
    detailsim.run({**base, "scheme": {"preset": "detail"}})
    base["topology"]["buffer"] = "1MB"
    detailsim.run(base)
    with pytest.raises(detailsim.ScenarioError, match=r"^scheme.pfc.pause_threshold: .* too high"):
        detailsim.run({"topology": {"kind": "single_switch", "hosts": 2},
                       "scheme": {"preset": "detail", "pfc": {"pause_threshold": "125KB"}}})


def test_only_the_lossless_priorities_are_protected():
    # 32 senders into one port with small buffers: priority 0 is lossless, priority 3 lossy
    rows = [{"src": i, "dst": 0, "size_bytes": 64 * 1024, "start_s": 0.0, "priority": 0 if i % 2 else 3} for i in range(1, 33)]
    sc = {"run": {"duration": "1ms", "drain": "2s"}, "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 17,
                                                                    "buffer": "48KB"},
          "scheme": {"preset": "lps", "pfc": {"priorities": [0]}}, "workload": [{"kind": "flows", "rows": rows}]}
    r = detailsim.run(sc)
    s = r.summary
    assert s["invariants"]["lossless"] is True
    assert s["flows"]["completed"] == 32
    lossless = r.flows.filter(pl.col("priority") == 0)
    assert lossless["timeouts"].sum() == 0  # nothing of priority 0 was lost
    assert s["drops"]["ingress_buffer"] > 0  # ... while the lossy priority lost packets
    assert_invariants(s)


def test_priority_eviction_protects_high_priority_retrievals():
    # paper/steady's low-priority background flows fill the shared ingress buffers; with plain tail drop the
    # high-priority retrievals lose packets too and their tail is the 10 ms RTO. When a full buffer drops
    # lower-priority packets first, the retrievals never time out.
    # (the model before issue 49: one shared ingress and egress per port, a closed-loop background)
    args = {"scheme": "fh", "duration": "0.05s"}
    shared = {"workload.0.rate": 500, "scheme.ingress_sharing": "shared", "scheme.egress_sharing": "shared",
              "workload.1": {"kind": "background", "flows_per_server": 1, "size": "1MB", "priority": 1}}
    plain = detailsim.run("paper/steady", **args, set={**shared, "scheme.priority_eviction": False})
    ev = detailsim.run("paper/steady", **args, set={**shared, "scheme.priority_eviction": True})
    for r in (plain, ev):
        assert_invariants(r.summary)
    ret = lambda r: r.flows.filter(pl.col("class").cast(pl.String).str.starts_with("retrieval"))  # noqa: E731
    print("p99.9 (ms) tail drop:", {k: round(v["p999_ms"], 2) for k, v in plain.summary["fct"].items()},
          "with priority eviction:", {k: round(v["p999_ms"], 2) for k, v in ev.summary["fct"].items()},
          "priority drops", ev.summary["drops"]["priority"])
    assert ret(plain)["timeouts"].sum() > 0 and plain.summary["fct"]["retrieval/2KB"]["p999_ms"] > 10
    assert ret(ev)["timeouts"].sum() == 0 and ev.summary["drops"]["priority"] > 0
    assert all(ev.summary["fct"][c]["p999_ms"] < 10 for c in ("retrieval/2KB", "retrieval/8KB", "retrieval/32KB"))


def test_priority_eviction_changes_nothing_under_pfc():
    # a lossless fabric pauses senders before an ingress buffer fills, so the option never acts: a scenario can
    # set it for its tail-drop baseline and run DeTail unchanged
    runs = [detailsim.run("paper/steady", scheme="detail", duration="0.02s", set={"scheme.ingress_sharing": "shared", "scheme.priority_eviction": v})
            for v in (False, True)]
    assert runs[0].flows.height > 1000
    assert runs[0].flows.equals(runs[1].flows)
    assert runs[1].summary["drops"]["priority"] == 0


def test_egress_sharing_lets_high_priority_past_a_paused_low_priority():
    # three low-priority bulk flows into one right-hand host pause the left switch's uplink for priority 1,
    # whose egress then fills with paused background; a high-priority flow from the fourth left host must
    # cross that egress. Shared, it waits for room; with space of its own (the whole buffer, or its part of
    # the port's buffer) it passes.
    def scenario(sharing: str) -> dict:
        return {"run": {"duration": "20ms", "drain": "1s"},
                "topology": {"kind": "dumbbell", "left": 4, "right": 2, "bottleneck_rate": "1Gbps", "link_delay": "5us"},
                "scheme": {"preset": "detail", "source_ecn": False, "egress_sharing": sharing, "tcp": {"ecn": False}},
                "workload": [
                    {"kind": "flows", "class": "bulk",
                     "rows": [{"src": i, "dst": 4, "size_bytes": 5_000_000, "start_s": 0.0, "priority": 1} for i in range(3)]},
                    {"kind": "flows", "class": "short",
                     "rows": [{"src": 3, "dst": 5, "size_bytes": 20_000, "start_s": 0.005 + 0.001 * k, "priority": 0} for k in range(10)]}]}
    modes = ("shared", "whole_per_priority", "in_use", "eighths")
    runs = {v: detailsim.run(scenario(v)) for v in modes}
    uplink = {v: r.ports.filter((pl.col("node") == "left") & (pl.col("peer") == "right"))["max_egress_bytes"][0] for v, r in runs.items()}
    short = {v: r.flows.filter(pl.col("class") == "short")["fct"].mean() for v, r in runs.items()}
    print("left uplink max egress bytes", uplink, "short mean FCT (s)", short)
    for r in runs.values():
        assert_invariants(r.summary)
    buf = 128 * 1024
    assert uplink["shared"] <= buf < uplink["whole_per_priority"], "whole per priority: both priorities held egress space at once"
    assert buf // 2 < uplink["in_use"] <= buf, "in use: priority 1 filled its half (64 KB), and never more than the port's buffer"
    assert uplink["eighths"] <= buf // 8 * 2, "eighths: two priorities of 16 KB each at most"
    for v in modes[1:]:
        assert short[v] < short["shared"], v


def test_a_split_ingress_drops_a_priority_at_its_part():
    # FH (drop-tail) with the ingress in eighths: a burst of one priority is dropped at 16 KB held, where the
    # shared ingress holds 128 KB; priority eviction needs the shared ingress (a clear error otherwise)
    sc = {"run": {"duration": "5ms", "drain": "1s"}, "topology": {"kind": "dumbbell", "left": 8, "right": 1, "bottleneck_rate": "1Gbps"},
          "scheme": {"preset": "fh"},
          "workload": [{"kind": "flows", "rows": [{"src": i, "dst": 8, "size_bytes": 200_000, "start_s": 0.0, "priority": 0} for i in range(8)]}]}
    held = {}
    for sharing in ("shared", "eighths"):
        sc["scheme"]["ingress_sharing"] = sharing
        r = detailsim.run(sc)
        assert_invariants(r.summary)
        held[sharing] = r.ports.filter(pl.col("node").str.starts_with("left"))["max_ingress_bytes"].max()
    print("max ingress bytes", held)
    assert held["eighths"] <= 16 * 1024 < held["shared"]
    sc["scheme"]["priority_eviction"] = True
    with pytest.raises(ValueError, match="scheme.priority_eviction.*ingress_sharing"):
        detailsim.run(sc)


def test_an_open_loop_background_starts_poisson_flows_per_server():
    # "each server has on average, one 1 MB low-priority background flow" (DeTail, line 410): the open-loop
    # reading starts `rate` flows per second per server, sizes drawn from the mix, class background
    bg = {"kind": "background", "rate": 20, "sizes": ["1MB", "16MB"], "weights": [3, 1], "priority": 1}
    r = detailsim.run("paper/steady", scheme="detail", duration="0.05s", set={"workload.1": bg, "run.drain": "0s"})
    assert_invariants(r.summary)
    b = r.flows.filter(pl.col("class") == "background")
    expect = 20 * 0.05 * 128  # 128 flows expected; Poisson sd about 11
    assert abs(b.height - expect) < 5 * expect ** 0.5, b.height
    assert set(b["size"].unique().to_list()) == {1 << 20, 16 << 20}
    share = b.filter(pl.col("size") == 1 << 20).height / b.height
    assert 0.6 < share < 0.9, share
    assert b["priority"].unique().to_list() == [1]
    assert (b["src"] != b["dst"]).all()
    with pytest.raises(ValueError, match=r"workload\[1\]\.flows_per_server"):
        detailsim.run("paper/steady", duration="0.01s", set={"workload.1": {**bg, "flows_per_server": 1}})
    with pytest.raises(ValueError, match=r"workload\[1\]\.rate"):
        detailsim.run("paper/steady", duration="0.01s", set={"workload.1": {**bg, "rate": 0}})
