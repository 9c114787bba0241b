"""How much 2, 4, 8 or 16 cores could give a run, at best: the bound behind docs/benchmarks.md's "a parallel
core".

A conservative parallel simulation splits the fabric in n parts (here: pods in n equal groups, each with
its hosts, and the core switches in n equal groups; n at most the number of pods) and advances every
part one window at a
time, a window as long as the smallest delay between a frame leaving one half and arriving in the other
(the aggregation-core links' delay plus the forwarding delay: only those links cross a cut between
pods): nothing one half does within a window can reach the other half
before the window ends. Each window then costs the busiest part's work, so with frames sent as the
measure of work the best speed-up is

    frames in all / sum over windows of max over parts of the frames that part sent

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
from detailsim.core.scenario import duration_seconds

# The core's defaults when a scenario leaves them out (`topology::DEFAULT_DELAY`, `DEFAULT_FORWARDING_DELAY`).
DEFAULT_LINK_DELAY = "5.476us"
DEFAULT_FORWARDING_DELAY = "4.224us"


def lookahead_ps(topo: dict) -> int:
    """The cut's smallest delay from a frame's end on the wire to its arrival past the forwarding engine.
    Splitting by pods, only aggregation-core links cross the cut, so their tier's delay counts."""
    tier = topo.get("tiers", {}).get("agg_core", {})
    link = tier.get("delay", topo.get("link_delay", DEFAULT_LINK_DELAY))
    fwd = topo.get("forwarding_delay", DEFAULT_FORWARDING_DELAY)
    return round((duration_seconds(link, "topology.link_delay") + duration_seconds(fwd, "topology.forwarding_delay")) * 1e12)


def part_of(names: list[str], parts: int) -> np.ndarray | None:
    """Per node, its part of `parts` (pods and cores in equal groups); None when there are fewer pods."""
    pods = 1 + max(int(n[3:].split("_")[0]) for n in names if n.startswith("agg"))
    if parts > pods:
        return None
    cores = sum(n.startswith("core") for n in names)
    hosts = sum(n.startswith("h") for n in names)
    per_pod = hosts // pods
    part = []
    for n in names:
        if n.startswith("core"):
            part.append(int(n[4:]) * parts // cores)
        elif n.startswith(("tor", "agg")):
            part.append(int(n[3:].split("_")[0]) * parts // pods)
        else:
            part.append(int(n[1:]) // per_pod * parts // pods)
    return np.array(part, dtype=np.int16)


def side_of(names: list[str]) -> np.ndarray:
    """Two parts (see `part_of`)."""
    side = part_of(names, 2)
    assert side is not None
    return side.astype(np.int8)


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
    # n parts: each window costs its busiest part's frames
    more: dict[str, float | None] = {}
    for n in (4, 8, 16):
        part = part_of(names, n)
        if part is None:
            more[f"best_speedup_{n}_cores"] = None
            continue
        load = np.zeros((len(windows), n), dtype=np.int64)
        wi = np.searchsorted(np.array(windows), w)
        np.add.at(load, (wi, part[frm]), 1)
        more[f"best_speedup_{n}_cores"] = round(len(t) / max(int(load.max(axis=1).sum()), 1), 2)
        more[f"crossing_the_cuts_pct_{n}"] = round(100.0 * float((part[frm] != part[to]).mean()), 1)
    return {
        "scenario": path,
        "lookahead_us": lookahead / 1e6,
        "frames": int(len(t)),
        "frames_by_half": [int((side[frm] == 0).sum()), int((side[frm] == 1).sum())],
        "crossing_the_cut_pct": round(100.0 * float((side[frm] != side[to]).mean()), 1),
        "windows": len(windows),
        "frames_per_window": round(len(t) / max(len(windows), 1)),
        "best_speedup_2_cores": round(len(t) / max(busiest, 1), 2),
        **more,
    }


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print(json.dumps(bound(p)))
