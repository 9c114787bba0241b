"""RED at switch egresses (and host NICs): marks ECN-capable packets, drops the others; thresholds per tier."""

from __future__ import annotations

import polars as pl
import pytest

import detailsim
from conftest import assert_invariants


def dumbbell(scheme: dict, n: int = 4):
    rows = [{"src": i, "dst": n + i, "size_bytes": 20_000_000, "start_s": 0.0} for i in range(n)]
    sc = {"run": {"duration": "10ms", "drain": "20ms"},
          "topology": {"kind": "dumbbell", "left": n, "right": n, "link_rate": "1Gbps", "bottleneck_rate": "1Gbps",
                       "link_delay": "10us", "buffer": "4MB"},
          "scheme": scheme, "workload": [{"kind": "flows", "rows": rows}]}
    return detailsim.run(sc)


RED = {"ecn_marking": "red", "red": {"weight": 1, "min_threshold": "20 packets", "max_threshold": "60 packets",
                                      "max_probability": 0.1, "gentle": False}}


def bottleneck(r):
    return r.ports.filter((pl.col("tier") == "bottleneck") & (pl.col("tx_bytes") > 10**6))


def test_red_marks_ecn_capable_packets_and_keeps_the_queue_near_its_thresholds():
    r = dumbbell({"preset": "dctcp", **RED})
    s, b = r.summary, bottleneck(r)
    print(f"marks {s['ecn_marks']}, drops {s['drops']}, bottleneck mean queue {b['mean_egress_bytes'][0]:.0f} B, "
          f"max {b['max_egress_bytes'][0]} B, utilisation {b['utilisation'][0]:.3f}")
    assert s["ecn_marks"] > 0 and s["drops"]["red"] == 0 and s["congestion_drops"] == 0
    # DCTCP against instantaneous RED: the queue hovers between the thresholds (20..60 packets of 1530 B)
    assert 5 * 1530 < b["mean_egress_bytes"][0] < 60 * 1530
    assert b["utilisation"][0] > 0.9
    assert_invariants(s)


def test_red_drops_packets_that_are_not_ecn_capable():
    r = dumbbell({"preset": "tcp", **RED})
    s, b = r.summary, bottleneck(r)
    print(f"red drops {s['drops']['red']}, marks {s['ecn_marks']}, mean queue {b['mean_egress_bytes'][0]:.0f} B")
    assert s["drops"]["red"] > 0 and s["ecn_marks"] == 0
    assert b["max_egress_bytes"][0] < 4 * 1024 * 1024 / 4, "RED keeps NewReno far from the 4 MB buffer"


def test_red_thresholds_per_tier():
    # a high threshold on the host tier leaves the senders' side unmarked; the bottleneck marks
    red = {**RED, "red": {**RED["red"], "tiers": {"host": {"min_threshold": "2000 packets", "max_threshold": "2600 packets"}}}}
    r = dumbbell({"preset": "dctcp", **red})
    marks = r.ports.group_by("tier").agg(pl.col("ecn_marks").sum())
    m = dict(zip(marks["tier"], marks["ecn_marks"]))
    assert m["bottleneck"] > 0 and m["host"] == 0


@pytest.mark.parametrize("red, field", [
    ({"min_threshold": "30KB", "max_threshold": "60 packets"}, "scheme.red.max_threshold"),
    ({"max_probability": 0}, "scheme.red.max_probability"),
    ({"weight": 2}, "scheme.red.weight"),
    ({"tiers": {"core": {"min_threshold": "5 packets"}}}, "scheme.red.tiers.core"),
    ({"min_threshold": "lots"}, "scheme.red.min_threshold"),
])
def test_bad_red_parameters_name_the_field(red, field):
    with pytest.raises(detailsim.ScenarioError, match=field.replace(".", r"\.")):
        dumbbell({"preset": "dctcp", "ecn_marking": "red", "red": red})
