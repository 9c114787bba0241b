"""Live mode: a scenario on real Linux TCP between network namespaces, switched by the simulator's components.

```text
  dsl-h<i> (one namespace per host: kernel TCP, CUBIC, ECN on)       dsl-fab (the fabric namespace)
    eth0 ══ veth ══ h<i> ─ NIC model (8 priorities, source ECN, obeys PAUSE) ─ p<hostport> ══ veth ══ p<switchport>
                                                        switch components (CIOQ, PFC, flow hash / ALB, ECN)
                                                        p<a> ══ veth ══ p<b>  (every switch-to-switch link)
```

One forwarding process (``detailsim._core.live_forward``) runs in ``dsl-fab`` and paces every port at the
scenario's rates; an asyncio agent per host namespace replays the flows of the simulator's run of the same
scenario and seed (same arrivals, sizes, priorities) and times them. Everything created here is named
``dsl-*`` and is removed on exit, on Ctrl-C and by ``detailsim live --cleanup``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PREFIX = "dsl-"
FABRIC_NS = PREFIX + "fab"
SERVER_PORT = 5001
REQUEST_BYTES = 10
#: Above this a userspace-paced link is not what the scenario says on this machine (measured: about
#: 95 Mbps per link with real-time scheduling on 2 cores).
MAX_LINK_BPS = 200_000_000
CAP_NET_ADMIN = 12
#: The hosts' TCP: CUBIC (set per socket; this kernel's default is BBR and it has no DCTCP module).
CONGESTION_CONTROL = "cubic"


class LiveError(Exception):
    """A live run cannot go on; the message says why (and the exit code)."""

    def __init__(self, msg: str, code: int = 1):
        super().__init__(msg)
        self.code = code


def has_net_admin() -> bool:
    """Whether this process holds CAP_NET_ADMIN (namespaces and veths need it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def _sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise LiveError(f"{' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def namespaces() -> list[str]:
    """This tool's namespaces that exist now."""
    r = _sh("ip", "netns", "list", check=False)
    return sorted(line.split()[0] for line in r.stdout.splitlines() if line.startswith(PREFIX))


def cleanup() -> list[str]:
    """Kill what runs in our namespaces and delete them (their veths go with them). Returns what was removed."""
    gone = []
    for ns in namespaces():
        pids = _sh("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _sh("ip", "netns", "del", ns, check=False)
        gone.append(ns)
    return gone


def check_rates(layout: dict[str, Any]) -> None:
    for p in layout["ports"]:
        if p["rate_bps"] > MAX_LINK_BPS:
            raise LiveError(
                f"topology: a link of {p['node']} runs at {p['rate_bps'] / 1e6:g} Mbps; live mode paces links in userspace and "
                f"carries at most {MAX_LINK_BPS / 1e6:g} Mbps per link here: scale the scenario's rates down "
                "(e.g. --set topology.link_rate=100Mbps, or a bundled live/ scenario)", code=2)


def build(layout: dict[str, Any]) -> None:
    """Create the namespaces, veths, addresses, static neighbours, sysctls; offloads off everywhere."""
    hosts, ports = layout["hosts"], layout["ports"]
    _sh("ip", "netns", "add", FABRIC_NS)
    fab = ["ip", "netns", "exec", FABRIC_NS]
    _sh(*fab, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
    for p in ports:
        if p["index"] < p["peer"]:
            _sh("ip", "-n", FABRIC_NS, "link", "add", f"p{p['index']}", "type", "veth", "peer", "name", f"p{p['peer']}")
    for h in hosts:
        ns = f"{PREFIX}h{h['index']}"
        _sh("ip", "netns", "add", ns)
        _sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
            "net.ipv4.tcp_ecn=1", "net.ipv4.tcp_no_metrics_save=1")
        _sh("ip", "-n", FABRIC_NS, "link", "add", f"h{h['index']}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        _sh("ip", "-n", ns, "link", "set", "eth0", "address", h["mac"], "mtu", "1500", "up")
        _sh("ip", "-n", ns, "link", "set", "lo", "up")
        _sh("ip", "-n", ns, "addr", "add", f"{h['ip']}/16", "dev", "eth0")
        for o in hosts:
            if o["index"] != h["index"]:
                _sh("ip", "-n", ns, "neigh", "replace", o["ip"], "lladdr", o["mac"], "dev", "eth0", "nud", "permanent")
        _sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)
    names = [f"p{p['index']}" for p in ports] + [f"h{h['index']}" for h in hosts]
    for n in names:
        _sh("ip", "-n", FABRIC_NS, "link", "set", n, "up", "promisc", "on")
        _sh(*fab, "ethtool", "-K", n, "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)


# ---------------------------------------------------------------------------------------------- agent
# Wire protocol between agents (one TCP connection carries one flow at a time, connections are reused):
#   retrieval: requester -> responder  b"R" + size (u64) + 1 pad byte (10 bytes); responder -> size bytes
#   one-way:   sender -> receiver      b"W" + flow id (u64) + size (u64), then size bytes; receiver -> b"A"

CHUNK = bytes(65536)


def _tos(prio: int) -> int:
    return (8 * prio) << 2  # DSCP CS<prio>, ECN bits left to the kernel


async def _send_zeros(w: asyncio.StreamWriter, n: int) -> None:
    while n > 0:
        k = min(n, len(CHUNK))
        w.write(CHUNK[:k])
        n -= k
        await w.drain()


def _total_retrans(sock: socket.socket) -> int:
    # struct tcp_info: tcpi_total_retrans is the u32 at byte 100 (Linux >= 2.6.33)
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        return struct.unpack_from("I", info, 100)[0]
    except OSError:
        return 0


class Agent:
    def __init__(self, plan: dict[str, Any], me: int, out: Path):
        self.plan, self.me, self.out = plan, me, out
        self.ips = {h["index"]: h["ip"] for h in plan["hosts"]}
        self.idle: dict[tuple[int, int], list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        self.log = out.open("a", buffering=1)

    def record(self, **kw: Any) -> None:
        self.log.write(json.dumps(kw) + "\n")

    async def serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        sock = w.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                kind = await r.readexactly(1)
                if kind == b"R":
                    size, _pad = struct.unpack("!QB", await r.readexactly(9))
                    await _send_zeros(w, size)
                elif kind == b"W":
                    fid, size = struct.unpack("!QQ", await r.readexactly(16))
                    left = size
                    while left > 0:
                        left -= len(await r.read(min(left, 1 << 20)))
                    self.record(id=fid, rx_end_ns=time.monotonic_ns())
                    w.write(b"A")
                    await w.drain()
                else:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    async def conn(self, peer: int, prio: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        pool = self.idle.setdefault((peer, prio), [])
        if pool:
            return pool.pop()
        r, w = await asyncio.open_connection(self.ips[peer], SERVER_PORT)
        sock = w.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, _tos(prio))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.plan["cc"].encode())
        return r, w

    async def flow(self, f: dict[str, Any], at_ns: int) -> None:
        await asyncio.sleep(max(0.0, (at_ns - time.monotonic_ns()) / 1e9))
        peer = f["src"] if f["retrieval"] else f["dst"]
        try:
            r, w = await self.conn(peer, f["priority"])
        except OSError as e:
            self.record(id=f["id"], start_ns=time.monotonic_ns(), late_ns=0, error=f"connect: {e}")
            return
        sock = w.get_extra_info("socket")
        rt0 = _total_retrans(sock)
        start = time.monotonic_ns()
        try:
            if f["retrieval"]:
                w.write(b"R" + struct.pack("!QB", f["size"], 0))
                left = f["size"]
                while left > 0:
                    chunk = await r.read(min(left, 1 << 20))
                    if not chunk:
                        raise ConnectionError("closed")
                    left -= len(chunk)
            else:
                w.write(b"W" + struct.pack("!QQ", f["id"], f["size"]))
                await _send_zeros(w, f["size"])
                await r.readexactly(1)
            end = time.monotonic_ns()
            self.record(id=f["id"], start_ns=start, late_ns=start - at_ns, end_ns=end, retransmits=_total_retrans(sock) - rt0)
            self.idle[(peer, f["priority"])].append((r, w))
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as e:
            self.record(id=f["id"], start_ns=start, late_ns=start - at_ns, error=str(e))

    async def main(self) -> None:
        server = await asyncio.start_server(self.serve, self.ips[self.me], SERVER_PORT, reuse_address=True)
        for ls in server.sockets:
            # accepted connections inherit the listener's congestion control
            ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.plan["cc"].encode())
        t0 = self.plan["t0_ns"]
        mine = [f for f in self.plan["flows"] if (f["dst"] if f["retrieval"] else f["src"]) == self.me]
        # warm connections: one per peer and priority, opened before the clock starts (the simulator's
        # connections exist before their first flow)
        await asyncio.sleep(max(0.0, (t0 - self.plan["warm_ns"] - time.monotonic_ns()) / 1e9))
        for key in sorted({((f["src"] if f["retrieval"] else f["dst"]), f["priority"]) for f in mine}):
            for _ in range(2):
                # the peer's server may still be starting: retry until the clock starts
                while True:
                    try:
                        self.idle.setdefault(key, []).append(await self.conn(*key))
                        break
                    except OSError as e:
                        if time.monotonic_ns() > t0:
                            self.record(warm_error=str(e), peer=key[0])
                            break
                        await asyncio.sleep(0.02)
        tasks = [asyncio.create_task(self.flow(f, t0 + int(f["start"] * 1e9))) for f in mine]
        await asyncio.gather(*tasks)
        Path(str(self.out) + ".done").write_text("done\n")
        # keep serving the others until the run ends (bounded by the plan's end time)
        while time.monotonic_ns() < self.plan["end_ns"] and not Path(self.plan["stop_file"]).exists():
            await asyncio.sleep(0.02)
        server.close()


def agent_main(plan_path: str, me: int, out: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    asyncio.run(Agent(plan, me, Path(out)).main())


def forward_main(scenario_path: str, deadline_s: float, stop_file: str, report: str) -> None:
    from . import _core

    rep = _core.live_forward(Path(scenario_path).read_text(), deadline_s, stop_file)
    Path(report).write_text(rep)


def _flows_plan(flows: Any) -> list[dict[str, Any]]:
    rows = []
    for r in flows.select("id", "class", "src", "dst", "size", "priority", "start").iter_rows(named=True):
        rows.append({"id": int(r["id"]), "src": int(r["src"]), "dst": int(r["dst"]), "size": int(r["size"]), "priority": int(r["priority"]),
                     "start": float(r["start"]), "retrieval": str(r["class"]).startswith("retrieval")})
    return rows


def run_live(sc: dict[str, Any], name: str, drain_s: float = 2.0, say: Any = print, pcap: str | None = None,
             pcap_filter: str = "ether proto 0x8808") -> tuple[dict[str, Any], Any, Any, dict[str, Any]]:
    """Run prepared scenario `sc` live. Returns (summary, flows, ports, the simulator's summary of the same
    run). With `pcap`, tshark captures what `pcap_filter` (a BPF capture filter; default: MAC control, i.e.
    PFC frames) selects on every fabric port into that pcapng file. Raises LiveError (code 2 without
    privileges). Everything it creates is gone when it returns."""
    import numpy as np
    import polars as pl

    from . import _core
    from .api import execute
    from .results import fct_stats

    if not has_net_admin():
        raise LiveError("detailsim live needs CAP_NET_ADMIN (run as root) to create network namespaces", code=2)
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise LiveError(f"detailsim live needs `{tool}` (make setup installs it)")
    left = namespaces()
    if left:
        raise LiveError(f"namespaces of another live run exist ({', '.join(left)}): run `detailsim live --cleanup`")
    sc_json = json.dumps(sc)
    try:
        layout = json.loads(_core.live_layout(sc_json))
    except _core.ScenarioError as e:
        raise LiveError(str(e), code=2) from None
    check_rates(layout)
    say(f"simulating {name} first: its flows (arrivals, sizes, priorities) are what the live hosts replay")
    sim_res = execute(sc, name)
    plan_flows = _flows_plan(sim_res.flows)
    tmp = Path(tempfile.mkdtemp(prefix="detailsim-live-"))
    procs: list[subprocess.Popen[bytes]] = []
    old_term = signal.getsignal(signal.SIGTERM)

    def _term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        say(f"building the fabric: {len(layout['hosts'])} host namespaces, {len(layout['ports'])} ports")
        build(layout)
        (tmp / "scenario.json").write_text(sc_json)
        stop = tmp / "stop"
        last_start = max((f["start"] for f in plan_flows), default=0.0)
        setup_s, warm_s = 3.0, 1.5
        budget = setup_s + last_start + drain_s
        fwd = subprocess.Popen(["ip", "netns", "exec", FABRIC_NS, sys.executable, "-m", "detailsim.live", "forward",
                                str(tmp / "scenario.json"), str(budget + 10.0), str(stop), str(tmp / "report.json")],
                               stderr=open(tmp / "forward.err", "wb"))
        procs.append(fwd)
        cap = None
        if pcap:
            if shutil.which("tshark") is None:
                raise LiveError("--pcap needs tshark (make setup installs it)")
            ifaces = [a for p in layout["ports"] for a in ("-i", f"p{p['index']}")]
            cap = subprocess.Popen(["ip", "netns", "exec", FABRIC_NS, "tshark", "-q", "-f", pcap_filter, *ifaces, "-w", str(tmp / "capture.pcapng")],
                                   stdout=subprocess.DEVNULL, stderr=open(tmp / "tshark.err", "wb"))
            procs.append(cap)
        t0 = time.monotonic_ns() + int(setup_s * 1e9)
        plan = {"hosts": layout["hosts"], "flows": plan_flows, "t0_ns": t0, "warm_ns": int(warm_s * 1e9),
                "end_ns": t0 + int((last_start + drain_s + 1.0) * 1e9), "stop_file": str(tmp / "agents-stop"), "cc": CONGESTION_CONTROL}
        (tmp / "plan.json").write_text(json.dumps(plan))
        for h in layout["hosts"]:
            i = h["index"]
            procs.append(subprocess.Popen(["ip", "netns", "exec", f"{PREFIX}h{i}", sys.executable, "-m", "detailsim.live", "agent",
                                           str(tmp / "plan.json"), str(i), str(tmp / f"agent{i}.jsonl")],
                                          stderr=open(tmp / f"agent{i}.err", "wb")))
        say(f"replaying {len(plan_flows)} flows over {last_start:.3f} s of arrivals (+ up to {drain_s:g} s to finish)")
        deadline = t0 + int((last_start + drain_s) * 1e9)
        while time.monotonic_ns() < deadline:
            if fwd.poll() is not None:
                raise LiveError(f"the forwarder stopped: {(tmp / 'forward.err').read_text().strip()[-2000:]}")
            if all((tmp / f"agent{h['index']}.jsonl.done").exists() for h in layout["hosts"]):
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the last acknowledgements land
        (tmp / "agents-stop").write_text("stop\n")
        for p in procs[1:]:
            if p is cap:
                continue
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        stop.write_text("stop\n")
        try:
            fwd.wait(timeout=15)
        except subprocess.TimeoutExpired:
            fwd.kill()
        if cap is not None:
            cap.send_signal(signal.SIGINT)
            try:
                cap.wait(timeout=10)
            except subprocess.TimeoutExpired:
                cap.kill()
            if (tmp / "capture.pcapng").exists():
                shutil.copyfile(tmp / "capture.pcapng", pcap)
        if not (tmp / "report.json").exists():
            raise LiveError(f"the forwarder wrote no report: {(tmp / 'forward.err').read_text().strip()[-2000:]}")
        report = json.loads((tmp / "report.json").read_text())
        records: list[dict[str, Any]] = []
        for h in layout["hosts"]:
            f = tmp / f"agent{h['index']}.jsonl"
            if f.exists():
                records += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        cleanup()
        signal.signal(signal.SIGTERM, old_term)
        if os.environ.get("DETAILSIM_LIVE_KEEP"):
            say(f"kept the run's files in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    starts = {r["id"]: r for r in records if "start_ns" in r}
    rx_end = {r["id"]: r["rx_end_ns"] for r in records if "rx_end_ns" in r}
    flows = sim_res.flows
    ids = flows["id"].to_list()
    start, end, retr, late = [], [], [], []
    retrieval = {f["id"]: f["retrieval"] for f in plan_flows}
    for i in ids:
        r = starts.get(i)
        if r is None or "error" in r:
            start.append((r["start_ns"] - t0) / 1e9 if r else None)
            end.append(None)
            retr.append(0)
        else:
            e = r["end_ns"] if retrieval[i] else rx_end.get(i, r["end_ns"])
            start.append((r["start_ns"] - t0) / 1e9)
            end.append((e - t0) / 1e9)
            retr.append(int(r.get("retransmits", 0)))
        if r is not None:
            late.append(r["late_ns"] / 1e3)
    live = flows.with_columns(
        pl.Series("start", start, dtype=pl.Float64), pl.Series("end", end, dtype=pl.Float64),
        pl.Series("retransmits", retr, dtype=pl.UInt32), pl.lit(0, dtype=pl.UInt32).alias("timeouts"),
    ).with_columns((pl.col("end") - pl.col("start")).alias("fct"))
    live = live.with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"),
                             pl.when(pl.col("end").is_not_null()).then(pl.col("size")).otherwise(0).cast(pl.UInt64).alias("bytes_delivered"))
    fct: dict[str, Any] = {}
    done = live.filter(pl.col("fct").is_not_null())
    for cls in flows["class"].unique(maintain_order=True).to_list():
        v = done.filter(pl.col("class") == cls)["fct"].to_numpy()
        if len(v):
            fct[str(cls)] = fct_stats(np.sort(v))
    c = report["counters"]
    lossless_drops = c["ingress_drops_lossless"]
    lat = np.asarray(late) if late else np.zeros(1)
    summary = {
        "mode": "live",
        "scenario": name,
        "scheme": sim_res.summary["scheme"],
        "seed": sim_res.summary["seed"],
        "flows": {"started": int(sum(s is not None for s in start)), "completed": int(done.height), "planned": len(ids)},
        "fct": fct,
        "retransmits": int(sum(retr)),
        "pfc": {"pause_frames": c["pfc_frames"]},
        "ecn_marks": c["ecn_marks"],
        "drops": {"nic": c["nic_drops"], "ingress_lossy": c["ingress_drops_lossy"], "ingress_lossless": lossless_drops, "red": c["red_drops"]},
        "emulator": {
            "ring_drops": report["loop"]["ring_drops"],
            "send_failures": report["loop"]["send_failures"],
            "pacing_late_us": report["pacing_late_us"],
            "cpu_saturation": report["loop"]["busy_s"] / max(report["loop"]["wall_s"], 1e-9),
            "cpu_s": report["loop"]["cpu_s"], "wall_s": report["loop"]["wall_s"],
            "flow_start_late_us": {"p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)), "max": float(lat.max())},
            "counters": c,
        },
        "invariants": {"lossless": lossless_drops == 0, "lossless_drops": lossless_drops, "ring_drops": report["loop"]["ring_drops"] == 0},
    }
    ports = pl.DataFrame(report["ports"])
    return summary, live, ports, sim_res.summary


def problems(summary: dict[str, Any]) -> list[str]:
    """What makes a live run's numbers untrustworthy (each says why)."""
    out = []
    e = summary["emulator"]
    if e["ring_drops"]:
        out.append(f"{e['ring_drops']} frame(s) lost in the receive rings: the forwarder fell behind")
    if e["send_failures"]:
        out.append(f"{e['send_failures']} frame(s) could not be written to an interface")
    if summary["drops"]["ingress_lossless"]:
        out.append(f"{summary['drops']['ingress_lossless']} lossless frame(s) dropped at a switch ingress under PFC")
    if e["cpu_saturation"] > 0.95:
        out.append(f"the forwarder was busy {100 * e['cpu_saturation']:.0f}% of the time: pacing is not trustworthy")
    if summary["flows"]["completed"] < summary["flows"]["planned"]:
        out.append(f"{summary['flows']['planned'] - summary['flows']['completed']} of {summary['flows']['planned']} flows did not finish (raise --drain?)")
    return out


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"{'class':<22} {'count':>6} {'mean':>9} {'p50':>9} {'p99':>9} {'p99.9':>9} {'max':>9}   (ms, live)"]
    for cls, v in s["fct"].items():
        lines.append(f"{cls:<22} {v['count']:>6} {v['mean_ms']:>9.3f} {v['p50_ms']:>9.3f} {v['p99_ms']:>9.3f} {v['p999_ms']:>9.3f} {v['max_ms']:>9.3f}")
    e = s["emulator"]
    lines.append(f"scheme {s['scheme']}, seed {s['seed']}: {s['flows']['completed']}/{s['flows']['planned']} flows completed; "
                 f"PFC frames {s['pfc']['pause_frames']}, ECN marks {s['ecn_marks']}, retransmits {s['retransmits']}")
    lines.append(f"emulator: ring drops {e['ring_drops']}, pacing late p50/p99 {e['pacing_late_us']['p50']:.1f}/{e['pacing_late_us']['p99']:.1f} us, "
                 f"forwarder busy {100 * e['cpu_saturation']:.0f}%")
    return "\n".join(lines)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "agent":
        agent_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "forward":
        forward_main(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        raise SystemExit(f"unknown live subcommand {cmd}")
