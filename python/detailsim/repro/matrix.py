"""Lossless PFC across the bundled scenarios: every scenario with every lossless preset (detail, lps, dcqcn,
hpcc) at 1, 10, 25 and 100 Gbps on its own buffers. A case either fits (the default lossless priorities,
the ones its workloads use, hold their PFC headroom), or the core's message names the smallest ingress
buffer that would, and the case is built (and, with a run time, run) again with that buffer.

    .venv/bin/python -m detailsim.repro.matrix [--run 1ms] [--rates 1Gbps,10Gbps,25Gbps,100Gbps] [--markdown] [--update-docs]

prints one row per case (exit 1 if any case fails: refused, not built with the buffer named, or not
lossless); `tests/test_presets.py` runs the 1 and 10 Gbps slice in `make test`, and `--update-docs` (from
the project root) writes the whole matrix to docs/validation/lossless_matrix.json and its table to
docs/validation.md ("Lossless priorities that fit")."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from .._core import ScenarioError
from ..core.scenario import bundled_scenarios, prepare

LOSSLESS_PRESETS = ("detail", "lps", "dcqcn", "hpcc")
DOC, DOC_JSON, BLOCK = "docs/validation.md", "docs/validation/lossless_matrix.json", "lossless-matrix"
SOURCE = "docs/validation/lossless_matrix.json by `python -m detailsim.repro.matrix --update-docs`"
RATES = ("1Gbps", "10Gbps", "25Gbps", "100Gbps")
_NEED = re.compile(r"ingress buffer of .* \((\d+) B\) is too small for lossless PFC.*the smallest buffer that holds them is (\d+) B")
# a shared-buffer switch whose pool the PFC headroom of its lossless priorities would fill
_NEED_POOL = re.compile(r"topology\.shared_buffer\.size: (\d+) B leave no shared pool .* PFC headroom take (\d+) B")


def _build(sc: dict[str, Any], run_for: str | None) -> dict[str, Any]:
    from .. import _core

    if run_for is None:
        _core.Simulation(json.dumps(sc))
        return {}
    sc = {**sc, "run": {**sc.get("run", {}), "duration": run_for, "drain": "20ms", "threads": 1}}
    sim = _core.Simulation(json.dumps(sc))
    sim.run_until(float("inf"))
    s = json.loads(sim.summary_json())
    return {"lossless": s["invariants"]["lossless"], "congestion_drops": s["congestion_drops"], "flows": s["flows"]["completed"]}


def lossless_case(name: str, scheme: str, rate: str, run_for: str | None = "1ms") -> dict[str, Any]:
    """One case: `status` "fits" (built, and run for `run_for` if given), "needs" (the message named
    `smallest_buffer_bytes`; `with_it` says whether the case builds with that buffer), or "refused" (any
    other error, in `error`)."""
    sc, _ = prepare(name, scheme=scheme, overrides={"topology.link_rate": rate})
    row: dict[str, Any] = {"scenario": name, "scheme": scheme, "rate": rate}
    try:
        return {**row, "status": "fits", **_build(sc, run_for)}
    except ScenarioError as e:
        m, pool = _NEED.search(str(e)), _NEED_POOL.search(str(e))
        if m is None and pool is None:
            return {**row, "status": "refused", "error": str(e)}
    if m is not None:
        have, need = int(m.group(1)), int(m.group(2))
        topo = sc["topology"]
        key = "ingress_buffer" if "ingress_buffer" in topo else "buffer"
        build_with = need
    else:
        # the pool must exceed the headroom set aside (its smallest, one byte more); it is built with the
        # scenario's pool on top, so that its shared part stays what the scenario gave
        have, headroom = int(pool.group(1)), int(pool.group(2))
        key, need, build_with = "shared_buffer.size", headroom + 1, headroom + have
    bigger, _ = prepare(name, scheme=scheme, overrides={"topology.link_rate": rate, f"topology.{key}": f"{build_with}B"})
    row.update(status="needs", buffer_bytes=have, smallest_buffer_bytes=need, key=f"topology.{key}")
    if build_with != need:
        row["built_with_bytes"] = build_with
    try:
        return {**row, "with_it": "builds", **_build(bigger, run_for)}
    except ScenarioError as e:
        return {**row, "with_it": f"refused: {e}"}


def matrix(rates: tuple[str, ...] = RATES, run_for: str | None = "1ms") -> list[dict[str, Any]]:
    return [lossless_case(n, s, r, run_for) for n in sorted(bundled_scenarios()) for s in LOSSLESS_PRESETS for r in rates]


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per scenario and rate: what each preset needed (✓: its own buffers; a size: the smallest buffer the
    message named, with which it ran)."""
    out = ["| scenario | rate | " + " | ".join(LOSSLESS_PRESETS) + " |", "|---|---|" + "---|" * len(LOSSLESS_PRESETS)]
    cell = {(r["scenario"], r["rate"], r["scheme"]): r for r in rows}
    for name in sorted({r["scenario"] for r in rows}):
        for rate in [x for x in RATES if any(r["rate"] == x for r in rows)]:
            cs = []
            for s in LOSSLESS_PRESETS:
                r = cell[(name, rate, s)]
                ok = r.get("lossless", True) and r.get("congestion_drops", 0) == 0
                if r["status"] == "fits":
                    cs.append("✓" if ok else "✗ lost packets")
                elif r["status"] == "needs" and r["with_it"] == "builds":
                    cs.append(f"{r['key']} ≥ {r['smallest_buffer_bytes'] / 1024:.0f} KB"
                              + (f" (ran with {r['built_with_bytes'] / 1024:.0f} KB)" if "built_with_bytes" in r else "")
                              + ("" if ok else " ✗"))
                else:
                    cs.append("✗ " + r.get("error", r.get("with_it", "")))
            out.append(f"| {name} | {rate} | " + " | ".join(cs) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", default="1ms", help='run each case this long after building it ("0" to build only)')
    ap.add_argument("--rates", default=",".join(RATES))
    ap.add_argument("--markdown", action="store_true", help="print the Markdown table (default: one JSON object per case)")
    ap.add_argument("--update-docs", action="store_true", help="write docs/validation/lossless_matrix.json and the table in docs/validation.md")
    a = ap.parse_args()
    rows = matrix(tuple(a.rates.split(",")), None if a.run == "0" else a.run)
    if a.update_docs:
        from pathlib import Path

        from .docblocks import write_generated

        write_generated(Path("."), DOC, DOC_JSON, BLOCK, rows, markdown(rows), SOURCE)
    if a.markdown:
        print(markdown(rows))
    else:
        for r in rows:
            print(json.dumps(r))
    bad = [r for r in rows if r["status"] == "refused" or (r["status"] == "needs" and r["with_it"] != "builds")
           or r.get("lossless") is False or r.get("congestion_drops", 0) > 0]
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
