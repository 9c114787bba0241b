"""How much two cores could give a run, at best: the bound behind docs/benchmarks.md's "a parallel core".

A conservative parallel simulation splits the fabric in two (here: the first half of the pods with their
hosts and the first half of the core switches, and the rest) and advances both halves one window at a
time, a window as long as the smallest delay between a frame leaving one half and arriving in the other
(the aggregation-core links' delay plus the forwarding delay: only those links cross a cut between
pods): nothing one half does within a window can reach the other half
before the window ends. Each window then costs the larger half's work, so with frames sent as the
measure of work the best speed-up is

    frames in all / sum over windows of max(frames sent in half A, frames sent in half B)

before any cost of synchronizing. Frames are counted from a packet trace of every node.

    .venv/bin/python benches/partition_bound.py DIR/scenario.json [...]

where DIR/scenario.json is written by `detailsim run paper/steady --scheme fh [--set ...] --out DIR`.
Fat trees only (node names `h<i>`, `tor<p>_<t>`, `agg<p>_<a>`, `core<c>`).
"""

from __future__ import annotations

import json
import sys
from collections import Counter

import numpy as np

from detailsim import _core
from detailsim.cli import _core_duration

# The core's defaults when a scenario leaves them out (`topology::DEFAULT_DELAY`, `DEFAULT_FORWARDING_DELAY`).
DEFAULT_LINK_DELAY = "5.476us"
DEFAULT_FORWARDING_DELAY = "4.224us"


def lookahead_ps(topo: dict) -> int:
    """The cut's smallest delay from a frame's end on the wire to its arrival past the forwarding engine.
    Splitting by pods, only aggregation-core links cross the cut, so their tier's delay counts."""
    tier = topo.get("tiers", {}).get("agg_core", {})
    link = tier.get("delay", topo.get("link_delay", DEFAULT_LINK_DELAY))
    fwd = topo.get("forwarding_delay", DEFAULT_FORWARDING_DELAY)
    return round((_core_duration(link, "topology.link_delay") + _core_duration(fwd, "topology.forwarding_delay")) * 1e12)


def side_of(names: list[str]) -> np.ndarray:
    pods = 1 + max(int(n[3:].split("_")[0]) for n in names if n.startswith("agg"))
    cores = sum(n.startswith("core") for n in names)
    hosts = sum(n.startswith("h") for n in names)
    per_pod = hosts // pods
    side = []
    for n in names:
        if n.startswith("core"):
            side.append(int(n[4:]) >= cores // 2)
        elif n.startswith(("tor", "agg")):
            side.append(int(n[3:].split("_")[0]) >= pods // 2)
        else:
            side.append(int(n[1:]) // per_pod >= pods // 2)
    return np.array(side, dtype=np.int8)


def bound(path: str) -> dict:
    with open(path) as f:
        sc = json.load(f)
    lookahead = lookahead_ps(sc.get("topology", {}))
    sim = _core.Simulation(json.dumps(sc))
    core = json.loads(sim.summary_json())
    # node indices in port order (a node's ports are contiguous, numbered from its first)
    names = list(dict.fromkeys(p["node"] for p in core["ports"]))
    sim.set_trace(json.dumps({"flows": [], "nodes": names, "ports": []}))
    while not sim.run_until(sim.end_limit_s):
        pass
    tr = sim.trace_columns()
    t = np.frombuffer(tr["t_ps"], dtype="<u8")
    frm = np.frombuffer(tr["from"], dtype="<u4")
    to = np.frombuffer(tr["to"], dtype="<u4")
    side = side_of(names)
    w = t // lookahead
    per = Counter(zip(w.tolist(), side[frm].tolist()))
    windows = sorted({k[0] for k in per})
    busiest = sum(max(per.get((x, 0), 0), per.get((x, 1), 0)) for x in windows)
    return {
        "scenario": path,
        "lookahead_us": lookahead / 1e6,
        "frames": int(len(t)),
        "frames_by_half": [int((side[frm] == 0).sum()), int((side[frm] == 1).sum())],
        "crossing_the_cut_pct": round(100.0 * float((side[frm] != side[to]).mean()), 1),
        "windows": len(windows),
        "frames_per_window": round(len(t) / max(len(windows), 1)),
        "best_speedup_2_cores": round(len(t) / max(busiest, 1), 2),
    }


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print(json.dumps(bound(p)))
