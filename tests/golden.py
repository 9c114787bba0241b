"""Golden flow tables: a hash of the core's raw flow columns (little-endian integers, so no float formatting
or library version enters it) and its main counters, for every scheme preset and a few paper scenarios.

A refactor of the core must keep every hash (issue 13: "a refactor keeps results byte-identical");
`tests/test_golden.py` checks them in every `make test`, and every bundled scenario x scheme preset
(`matrix_cases`, in the node order). A change that is meant to move results updates
them, in the same commit, with

    .venv/bin/python tests/golden.py --update

and says why in the commit message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "data" / "golden_flows.json"
# every bundled scenario x every scheme preset, short, in the node order (issue 35: the redesign of the
# fabric keeps these; the only allowed change of results is the switch of the default order)
MATRIX = Path(__file__).parent / "data" / "golden_matrix.json"
MATRIX_RUN = {"duration": "2ms", "drain": "20ms"}
# scenarios whose arrivals are too sparse to start a flow in 2 ms
MATRIX_DURATION = {"paper/pias_memcached": "20ms", "paper/pias_testbed": "20ms"}

SMALL = {"run": {"duration": "3ms", "drain": "50ms", "seed": 7}, "topology": {"kind": "fattree", "k": 4, "buffer": "128KB"},
         "workload": [{"kind": "retrieval", "rate": 4000, "sizes": ["2KB", "8KB", "64KB"]},
                      {"kind": "background", "size": "256KB", "priority": 1}]}


def cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    """name -> (scenario, overrides): every preset on a small loaded fat tree, a fault, and paper scenarios."""
    from detailsim import _core

    out: dict[str, tuple[Any, dict[str, Any]]] = {}
    for name, _ in _core.presets():
        sc = json.loads(json.dumps(SMALL))
        sc["scheme"] = {"preset": name}
        if name in ("pias", "detail_pias"):
            sc["scheme"]["tcp"] = {"mlfq_thresholds": ["10KB", "100KB"]}
            sc["scheme"]["pfc"] = {"priorities": [0, 1, 2, 3]} if name == "detail_pias" else {}
        out[f"fattree4/{name}"] = (sc, {})
    faulty = json.loads(json.dumps(SMALL))
    faulty["scheme"] = {"preset": "detail"}
    faulty["fault"] = [{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps", "at": "1ms"}]
    out["fattree4/detail+degraded"] = (faulty, {})
    for name, dur in [("paper/steady", "5ms"), ("paper/bursty", "5ms"), ("paper/pias_websearch", "2ms"), ("paper/dibs", "5ms"),
                      ("examples/dumbbell", "5ms"), ("paper/sequential", "5ms")]:
        out[name] = (name, {"duration": dur})
    out["paper/steady:detail"] = ("paper/steady", {"duration": "5ms", "scheme": "detail"})
    # shared-buffer switches (`[topology.shared_buffer]`, fabric/shared.rs): lossy and lossless, DIBS's
    # detour through the MMU, pFabric's admission, and the RoCE controllers; a pool small enough to refuse
    for name in ("dctcp", "dibs", "pfabric", "detail", "dcqcn", "hpcc"):
        sc = json.loads(json.dumps(SMALL))
        sc["topology"]["shared_buffer"] = {"size": "300KB" if name in ("detail", "dcqcn", "hpcc") else "40KB"}
        sc["scheme"] = {"preset": name}
        out[f"fattree4-shared/{name}"] = (sc, {})
    return out


def matrix_cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    """name -> (scenario, overrides): every bundled scenario with every scheme preset (`MATRIX_RUN`)."""
    from detailsim import _core
    from detailsim.core.scenario import bundled_scenarios

    def run(sc: str) -> dict[str, Any]:
        return {f"run.{k}": v for k, v in {**MATRIX_RUN, "duration": MATRIX_DURATION.get(sc, MATRIX_RUN["duration"])}.items()}

    return {f"{sc}:{scheme}": (sc, {"scheme": scheme, "overrides": run(sc)}) for sc in sorted(bundled_scenarios()) for scheme, _ in _core.presets()}


# `--threads auto`: every case as run.threads says (with DETAILSIM_FREE_CORES=2, "auto" splits every case that
# can be split); `--threads N`: every case split in N parts, but those a split run refuses (an incast that
# repeats, fewer hosts than parts), which are listed: the fingerprints must be the one-thread ones
THREADS: Any = None


def fingerprint(scenario: Any, overrides: dict[str, Any]) -> dict[str, Any] | None:
    """The hash of one run's raw flow columns, with counters that make a mismatch easy to read; None for a
    case that `--threads N` asks to split and a split run refuses."""
    from detailsim import _core
    from detailsim.core.scenario import prepare

    kw = dict(overrides)
    sc, _ = prepare(scenario, scheme=kw.pop("scheme", None), duration=kw.pop("duration", None), overrides=kw.pop("overrides", None))
    if THREADS is not None:
        sc.setdefault("run", {})["threads"] = THREADS
    try:
        sim = _core.Simulation(json.dumps(sc))
    except _core.ScenarioError as e:
        if not isinstance(THREADS, int) or THREADS < 2:
            raise
        print(f"refused: {scenario} {overrides.get('scheme')}: {e}")
        return None
    sim.run_until(float("inf"))
    cols = sim.flow_columns()
    check_slowdown(cols, f"{scenario} {overrides}")
    h = hashlib.sha256()
    for k in sorted(cols):
        if k == "input_id":
            continue  # the input's own labelling of its rows, not a result (tests/test_formats.py checks it)
        h.update(k.encode())
        h.update(cols[k])
    s = json.loads(sim.summary_json())
    return {"flows_sha256": h.hexdigest(), "flows": s["flows"]["started"], "events": s["events"],
            "link_traversals": s["link_traversals"], "drops": sum(s["drops"].values()), "timeouts": s["timeouts"]}


def check_slowdown(cols: dict[str, bytes], what: str) -> None:
    """Every finished flow took at least its ideal FCT (issue 48: the ideal is its time alone in the fabric,
    so a slowdown below 1 is a wrong ideal); workflows (ideal 0) and unfinished flows are left out."""
    import numpy as np

    start, end, ideal = (np.frombuffer(cols[k], dtype="<u8") for k in ("start_ps", "end_ps", "ideal_ps"))
    done = (end != np.iinfo(np.uint64).max) & (ideal > 0)
    low = np.flatnonzero(done & (end - np.where(done, start, 0) < ideal))
    assert low.size == 0, (f"{what}: {low.size} flows finished faster than their ideal FCT, e.g. size "
                           f"{int(np.frombuffer(cols['size'], dtype='<u8')[low[0]])} B in {int(end[low[0]] - start[low[0]])} ps, ideal {int(ideal[low[0]])} ps")


def compute() -> dict[str, dict[str, Any]]:
    return {name: fingerprint(sc, ov) for name, (sc, ov) in cases().items()}


def compute_matrix() -> dict[str, dict[str, Any]]:
    return {name: fingerprint(sc, ov) for name, (sc, ov) in matrix_cases().items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite tests/data/golden_flows.json and golden_matrix.json")
    ap.add_argument("--threads", help='run every case with this run.threads (a number or "auto"), against the same fingerprints')
    a = ap.parse_args()
    if a.update and a.threads is not None:
        ap.error("--update records the one-thread fingerprints: leave out --threads")
    if a.threads is not None:
        global THREADS
        THREADS = int(a.threads) if a.threads.isdigit() else a.threads
    bad = []
    for path, now in ((GOLDEN, compute()), (MATRIX, compute_matrix())):
        if a.update:
            path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
            print(f"wrote {len(now)} fingerprints to {path}")
            continue
        old = json.loads(path.read_text())
        for k in sorted(set(old) | set(now)):
            if now.get(k, {}) is not None and old.get(k) != now.get(k):
                bad.append(k)
                print(f"{k}: was {old.get(k)}, now {now.get(k)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
