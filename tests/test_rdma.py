"""RoCEv2 schemes (issue 38): DCQCN and HPCC presets through the Python API and the command line, their
runs split in parts giving the one-thread results (HPCC's telemetry travels with its packets), live mode
refusing them by name."""

from __future__ import annotations

import json

import polars as pl
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


def test_a_roce_nic_holds_no_data_queue_so_dcqcn_not_pfc_sets_the_rate():
    """A RoCE NIC's scheduler takes a queue pair's next segment only when the port can send it: the senders'
    NIC queues hold at most two full frames of data (a NIC FIFO of 1,000 frames let a paused host burst
    its backlog at line rate after every PAUSE, whatever DCQCN decided, and PFC, not DCQCN, set the rate:
    DCQCN left ports paused as long as RoCE with no congestion control did). In the 16-to-1 incast, DCQCN
    cuts the time ports spend paused to less than half of what PFC alone gives, and HPCC pauses nothing."""
    res = {name: detailsim.run("examples/rdma_incast", scheme=s, set=st)
           for name, s, st in [("dcqcn", "dcqcn", {}), ("pfc alone", "dcqcn", {"scheme.ecn_marking": "none"}), ("hpcc", "hpcc", {})]}
    for name, r in res.items():
        assert_invariants(r.summary)
        senders = r.ports.filter(pl.col("node").is_in([f"h{i}" for i in range(1, 17)]))
        assert senders["max_egress_bytes"].max() <= 2 * 1530, name
    paused = {n: r.summary["pfc"]["paused_time_s"] for n, r in res.items()}
    assert paused["dcqcn"] < 0.5 * paused["pfc alone"] and paused["hpcc"] == 0, paused


def test_a_paused_roce_host_keeps_its_acks():
    """A host paused by PFC while data keeps arriving holds every ACK and CNP it makes (a RoCE NIC makes them
    in hardware): no host_buffer drop and no timeout, on the 100 Gbps web-search fat tree under DCQCN, where a
    NIC that kept only eight frames for them dropped thousands and its flows' senders waited for timeouts."""
    from detailsim.repro.modern import roce_scaling

    r = detailsim.run("examples/websearch_fattree", scheme="dcqcn", duration="5ms",
                      set={"topology.link_rate": "100Gbps", "topology.shared_buffer.size": "8MB", **roce_scaling(100)})
    assert_invariants(r.summary)
    assert r.summary["pfc"]["pause_frames"] > 0, "hosts were paused"
    assert r.summary["drops"]["host_buffer"] == 0 and r.summary["timeouts"] == 0


def test_the_declared_roce_scaling_rule():
    """modern's rule (docs/reproduction.md): at 25 Gbps the dcqcn preset's own settings, HPCC's at 100 Gbps;
    every setting proportional to the link rate."""
    from detailsim.repro.modern import roce_scaling

    at25, at1 = roce_scaling(25), roce_scaling(1)
    assert at25["scheme.dcqcn.rate_ai"] == "5Mbps" and at25["scheme.dcqcn.rate_hai"] == "50Mbps" and at25["scheme.dcqcn.min_rate"] == "1000Mbps"
    assert at25["scheme.red.min_threshold"] == "100000B" and at25["scheme.red.max_threshold"] == "400000B"
    assert roce_scaling(100)["scheme.hpcc.rate_ai"] == "40Mbps"
    assert at1["scheme.dcqcn.min_rate"] == "40Mbps" and at1["scheme.red.min_threshold"] == "4000B" and at1["scheme.hpcc.rate_ai"] == "0.4Mbps"
    # the scaled settings are accepted, and reach DCQCN's parameters
    r = detailsim.run("paper/steady", scheme="dcqcn", duration="2ms", set={"topology.shared_buffer.size": "3MB", "scheme.tcp.handshake": False, **at1})
    assert r.summary["scheme"] == "dcqcn" and r.summary["congestion_drops"] == 0
