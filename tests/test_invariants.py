"""Randomised small scenarios: packet conservation, buffer bounds and sane flow records must hold for every
topology, scheme, buffer size and workload mix hypothesis can think of. (The core also asserts the bounds on
every enqueue and conservation at the end of every run, so any test that runs a simulation checks them.)"""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import detailsim
from conftest import assert_invariants

topologies = st.one_of(
    st.builds(lambda n: {"kind": "single_switch", "hosts": n}, st.integers(2, 10)),
    st.builds(lambda l, r, b: {"kind": "dumbbell", "left": l, "right": r, "bottleneck_rate": b},
              st.integers(1, 4), st.integers(1, 4), st.sampled_from(["100Mbps", "1Gbps", "10Gbps"])),
    st.builds(lambda k: {"kind": "fattree", "k": k}, st.sampled_from([2, 4])),
    st.builds(lambda l, s, h: {"kind": "leaf_spine", "leaves": l, "spines": s, "hosts_per_leaf": h, "uplink_rate": "2Gbps"},
              st.integers(2, 4), st.integers(1, 3), st.integers(1, 4)),
    st.just({"kind": "testbed16"}),
)
sizes = st.lists(st.sampled_from(["1B", "100B", "1KB", "2KB", "8KB", "32KB", "100KB", "300KB"]), min_size=1, max_size=4)


@st.composite
def scenarios(draw):
    topo = dict(draw(topologies))
    buf = draw(st.sampled_from(["3KB", "8KB", "32KB", "128KB"]))
    topo["buffer"] = buf
    w = [{"kind": "retrieval", "rate": draw(st.sampled_from([200, 2000, 10000])), "sizes": draw(sizes),
          "priority": draw(st.integers(0, 7))}]
    if draw(st.booleans()):
        w.append({"kind": "background", "size": draw(st.sampled_from(["64KB", "1MB"])), "priority": draw(st.integers(0, 7))})
    tcp = {"handshake": draw(st.booleans()), "delayed_ack": draw(st.booleans()),
           "fast_retransmit": draw(st.booleans()), "initial_window": draw(st.sampled_from([1, 3, 10]))}
    scheme = {"preset": draw(st.sampled_from(["fh", "scatter"])), "tcp": tcp}
    if draw(st.booleans()):
        scheme["ecn_marking"] = draw(st.sampled_from(["per_queue", "per_port"]))
        scheme["ecn_threshold"] = "4KB"
        tcp["ecn"] = True
    return {
        "run": {"duration": draw(st.sampled_from(["1ms", "3ms"])), "drain": "100ms", "seed": draw(st.integers(0, 2**32))},
        "topology": topo,
        "scheme": scheme,
        "workload": w,
    }, buf


KB = 1024


def check_run(r, buf: str) -> dict:
    """What every randomised run must keep: conservation, lossless PFC, switch buffer bounds, consistent
    counts. Returns the summary."""
    s = r.summary
    assert_invariants(s)
    cap = int(buf.removesuffix("KB")) * KB
    sw = r.ports.filter(~pl.col("node").str.starts_with("h"))
    assert sw["max_ingress_bytes"].max() <= cap and sw["max_egress_bytes"].max() <= cap
    assert s["flows"]["completed"] <= s["flows"]["started"]
    assert sum(s["drops"].values()) == s["packets"]["dropped"]
    return s


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_invariants_hold(case):
    sc, buf = case
    r = detailsim.run(sc)
    s = check_run(r, buf)
    done = r.flows.filter(pl.col("fct").is_not_null())
    assert done.height == s["flows"]["completed"]
    if done.height:
        assert done["fct"].min() > 0
        assert (done["end"] <= s["sim_time_s"] + 1e-12).all()
    assert s["drops"]["no_route"] == 0
    # utilisation can never exceed the line rate
    assert r.ports["utilisation"].max() <= 1.0 + 1e-9


# ---------------------------------------------------------------- every scheme preset, custom fabrics, faults

PRESETS = [name for name, _ in detailsim._core.presets()]
PFC_PRESETS = {"lps", "detail", "pfc_only", "detail_pias", "dcqcn", "hpcc"}


@st.composite
def custom_fabrics(draw):
    """A random connected fabric: a random tree of switches plus extra switch links, hosts on random switches."""
    ns = draw(st.integers(1, 5))
    switches = [f"s{i}" for i in range(ns)]
    links = [{"a": switches[i], "b": switches[draw(st.integers(0, i - 1))]} for i in range(1, ns)]
    pairs = [(a, b) for i, a in enumerate(switches) for b in switches[i + 1:]]
    for a, b in draw(st.lists(st.sampled_from(pairs), max_size=3, unique=True)) if pairs else []:
        if {"a": a, "b": b} not in links and {"a": b, "b": a} not in links:
            links.append({"a": a, "b": b, "rate": draw(st.sampled_from(["1Gbps", "10Gbps"]))})
    nh = draw(st.integers(2, 8))
    hosts = [f"h{i}" for i in range(nh)]
    links += [{"a": h, "b": switches[draw(st.integers(0, ns - 1))]} for h in hosts]
    nodes = [{"name": s, "kind": "switch"} for s in switches] + [{"name": h, "kind": "host"} for h in hosts]
    return {"kind": "custom", "nodes": nodes, "links": links}


@st.composite
def any_scheme_scenarios(draw):
    preset = draw(st.sampled_from(PRESETS))
    topo = dict(draw(st.one_of(topologies, custom_fabrics())))
    buf = draw(st.sampled_from(["96KB", "128KB", "256KB"] if preset in PFC_PRESETS else ["8KB", "32KB", "128KB"]))
    topo["buffer"] = buf
    w = [{"kind": "retrieval", "rate": draw(st.sampled_from([500, 5000])), "sizes": draw(sizes), "priority": draw(st.integers(0, 3))}]
    if draw(st.booleans()):
        w.append({"kind": "background", "size": draw(st.sampled_from(["64KB", "512KB"])), "priority": draw(st.integers(0, 7))})
    scheme: dict = {"preset": preset}
    used = {x["priority"] for x in w}
    if preset in ("pias", "detail_pias"):
        scheme["tcp"] = {"mlfq_thresholds": draw(st.sampled_from([["10KB"], ["2KB", "50KB", "200KB"]]))}
        # MLFQ demotes a flow below its own priority by one level per threshold it passes
        used = {min(7, p + k) for p in used for k in range(len(scheme["tcp"]["mlfq_thresholds"]) + 1)}
    if preset in PFC_PRESETS:
        # the priorities in use are lossless (eight lossless priorities on a 10 Gbps link need about 330 KB)
        scheme["pfc"] = {"priorities": sorted(used)}
    faults = []
    sw_links = [lk for lk in topo.get("links", []) if lk["a"].startswith("s") and lk["b"].startswith("s")]
    if topo["kind"] in ("fattree", "detail128") and draw(st.booleans()):
        faults.append({"kind": draw(st.sampled_from(["link_down", "degrade"])), "link": "agg_core#0", "at": "1ms"})
    elif sw_links and draw(st.booleans()):
        lk = draw(st.sampled_from(sw_links))
        faults.append({"kind": "degrade", "link": [lk["a"], lk["b"]], "rate": "100Mbps", "at": "500us"})
    for f in faults:
        if f["kind"] == "degrade":
            f.setdefault("rate", "100Mbps")
    return {"run": {"duration": "2ms", "drain": "50ms", "seed": draw(st.integers(0, 2**32))},
            "topology": topo, "scheme": scheme, "workload": w, "fault": faults}, buf


def _table_hash(r) -> str:
    import hashlib

    return hashlib.sha256(r.flows.drop("wall_s", strict=False).write_ipc(None).getvalue()).hexdigest()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_scheme_scenarios())
def test_every_preset_keeps_its_invariants_on_any_fabric(case):
    """Conservation, buffer bounds and (for the PFC presets) no congestion drop, for every scheme preset on
    built-in and random custom fabrics, with and without a fault; and a rerun gives the same flow table."""
    sc, buf = case
    try:
        r = detailsim.run(sc)
    except detailsim._core.ScenarioError as e:
        # a buffer too small for the lossless priorities drawn on the fabric's fastest link is refused up
        # front, naming the field (what is checked here); such a case has nothing else to check
        assert sc["scheme"]["preset"] in PFC_PRESETS and "too small for lossless PFC" in str(e), str(e)
        reject()
    s = check_run(r, buf)
    if sc["scheme"]["preset"] in PFC_PRESETS:
        assert s["congestion_drops"] == 0, s["drops"]
    assert _table_hash(detailsim.run(sc)) == _table_hash(r)
