"""Headline numbers of a fixed set of short runs, to compare two versions of the model.

    python benches/compare_models.py run OUT.json            # with the installed detailsim
    PYTHONPATH=/path/to/old/python python benches/compare_models.py run OLD.json
    python benches/compare_models.py table OLD.json NEW.json  # Markdown table for docs/validation.md
    python benches/compare_models.py repro-snapshot OLD_DIR NEW_DIR > SNAP.json
    python benches/compare_models.py repro-table SNAP.json  # every reproduction's headline, before and after

`repro-snapshot` reads two `detailsim reproduce all --out DIR` results made with the same reproduction
definitions (for issue 10: commits 9bdd6cd and 0bdc984, whose `reproduce.py` and paper scenarios are
identical) and keeps each claim's measured headline and whether it held; `repro-table` renders it
(docs/validation/issue10_reproductions.json is the snapshot docs/validation.md shows).

The cases are short versions of the bundled paper scenarios (same seeds), chosen to show what the model
fixes of issue 10 move: DeTail vs FH (crossbar, TCP), PIAS / DCTCP / L2DCT / TCP with 16 MB windows (host
NIC as a port), DIBS (detour at the overflowing buffer).
"""

from __future__ import annotations

import json
import sys

CASES = [
    ("paper/steady", "fh", "0.1s", "retrieval/8KB"), ("paper/steady", "detail", "0.1s", "retrieval/8KB"),
    ("paper/pias_datamining", "tcp", "0.02s", "small"), ("paper/pias_datamining", "dctcp", "0.02s", "small"),
    ("paper/pias_datamining", "l2dct", "0.02s", "small"), ("paper/pias_datamining", "pias", "0.02s", "small"),
    ("paper/pias_websearch", "dctcp", "0.02s", "small"), ("paper/pias_websearch", "pias", "0.02s", "small"),
    ("paper/dibs", "dctcp", "0.1s", None), ("paper/dibs", "dibs", "0.1s", None),
]


def run(path: str) -> None:
    import detailsim

    out = {}
    for sc, scheme, dur, _ in CASES:
        s = detailsim.run(sc, scheme=scheme, duration=dur).summary
        out[f"{sc} {scheme} {dur}"] = {
            "fct": {c: {k: v.get(k) for k in ["count", "mean_ms", "p50_ms", "p99_ms", "p999_ms"]} for c, v in s["fct"].items()},
            "drops": s["congestion_drops"], "timeouts": s["timeouts"]}
        print(sc, scheme, file=sys.stderr, flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


def table(old_path: str, new_path: str) -> None:
    old, new = json.load(open(old_path)), json.load(open(new_path))
    print("| run | class | mean ms (before → after) | p99 ms (before → after) | congestion drops | timeouts |")
    print("|---|---|---|---|---|---|")
    for sc, scheme, dur, cls in CASES:
        key = f"{sc} {scheme} {dur}"
        a, b = old[key], new[key]
        classes = [cls] if cls else [c for c in b["fct"] if c.startswith("workflow") or c == "query"][:1] or list(b["fct"])[:1]
        for c in classes:
            fa, fb = a["fct"].get(c, {}), b["fct"].get(c, {})
            f = lambda d, k: "–" if d.get(k) is None else f"{d[k]:.3f}"  # noqa: E731
            print(f"| {sc} --scheme {scheme} --duration {dur} | {c} | {f(fa, 'mean_ms')} → {f(fb, 'mean_ms')} | "
                  f"{f(fa, 'p99_ms')} → {f(fb, 'p99_ms')} | {a['drops']} → {b['drops']} | {a['timeouts']} → {b['timeouts']} |")


def repro_snapshot(old_dir: str, new_dir: str) -> dict:
    """Every reproduction's claims (its measured headline and whether it held) under two results directories."""
    from pathlib import Path

    def claims(d: str) -> dict[str, list[dict]]:
        return {p.parent.name: [{"claim": c["claim"], "measured": c["measured"], "holds": c.get("holds")} for c in json.loads(p.read_text())]
                for p in sorted(Path(d).glob("*/claims.json"))}

    return {"before": claims(old_dir), "after": claims(new_dir)}


def repro_table(snap: dict) -> str:
    """The Markdown before/after table of a snapshot (docs/validation.md shows it; a test checks it)."""
    old = {(e, c["claim"]): c for e, cs in snap["before"].items() for c in cs}
    new = {(e, c["claim"]): c for e, cs in snap["after"].items() for c in cs}
    order = [k for k in new if k in old] + [k for k in old if k not in new]
    held = lambda c: "–" if c is None else ("yes" if c.get("holds") else "no")  # noqa: E731
    lines = ["| experiment | claim | before (9bdd6cd) | after (0bdc984) | held before → after |", "|---|---|---|---|---|"]
    for k in sorted(order, key=lambda k: (k[0], order.index(k))):
        a, b = old.get(k), new.get(k)
        ma, mb = (a or {}).get("measured", "–"), (b or {}).get("measured", "–")
        lines.append(f"| {k[0]} | {k[1]} | {ma} | {mb}{' (unchanged)' if ma == mb else ''} | {held(a)} → {held(b)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    elif sys.argv[1] == "repro-snapshot":
        print(json.dumps(repro_snapshot(sys.argv[2], sys.argv[3]), indent=1))
    elif sys.argv[1] == "repro-table":
        print(repro_table(json.load(open(sys.argv[2]))))
    else:
        table(sys.argv[2], sys.argv[3])
