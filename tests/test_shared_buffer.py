"""Shared-buffer switches (`[topology.shared_buffer]`, issue 38): bad settings refused naming the field,
every preset on random fabrics keeping conservation, the MMU's bounds and (under PFC) losslessness, split
runs giving the one-thread results, live mode refusing them."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import detailsim
from conftest import assert_invariants, run_cli
from test_invariants import PFC_PRESETS, PRESETS, custom_fabrics, sizes, topologies

KB = 1024


@pytest.mark.parametrize("sb, field, says", [
    ({}, "topology.shared_buffer.size", "required"),
    ({"size": "0B"}, "topology.shared_buffer.size", "between 1B"),
    ({"size": "1MB", "alpha": 0}, "topology.shared_buffer.alpha", "> 0"),
    ({"size": "1MB", "pfc_alpha": 1.5}, "topology.shared_buffer.pfc_alpha", "(0, 1]"),
    ({"size": "1MB", "pools": 2}, "pools", "unknown field"),
    ({"size": "1MB", "reserve": "64KB"}, "topology.shared_buffer.size", "leave no shared pool"),
])
def test_bad_shared_buffer_settings_are_refused_naming_the_field(sb, field, says):
    from detailsim import _core

    sc = {"topology": {"kind": "fattree", "k": 4, "shared_buffer": sb}, "scheme": {"preset": "fh"},
          "workload": [{"kind": "retrieval", "rate": 100, "sizes": ["2KB"]}], "run": {"duration": "1ms"}}
    with pytest.raises(_core.ScenarioError) as e:
        detailsim.run(sc)
    assert field in str(e.value) and says in str(e.value), str(e.value)


def test_the_command_line_refuses_a_bad_pool_with_exit_2_and_writes_nothing(tmp_path):
    p = run_cli("run", "paper/steady", "--duration", "1ms", "--set", "topology.shared_buffer.size=0B", "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and "topology.shared_buffer.size" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


@st.composite
def shared_scenarios(draw):
    preset = draw(st.sampled_from(PRESETS))
    topo = dict(draw(st.one_of(topologies, custom_fabrics())))
    pfc = preset in PFC_PRESETS
    pool = draw(st.sampled_from(["2MB", "4MB"] if pfc else ["64KB", "256KB", "1MB"]))
    topo["shared_buffer"] = {"size": pool, "alpha": draw(st.sampled_from([0.5, 1.0, 4.0]))}
    w = [{"kind": "retrieval", "rate": draw(st.sampled_from([500, 5000])), "sizes": draw(sizes), "priority": draw(st.integers(0, 3))}]
    if draw(st.booleans()):
        w.append({"kind": "background", "size": draw(st.sampled_from(["64KB", "512KB"])), "priority": draw(st.integers(0, 3))})
    scheme: dict = {"preset": preset}
    if preset in ("pias", "detail_pias"):
        scheme["tcp"] = {"mlfq_thresholds": ["10KB"]}
    if pfc:
        scheme["pfc"] = {"priorities": [0, 1, 2, 3, 4]}
    elif preset != "pfabric" and draw(st.booleans()):
        # an egress queue limit on top of the pool: drop-tail there
        scheme["queue_limit"] = draw(st.sampled_from(["16KB", "64KB"]))
    return {"run": {"duration": "2ms", "drain": "50ms", "seed": draw(st.integers(0, 2**32))},
            "topology": topo, "scheme": scheme, "workload": w}, pool


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_scenarios())
def test_every_preset_keeps_its_invariants_on_shared_buffers(case):
    sc, pool = case
    r = detailsim.run(sc)
    s = r.summary
    assert_invariants(s)
    assert s["invariants"]["shared_buffer"] is True
    cap = int(pool.removesuffix("MB")) * KB * KB if pool.endswith("MB") else int(pool.removesuffix("KB")) * KB
    assert 0 <= s["shared_buffer"]["peak_bytes"] <= cap == s["shared_buffer"]["pool_bytes"]
    sw = r.ports.filter(~pl.col("node").str.starts_with("h"))
    limit = int(sc["scheme"].get("queue_limit", f"{cap // KB}KB").removesuffix("KB")) * KB
    assert sw["max_egress_bytes"].max() <= min(cap, limit) and sw["max_ingress_bytes"].max() == 0
    if sc["scheme"]["preset"] in PFC_PRESETS:
        assert s["congestion_drops"] == 0, s["drops"]
    assert sum(s["drops"].values()) == s["packets"]["dropped"]


def test_a_split_run_on_shared_buffers_gives_the_one_thread_results():
    sets = {"topology.shared_buffer": {"size": "1MB"}, "scheme.pfc.priorities": [0, 1]}
    one = detailsim.run("paper/steady", scheme="detail", duration="3ms", set=sets | {"run.threads": 1})
    two = detailsim.run("paper/steady", scheme="detail", duration="3ms", set=sets | {"run.threads": 2})
    assert one.flows.height > 50 and one.summary["shared_buffer"]["pfc_pauses_sent"] >= 0
    assert one.flows.equals(two.flows)
    assert one.ports.equals(two.ports)


def test_shared_buffers_change_what_the_switch_does():
    # the same incast on DeTail's CIOQ switch and on a shared buffer of the same total memory per switch
    rows = [{"src": i, "dst": 0, "size_bytes": 100_000, "start_s": 0.0} for i in range(1, 9)]
    base = {"run": {"duration": "20ms"}, "topology": {"kind": "single_switch", "hosts": 9, "buffer": "32KB"},
            "scheme": {"preset": "tcp"}, "workload": [{"kind": "flows", "rows": rows}]}
    cioq = detailsim.run(base)
    shared = detailsim.run(base, set={"topology.shared_buffer": {"size": f"{9 * 2 * 32}KB"}})
    # 9 ports x (32 KB in + 32 KB out) pooled: the hot port may hold up to half of it, so fewer drops
    assert shared.summary["packets"]["dropped"] < cioq.summary["packets"]["dropped"]
    assert "shared_buffer" not in cioq.summary and "shared_buffer" not in cioq.summary["invariants"]
    hot = shared.ports.filter(pl.col("peer") == "h0")
    assert hot["max_egress_bytes"].max() > 32 * KB


def test_live_mode_lays_out_shared_buffers_and_refuses_what_it_does_not_run():
    """Issue 50: live mode drives both buffer models (tests/test_live.py runs one end to end); what it refuses
    on shared buffers is what it refuses on CIOQ, by field."""
    from detailsim import _core

    sc = {"topology": {"kind": "single_switch", "hosts": 3, "link_rate": "100Mbps", "shared_buffer": {"size": "1MB"}},
          "scheme": {"preset": "fh"}, "workload": []}
    layout = json.loads(_core.live_layout(json.dumps(sc)))
    assert len(layout["hosts"]) == 3
    sc["scheme"] = {"preset": "dibs", "tcp": {"congestion_control": "new_reno"}}
    with pytest.raises(_core.ScenarioError, match="scheme.dibs: live mode does not run"):
        _core.live_layout(json.dumps(sc))


def _bundled() -> list[str]:
    from detailsim.core.scenario import bundled_scenarios

    return sorted(bundled_scenarios())


@pytest.mark.parametrize("name", _bundled())
def test_every_bundled_topology_runs_on_shared_buffers_with_the_roce_schemes(name):
    """Issue 38: the three features on every bundled topology, invariants holding (1 ms of each)."""
    for scheme in (None, "dcqcn", "hpcc"):
        sets = {"topology.shared_buffer": {"size": "16MB"}, "run.drain": "20ms"}
        if scheme is not None:
            sets["scheme.pfc.priorities"] = [0, 1, 2]
        r = detailsim.run(name, scheme=scheme, duration="1ms", set=sets)
        s = r.summary
        assert_invariants(s)
        assert s["invariants"]["shared_buffer"] is True, (name, scheme)
        if scheme is not None:
            assert s["congestion_drops"] == 0, (name, scheme, s["drops"])
