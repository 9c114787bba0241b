"""Headline numbers of a fixed set of short runs, to compare two versions of the model.

    python benches/compare_models.py run OUT.json            # with the installed detailsim
    PYTHONPATH=/path/to/old/python python benches/compare_models.py run OLD.json
    python benches/compare_models.py table OLD.json NEW.json  # Markdown table for docs/validation.md
    python benches/compare_models.py repro-snapshot OLD_DIR NEW_DIR > SNAP.json
    python benches/compare_models.py repro-table SNAP.json  # every reproduction's headline, before and after
    python benches/compare_models.py claims-snapshot OLD_DIR NEW_DIR "OLD LABEL" "NEW LABEL" > SNAP.json
    python benches/compare_models.py claims-table SNAP.json  # every graded claim, before and after

`repro-snapshot` reads two `detailsim reproduce all --out DIR` results made with the same reproduction
definitions (for issue 10: commits 9bdd6cd and 0bdc984, whose `reproduce.py` and paper scenarios are
identical) and keeps each claim's measured headline and whether it held; `repro-table` renders it
(docs/validation/issue10_reproductions.json is the snapshot docs/validation.md shows). `claims-snapshot`
and `claims-table` do the same for the graded claims of issue 11's grading (value, interval, verdict),
for issue 35's switch from the push order to the node order
(docs/validation/issue35_event_order.json).

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


def claims_snapshot(old_dir: str, new_dir: str, old_label: str, new_label: str) -> dict:
    """Every graded claim under two results directories: its paper value, measured value with interval, label
    and verdict."""
    from pathlib import Path

    def claims(d: str) -> dict[str, dict]:
        out = {}
        for p in sorted(Path(d).glob("*/claims.json")):
            for c in json.loads(p.read_text()):
                out[c["id"]] = {"claim": c["claim"], "paper": c["paper"], "measured": {k: c["measured"].get(k) for k in ("value", "ci95", "seeds")},
                                "label": c["label"], "verdict": c["verdict"]}
        return out

    return {"before": {"label": old_label, "claims": claims(old_dir)}, "after": {"label": new_label, "claims": claims(new_dir)}}


def claims_table(snap: dict) -> str:
    """The Markdown before/after table of a claims snapshot, with how many verdicts changed."""
    from detailsim.repro.grading import fmt_value

    old, new = snap["before"]["claims"], snap["after"]["claims"]
    ids = list(new) + [i for i in old if i not in new]

    def val(c: dict | None) -> str:
        if c is None:
            return "–"
        m, unit = c["measured"], c["paper"]["unit"]
        ci = m.get("ci95")
        if isinstance(ci, list):
            ci = max(x for x in ci if x is not None) if any(x is not None for x in ci) else None
        return fmt_value(m["value"], unit) + (f" ± {ci:.3g}" if isinstance(ci, (int, float)) else "")

    lines = [f"| claim | label | paper | {snap['before']['label']} | {snap['after']['label']} | verdict before → after |", "|---|---|---|---|---|---|"]
    changed = 0
    for i in ids:
        a, b = old.get(i), new.get(i)
        c = b or a
        va, vb = (a or {}).get("verdict", "–"), (b or {}).get("verdict", "–")
        changed += va != vb
        mark = "" if va == vb else " **(changed)**"
        lines.append(f"| `{i}` | {c['label']} | {fmt_value(c['paper']['value'], c['paper']['unit'])} | {val(a)} | {val(b)} | {va} → {vb}{mark} |")
    lines.append("")
    lines.append(f"{len(ids)} claims; {changed} verdicts changed.")

    def tally(cs: dict) -> str:
        n: dict[str, int] = {}
        for c in cs.values():
            if c["label"] == "held out":
                n[c["verdict"]] = n.get(c["verdict"], 0) + 1
        return ", ".join(f"{n.get(v, 0)} {v}" for v in ("reproduced", "direction only", "not reproduced", "inconclusive"))

    lines.append(f"Held out, {snap['before']['label']}: {tally(old)}; {snap['after']['label']}: {tally(new)}.")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    elif sys.argv[1] == "repro-snapshot":
        print(json.dumps(repro_snapshot(sys.argv[2], sys.argv[3]), indent=1))
    elif sys.argv[1] == "repro-table":
        print(repro_table(json.load(open(sys.argv[2]))))
    elif sys.argv[1] == "claims-snapshot":
        print(json.dumps(claims_snapshot(*sys.argv[2:6]), indent=1))
    elif sys.argv[1] == "claims-table":
        print(claims_table(json.load(open(sys.argv[2]))))
    else:
        table(sys.argv[2], sys.argv[3])
