"""Summarise `benches/pair.sh` output: per case, the old and new builds' best and median user seconds (wall
seconds in a file of `WALL=1`, which says `# clock: wall`), their ratios, and how many of the pairs (each
round's two runs, alternated old-first and new-first) the new build won.

    python benches/pairsum.py PAIRS.txt [...]

prints the processor the file names (`# cpu:`), then one line per case, in the form docs/benchmarks.md quotes:
    k32_fh_4ms | 9.986 / 11.345 s | 9.032 / 10.005 s (1.11x / 1.13x) | 7 of 7
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import NamedTuple


class Pairs(NamedTuple):
    """One case's user seconds, round by round, of the old and the new build."""

    case: str
    old: tuple[float, ...]
    new: tuple[float, ...]

    @property
    def won(self) -> int:
        """Rounds in which the new build took less user time than the old."""
        return sum(n < o for o, n in zip(self.old, self.new))

    def cells(self) -> tuple[str, str, str]:
        """Before, after (with the ratios old / new of the bests and of the medians) and the pairs won."""
        ob, om, nb, nm = min(self.old), statistics.median(self.old), min(self.new), statistics.median(self.new)
        return (
            f"{ob:.3f} / {om:.3f} s",
            f"{nb:.3f} / {nm:.3f} s ({ob / nb:.2f}x / {om / nm:.2f}x)",
            f"{self.won} of {len(self.old)}",
        )


def read(path: Path) -> list[Pairs]:
    """The cases of one `pair.sh` output, in order. Each round is two consecutive lines of one case, one
    `old` and one `new` (`#` lines, such as the processor's, are skipped); anything else is an error naming
    the lines as the file numbers them."""
    rows = [(k, ln.split()) for k, ln in enumerate(Path(path).read_text().splitlines(), 1) if ln.strip() and not ln.startswith("#")]
    if len(rows) % 2:
        raise ValueError(f"{path}: {len(rows)} lines, not whole rounds (two lines each)")
    cases: dict[str, tuple[list[float], list[float]]] = {}
    for i in range(0, len(rows), 2):
        (ka, a), (kb, b) = rows[i], rows[i + 1]
        if len(a) != 3 or len(b) != 3 or a[0] != b[0] or {a[1], b[1]} != {"old", "new"}:
            raise ValueError(f"{path}: lines {ka}-{kb} are not one round (`case old|new seconds`, one of each)")
        t = {a[1]: float(a[2]), b[1]: float(b[2])}
        old, new = cases.setdefault(a[0], ([], []))
        old.append(t["old"])
        new.append(t["new"])
    return [Pairs(c, tuple(o), tuple(n)) for c, (o, n) in cases.items()]


def header(path: Path, key: str) -> str | None:
    """What a `pair.sh` output's `# KEY:` line says (None without one)."""
    for ln in Path(path).read_text().splitlines():
        if ln.startswith(f"# {key}:"):
            return ln[len(f"# {key}:"):].strip()
    return None


def cpu(path: Path) -> str | None:
    """The processor a `pair.sh` output was timed on (its `# cpu:` line; files from before 2026-11-29 have
    none)."""
    return header(path, "cpu")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    for f in args.files:
        if (c := cpu(f)) is not None:
            print(f"# {f.name}: {c}")
        for p in read(f):
            print(" | ".join((p.case, *p.cells())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
