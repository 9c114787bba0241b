"""The code a run executes, by how often: 64-byte lines of machine code, each counted at its most executed
instruction, from a callgrind profile taken with `--dump-instr=yes`.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=OUT run_json S.json
    python benches/code_lines.py OUT EVENTS            # KiB of lines run at least 1, 0.1, 0.01, 0.001 times per event
    python benches/code_lines.py OUT EVENTS --functions 20   # and which functions those lines belong to

EVENTS is the run's event count (`run_json` prints it). Against a 32 KiB first-level instruction cache, the
lines run at least once per hundred events are the code the loop keeps coming back to (docs/benchmarks.md,
"The code's size, measured and not kept"). Only the standard library.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

LINE = 64
BANDS = (1.0, 0.1, 0.01, 0.001)


def read(path: Path) -> tuple[dict[int, int], dict[int, str]]:
    """Executions per instruction address (the calls' inclusive costs left out) and each address's function."""
    runs: dict[int, int] = collections.Counter()
    owner: dict[int, str] = {}
    names: dict[str, str] = {}
    fn, last, after_call = "?", 0, False
    for ln in path.read_text().splitlines():
        if not ln or ln[0] == "#":
            continue
        if ln[0].isalpha():
            key, _, val = ln.partition("=")
            if key == "calls":
                after_call = True  # the next cost line is the call's inclusive cost
            elif key in ("fn", "cfn"):
                ref, _, name = val.partition(" ")
                if name:
                    names[ref] = name
                if key == "fn":
                    fn = names.get(ref, ref)
            continue
        toks = ln.split()
        a = toks[0]
        if a == "*":
            addr = last
        elif a[0] in "+-":
            addr = last + int(a, 0) if a[0] == "+" else last - int(a[1:], 0)
        else:
            addr = int(a, 0)
        last = addr
        if after_call:
            after_call = False
            continue
        if len(toks) >= 3:
            runs[addr] += int(toks[2])
            owner[addr] = fn
    return runs, owner


def lines(runs: dict[int, int], owner: dict[int, str]) -> dict[int, tuple[int, str]]:
    """Per code line: its most executed instruction's count and that instruction's function."""
    out: dict[int, tuple[int, str]] = {}
    for a, n in runs.items():
        ln = a // LINE
        if n > out.get(ln, (0, ""))[0]:
            out[ln] = (n, owner[a])
    return out


def footprint(by_line: dict[int, tuple[int, str]], events: int) -> dict[float, float]:
    """KiB of lines run at least `per` times per event, for each of `BANDS`."""
    return {per: sum(1 for n, _ in by_line.values() if n >= per * events) * LINE / 1024 for per in BANDS}


def by_function(by_line: dict[int, tuple[int, str]], events: int) -> dict[str, list[float]]:
    """Per function, KiB of its lines run >= 0.1, 0.01-0.1 and 0.001-0.01 times per event."""
    out: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for n, fn in by_line.values():
        r = n / events
        band = 0 if r >= 0.1 else 1 if r >= 0.01 else 2 if r >= 0.001 else None
        if band is not None:
            out[fn][band] += LINE / 1024
    return dict(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", type=Path, help="callgrind output written with --dump-instr=yes")
    ap.add_argument("events", type=int, help="the run's event count")
    ap.add_argument("--functions", type=int, default=0, metavar="N", help="also the N functions with the most such lines")
    a = ap.parse_args(argv)
    if a.events < 1:
        ap.error("events: the run's event count, at least 1")
    runs, owner = read(a.profile)
    by_line = lines(runs, owner)
    print(f"instructions {sum(runs.values()):,}, code lines run {len(by_line):,}")
    for per, kib in footprint(by_line, a.events).items():
        print(f"lines run >= {per:g} per event: {kib:.1f} KiB")
    if a.functions:
        print("KiB run >= 0.1 / 0.01-0.1 / 0.001-0.01 per event, function")
        rows = sorted(by_function(by_line, a.events).items(), key=lambda kv: -sum(kv[1]))
        for fn, (hot, warm, cool) in rows[: a.functions]:
            print(f"{hot:5.1f} {warm:5.1f} {cool:5.1f}  {fn}")


if __name__ == "__main__":
    main()
