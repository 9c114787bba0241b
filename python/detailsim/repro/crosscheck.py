"""`detailsim crosscheck`: small scenarios described once, built both in ns-3 (its Python bindings, the
`ns3` wheel) and here, compared on their headline figures (issue 37).

Each case is a dumbbell (`left` hosts on switch L, `right` hosts on switch R, host links at `host_rate`,
the L-R link at `bottleneck_rate`), a chain of switches or a fat tree (`fabric`), every link `delay` one
way. Every switch egress queue holds `queue`
packets, drop-tail, or marks ECN when more than `mark` packets are queued (ns-3: RED with MinTh = MaxTh =
K and QW = 1, as its dctcp-example; here `ecn_marking = "per_port"`). TCP NewReno or DCTCP without SACK, limited transmit,
timestamps or delayed ACKs, a SYN handshake, MSS 1448, initial window, minimum RTO and DCTCP's g as the case says. Flows:
(src, dst, bytes or None for a bulk flow, start in seconds), hosts numbered as `fabric` lists them.

What each side is made to be (so that a difference is the models', not the setup's): ns-3's point-to-point
frame is the IP packet plus a 2-byte PPP header, so here `frame_overhead = 2` and `min_frame = 42`; an
ns-3 node forwards at once, so here `forwarding_delay = 0` and the crossbar is 64 times the line rate; the
device queue under ns-3's queue disc holds one packet, so the disc's limit is the port's, and a host's
NIC has a 1000-packet FIFO (not ns-3's default FqCoDel); here a switch is
input-and-output queued, so its egress holds the case's queue and its ingress one frame (a frame that finds
its egress full waits there, and the next one arriving is dropped: an output queue of the case's size plus
a frame per input); a host's NIC queue holds 1000 frames on both. What is left differs by design and is what the
comparison measures.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .grading import REL_TOLERANCE  # the reproductions' band: ±25% of ns-3's figure

MSS = 1448
WIRE = MSS + 40 + 2  # a full segment on a point-to-point link: IP + TCP headers, PPP's 2 bytes


@dataclass
class Case:
    name: str
    what: str
    left: int
    right: int
    flows: list[tuple[int, int, int | None, float]]
    # instead of a dumbbell, a chain of switches joined at `bottleneck_rate`, with this many hosts on each
    chain: list[int] | None = None
    # instead, a k-ary fat tree, every link at `bottleneck_rate`
    fattree: int | None = None
    # spread every packet over the shortest paths at random (ns-3: Ipv4GlobalRouting's RandomEcmpRouting;
    # here `load_balancing = "packet_scatter"`)
    spray: bool = False
    # two strict priorities: each flow's (0 high, 1 low); every switch port has a queue of `queue` per
    # priority (ns-3: a PrioQueueDisc of two FIFO bands, the high one taken by IP TOS 0x10)
    prio: list[int] | None = None
    # run at each of these link delays (every link's) and report the mean: where a figure of drop-tail
    # queues depends on the flows' phase, it is graded over a spread of phases, not at one
    delays: list[str] | None = None
    host_rate: str = "10Gbps"
    bottleneck_rate: str = "1Gbps"
    delay: str = "10us"
    queue: int = 100
    mark: int | None = None
    # RED on every switch port: (min, max) packets, maximum probability, weight; gentle, ECN-marking
    red: tuple[int, int, float, float] | None = None
    cc: str = "newreno"
    initial_window: int = 10
    min_rto: str = "10ms"
    g: float = 0.0625
    end: float = 0.5
    window: tuple[float, float] | None = None
    headline: str = "goodput"


CASES: dict[str, Case] = {c.name: c for c in [
    Case("newreno_droptail", "one 1 Gbps bottleneck, two bulk NewReno flows, 100-packet drop-tail queues",
         left=2, right=2, flows=[(0, 2, None, 0.0), (1, 3, None, 0.0)], window=(0.3, 0.5)),
    Case("dctcp_step", "one 1 Gbps bottleneck, two bulk DCTCP flows, marking above 20 packets (g = 1/16)",
         left=2, right=2, flows=[(0, 2, None, 0.0), (1, 3, None, 0.0)], cc="dctcp", mark=20, window=(0.3, 0.5)),
    Case("dctcp_red", "one 1 Gbps bottleneck, two bulk DCTCP flows, RED marking from 10 to 40 packets (p 0.1, weight 0.002, gentle)",
         left=2, right=2, flows=[(0, 2, None, 0.0), (1, 3, None, 0.0)], cc="dctcp", red=(10, 40, 0.1, 0.002), window=(0.3, 0.5)),
    Case("long_short_mix", "two bulk NewReno flows and 20 flows of 64 KB, one every 10 ms from 0.1 s, through one 1 Gbps bottleneck",
         left=3, right=3, flows=[(0, 3, None, 0.0), (1, 4, None, 0.0)] + [(2, 5, 65536, 0.1 + 0.01 * i) for i in range(20)],
         end=0.5, headline="median_fct"),
    Case("parking_lot", "three switches in a row, 1 Gbps between them: a NewReno flow across both hops and one across each (the mean over links of 8, 9, 10, 11 and 12 µs)",
         left=0, right=0, chain=[2, 2, 2], flows=[(0, 4, None, 0.0), (1, 2, None, 0.0), (3, 5, None, 0.0)], window=(0.3, 0.5),
         delays=["8us", "9us", "10us", "11us", "12us"], headline="goodput_first"),
    Case("ecmp_fattree", "a k = 4 fat tree at 1 Gbps, 8 bulk NewReno flows from pods 0-1 to pods 2-3, every packet sprayed over the shortest paths",
         left=0, right=0, fattree=4, spray=True, flows=[(i, i + 8, None, 0.0) for i in range(8)], window=(0.3, 0.5)),
    Case("strict_priorities", "a bulk NewReno flow at low priority and 20 flows of 64 KB at high priority, one every 10 ms, through one 1 Gbps bottleneck",
         left=2, right=2, flows=[(0, 2, None, 0.0)] + [(1, 3, 65536, 0.1 + 0.01 * i) for i in range(20)],
         prio=[1] + [0] * 20, end=0.5, headline="median_fct"),
    Case("incast_rto10ms", "8 senders, 64 KB each to one receiver at once, 32-packet queues, minimum RTO 10 ms",
         left=8, right=1, flows=[(i, 8, 65536, 0.0) for i in range(8)], host_rate="1Gbps", queue=32,
         end=1.0, headline="median_fct"),
    Case("incast_rto200ms", "the same incast with a minimum RTO of 200 ms",
         left=8, right=1, flows=[(i, 8, 65536, 0.0) for i in range(8)], host_rate="1Gbps", queue=32,
         min_rto="200ms", end=2.0, headline="median_fct"),
]}


# what `--vary FIELD=VALUE` may change in a case, on both sides at once (a what-if run), and how to read it
VARY: dict[str, Any] = {"queue": int, "mark": int, "initial_window": int, "g": float, "end": float, "host_rate": str,
                        "bottleneck_rate": str, "delay": str, "min_rto": str}


def vary(c: Case, items: list[str]) -> Case:
    """The case with FIELD=VALUE changes (`VARY`); a ValueError names the field and what is allowed."""
    import dataclasses

    changes: dict[str, Any] = {}
    for a in items:
        k, eq, v = a.partition("=")
        if not eq or k not in VARY:
            raise ValueError(f"--vary {a!r}: FIELD=VALUE with FIELD one of {', '.join(VARY)}")
        try:
            changes[k] = VARY[k](v)
        except ValueError:
            raise ValueError(f"--vary {k}: {v!r} is not {'an integer' if VARY[k] is int else 'a number'}") from None
        if VARY[k] is not str and changes[k] <= 0:
            raise ValueError(f"--vary {k}: must be positive, got {v!r}")
    if "delay" in changes:
        changes["delays"] = None  # one delay asked for: that phase alone
    return dataclasses.replace(c, **changes)


def phases(c: Case) -> list[Case]:
    """The runs a case is made of: one, or one per delay of its spread."""
    return [vary(c, [f"delay={d}"]) for d in c.delays] if c.delays else [c]


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A spread's runs as one: per-flow goodput, resends and resent share, and the drops, each their mean
    over the runs; the FCTs and per-flow retransmissions of every run; timeouts summed; each run kept."""
    if len(runs) == 1:
        return runs[0]
    mean = lambda xs: round(float(np.mean(xs)), 2)  # noqa: E731
    out: dict[str, Any] = {"drops": mean([r["drops"] for r in runs])}
    for k in ("goodput_mbps", "resent", "retx_share"):
        if k in runs[0]:
            out[k] = [mean(col) for col in zip(*(r[k] for r in runs))]
    out["fct_ms"] = sorted(x for r in runs for x in r["fct_ms"])
    out["retx"] = [x for r in runs for x in r["retx"]]
    if "timeouts" in runs[0]:
        out["timeouts"] = sum(r["timeouts"] for r in runs)
    out["runs"] = runs
    return out


def fabric(c: Case) -> tuple[list[int], list[tuple[int, int]], int]:
    """The case's switches: the switch each host hangs off (hosts numbered in order), the switch-to-switch
    links, and the number of switches."""
    if c.fattree is not None:
        k = c.fattree
        half = k // 2
        edge = lambda p, i: p * half + i  # noqa: E731
        agg = lambda p, j: k * half + p * half + j  # noqa: E731
        core = lambda j, m: 2 * k * half + j * half + m  # noqa: E731
        at = [edge(p, i) for p in range(k) for i in range(half) for _ in range(half)]
        links = [(edge(p, i), agg(p, j)) for p in range(k) for i in range(half) for j in range(half)]
        links += [(agg(p, j), core(j, m)) for p in range(k) for j in range(half) for m in range(half)]
        return at, links, 2 * k * half + half * half
    chain = c.chain if c.chain is not None else [c.left, c.right]
    at = [k for k, n in enumerate(chain) for _ in range(n)]
    return at, [(k, k + 1) for k in range(len(chain) - 1)], len(chain)


def ours_scenario(c: Case) -> dict[str, Any]:
    """The case as a detailsim scenario."""
    scheme: dict[str, Any] = {
        "preset": "dctcp" if c.cc == "dctcp" else "tcp",
        "tcp": {"mss": MSS, "initial_window": c.initial_window, "rto_min": c.min_rto, "rto_initial": c.min_rto,
                "delayed_ack": False, "dctcp_g": c.g, "handshake": True},
    }
    if c.mark is not None:
        scheme["ecn_marking"] = "per_port"
        scheme["ecn_threshold"] = f"{c.mark * WIRE}B"
    if c.red is not None:
        lo, hi, p, w = c.red
        scheme["ecn_marking"] = "red"
        scheme["red"] = {"min_threshold": f"{lo} packets", "max_threshold": f"{hi} packets", "max_probability": p, "weight": w, "gentle": True}
    prios = c.prio or [0] * len(c.flows)
    rows = [{"src": s, "dst": d, "size_bytes": b if b is not None else 10**13, "start_s": t, "priority": q}
            for (s, d, b, t), q in zip(c.flows, prios)]
    if c.prio:
        scheme["egress_sharing"] = "whole_per_priority"
    if c.spray:
        scheme["load_balancing"] = "packet_scatter"
    hw = {"egress_buffer": f"{c.queue * WIRE}B", "ingress_buffer": "1502B", "forwarding_delay": "0us", "speedup": 64,
          "frame_overhead": 2, "min_frame": 42, "link_delay": c.delay}
    if c.chain is None and c.fattree is None:
        topo = {"kind": "dumbbell", "left": c.left, "right": c.right, "link_rate": c.host_rate,
                "bottleneck_rate": c.bottleneck_rate, "bottleneck_delay": c.delay, **hw}
    else:
        at, swlinks, nsw = fabric(c)
        host_rate = c.bottleneck_rate if c.fattree is not None else c.host_rate
        nodes = [{"name": f"h{i}", "kind": "host"} for i in range(len(at))] + [{"name": f"s{k}", "kind": "switch"} for k in range(nsw)]
        links = [{"a": f"h{i}", "b": f"s{k}", "rate": host_rate} for i, k in enumerate(at)]
        links += [{"a": f"s{a}", "b": f"s{b}", "rate": c.bottleneck_rate} for a, b in swlinks]
        topo = {"kind": "custom", "nodes": nodes, "links": links, **hw}
    sc: dict[str, Any] = {
        "run": {"duration": f"{c.end}s", "drain": "0s", "threads": 1},
        "topology": topo,
        "scheme": scheme,
        "workload": [{"kind": "flows", "rows": rows}],
    }
    if c.window:
        sc["run"]["measure_from"] = f"{c.window[0]}s"
        sc["run"]["measure_to"] = f"{c.window[1]}s"
    return sc


def run_ours(c: Case, sets: list[str] | None = None) -> dict[str, Any]:
    """The case here (over its spread of delays, pooled); `sets` are `--set KEY=VALUE` overrides of its
    scenario (a what-if run)."""
    return pooled([_run_ours_one(x, sets) for x in phases(c)])


def _run_ours_one(c: Case, sets: list[str] | None = None) -> dict[str, Any]:
    import polars as pl

    from ..core.api import execute
    from ..core.scenario import prepare

    r = execute(*prepare(ours_scenario(c), sets=sets))
    f = r.flows.sort("id")
    out: dict[str, Any] = {"drops": int(r.summary["packets"]["dropped"])}
    if c.window:
        out["goodput_mbps"] = [float(x) / 1e6 for x in f["window_goodput_bps"].to_list()]
    fct = f.filter(pl.col("fct").is_not_null())["fct"].to_list()
    out["fct_ms"] = sorted(x * 1e3 for x in fct)
    out["timeouts"] = int(f["timeouts"].sum())
    out["resent"] = [int(x) for x in f["retransmits"].to_list()]
    sized = f.filter(pl.col("size") < 10**13)
    out["retx"] = [int(x) for x in sized["retransmits"].to_list()]
    # of the data segments sent, the share retransmitted
    sent = f["bytes_delivered"].to_numpy() / MSS + f["retransmits"].to_numpy()
    out["retx_share"] = [round(float(r / s), 4) if s else 0.0 for r, s in zip(f["retransmits"].to_list(), sent)]
    return out


# A sized flow's completion in ns-3: the simulated time its sink has received all its bytes (a PacketSink
# "Rx" trace, in C++ through cppyy; FlowMonitor's last received packet is the FIN, which ns-3 sends only once
# the data is acknowledged, one round trip later).
_WATCH = """
namespace xcheck {
  std::vector<uint64_t> want, got; std::vector<double> done;
  void Rx(int k, ns3::Ptr<const ns3::Packet> p, const ns3::Address& a) {
    got[k] += p->GetSize();
    if (done[k] < 0 && got[k] >= want[k]) done[k] = ns3::Simulator::Now().GetSeconds();
  }
  void Watch(ns3::Ptr<ns3::PacketSink> s, int k, uint64_t bytes) {
    if ((int)want.size() <= k) { want.resize(k + 1); got.resize(k + 1); done.resize(k + 1, -1.0); }
    want[k] = bytes; got[k] = 0; done[k] = -1.0;
    s->TraceConnectWithoutContext("Rx", ns3::MakeBoundCallback(&Rx, k));
  }
  // retransmissions: a data segment that starts below the highest sequence number the sender has sent
  std::vector<uint64_t> resent; std::vector<uint32_t> high; std::vector<bool> sent;
  void Tx(int k, ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase> s) {
    uint32_t len = p->GetSize() - h.GetSerializedSize();
    if (len == 0) return;
    uint32_t seq = h.GetSequenceNumber().GetValue(), end = seq + len;
    if (sent[k] && (int32_t)(seq - high[k]) < 0) resent[k]++;
    if (!sent[k] || (int32_t)(end - high[k]) > 0) high[k] = end;
    sent[k] = true;
  }
  void Hook(ns3::Ptr<ns3::Application> app, int k) {
    auto s = ns3::DynamicCast<ns3::TcpSocketBase>(ns3::DynamicCast<ns3::BulkSendApplication>(app)->GetSocket());
    s->TraceConnectWithoutContext("Tx", ns3::MakeBoundCallback(&Tx, k));
  }
  // hook flow k's socket just after its application opened it (its SYN carries no data)
  void HookAt(ns3::Ptr<ns3::Application> app, int k, double t) {
    if ((int)resent.size() <= k) { resent.resize(k + 1); high.resize(k + 1); sent.resize(k + 1); }
    resent[k] = 0; sent[k] = false;
    ns3::Simulator::Schedule(ns3::Seconds(t), &Hook, app, k);
  }
}
"""


# what cling (cppyy's C++ interpreter) prints while the ns3 wheel loads: static initialisers of its JIT
# modules it does not run, which reads like an error and is not one (the cases run and match their stored
# figures); filtered from stderr and counted once
CLING_NOISE = "Failed to materialize symbols"


@contextlib.contextmanager
def cling_noise_filtered() -> Iterator[None]:
    """Run the block with file descriptor 2 captured; afterwards write back every line but cling's
    "Failed to materialize symbols" ones, and say once how many there were and that they are harmless."""
    import os
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            lines = tmp.read().decode(errors="replace").splitlines()
            kept = [x for x in lines if CLING_NOISE not in x]
            for x in kept:
                print(x, file=sys.stderr)
            if len(kept) < len(lines):
                print(f"note: ns-3's bindings (cppyy's cling) reported {len(lines) - len(kept)} \"{CLING_NOISE}\" line(s) while "
                      "loading: static initialisers cling skips; harmless (the cases run and match their stored figures)",
                      file=sys.stderr)


_NS: Any = None


def ns3() -> Any:
    """The ns3 wheel's bindings and our C++ helpers, loaded once, cling's loading noise filtered."""
    global _NS
    if _NS is None:
        import cppyy

        with cling_noise_filtered():
            from ns import ns  # the wheel's cppyy bindings

            cppyy.cppdef(_WATCH)
        _NS = ns
    return _NS


def run_ns3(c: Case, sample: float | None = None, attrs: list[str] | None = None) -> dict[str, Any]:
    """The case in ns-3 (the `ns3` wheel's bindings): per-flow goodput in the window, FCTs, drops,
    retransmissions. `attrs` are `ns3::Type::Attribute=VALUE` defaults set after the case's own (a what-if
    run); an unknown attribute or a value it refuses is a ValueError."""
    import cppyy

    ns = ns3()
    watch = cppyy.gbl.xcheck

    tcp = "ns3::TcpDctcp" if c.cc == "dctcp" else "ns3::TcpNewReno"
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(tcp))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(c.initial_window))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 24))
    # the receiver's buffer, so its advertised window: ns-3's default, 128 KB, which the DeTail paper's
    # simulator ran and this one's `rwnd` defaults to (with 16 MB here, ns-3's bulk flows were not bounded
    # by it and this side's were: the two differed in drops by a factor of two)
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(131072))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(c.min_rto)))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    # RFC 3042's limited transmit, on by default in ns-3, is not in this simulator's TCP. Without SACK, ns-3
    # pairs it with a guess: each duplicate ACK marks the next segment above the hole as received, and a
    # guess found wrong when the cumulative ACK advances marks the new head lost (TcpTxBuffer::DiscardUpTo),
    # which under reordering resends about half the packets (docs/validation.md, section 17).
    ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    if c.cc == "dctcp":
        ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
        ns.Config.SetDefault("ns3::TcpDctcp::DctcpShiftG", ns.DoubleValue(c.g))
    for a in attrs or []:
        name, eq, value = a.partition("=")
        if not eq or not name.startswith("ns3::") or not ns.Config.SetDefaultFailSafe(name, ns.StringValue(value)):
            raise ValueError(f"--ns3-set {a!r}: not an ns-3 attribute default it accepts (ns3::Type::Attribute=VALUE)")
    at, swlinks, nsw = fabric(c)
    host_rate = c.bottleneck_rate if c.fattree is not None else c.host_rate
    hosts, sw = ns.NodeContainer(), ns.NodeContainer()
    hosts.Create(len(at))
    sw.Create(nsw)
    if c.spray:
        ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(True))
    ns.InternetStackHelper().InstallAll()

    def link(rate: str) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetChannelAttribute("Delay", ns.StringValue(c.delay))
        h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
        return h

    tch = ns.TrafficControlHelper()
    if c.red is not None:
        lo, hi, p, w = c.red
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c.queue}p")),
                             "MinTh", ns.DoubleValue(lo), "MaxTh", ns.DoubleValue(hi), "QW", ns.DoubleValue(w),
                             "LInterm", ns.DoubleValue(1 / p), "Gentle", ns.BooleanValue(True),
                             "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
                             "MeanPktSize", ns.UintegerValue(MSS + 40), "LinkBandwidth", ns.DataRateValue(ns.DataRate(c.bottleneck_rate)),
                             "LinkDelay", ns.TimeValue(ns.Time(c.delay)))
    elif c.prio is not None:
        handle = tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap", ns.StringValue("1 1 1 1 1 1 0 1 1 1 1 1 1 1 1 1"))
        classes = tch.AddQueueDiscClasses(handle, 2, "ns3::QueueDiscClass")
        tch.AddChildQueueDiscs(handle, classes, "ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c.queue}p")))
    elif c.mark is None:
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c.queue}p")))
    else:
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c.queue}p")),
                             "MinTh", ns.DoubleValue(c.mark), "MaxTh", ns.DoubleValue(c.mark), "QW", ns.DoubleValue(1.0),
                             "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
                             "MeanPktSize", ns.UintegerValue(MSS + 40), "LinkBandwidth", ns.DataRateValue(ns.DataRate(c.bottleneck_rate)),
                             "LinkDelay", ns.TimeValue(ns.Time(c.delay)))
    addr = ns.Ipv4AddressHelper()
    qdiscs = []
    subnet = [0]

    # a host's NIC queue: a 1000-packet FIFO, Linux's txqueuelen and this simulator's host_buffer (ns-3 would
    # otherwise give every device without a queue disc its default FqCoDel, which drops at the sender)
    host_q = ns.TrafficControlHelper()
    host_q.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))

    def join(a: Any, b: Any, rate: str, switch_ends: list[int]) -> Any:
        devs = link(rate).Install(a, b)
        tch_dev, host_dev = ns.NetDeviceContainer(), ns.NetDeviceContainer()
        for k in range(2):
            (tch_dev if k in switch_ends else host_dev).Add(devs.Get(k))
        qdiscs.append(tch.Install(tch_dev))
        if host_dev.GetN():
            qdiscs.append(host_q.Install(host_dev))
        addr.SetBase(ns.Ipv4Address(f"10.{subnet[0] // 250}.{subnet[0] % 250}.0"), ns.Ipv4Mask("255.255.255.0"))
        subnet[0] += 1
        return addr.Assign(devs)

    for a, b in swlinks:
        join(sw.Get(a), sw.Get(b), c.bottleneck_rate, [0, 1])
    ifs = [join(hosts.Get(i), sw.Get(k), host_rate, [1]) for i, k in enumerate(at)]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    host = [hosts.Get(i) for i in range(len(at))]
    sinks = []
    for k, (s, d, b, t) in enumerate(c.flows):
        port = 5000 + k
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        apps = sink.Install(host[d])
        apps.Start(ns.Seconds(0.0))
        sinks.append(ns.DynamicCast[ns.PacketSink](apps.Get(0)))
        if b is not None:
            watch.Watch(sinks[-1], k, b)
        bs = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ifs[d].GetAddress(0), port).ConvertTo())
        if c.prio is not None and c.prio[k] == 0:
            bs.SetAttribute("Tos", ns.UintegerValue(0x10))  # ns-3's socket priority 6 ("interactive"): band 0 of the Priomap above
        bs.SetAttribute("MaxBytes", ns.UintegerValue(b or 0))
        bs.SetAttribute("SendSize", ns.UintegerValue(MSS))
        a = bs.Install(host[s])
        a.Start(ns.Seconds(t))
        watch.HookAt(a.Get(0), k, t + 1e-9)
    fmh = ns.FlowMonitorHelper()
    mon = fmh.InstallAll()
    out: dict[str, Any] = {}
    # run to each window edge (and every `sample` seconds, for a look at the bytes delivered over time)
    edges = sorted({*(c.window or ()), c.end, *([round(k * sample, 9) for k in range(1, int(c.end / sample) + 1)] if sample else [])})
    now, rx = 0.0, {}
    for t in edges:
        if t > now:
            ns.Simulator.Stop(ns.Seconds(t - now))
            ns.Simulator.Run()
            now = t
        rx[t] = [int(x.GetTotalRx()) for x in sinks]
    if c.window:
        a, b = c.window
        out["goodput_mbps"] = [(y - x) * 8 / (b - a) / 1e6 for x, y in zip(rx[a], rx[b])]
    if sample:
        out["rx"] = {str(t): v for t, v in rx.items()}
    # FCTs (the sinks' traces) and retransmissions (FlowMonitor, data direction)
    mon.CheckForLostPackets()
    cls = ns.DynamicCast[ns.Ipv4FlowClassifier](fmh.GetClassifier())
    fct = []
    index = {(str(ifs[s].GetAddress(0)), 5000 + k): k for k, (s, d, b, t) in enumerate(c.flows)}
    retx = [0] * len(c.flows)
    share = [0.0] * len(c.flows)
    for kv in mon.GetFlowStats():
        tup = cls.FindFlow(kv.first)
        key = (str(tup.sourceAddress), int(tup.destinationPort))
        if key not in index:
            continue  # the ACK direction
        k = index[key]
        b = c.flows[k][2]
        # of the data packets sent (FlowMonitor), the share beyond what the receiver got in order
        tx = int(kv.second.txPackets)
        share[k] = max(0.0, 1 - (int(sinks[k].GetTotalRx()) / MSS) / tx) if tx else 0.0
        if b is not None:
            # packets sent beyond the flow's segments, its SYN, the handshake's ACK and its FIN: retransmissions
            retx[k] = tx - (-(-b // MSS) + 3)
            if watch.done[k] >= 0:
                fct.append((watch.done[k] - c.flows[k][3]) * 1e3)
    out["retx"] = [retx[k] for k, f in enumerate(c.flows) if f[2] is not None]
    out["retx_share"] = [round(x, 4) for x in share]
    out["fct_ms"] = sorted(fct)
    out["drops"] = sum(int(q.Get(k).GetStats().nTotalDroppedPackets) for q in qdiscs for k in range(q.GetN()))
    out["resent"] = [int(watch.resent[k]) for k in range(len(c.flows))]
    ns.Simulator.Destroy()
    return out


def headline(c: Case, r: dict[str, Any]) -> float:
    """The case's headline figure: total goodput in the window (Mbit/s), the first flow's, or the median FCT
    (ms)."""
    if c.headline == "goodput":
        return float(sum(r["goodput_mbps"]))
    if c.headline == "goodput_first":
        return float(r["goodput_mbps"][0])
    from ..core.results import nearest_rank

    return float(nearest_rank(np.sort(np.asarray(r["fct_ms"], dtype=float)), 0.5))


def run_case(name: str, sets: list[str] | None = None, attrs: list[str] | None = None,
             varied: list[str] | None = None) -> dict[str, Any]:
    """One case on both simulators (ns-3 in a child process: its state does not reset between cases);
    `varied` changes the case on both sides, `sets` and `attrs` this side's scenario and ns-3's attribute
    defaults (what-if runs)."""
    import subprocess
    import sys

    c = vary(CASES[name], varied or [])
    t0 = time.perf_counter()
    ours = run_ours(c, sets)
    t1 = time.perf_counter()
    runs = []
    for x in phases(c):
        code = ("import json; from detailsim.repro.crosscheck import run_ns3, vary, CASES; "
                f"print(json.dumps(run_ns3(vary(CASES[{name!r}], {[*(varied or []), f'delay={x.delay}']!r}), attrs={list(attrs or [])!r})))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            raise RuntimeError(f"ns-3 run of {name} failed: {' '.join(p.stderr.strip().splitlines()[-1:])}")
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    ns3 = pooled(runs)
    t2 = time.perf_counter()
    return {"case": name, "what": c.what, "headline": c.headline, "ours": ours, "ns3": ns3,
            "ours_headline": headline(c, ours), "ns3_headline": headline(c, ns3), "wall_s": [round(t1 - t0, 2), round(t2 - t1, 2)]}


DOC = "docs/validation.md"
DOC_JSON = "docs/validation/crosscheck.json"
SOURCE = f"{DOC_JSON} by `detailsim crosscheck --update-docs`"
BLOCK = "crosscheck"


def within(ns3: float, ours: float, tol: float = REL_TOLERANCE) -> bool:
    """`ours` within ±`tol` of ns-3's figure (two zeros agree; a zero against a non-zero does not)."""
    if ns3 == 0:
        return ours == 0
    return abs(ours - ns3) <= tol * abs(ns3)


def grades(r: dict[str, Any]) -> tuple[bool, bool, bool]:
    """A case's three figures graded: the headline, the packets dropped, the data segments resent."""
    return (within(r["ns3_headline"], r["ours_headline"]), within(r["ns3"]["drops"], r["ours"]["drops"]),
            within(sum(r["ns3"]["resent"]), sum(r["ours"]["resent"])))


def table(results: list[dict[str, Any]]) -> str:
    """The generated table of docs/validation.md (`generated:crosscheck`): each case's headline on both
    simulators and the difference, the largest FCT (the tail of a handful of flows), the packets dropped
    and the data segments resent, each graded within ±25% of ns-3's."""
    unit = {"goodput": "goodput in the window, Mbit/s", "goodput_first": "the first flow's goodput in the window, Mbit/s",
            "median_fct": "median FCT, ms"}
    lines = ["| case | what | headline | ns-3 | detailsim | difference | largest FCT ms, ns-3 / detailsim | drops, ns-3 / detailsim | "
             "resent, ns-3 / detailsim | within ±25%: headline, drops, resent |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    mark = lambda ok: "✓" if ok else "✗"  # noqa: E731
    for r in results:
        a, b = r["ns3_headline"], r["ours_headline"]
        diff = (b - a) / a * 100 if a else float("nan")
        big = lambda x: f"{max(x['fct_ms']):.3g}" if x["fct_ms"] else "-"  # noqa: E731
        g = grades(r)
        lines.append(f"| {r['case']} | {r['what']} | {unit[r['headline']]} | {a:.4g} | {b:.4g} | {diff:+.1f}% | "
                     f"{big(r['ns3'])} / {big(r['ours'])} | {r['ns3']['drops']} / {r['ours']['drops']} | "
                     f"{sum(r['ns3']['resent'])} / {sum(r['ours']['resent'])} | {' '.join(mark(x) for x in g)} |")
    n_all = sum(all(grades(r)) for r in results)
    lines.append("")
    lines.append(f"{n_all} of {len(results)} cases within ±25% of ns-3 on all three figures.")
    return "\n".join(lines)


PEERS_DOC = "docs/benchmarks.md"
PEERS_BLOCK = "bench-peers"


def peers_table(results: list[dict[str, Any]]) -> str:
    """docs/benchmarks.md's peers table (`generated:bench-peers`): each case's wall time on this simulator
    beside ns-3's (the whole run of the case, ns-3's through its Python bindings)."""
    lines = ["| cross-check case | scenario | detailsim s | ns-3 s | ns-3 / detailsim |", "|---|---|---|---|---|"]
    for r in results:
        ours, ns3 = r["wall_s"]
        ratio = f"{ns3 / ours:,.0f}x" if ours > 0 else "n/a (below the 10 ms resolution)"
        lines.append(f"| `{r['case']}` | {r['what']} | {ours:.2f} | {ns3:.2f} | {ratio} |")
    return "\n".join(lines)


def update_docs(results: list[dict[str, Any]], root: Path) -> None:
    from .docblocks import render_block, write_generated

    write_generated(root, DOC, DOC_JSON, BLOCK, results, table(results), SOURCE)
    peers = root / PEERS_DOC
    peers.write_text(render_block(peers.read_text(), PEERS_BLOCK, peers_table(results), PEERS_DOC, source=SOURCE))


def doc_block(root: Path) -> str | None:
    from .docblocks import block_of

    return block_of((root / DOC).read_text(), BLOCK, source=SOURCE)


def rerun_ours(stored: list[dict[str, Any]], names: list[str], progress: Any = None, sets: list[str] | None = None,
               varied: list[str] | None = None) -> list[dict[str, Any]]:
    """The stored results with this simulator's side of cases `names` run again (after a change of the
    model: ns-3's figures stay, its runs need the wheel); a case the store lacks is an error."""
    by = {r["case"]: r for r in stored}
    for n in names:
        if n not in by:
            raise KeyError(n)
        if progress:
            progress(n)
        c = vary(CASES[n], varied or [])
        ours = run_ours(c, sets)
        by[n] = {**by[n], "ours": ours, "ours_headline": headline(c, ours)}
    return [by[n] for n in CASES if n in by]


def main(names: list[str], out: Path | None, progress: Any = None, sets: list[str] | None = None,
         attrs: list[str] | None = None, varied: list[str] | None = None) -> list[dict[str, Any]]:
    results = []
    for n in names:
        if progress:
            progress(n)
        results.append(run_case(n, sets, attrs, varied))
    if out is not None:
        out.write_text(json.dumps(results, indent=1) + "\n")
    return results
