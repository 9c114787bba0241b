"""pcap export: tshark decodes every frame (no malformed packets), TCP fields are right, PFC pauses are
802.1Qbb MAC Control (class-based flow control) frames, and the filters select what they say."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import ROOT, run_cli

INCAST = str(ROOT / "scenarios" / "examples" / "incast.toml")


def tshark(*args: str) -> list[str]:
    exe = shutil.which("tshark")
    assert exe, "tshark is required (make test installs Debian's tshark)"
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line.strip()]


def test_node_capture_decodes_with_pfc_frames(tmp_path):
    pcap = tmp_path / "sw.pcap"
    r = run_cli("run", INCAST, "--scheme", "lps", "--pcap", str(pcap), "--pcap-filter", "node=sw", "--json", check=True)
    frames = json.loads(r.stdout)["pcap"]["frames"]
    assert frames > 100
    assert len(tshark("-r", str(pcap))) == frames
    assert tshark("-r", str(pcap), "-Y", "_ws.malformed || _ws.expert.severity >= error") == []
    pfc = tshark("-r", str(pcap), "-Y", "macc", "-T", "fields", "-e", "macc.opcode", "-e", "macc.cbfc.enbv", "-e", "eth.dst")
    assert pfc, "the incast under LPS must pause"
    for line in pfc:
        opcode, enbv, dst = line.split("\t")
        assert opcode == "0x0101" and int(enbv, 16) != 0 and dst == "01:80:c2:00:00:01"
    # class-based flow control pauses with quanta on the paused classes
    verbose = "\n".join(tshark("-r", str(pcap), "-V", "-Y", "macc")[:200])
    assert "Class Based Flow Control" in verbose
    tcp = tshark("-r", str(pcap), "-Y", "tcp", "-T", "fields", "-e", "ip.dsfield.dscp", "-e", "tcp.len", "-e", "tcp.flags.ack")
    lens = {int(line.split("\t")[1]) for line in tcp}
    assert 1460 in lens and 0 in lens  # data and pure ACKs
    assert {line.split("\t")[0] for line in tcp} == {"0"}  # priority 0 -> DSCP 8 * 0 (class selector 0), as live


def test_flow_capture_follows_one_flow_over_every_hop(tmp_path):
    import detailsim
    import polars as pl

    res = detailsim.run("paper/steady", duration="2ms")
    f = res.flows.filter(pl.col("class") == "retrieval/8KB").row(0, named=True)
    src, dst = f["src"], f["dst"]
    hops = 2 if src // 8 == dst // 8 else (4 if src // 32 == dst // 32 else 6)  # same ToR / pod / other pod
    pcap = tmp_path / "flow.pcap"
    r = run_cli("run", "paper/steady", "--duration", "2ms", "--pcap", str(pcap), "--pcap-filter", f"flow={f['id']}",
                "--json", check=True)
    summary = json.loads(r.stdout)
    lines = tshark("-r", str(pcap), "-T", "fields", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.len", "-e", "ip.src")
    assert len(lines) == summary["pcap"]["frames"] > 0
    conns = {frozenset(line.split("\t")[:2]) for line in lines}
    assert len(conns) == 1  # one connection: the response travels back on the request's ports
    # opened once: a SYN and a SYN-ACK, each seen at every hop
    assert len(tshark("-r", str(pcap), "-Y", "tcp.flags.syn == 1")) == 2 * hops
    data = [line.split("\t") for line in lines if int(line.split("\t")[2]) > 0]
    response = [d for d in data if d[3] == f"10.77.0.{src + 1}"]
    request = [d for d in data if d[3] == f"10.77.0.{dst + 1}"]
    assert sum(int(d[2]) for d in response) == 8192 * hops  # every response byte, once per hop
    assert sum(int(d[2]) for d in request) == 10 * hops
    assert tshark("-r", str(pcap), "-Y", "_ws.malformed") == []


def test_bad_filters(tmp_path):
    for flt, msg in [("colour=red", "cannot read"), ("node=nonesuch", 'no node named "nonesuch"'),
                     ("port=h0:h1", "no link from")]:
        r = run_cli("run", INCAST, "--pcap", str(tmp_path / "x.pcap"), "--pcap-filter", flt)
        assert r.returncode == 2 and r.stderr.startswith("error: --pcap-filter:") and msg in r.stderr, r.stderr
        assert not (tmp_path / "x.pcap").exists()
    r = run_cli("run", INCAST, "--pcap", str(tmp_path / "x.pcap"))
    assert r.returncode == 2 and "--pcap-filter" in r.stderr


def test_simulated_and_live_frames_share_one_address_plan(tmp_path):
    """A simulated capture carries the addresses live mode gives the hosts (detailsim._core.live_layout): the
    same IPv4 and MAC per host, and PFC frames from the sending port's MAC, so the two compare address for
    address."""
    from detailsim import _core
    from detailsim.core.scenario import prepare

    sc, _ = prepare(INCAST, scheme="lps")
    layout = json.loads(_core.live_layout(json.dumps(sc)))
    pcap = tmp_path / "sw.pcap"
    run_cli("run", INCAST, "--scheme", "lps", "--pcap", str(pcap), "--pcap-filter", "node=sw", "--json", check=True)
    lines = tshark("-r", str(pcap), "-Y", "tcp", "-T", "fields", "-e", "ip.src", "-e", "eth.src", "-e", "ip.dst", "-e", "eth.dst")
    live = {h["ip"]: h["mac"] for h in layout["hosts"]}
    for line in lines:
        ip_src, mac_src, ip_dst, mac_dst = line.split("\t")
        assert live[ip_src] == mac_src and live[ip_dst] == mac_dst, line
    port_macs = {p["mac"] for p in layout["ports"]}
    pfc = tshark("-r", str(pcap), "-Y", "macc", "-T", "fields", "-e", "eth.src")
    assert pfc and set(pfc) <= port_macs
