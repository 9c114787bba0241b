"""Issue 51's measurable targets against the stores: each target, the case it is judged on, the figure the
stores hold, and whether it is met (docs/benchmarks.md, "Where issue 51's targets stand").

    python benches/targets.py                 # print the table
    python benches/targets.py --update-docs   # write it into docs/benchmarks.md's generated block (the venv's Python)

Read from, and nothing else (no run is made here):
- the paired timings of the issue's starting commit against main (`PAIRS`, `benches/pair.sh` output; the
  ratio is of the two builds' best user seconds, as the issue's "best of five" asks);
- the benchmark suite's stored run (docs/benchmarks.json: events and instructions per traversal);
- the size sweep's stored run (docs/benchmarks-sizes.json: an event's cost at k = 32 against k = 8).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))

import pairsum  # noqa: E402

DOC = "docs/benchmarks.md"
BLOCK = "bench-targets"
SOURCE = "benches/pairs/2026-12-03_start/start_vs_main.txt, docs/benchmarks.json and docs/benchmarks-sizes.json by `benches/targets.py --update-docs`"
PAIRS = "benches/pairs/2026-12-03_start/start_vs_main.txt"
SUITE = "docs/benchmarks.json"
SIZES = "docs/benchmarks-sizes.json"

# the pair file's case names and what the issue calls them
PAIR_CASES = {
    "k8_fh_60ms": "k = 8 FH 60 ms",
    "k8_detail_60ms": "k = 8 DeTail 60 ms",
    "steady_fh": "paper/steady FH 0.2 s",
    "steady_detail": "paper/steady DeTail 0.2 s",
}


class Target(NamedTuple):
    """One of the issue's thresholds on one figure of one case (`figures`): at least it (a speed-up) or at
    most it (a count, or a ratio of costs)."""

    name: str
    case: str
    figure: str
    threshold: float

    @property
    def at_least(self) -> bool:
        return self.figure == "speedup"

    def met(self, value: float) -> bool:
        # to nine places: a ratio of two decimals (1.2 / 0.8) is not short of 1.5 by a rounding of binary floats
        v = round(value, 9)
        return v >= self.threshold if self.at_least else v <= self.threshold


# the issue's "Done when", in its order (the parts' memory and bound are not in these stores: see the docs)
TARGETS = (
    Target("exact tier", "k8_fh_60ms", "speedup", 1.15),
    Target("exact tier", "steady_fh", "speedup", 1.15),
    Target("exact tier", "k8_detail_60ms", "speedup", 1.1),
    Target("exact tier", "steady_detail", "speedup", 1.1),
    Target("instructions per traversal", "fattree8_fh_5ms", "instructions", 1150),
    Target("events per traversal, FH", "fattree8_fh_5ms", "events", 1.5),
    Target("events per traversal, FH", "steady_fh_0.2s", "events", 1.5),
    Target("events per traversal, DeTail", "fattree8_detail_5ms", "events", 1.8),
    Target("events per traversal, DeTail", "steady_detail_0.2s", "events", 1.8),
    Target("after the order change", "k8_fh_60ms", "speedup", 1.5),
    Target("after the order change", "steady_fh", "speedup", 1.3),
    Target("after the order change", "steady_detail", "speedup", 1.3),
    Target("after the order change", "k8_detail_60ms", "speedup", 1.3),
    Target("an event at k = 32 against k = 8", "k32_vs_k8", "per_event", 1.3),
)


def figures(root: Path = ROOT) -> dict[str, dict[str, float]]:
    """Per case, what the stores say: `speedup` (pairs: the starting commit's best user seconds over main's),
    `events` and `instructions` per traversal (the suite), `per_event` (k = 32's ns per event over k = 8's)."""
    out: dict[str, dict[str, float]] = {}
    for p in pairsum.read(root / PAIRS):
        if p.case not in PAIR_CASES:
            raise ValueError(f"{PAIRS}: case {p.case!r} is none of {sorted(PAIR_CASES)}")
        out[p.case] = {"speedup": min(p.old) / min(p.new)}
    for r in json.loads((root / SUITE).read_text())["rows"]:
        out[r["case"]] = {"events": r["events_per_traversal"], "instructions": r.get("instructions_per_traversal") or float("nan")}
    sizes = {r["k"]: r for r in json.loads((root / SIZES).read_text())["rows"]}
    out["k32_vs_k8"] = {"per_event": sizes[32]["ns_per_event"] / sizes[8]["ns_per_event"]}
    return out


def case_name(t: Target) -> str:
    if t.case == "k32_vs_k8":
        return "fat tree FH, ns per event (the size sweep)"
    return PAIR_CASES.get(t.case, f"`{t.case}`")


def fmt(t: Target, v: float) -> str:
    if t.figure == "instructions":
        return f"{v:,.0f}"
    if t.figure == "events":
        return f"{v:.2f}"
    # a speed-up to three places, so that one just short of its threshold does not print as it
    return f"{v:.3f}x" if t.at_least else f"{v:.2f}x"


def rows(root: Path = ROOT) -> list[tuple[Target, float, bool]]:
    """Each target with the stores' figure and whether it is met."""
    fig = figures(root)
    return [(t, v, t.met(v)) for t in TARGETS for v in [fig[t.case][t.figure]]]


def builds(path: Path) -> str:
    """What a pair file says its two builds were (its `# builds:` line)."""
    said = pairsum.header(path, "builds")
    if said is None:
        raise ValueError(f"{path}: no '# builds:' line naming the old and the new build")
    return said


def counted(suite: dict) -> str:
    """Which count of the suite's instructions the table reads: the run's own, or the one `bench.py
    --update-instructions` stamped apart."""
    again = suite.get("instructions")
    return "its count of the same run" if again is None else f"its count of {again['date']} at {again['commit']}"


def markdown(root: Path = ROOT) -> str:
    suite = json.loads((root / SUITE).read_text())
    sizes = json.loads((root / SIZES).read_text())
    cpu = pairsum.cpu(root / PAIRS) or "unknown"
    lines = [
        f"Speed-ups: `{PAIRS}` ({builds(root / PAIRS)}; the best user seconds of each, one thread; {cpu}). "
        f"Events per traversal: the suite's stored run ({SUITE}, {suite['date']}, {suite['commit']}); instructions per "
        f"traversal: {counted(suite)}. "
        f"An event at k = 32 against k = 8: the size sweep ({SIZES}, {sizes['date']}, {sizes['commit']}).",
        "",
        "| target | case | threshold | now | met |",
        "|---|---|---|---|---|",
    ]
    judged = rows(root)
    for t, v, ok in judged:
        cmp = "≥" if t.at_least else "≤"
        limit = f"{t.threshold:.2f}x" if t.at_least else fmt(t, t.threshold)
        lines.append(f"| {t.name} | {case_name(t)} | {cmp} {limit} | {fmt(t, v)} | {'yes' if ok else 'no'} |")
    met = sum(ok for *_, ok in judged)
    lines += ["", f"{met} of {len(TARGETS)} met."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update-docs", action="store_true", help=f"write the table into {DOC}'s generated block")
    a = ap.parse_args(argv)
    body = markdown()
    if a.update_docs:
        from detailsim.repro.docblocks import render_block

        doc = ROOT / DOC
        doc.write_text(render_block(doc.read_text(), BLOCK, body, DOC, source=SOURCE))
        print(f"wrote the table in {DOC}")
    else:
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
