"""Live mode smoke test: a 4-host fabric of network namespaces switched by the simulator's components.

Runs as root (CI does): frames flow, FCTs are recorded in run's schema, an incast makes the switch emit
802.1Qbb frames that tshark decodes as MAC Control CBFC, nothing is lost in the rings, no namespace is left.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest

from detailsim import live

ROOT = Path(__file__).resolve().parent.parent
DS = str(ROOT / ".venv" / "bin" / "detailsim")
INCAST = str(ROOT / "tests" / "data" / "live" / "incast4.toml")


def _ours() -> list[str]:
    return live.namespaces()


def test_this_machine_can_run_live_mode():
    assert live.has_net_admin(), "the live tests need CAP_NET_ADMIN (CI runs as root)"


def test_incast_on_four_hosts_flows_fcts_pfc_and_nothing_left(tmp_path):
    out, pcap = tmp_path / "run", tmp_path / "pfc.pcapng"
    r = subprocess.run([DS, "live", INCAST, "--out", str(out), "--pcap", str(pcap), "--json", "--drain", "3s"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _ours() == [], "namespaces left behind"
    summary = json.loads(r.stdout)
    flows = pl.read_parquet(out / "flows.parquet")
    sim_flows = subprocess.run([DS, "run", INCAST, "--out", str(tmp_path / "sim"), "-q"], capture_output=True, text=True)
    assert sim_flows.returncode == 0, sim_flows.stderr
    sim = pl.read_parquet(tmp_path / "sim" / "flows.parquet")
    # the same flows as the simulator's run, in its schema (plus the hosts' measured delay), all finished
    assert flows.drop("host_delay").schema == sim.schema and flows.schema["host_delay"] == pl.Float64
    assert flows.select("id", "src", "dst", "size", "priority").equals(sim.select("id", "src", "dst", "size", "priority"))
    assert flows["fct"].null_count() == 0 and summary["flows"]["completed"] == flows.height == 16
    incast = flows.filter(pl.col("class") == "incast")
    # three 256 KB flows through one 100 Mbps port take at least 3 x 256 KB / 100 Mbps = 63 ms together
    assert incast["end"].max() - incast["start"].min() > 0.06
    assert (flows["fct"] >= flows["ideal"] * 0.9).all()
    # the hosts' own scheduling delay is measured per flow, and is part of the FCT
    assert flows["host_delay"].null_count() == 0 and ((flows["host_delay"] >= 0) & (flows["host_delay"] < flows["fct"])).all()
    # PFC under the incast, decoded by tshark; lossless: no switch drop; the emulator lost nothing
    assert summary["pfc"]["pause_frames"] > 0
    assert summary["drops"]["ingress_lossless"] == 0 and summary["invariants"]["lossless"]
    assert summary["emulator"]["ring_drops"] == 0 and summary["emulator"]["send_failures"] == 0
    dec = subprocess.run(["tshark", "-r", str(pcap), "-Y", "macc.opcode == 0x0101", "-T", "fields", "-e", "eth.type", "-e", "macc.opcode"],
                         capture_output=True, text=True, timeout=60)
    lines = [ln for ln in dec.stdout.splitlines() if ln.strip()]
    assert lines, dec.stderr
    assert all(ln.split("\t")[0] == "0x8808" for ln in lines)
    ports = pl.read_parquet(out / "ports.parquet")
    assert ports["pfc_sent"].sum() == summary["pfc"]["pause_frames"]
    # the bottleneck port never ran above its configured rate while backlogged; below it only when the
    # forwarder was descheduled (a machine busy with other work), which the run then reports as a problem
    # (the pacer's rate itself is `transmitters_are_paced_at_the_link_rate`, a unit test)
    bottleneck = ports.filter((pl.col("node") == "sw") & (pl.col("peer") == "h0"))
    share = bottleneck["backlogged_rate_bps"][0] / bottleneck["rate_bps"][0]
    slow = summary["emulator"]["link_rate_achieved"]
    assert share < 1.05 and slow["share"] <= share + 1e-9
    flagged = any("while backlogged" in p for p in live.problems(summary))
    assert flagged == (slow["share"] < live.LINK_RATE_FLOOR), (slow, live.problems(summary))


def test_a_shared_buffer_switch_runs_live(tmp_path):
    """Issue 50: live mode drives both buffer models (fabric/switch.rs); a 200 KB shared pool under the same
    incast pauses the senders (its MMU's dynamic PFC threshold) and loses nothing."""
    out = tmp_path / "run"
    r = subprocess.run([DS, "live", INCAST, "--set", "topology.shared_buffer.size=200KB", "--out", str(out), "--json", "--drain", "3s"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _ours() == [], "namespaces left behind"
    summary = json.loads(r.stdout)
    assert summary["flows"]["completed"] == summary["flows"]["planned"] == 16
    assert summary["pfc"]["pause_frames"] > 0
    assert summary["drops"]["ingress_lossless"] == 0 and summary["invariants"]["lossless"]
    assert summary["emulator"]["counters"]["queued_at_end"] == 0 and summary["emulator"]["ring_drops"] == 0


def test_too_fast_links_are_refused_before_anything_is_created(tmp_path):
    r = subprocess.run([DS, "live", INCAST, "--scheme", "fh", "--set", "topology.link_rate=10Gbps", "--out", str(tmp_path / "x")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "topology" in r.stderr and "Mbps" in r.stderr
    assert not (tmp_path / "x").exists() and _ours() == []


def test_cleanup_removes_what_a_crashed_run_left():
    subprocess.run(["ip", "netns", "add", live.PREFIX + "h7"], check=True)
    subprocess.run(["ip", "netns", "add", live.FABRIC_NS], check=True)
    subprocess.run(["ip", "-n", live.FABRIC_NS, "link", "add", "p0", "type", "veth", "peer", "name", "p1"], check=True)
    r = subprocess.run([DS, "live", "--cleanup"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "removed 2" in r.stdout
    assert _ours() == []


def test_a_leftover_namespace_stops_a_new_run_with_a_hint():
    subprocess.run(["ip", "netns", "add", live.PREFIX + "h0"], check=True)
    try:
        r = subprocess.run([DS, "live", INCAST], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "--cleanup" in r.stderr
    finally:
        live.cleanup()
    assert _ours() == []


def test_without_net_admin_the_error_is_one_line_and_exit_2():
    # drop CAP_NET_ADMIN from this process's children with setpriv (util-linux)
    r = subprocess.run(["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", DS, "live", INCAST],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "CAP_NET_ADMIN" in r.stderr


def test_schemes_live_mode_does_not_model_are_refused_before_anything_is_created(tmp_path):
    r = subprocess.run([DS, "live", INCAST, "--scheme", "pfabric", "--set", "scheme.tcp.congestion_control=new_reno", "--out",
                        str(tmp_path / "x")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "scheme.scheduling" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists() and _ours() == []
    # a controller the hosts' kernel does not run is refused by name, not replaced by NewReno
    r = subprocess.run([DS, "live", INCAST, "--scheme", "dctcp", "--out", str(tmp_path / "y")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "scheme.tcp.congestion_control" in r.stderr and "DCTCP" in r.stderr, r.stderr
    assert not (tmp_path / "y").exists() and _ours() == []


def test_a_modelled_server_time_is_refused_live():
    """Live hosts answer a request as it arrives: a scenario with `server_time` is refused, naming the field."""
    from detailsim import _core

    sc = {"topology": {"kind": "single_switch", "hosts": 4, "link_rate": "100Mbps"}, "scheme": {"preset": "fh"},
          "workload": [{"kind": "retrieval", "rate": 10, "sizes": ["2KB"], "server_time": "100us"}]}
    with pytest.raises(_core.ScenarioError, match=r"workload\[0\]\.server_time: live mode"):
        _core.live_layout(json.dumps(sc))
    sc["workload"][0]["server_time"] = "0s"
    assert json.loads(_core.live_layout(json.dumps(sc)))["hosts"]


def test_hosts_kernel_tcp_follows_the_schemes_tcp():
    from detailsim import _core

    def tcp(preset: str) -> dict:
        sc = {"topology": {"kind": "single_switch", "hosts": 4, "link_rate": "100Mbps"}, "scheme": {"preset": preset}, "workload": []}
        return json.loads(_core.live_layout(json.dumps(sc)))["tcp"]

    fh_sysctls, fh_route = live.kernel_tcp(tcp("fh"))
    # FH: NewReno with fast retransmit, RTO 10 ms, no ECN, no delayed ACKs; none of Linux's extras
    assert {"net.ipv4.tcp_sack=0", "net.ipv4.tcp_recovery=0", "net.ipv4.tcp_early_retrans=0", "net.ipv4.tcp_frto=0",
            "net.ipv4.tcp_ecn=0"} <= set(fh_sysctls)
    assert not any(x.startswith("net.ipv4.tcp_reordering") for x in fh_sysctls)
    assert fh_route == ["rto_min", "10ms", "initcwnd", "10", "quickack", "1"]
    # DeTail: reorder-resistant (no fast retransmit: the largest duplicate-ACK threshold), ECN, RTO 200 ms
    d_sysctls, d_route = live.kernel_tcp(tcp("detail"))
    assert {"net.ipv4.tcp_reordering=300", "net.ipv4.tcp_ecn=1"} <= set(d_sysctls)
    assert d_route[:2] == ["rto_min", "200ms"]


def test_live_validate_compares_the_same_flows_under_run_and_live(tmp_path):
    out = tmp_path / "v"
    r = subprocess.run([DS, "live-validate", str(ROOT / "tests" / "data" / "live" / "retrieval4.toml"), "--schemes", "detail", "--rates", "40",
                        "--duration", "0.3s", "--drain", "2s", "--out", str(out)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert _ours() == []
    res = json.loads((out / "validation.json").read_text())
    (case,) = res["cases"]
    assert (case["scheme"], case["rate"]) == ("detail", 40)
    assert case["emulator"]["flows_completed"] == case["emulator"]["flows_planned"] > 0 and case["emulator"]["ring_drops"] == 0
    assert sum(v["count"] for v in case["classes"].values()) == case["emulator"]["flows_planned"]
    for v in case["classes"].values():
        for q in ("p50", "p99", "p999"):
            d = v[q]
            assert d["run_ms"] > 0 and d["live"]["ms"] > 0 and d["live_net"]["ms"] <= d["live"]["ms"]
    assert (out / "validation.md").read_text().startswith("**Median**")
    # bad rates are refused by name before anything runs
    bad = subprocess.run([DS, "live-validate", "--rates", "fast"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--rates" in bad.stderr


def test_requests_and_responses_travel_at_the_flows_priority(tmp_path):
    # the request is the paper's 10 bytes and names the priority, so the responder answers at it too
    assert live.REQUEST_BYTES == 10
    pcap = tmp_path / "tcp.pcapng"
    r = subprocess.run([DS, "live", str(ROOT / "tests" / "data" / "live" / "retrieval4.toml"), "--set", "workload.0.priority=3",
                        "--duration", "0.2s", "--pcap", str(pcap), "--pcap-filter", "tcp", "-q", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["flows"]["completed"] > 0 and _ours() == []
    dec = subprocess.run(["tshark", "-r", str(pcap), "-Y", "tcp.len > 0", "-T", "fields", "-e", "tcp.srcport", "-e", "ip.dsfield.dscp"],
                         capture_output=True, text=True, timeout=60)
    rows = [ln.split("\t") for ln in dec.stdout.splitlines() if ln.strip()]
    responses = [d for port, d in rows if port == str(live.SERVER_PORT)]
    requests = [d for port, d in rows if port != str(live.SERVER_PORT)]
    assert responses and requests, dec.stderr
    # simulator priority 3 is DSCP 24 (CS3), both ways
    assert set(responses) == {"24"} and set(requests) == {"24"}
