"""pcap export: the frames the core captured, written with real headers so that tshark and Wireshark decode
them: Ethernet, IPv4 (DSCP from the priority, ECN bits), TCP (ports, sequence and acknowledgement
numbers, SYN/ACK/ECE/CWR flags) and, for PFC, IEEE 802.1Qbb MAC Control frames (class-based flow
control). Timestamps have nanosecond resolution.

Addresses and priorities follow the one frame plan live mode uses (the core's `live::frame`), so a
simulated capture and a live one compare address for address: host h has IPv4 10.77.0.0 + h + 1 and MAC
02:64:73:00:hh:ll, and a data frame carries its end hosts' MACs at every hop (as the hosts' kernels send
it); a PFC frame comes from the MAC of the fabric port that sends it (02:64:70:..), encoded by the core's
encoder. The priority p (0 highest) travels as DSCP 8·p (class selector CSp). Payload bytes are zeros.
"""

from __future__ import annotations

import functools
import struct
from pathlib import Path
from typing import Any

import dpkt
import numpy as np

from .. import _core
from .._core import ScenarioError

COLUMNS = {"t_ps": "<u8", "port": "<u4", "from": "<u4", "to": "<u4", "kind": "u1", "src": "<u4", "dst": "<u4", "sport": "<u2",
           "dport": "<u2", "seq": "<u8", "len": "<u4", "flags": "u1", "ecn": "u1", "prio": "u1", "pause": "u1",
           "unpause": "u1"}
KIND_DATA, KIND_ACK, KIND_SYN, KIND_SYNACK, KIND_PFC = range(5)
FLAG_ECE, FLAG_CWR = 1, 2


def parse_filter(text: str) -> dict[str, list[Any]]:
    """``flow=ID``, ``node=NAME``, ``port=FROM:TO`` (one direction of a link), ``link=A:B`` (both), joined
    by ``|`` or ``,``: a frame is captured when any term selects it."""
    spec: dict[str, list[Any]] = {"flows": [], "nodes": [], "ports": []}
    terms = [t.strip() for t in text.replace(",", "|").split("|") if t.strip()]
    if not terms:
        raise ScenarioError("--pcap-filter: empty; use flow=ID, node=NAME, port=FROM:TO or link=A:B")
    for t in terms:
        key, _, val = t.partition("=")
        if key == "flow" and val.isascii() and val.isdigit() and int(val) < 2**64:
            spec["flows"].append(int(val))
        elif key == "node" and val:
            spec["nodes"].append(val)
        elif key in ("port", "link") and val.count(":") == 1 and all(val.split(":")):
            a, b = val.split(":")
            spec["ports"].append([a, b])
            if key == "link":
                spec["ports"].append([b, a])
        else:
            raise ScenarioError(f"--pcap-filter: cannot read {t!r}; use flow=ID, node=NAME, port=FROM:TO or link=A:B")
    return spec


@functools.cache
def mac(host: int) -> bytes:
    """Host `host`'s MAC address (the frame plan's)."""
    return bytes(_core.host_address(host)[1])


@functools.cache
def ip(host: int) -> bytes:
    """Host `host`'s IPv4 address (the frame plan's)."""
    return struct.pack(">I", _core.host_address(host)[0])


def tcp_frame(c: dict[str, np.ndarray], i: int) -> bytes:
    kind = int(c["kind"][i])
    flags = 0
    if kind == KIND_SYN:
        flags = dpkt.tcp.TH_SYN
    elif kind == KIND_SYNACK:
        flags = dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK
    elif kind == KIND_ACK:
        flags = dpkt.tcp.TH_ACK
    else:
        flags = dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH
    f = int(c["flags"][i])
    if f & FLAG_ECE:
        flags |= dpkt.tcp.TH_ECE
    if f & FLAG_CWR:
        flags |= dpkt.tcp.TH_CWR
    # sequence space: the SYN takes ISN 0, data byte k is k + 1
    seq_field = int(c["seq"][i])
    if kind == KIND_DATA:
        seq, ack = (seq_field + 1) & 0xFFFFFFFF, 1
    elif kind == KIND_ACK:
        seq, ack = 1, (seq_field + 1) & 0xFFFFFFFF
    elif kind == KIND_SYN:
        seq, ack = 0, 0
    else:
        seq, ack = 0, 1
    payload = b"\x00" * int(c["len"][i])
    tcp = dpkt.tcp.TCP(sport=int(c["sport"][i]), dport=int(c["dport"][i]), seq=seq, ack=ack, flags=flags,
                       win=65535, data=payload)
    tos = (int(c["prio"][i]) << 5) | (int(c["ecn"][i]) & 0b11)  # DSCP 8 * priority, then the ECN bits
    ipk = dpkt.ip.IP(src=ip(int(c["src"][i])), dst=ip(int(c["dst"][i])), p=dpkt.ip.IP_PROTO_TCP, tos=tos, ttl=64, data=tcp)
    ipk.len = 20 + len(bytes(tcp))
    eth = dpkt.ethernet.Ethernet(src=mac(int(c["src"][i])), dst=mac(int(c["dst"][i])), type=dpkt.ethernet.ETH_TYPE_IP, data=ipk)
    return bytes(eth)


def write_pcap(raw: dict[str, Any], path: str | Path) -> int:
    """Write the captured frames; returns how many."""
    c = {k: np.frombuffer(raw[k], dtype=t) for k, t in COLUMNS.items()}
    n = len(c["t_ps"])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        w = dpkt.pcap.Writer(fh, nano=True, linktype=dpkt.pcap.DLT_EN10MB, snaplen=65535)
        for i in range(n):
            t_ns = int(c["t_ps"][i]) // 1000
            if c["kind"][i] == KIND_PFC:
                frame = bytes(_core.pfc_frame(int(c["port"][i]), int(c["pause"][i]), int(c["unpause"][i])))
            else:
                frame = tcp_frame(c, i)
            w.writepkt(frame, ts=t_ns / 1e9)
    tmp.replace(path)
    return n
