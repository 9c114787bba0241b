"""Randomised small scenarios: packet conservation, buffer bounds and sane flow records must hold for every
topology, scheme, buffer size and workload mix hypothesis can think of. (The core also asserts the bounds on
every enqueue and conservation at the end of every run, so any test that runs a simulation checks them.)"""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, given, settings
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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_invariants_hold(case):
    sc, buf = case
    r = detailsim.run(sc)
    s = r.summary
    assert_invariants(s)
    cap = int(buf.removesuffix("KB")) * KB
    sw = r.ports.filter(~pl.col("node").str.starts_with("h"))
    assert sw["max_ingress_bytes"].max() <= cap
    assert sw["max_egress_bytes"].max() <= cap
    assert s["flows"]["completed"] <= s["flows"]["started"]
    done = r.flows.filter(pl.col("fct").is_not_null())
    assert done.height == s["flows"]["completed"]
    if done.height:
        assert done["fct"].min() > 0
        assert (done["end"] <= s["sim_time_s"] + 1e-12).all()
    assert sum(s["drops"].values()) == s["packets"]["dropped"]
    assert s["drops"]["no_route"] == 0
    # utilisation can never exceed the line rate
    assert r.ports["utilisation"].max() <= 1.0 + 1e-9
