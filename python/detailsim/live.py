"""Live mode: a scenario on real Linux TCP between network namespaces, switched by the simulator's components.

```text
  dsl-h<i> (one namespace per host: kernel TCP, CUBIC, ECN on)       dsl-fab (the fabric namespace)
    eth0 ══ veth ══ h<i> ─ NIC model (8 priorities, source ECN, obeys PAUSE) ─ p<hostport> ══ veth ══ p<switchport>
                                                        switch components (CIOQ, PFC, flow hash / ALB, ECN)
                                                        p<a> ══ veth ══ p<b>  (every switch-to-switch link)
```

One forwarding process (``detailsim._core.live_forward``) runs in ``dsl-fab`` and paces every port at the
scenario's rates; a Rust agent per host namespace (one epoll loop) replays the flows of the simulator's run of the same
scenario and seed (same arrivals, sizes, priorities) and times them. Everything created here is named
``dsl-*`` and is removed on exit, on Ctrl-C and by ``detailsim live --cleanup``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PREFIX = "dsl-"
FABRIC_NS = PREFIX + "fab"
SERVER_PORT = 5001
#: Above this a userspace-paced link is not what the scenario says on this machine (measured: about
#: 95 Mbps per link with real-time scheduling on 2 cores).
MAX_LINK_BPS = 200_000_000
CAP_NET_ADMIN = 12
#: The hosts' congestion control: Linux's "reno" is NewReno, the simulator's TCP (set per socket: this
#: kernel's default is BBR, and it has no DCTCP module, so DCTCP-family schemes run NewReno live).
CONGESTION_CONTROL = "reno"
#: How long the orchestrator waits for the forwarder and every agent to be listening.
READY_TIMEOUT_S = 60.0


def kernel_tcp(tcp: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The sysctls and route attributes that bring a host's kernel TCP as close to the scheme's TCP as Linux
    allows (docs/live.md, "Kernel TCP"): no SACK, RACK, tail-loss probes or F-RTO (the simulator's NewReno
    has none of them), the scheme's minimum RTO, initial window and ECN, no delayed ACKs unless the scheme
    has them, and for a reorder-resistant TCP (no fast retransmit) the largest duplicate-ACK threshold."""
    sysctls = ["net.ipv4.tcp_sack=0", "net.ipv4.tcp_recovery=0", "net.ipv4.tcp_early_retrans=0", "net.ipv4.tcp_frto=0",
               f"net.ipv4.tcp_ecn={1 if tcp['ecn'] else 0}", "net.ipv4.tcp_no_metrics_save=1"]
    if not tcp["fast_retransmit"]:
        sysctls.append("net.ipv4.tcp_reordering=300")
    rto_ms = max(1, math.ceil(tcp["rto_min_ms"]))
    route = ["rto_min", f"{rto_ms}ms", "initcwnd", str(tcp["initial_window"])]
    if not tcp["delayed_ack"]:
        route += ["quickack", "1"]
    return sysctls, route


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
    tcp_sysctls, tcp_route = kernel_tcp(layout["tcp"])
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
            *tcp_sysctls)
        _sh("ip", "-n", FABRIC_NS, "link", "add", f"h{h['index']}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        _sh("ip", "-n", ns, "link", "set", "eth0", "address", h["mac"], "mtu", "1500", "up")
        _sh("ip", "-n", ns, "link", "set", "lo", "up")
        _sh("ip", "-n", ns, "addr", "add", f"{h['ip']}/16", "dev", "eth0")
        _sh("ip", "-n", ns, "route", "replace", "10.77.0.0/16", "dev", "eth0", "proto", "kernel", "scope", "link", "src", h["ip"], *tcp_route)
        for o in hosts:
            if o["index"] != h["index"]:
                _sh("ip", "-n", ns, "neigh", "replace", o["ip"], "lladdr", o["mac"], "dev", "eth0", "nud", "permanent")
        _sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)
    names = [f"p{p['index']}" for p in ports] + [f"h{h['index']}" for h in hosts]
    for n in names:
        _sh("ip", "-n", FABRIC_NS, "link", "set", n, "up", "promisc", "on")
        _sh(*fab, "ethtool", "-K", n, "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)


# ---------------------------------------------------------------------------------------------- agent
# The agents are Rust (crates/py/src/agent.rs): one epoll loop per host namespace over non-blocking kernel
# TCP sockets, flow starts from a timerfd. Wire protocol between agents (one TCP connection carries one flow
# at a time, connections are reused):
#   retrieval: requester -> responder  b"R" + size (u32) + flow id (u32) + priority (u8): 10 bytes (the
#              paper's request); responder -> size bytes, at that priority
#   one-way:   sender -> receiver      b"W" + flow id (u64) + size (u64) + priority (u8): 18 bytes, then size
#              bytes; receiver -> b"A"
# Every socket is read with recvmsg and SO_TIMESTAMPNS, so each read also says when its last segment
# reached the host's kernel: the agents' own scheduling delay is measured, not guessed. Records (JSON lines):
#   requester / sender: id, start_ns, late_ns (start behind the plan), end_ns, end_kernel_ns, retransmits
#                       (or error); responder: id, respond_delay_ns; one-way receiver: id, rx_end_ns,
#                       rx_end_kernel_ns; warm_error, peer for a warm connection that never opened.
REQUEST_BYTES = 10
ONE_WAY_HEADER_BYTES = 18


def agent_main(plan_path: str, me: int, out: str) -> None:
    from . import _core

    _core.live_agent(plan_path, me, out)


def forward_main(scenario_path: str, deadline_s: float, stop_file: str, report: str, ready_file: str) -> None:
    from . import _core

    rep = _core.live_forward(Path(scenario_path).read_text(), deadline_s, stop_file, ready_file)
    Path(report).write_text(rep)


def _flows_plan(flows: Any) -> list[dict[str, Any]]:
    rows = []
    for r in flows.select("id", "class", "src", "dst", "size", "priority", "start").iter_rows(named=True):
        rows.append({"id": int(r["id"]), "src": int(r["src"]), "dst": int(r["dst"]), "size": int(r["size"]), "priority": int(r["priority"]),
                     "start": float(r["start"]), "retrieval": str(r["class"]).startswith("retrieval")})
    return rows


def run_live(sc: dict[str, Any], name: str, drain_s: float = 2.0, say: Any = print, pcap: str | None = None,
             pcap_filter: str = "ether proto 0x8808") -> tuple[dict[str, Any], Any, Any, Any]:
    """Run prepared scenario `sc` live. Returns (summary, flows, ports, the simulator's result of the same
    scenario and seed: `.summary`, `.flows`). With `pcap`, tshark captures what `pcap_filter` (a BPF capture filter; default: MAC control, i.e.
    PFC frames) selects on every fabric port into that pcapng file. Raises LiveError (code 2 without
    privileges). Everything it creates is gone when it returns."""
    import polars as pl

    from . import _core
    from .core.api import execute
    from .core.results import class_stats_of

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
        warm_s = 1.0
        # the forwarder's own deadline bounds it even if this process dies: start-up + arrivals + drain
        budget = READY_TIMEOUT_S + warm_s + last_start + drain_s
        fwd = subprocess.Popen(["ip", "netns", "exec", FABRIC_NS, sys.executable, "-m", "detailsim.live", "forward",
                                str(tmp / "scenario.json"), str(budget + 10.0), str(stop), str(tmp / "report.json"), str(tmp / "forward.ready")],
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
        plan = {"hosts": layout["hosts"], "flows": plan_flows, "warm_ns": int(warm_s * 1e9), "go_file": str(tmp / "go"),
                "stop_file": str(tmp / "agents-stop"), "cc": CONGESTION_CONTROL}
        (tmp / "plan.json").write_text(json.dumps(plan))
        agents = []
        for h in layout["hosts"]:
            i = h["index"]
            agents.append(subprocess.Popen(["ip", "netns", "exec", f"{PREFIX}h{i}", sys.executable, "-m", "detailsim.live", "agent",
                                            str(tmp / "plan.json"), str(i), str(tmp / f"agent{i}.jsonl")],
                                           stderr=open(tmp / f"agent{i}.err", "wb")))
        procs += agents
        # the clock starts only when the forwarder's rings are open and every host listens
        ready = [tmp / "forward.ready"] + [tmp / f"agent{h['index']}.jsonl.ready" for h in layout["hosts"]]
        give_up = time.monotonic() + READY_TIMEOUT_S
        def capturing() -> bool:  # tshark says so on stderr once its capture is open
            return cap is None or "Capturing on" in (tmp / "tshark.err").read_text(errors="replace")

        while not (all(r.exists() for r in ready) and capturing()):
            if fwd.poll() is not None:
                raise LiveError(f"the forwarder stopped: {(tmp / 'forward.err').read_text().strip()[-2000:]}")
            dead = [i for i, a in enumerate(agents) if a.poll() is not None]
            if dead:
                raise LiveError(f"the agent of host {dead[0]} stopped: {(tmp / f'agent{dead[0]}.err').read_text().strip()[-2000:]}")
            if time.monotonic() > give_up:
                missing = [r.name for r in ready if not r.exists()] + ([] if capturing() else ["tshark"])
                raise LiveError(f"the fabric was not ready after {READY_TIMEOUT_S:g} s (missing: {', '.join(missing)})")
            time.sleep(0.02)
        t0 = time.monotonic_ns() + int((warm_s + 0.2) * 1e9)
        (tmp / "go.tmp").write_text(json.dumps({"t0_ns": t0, "end_ns": t0 + int((last_start + drain_s + 1.0) * 1e9)}))
        (tmp / "go.tmp").rename(tmp / "go")
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
        for p in agents:
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
    rx_end = {r["id"]: r for r in records if "rx_end_ns" in r}
    respond = {r["id"]: r["respond_delay_ns"] for r in records if "respond_delay_ns" in r}
    flows = sim_res.flows
    ids = flows["id"].to_list()
    start, end, retr, late, host_delay = [], [], [], [], []
    retrieval = {f["id"]: f["retrieval"] for f in plan_flows}
    for i in ids:
        r = starts.get(i)
        if r is None or "error" in r:
            start.append((r["start_ns"] - t0) / 1e9 if r else None)
            end.append(None)
            retr.append(0)
            host_delay.append(None)
        else:
            if retrieval[i]:
                # the requester's wake-up after the response's last segment, and the responder's answer time
                e, hd = r["end_ns"], r["end_ns"] - r["end_kernel_ns"] + respond.get(i, 0)
            else:
                x = rx_end.get(i, {"rx_end_ns": r["end_ns"], "rx_end_kernel_ns": r["end_ns"]})
                e, hd = x["rx_end_ns"], x["rx_end_ns"] - x["rx_end_kernel_ns"]
            start.append((r["start_ns"] - t0) / 1e9)
            end.append((e - t0) / 1e9)
            retr.append(int(r.get("retransmits", 0)))
            host_delay.append(max(0, hd) / 1e9)
        if r is not None:
            late.append(r["late_ns"] / 1e3)
    live = flows.with_columns(
        pl.Series("start", start, dtype=pl.Float64), pl.Series("end", end, dtype=pl.Float64),
        pl.Series("retransmits", retr, dtype=pl.UInt32), pl.lit(0, dtype=pl.UInt32).alias("timeouts"),
        # live only: the part of the FCT the hosts' agents spent being scheduled (measured with the kernel's
        # receive timestamps), which the simulator's hosts do not have
        pl.Series("host_delay", host_delay, dtype=pl.Float64),
    ).with_columns((pl.col("end") - pl.col("start")).alias("fct"))
    live = live.with_columns((pl.col("fct") / pl.col("ideal")).alias("slowdown"),
                             pl.when(pl.col("end").is_not_null()).then(pl.col("size")).otherwise(0).cast(pl.UInt64).alias("bytes_delivered"))
    fct: dict[str, Any] = {}
    done = live.filter(pl.col("fct").is_not_null())
    # an unfinished flow had run at least until the last completion seen (a lower bound on its FCT)
    last = float(done["end"].max()) if done.height else 0.0
    live = live.with_columns(pl.when(pl.col("fct").is_not_null()).then(pl.col("fct"))
                             .otherwise((last - pl.col("start").fill_null(last)).clip(lower_bound=0.0)).alias("fct_lower"))
    for cls in flows["class"].unique(maintain_order=True).to_list():
        g = live.filter(pl.col("class") == cls)
        if g.height:
            fct[str(cls)] = class_stats_of(g)
    c = report["counters"]
    lossless_drops = c["ingress_drops_lossless"]
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
            "flow_start_late_us": _pcts(late),
            "host_delay_us": _pcts(done["host_delay"].drop_nulls().to_numpy() * 1e6),
            "counters": c,
        },
        "invariants": {"lossless": lossless_drops == 0, "lossless_drops": lossless_drops, "ring_drops": report["loop"]["ring_drops"] == 0},
    }
    ports = pl.DataFrame(report["ports"])
    summary["emulator"]["link_rate_achieved"] = link_rate_achieved(ports)
    return summary, live, ports, sim_res


# a port's achieved rate counts once it sent this long back to back (a few frames are noise)
BACKLOGGED_MIN_S = 0.005
# below this share of its configured rate a backlogged link makes the run's timing untrustworthy
LINK_RATE_FLOOR = 0.9


def link_rate_achieved(ports: Any) -> dict[str, Any] | None:
    """The slowest link while backlogged (`backlogged_rate_bps` / `rate_bps`, over ports that sent at least
    `BACKLOGGED_MIN_S` back to back): the pacer falls behind its rate when the forwarder is descheduled (a
    machine busy with other work), which the FCTs then carry. None: no port was backlogged that long."""
    import polars as pl

    busy = ports.filter(pl.col("backlogged_rate_bps").is_not_null() & (pl.col("backlogged_s") >= BACKLOGGED_MIN_S))
    if busy.height == 0:
        return None
    busy = busy.with_columns((pl.col("backlogged_rate_bps") / pl.col("rate_bps")).alias("share")).sort("share")
    r = busy.row(0, named=True)
    return {"node": r["node"], "peer": r["peer"], "share": float(r["share"])}


def _pcts(x: Any) -> dict[str, float]:
    import numpy as np

    x = np.asarray(x) if len(x) else np.zeros(1)
    return {"p50": float(np.percentile(x, 50)), "p99": float(np.percentile(x, 99)), "max": float(x.max())}


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
    slow = e.get("link_rate_achieved")
    if slow and slow["share"] < LINK_RATE_FLOOR:
        out.append(f"link {slow['node']} -> {slow['peer']} ran at {100 * slow['share']:.0f}% of its rate while backlogged (pacing late "
                   f"p99 {e['pacing_late_us']['p99']:.0f} us): the forwarder was descheduled, the FCTs carry it (run on an idle machine)")
    if summary["flows"]["completed"] < summary["flows"]["planned"]:
        out.append(f"{summary['flows']['planned'] - summary['flows']['completed']} of {summary['flows']['planned']} flows did not finish (raise --drain?)")
    return out


def format_summary(s: dict[str, Any]) -> str:
    from .core.results import fct_table

    lines = fct_table(s["fct"], "ms, live")
    e = s["emulator"]
    lines.append(f"scheme {s['scheme']}, seed {s['seed']}: {s['flows']['completed']}/{s['flows']['planned']} flows completed; "
                 f"PFC frames {s['pfc']['pause_frames']}, ECN marks {s['ecn_marks']}, retransmits {s['retransmits']}")
    lines.append(f"emulator: ring drops {e['ring_drops']}, pacing late p50/p99 {e['pacing_late_us']['p50']:.1f}/{e['pacing_late_us']['p99']:.1f} us, "
                 f"forwarder busy {100 * e['cpu_saturation']:.0f}%, host delay in FCTs p50/p99 {e['host_delay_us']['p50']:.0f}/{e['host_delay_us']['p99']:.0f} us")
    return "\n".join(lines)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "agent":
        agent_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "forward":
        forward_main(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    else:
        raise SystemExit(f"unknown live subcommand {cmd}")
