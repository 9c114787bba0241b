"""RoCEv2 schemes (issue 38): DCQCN and HPCC presets through the Python API and the command line, their
runs split in parts giving the one-thread results (HPCC's telemetry travels with its packets), live mode
refusing them by name."""

from __future__ import annotations

import json

import pytest

import detailsim
from conftest import assert_invariants, run_cli

FAT = {"topology.kind": "fattree", "topology.k": 4, "topology.link_rate": "25Gbps", "topology.buffer": "1MB"}


@pytest.mark.parametrize("scheme", ["dcqcn", "hpcc"])
def test_a_split_run_gives_the_one_thread_results(scheme):
    one = detailsim.run("paper/steady", scheme=scheme, duration="3ms", set=FAT | {"run.threads": 1})
    two = detailsim.run("paper/steady", scheme=scheme, duration="3ms", set=FAT | {"run.threads": 2})
    assert one.flows.height > 50
    assert_invariants(one.summary)
    assert one.summary["congestion_drops"] == 0
    assert one.flows.equals(two.flows)
    assert one.ports.equals(two.ports)


def test_hpcc_and_dcqcn_differ_from_each_other_and_from_tcp():
    res = {s: detailsim.run("paper/steady", scheme=s, duration="3ms", set=FAT) for s in ["dcqcn", "hpcc", "dctcp"]}
    sha = {s: r.flows.select("fct").to_series().to_list() for s, r in res.items()}
    assert sha["dcqcn"] != sha["hpcc"] != sha["dctcp"]
    # lossless under PFC, and no reordering with flow hashing: nothing goes twice
    for s in ("dcqcn", "hpcc"):
        assert res[s].summary["retransmits"] == 0


@pytest.mark.parametrize("scheme, says", [("dcqcn", "DCQCN"), ("hpcc", "HPCC")])
def test_live_mode_refuses_the_roce_schemes_by_name(scheme, says):
    from detailsim import _core

    sc = {"topology": {"kind": "single_switch", "hosts": 3, "link_rate": "100Mbps"}, "scheme": {"preset": scheme}, "workload": []}
    with pytest.raises(_core.ScenarioError, match=f"scheme.tcp.congestion_control: .*{says}"):
        _core.live_layout(json.dumps(sc))


def test_the_schemes_are_listed():
    p = run_cli("schemes")
    assert p.returncode == 0 and "dcqcn" in p.stdout and "hpcc" in p.stdout
