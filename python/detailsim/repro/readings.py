"""The other readings of the DeTail paper's open choices, declared before any of them ran (issue 49;
docs/reproduction.md, "Across the readings"): every held-out DeTail claim is graded under the adopted
model and under each reading here, and the docs show whether it is reproduced under all, some or none.

A reading is a set of scenario keys, run by ``detailsim reproduce all --reading NAME --out DIR`` on the
reproductions whose scenario has them; ``--update-docs`` writes its claims to
``docs/reproduction/readings/NAME.json`` and the table is regenerated from those files and the adopted
claims (docs/reproduction/claims.json).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the calibration's points within this distance of the best (mean |log2|) are readings
CAL_WITHIN = 0.1
READINGS_DIR = Path("docs/reproduction/readings")
READINGS_SOURCE = "docs/reproduction/readings/*.json and docs/reproduction/claims.json by `detailsim reproduce --update-docs`"


@dataclass(frozen=True)
class Reading:
    name: str
    set: dict[str, Any]
    why: str
    # the DeTail scenarios that have the reading's keys (None: every one)
    scenarios: tuple[str, ...] | None = None
    # the calibration grid's keys it changes from the adopted point (empty: not a grid reading)
    grid: dict[str, Any] = field(default_factory=dict)


READINGS: dict[str, Reading] = {r.name: r for r in [
    Reading("rto_linux", {"scheme.tcp.rto_formula": "linux"},
            "calibration rank 2, within 0.1 of the best: Linux's RTO formula (SRTT + max(RTOmin, 4 RTTVAR))",
            grid={"scheme.tcp.rto_formula": "linux"}),
    Reading("fh_ingress_shared", {"scheme.ingress_sharing": "shared"},
            "calibration rank 3, within 0.1 of the best, and the FH ingress the text leaves open: one shared 128 KB, drop-tail",
            grid={"scheme.ingress_sharing": "shared"}),
    Reading("rto_linux_fh_ingress_shared", {"scheme.tcp.rto_formula": "linux", "scheme.ingress_sharing": "shared"},
            "calibration rank 4, within 0.1 of the best at the table's three decimals in the run after the change of tie "
            "order (outside, at 0.432, in the run before it): Linux's RTO formula and FH's ingress one shared 128 KB together",
            grid={"scheme.tcp.rto_formula": "linux", "scheme.ingress_sharing": "shared"}),
    Reading("egress_eighths", {"scheme.egress_sharing": "eighths"},
            "the egress division the text leaves open: a priority's part is an eighth of the port's 128 KB"),
    Reading("frontends_first", {"workload.0.frontend_layout": "first"},
            "the front-end placement the text leaves open: the first half of the servers (pods 0-1)",
            scenarios=("sequential", "partition_aggregate")),
]}


def reading_of(arg: str) -> Reading | None:
    return READINGS.get(arg)


def is_detail(base: str) -> bool:
    from .claims import DETAIL_SCENARIOS

    return base.removeprefix("paper/") in DETAIL_SCENARIOS


def applies(reading: Reading, base: str) -> bool:
    """Whether the reading's keys are in the scenario `base` (a DeTail scenario, and one of its own)."""
    return is_detail(base) and (reading.scenarios is None or base.removeprefix("paper/") in reading.scenarios)


def reproductions_for(repros: dict[str, Any], scenarios: tuple[str, ...] | None = None) -> list[str]:
    """The reproductions (of `repros`, detailsim.repro.reproduce.REPROS) a reading runs: those with claims (or
    whose store another's claims read) on a DeTail scenario (`scenarios`: only these), in their order;
    never the calibration."""
    from .claims import DETAIL_SCENARIOS

    used = {u for r in repros.values() if r.claims for u in r.uses}
    out = []
    for n, r in repros.items():
        s = r.base.removeprefix("paper/")
        if n == "calibrate" or s not in DETAIL_SCENARIOS or (scenarios is not None and s not in scenarios):
            continue
        if r.claims or n in used:
            out.append(n)
    return out


def within_best(points: list[dict[str, Any]], within: float = CAL_WITHIN) -> list[dict[str, Any]]:
    """The calibration's points (docs/reproduction/calibration.json, best first) other than the best whose
    background meets its reading and whose distance is within `within` of the best's."""
    ok = [p for p in points if p.get("bg_ok", True)]
    best = ok[0]["distance"]
    # at the table's three decimals, the precision at which the ranking calls two distances a tie
    return [p for p in ok[1:] if round(p["distance"], 3) <= round(best + within, 3)]


def merge_reading(kept: list[dict[str, Any]], fresh: list[dict[str, Any]], ran: list[str], order: list[str]) -> list[dict[str, Any]]:
    """A reading's stored claims after a run of the reproductions `ran`: their claims (`fresh`) replace the
    ones stored for those experiments, the others' stay; in the reproductions' `order`."""
    out = [c for c in kept if c["experiment"] not in ran] + fresh
    rank = {n: i for i, n in enumerate(order)}
    return sorted(out, key=lambda c: rank.get(c["experiment"], len(rank)))


def load_readings(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Each declared reading's stored claims (READINGS order), where it has been run."""
    d = root / READINGS_DIR
    return {n: json.loads((d / f"{n}.json").read_text()) for n in READINGS if (d / f"{n}.json").exists()}


def readings_rows(adopted: list[dict[str, Any]], runs: dict[str, list[dict[str, Any]]], bases: dict[str, str]) -> list[dict[str, Any]]:
    """Per held-out claim of the DeTail experiments the readings run: its verdict under the adopted model and
    under each reading (the adopted verdict where the reading's key is not in its scenario, marked
    `same`; None where the reading has not been run), and `under`: all, some or none of those graded.
    `bases`: each experiment's base scenario."""
    rows = []
    for c in adopted:
        if c["label"] != "held out" or c["experiment"] not in bases:
            continue
        base = bases[c["experiment"]]
        if not is_detail(base):
            continue
        row: dict[str, Any] = {"id": c["id"], "claim": c["claim"], "adopted": c["verdict"], "resolve": c.get("resolve"), "by": {}}
        for n, r in READINGS.items():
            if not applies(r, base):
                row["by"][n] = {"verdict": c["verdict"], "same": True}
            elif n in runs:
                m = next((x for x in runs[n] if x["id"] == c["id"]), None)
                row["by"][n] = {"verdict": m["verdict"], "same": False, "resolve": m.get("resolve")} if m else None
            else:
                row["by"][n] = None
        verdicts = [row["adopted"], *[v["verdict"] for v in row["by"].values() if v]]
        hits = sum(v == "reproduced" for v in verdicts)
        row["graded"] = len(verdicts)
        row["complete"] = all(v is not None for v in row["by"].values())
        row["under"] = "all" if hits == len(verdicts) else "some" if hits else "none"
        # the paper's gap only once every reading has been graded
        row["gap"] = row["complete"] and row["under"] == "none" and all(v == "not reproduced" for v in verdicts)
        rows.append(row)
    return rows


SHORT = {"reproduced": "✓", "not reproduced": "✗", "direction only": "→", "inconclusive": "?"}


def readings_markdown(adopted: list[dict[str, Any]], runs: dict[str, list[dict[str, Any]]], bases: dict[str, str]) -> str:
    rows = readings_rows(adopted, runs, bases)
    names = list(READINGS)
    ran = [n for n in names if n in runs]
    # a reading is stored experiment by experiment: run in part while some claim it applies to is not graded
    part = {n for n in ran if any(r["by"][n] is None for r in rows)}
    head = (f"{len(rows)} held-out DeTail claims; readings run: "
            + (", ".join(n + (" (in part)" if n in part else "") for n in ran) if ran else "none yet")
            + (f"; not yet run: {', '.join(n for n in names if n not in runs)}" if len(ran) < len(names) else "") + ". ")
    counts = {k: sum(r["under"] == k for r in rows) for k in ("all", "some", "none")}
    head += (f"Reproduced under all the readings graded: {counts['all']}; under some: {counts['some']}; under none: {counts['none']}"
             + (f" (of which not reproduced under every one, the paper's gap: {sum(r['gap'] for r in rows)})." if len(ran) == len(names) and not part
                else " (a claim is the paper's gap only once every reading is graded)."))
    lines = [head, "", "✓ reproduced, ✗ not reproduced, → direction only, ? inconclusive; (=) the reading's key is not in the "
             "claim's scenario, so its runs are the adopted ones; · not run yet.", "",
             "| claim | adopted | " + " | ".join(names) + " | reproduced under |", "|---|---|" + "---|" * len(names) + "---|"]
    for r in rows:
        cells = []
        for n in names:
            v = r["by"][n]
            cells.append("·" if v is None else SHORT[v["verdict"]] + (" (=)" if v["same"] else ""))
        under = r["under"] + (" (the paper's gap)" if r["gap"] else "" if r["complete"] else " so far")
        lines.append(f"| `{r['id']}` | {SHORT[r['adopted']]} | " + " | ".join(cells) + f" | {under} |")
    return "\n".join(lines)
