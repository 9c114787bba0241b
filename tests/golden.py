"""Golden flow tables: a hash of the core's raw flow columns (little-endian integers, so no float formatting
or library version enters it) and its main counters, for every scheme preset and a few paper scenarios.

A refactor of the core must keep every hash (issue 13: "a refactor keeps results byte-identical");
`tests/test_golden.py` checks them in every `make test`. A change that is meant to move results updates
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
    return out


def fingerprint(scenario: Any, overrides: dict[str, Any]) -> dict[str, Any]:
    """The hash of one run's raw flow columns, with counters that make a mismatch easy to read."""
    from detailsim import _core
    from detailsim.scenario import prepare

    kw = dict(overrides)
    sc, _ = prepare(scenario, scheme=kw.pop("scheme", None), duration=kw.pop("duration", None))
    sim = _core.Simulation(json.dumps(sc))
    sim.run_until(float("inf"))
    cols = sim.flow_columns()
    h = hashlib.sha256()
    for k in sorted(cols):
        h.update(k.encode())
        h.update(cols[k])
    s = json.loads(sim.summary_json())
    return {"flows_sha256": h.hexdigest(), "flows": s["flows"]["started"], "events": s["events"],
            "link_traversals": s["link_traversals"], "drops": sum(s["drops"].values()), "timeouts": s["timeouts"]}


def compute() -> dict[str, dict[str, Any]]:
    return {name: fingerprint(sc, ov) for name, (sc, ov) in cases().items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite tests/data/golden_flows.json")
    a = ap.parse_args()
    now = compute()
    if a.update:
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(now)} fingerprints to {GOLDEN}")
        return
    old = json.loads(GOLDEN.read_text())
    bad = [k for k in sorted(set(old) | set(now)) if old.get(k) != now.get(k)]
    for k in bad:
        print(f"{k}: was {old.get(k)}, now {now.get(k)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
