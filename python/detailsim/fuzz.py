"""Input fuzzing: mutate the bundled scenarios (and sweep files, CSV flow lists, CDF files) the way a user
who makes mistakes would, run each mutant through the same path as ``detailsim run`` and classify what
happened. A mutant must end in a ``ScenarioError`` (a one-line message naming the field) or in a finished
run; anything else — another exception (a traceback for the user), a panic of the core, a hang — is a
failure.

``python -m detailsim.fuzz --cases 100000`` (``make fuzz``) runs a parallel campaign; the test suite runs a
few hundred cases through Hypothesis with the same mutator.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import multiprocessing as mp
import os
import random
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

# the runs of a campaign are bounded: a mutant that runs is cut short by these (they are not mutated)
LIMITS: dict[str, Any] = {"max_events": 200_000, "max_wall": "5s"}
# a case that takes longer than this (wall seconds) is a hang
HANG_S = 30.0

WRONG_TYPES: list[Any] = ["", "abc", "12", "1 Gbps", "-5KB", "5XB", "1e400ms", True, False, [], [1, 2], {}, {"a": 1}, 1, -1, 0.5]
NUMBERS: list[Any] = [0, -1, -1e9, 2**31, 2**53, 2**63, 2**64, 1e300, -0.0, 1e-12, 0.5]
FLOATS: list[Any] = [math.nan, math.inf, -math.inf]
UNITS: list[Any] = ["0s", "1ps", "-1ms", "1e30s", "0Gbps", "1Tbps", "1bps", "0B", "0KB", "16EB", "9999999999999GB", "1.5.5KB",
                    "KB", "ms", "nan ms", "inf s", "1 ms", "10 Mbps", "1e-30s", "100%", "0x10KB"]
NEW_KEYS = ["bogus", "rate", "size", "kind", "priority", "duration", "hosts", "file", "0", "seed"]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key / index path in a JSON-like value (containers included)."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:20]):  # long flow lists: the first rows are enough
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path[:-1]:
        obj = obj[p]
    return obj


def mutate(sc: dict[str, Any], rng: random.Random, n: int = 1) -> tuple[dict[str, Any], list[str]]:
    """Apply `n` random mutations to a copy of `sc`; returns the mutant and what was done."""
    sc = json.loads(json.dumps(sc))
    what = []
    for _ in range(n):
        paths = _paths(sc)
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _parent(sc, path), path[-1]
        op = rng.choice(["wrong_type", "number", "float", "unit", "delete", "add", "add", "container", "scale", "scale", "scale"])
        where = ".".join(map(str, path))
        if op == "delete":
            del parent[key]
        elif op == "add":
            target = parent[key] if isinstance(parent[key], (dict, list)) else parent
            v = copy.deepcopy(rng.choice(WRONG_TYPES + NUMBERS + UNITS))  # never share the constants
            if isinstance(target, dict):
                target[rng.choice(NEW_KEYS)] = v
            else:
                target.append(v)
        elif op == "scale":
            # a plausible value, off by a factor: the run goes ahead and the core meets odd but legal input
            f = rng.choice([0, 0.001, 0.1, 0.5, 2, 3, 10, 1000])
            v = parent[key]
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                parent[key] = not v if isinstance(v, bool) else v
            elif isinstance(v, (int, float)):
                parent[key] = type(v)(v * f)
            else:
                num = "".join(ch for ch in v if ch.isdigit() or ch == ".")
                try:
                    x = float(num) * f
                    parent[key] = v.replace(num, f"{x:g}", 1) if num else v
                except ValueError:
                    pass
        elif op == "container":
            parent[key] = copy.deepcopy(rng.choice([[], {}, [parent[key]], {"x": parent[key]}]))
        else:
            parent[key] = copy.deepcopy(rng.choice({"wrong_type": WRONG_TYPES, "number": NUMBERS, "float": FLOATS, "unit": UNITS}[op]))
        what.append(f"{op} {where}")
    return sc, what


def mutate_csv(text: str, rng: random.Random) -> str:
    """A flow-list CSV with one cell, row or column damaged."""
    lines = text.splitlines()
    op = rng.choice(["cell", "cell", "cell", "drop_col", "add_col", "short_row", "garbage", "empty", "header"])
    if op == "empty":
        return ""
    if op == "garbage":
        return "".join(chr(rng.randrange(0, 256)) for _ in range(rng.randrange(1, 200)))
    rows = [ln.split(",") for ln in lines]
    if op == "header":
        rows[0][rng.randrange(len(rows[0]))] = rng.choice(["", "srcx", "size", "src"])
    elif op == "drop_col":
        c = rng.randrange(len(rows[0]))
        rows = [r[:c] + r[c + 1:] for r in rows]
    elif op == "add_col":
        rows = [r + [rng.choice(["x", "1", ""])] for r in rows]
    elif op == "short_row" and len(rows) > 1:
        r = rng.randrange(1, len(rows))
        rows[r] = rows[r][:-1]
    elif len(rows) > 1:
        r, c = rng.randrange(1, len(rows)), rng.randrange(len(rows[0]))
        if c < len(rows[r]):
            rows[r][c] = str(rng.choice(["", "nan", "NaN", "inf", "-inf", "-1", "1e300", "18446744073709551616", "abc", "1.5",
                                         "0", "9" * 30, "1e-9", "2147483648", "-0"]))
    return "\n".join(",".join(r) for r in rows) + "\n"


def mutate_cdf(text: str, rng: random.Random) -> str | bytes:
    lines = text.splitlines()
    op = rng.choice(["cell", "cell", "binary", "empty", "drop", "swap", "extra"])
    if op == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    if op == "empty":
        return ""
    data = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not data:
        return text
    i = rng.choice(data)
    parts = lines[i].split()
    if op == "cell" and parts:
        parts[rng.randrange(len(parts))] = str(rng.choice(["nan", "inf", "-1", "2", "abc", "1e300", "0", ""]))
        lines[i] = " ".join(parts)
    elif op == "drop":
        del lines[i]
    elif op == "swap" and len(data) > 1:
        j = rng.choice(data)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "extra":
        lines[i] += " 5"
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the cases


def bundled_bases() -> dict[str, dict[str, Any]]:
    """The bundled scenarios, shortened so that a mutant that runs stays quick."""
    from .core.scenario import bundled_scenarios, prepare

    out = {}
    for name in bundled_scenarios():
        sc, _ = prepare(name)  # CSV flow lists and custom fabrics inline: their rows are mutated too
        sc.setdefault("run", {})["duration"] = "2ms"
        sc["run"]["drain"] = "5ms"
        out[name] = sc
    return out


def run_case(kind: str, payload: Any, workdir: Path) -> str:
    """Run one mutant through the user-facing path; returns 'error', 'ran', or 'FAIL ...'."""
    from . import _core
    from .core.api import execute
    from .core.scenario import prepare

    try:
        if kind == "sweep":
            from .core.sweep import load_sweep

            load_sweep(payload)
            return "ran"
        if kind in ("csv", "cdf"):
            # the damaged file, referenced by the workload that reads it
            text, base = payload
            f = workdir / ("flows.csv" if kind == "csv" else "sizes.cdf")
            f.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
            payload = json.loads(json.dumps(base))
            for w in payload["workload"]:
                if w.get("kind") == {"csv": "flows", "cdf": "cdf"}[kind]:
                    w.pop("rows" if kind == "csv" else "points", None)
                    w["file" if kind == "csv" else "cdf"] = str(f)
        sc, name = prepare(payload, limits=LIMITS)
        _core.validate(json.dumps(sc))
        execute(sc, name)
        return "ran"
    except _core.ScenarioError as e:
        msg = str(e)
        if not msg or "\n" in msg.strip():
            return f"FAIL multi-line error: {msg!r}"
        return "error"
    except BaseException as e:  # noqa: BLE001 - what the fuzzer is looking for
        if isinstance(e, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=-3)
        return f"FAIL {type(e).__name__}: {str(e)[:200]}\n{tb}"


CSV_BASE = {"run": {"duration": "2ms", "drain": "5ms"}, "topology": {"kind": "single_switch", "hosts": 4},
            "scheme": {"preset": "fh"}, "workload": [{"kind": "flows"}]}
CDF_BASE = {"run": {"duration": "2ms", "drain": "5ms"}, "topology": {"kind": "single_switch", "hosts": 4},
            "scheme": {"preset": "dctcp"}, "workload": [{"kind": "cdf", "load": 0.3}]}
SWEEP_BASE = {"description": "fuzz", "base": "paper/verification", "seeds": 2, "set": {"run.duration": "1ms"},
              "axes": {"scheme": ["fh", "detail"], "workload.rate": [100, 200]},
              "zip": [{"variant": ["a", "b"], "topology.link_rate": ["1Gbps", "10Gbps"]}], "labels": ["variant"]}


def make_case(i: int, seed: int, bases: dict[str, dict[str, Any]], csv_text: str, cdf_text: str) -> tuple[str, Any, str]:
    """Case `i` of a campaign: (kind, payload, description). Deterministic in (i, seed)."""
    rng = random.Random(seed * 1_000_003 + i)
    r = rng.random()
    if r < 0.08:
        text = mutate_csv(csv_text, rng)
        return "csv", (text, CSV_BASE), "csv"
    if r < 0.14:
        text = mutate_cdf(cdf_text, rng)
        return "cdf", (text, CDF_BASE), "cdf"
    if r < 0.22:
        sw, what = mutate(SWEEP_BASE, rng, n=rng.choice([1, 1, 2]))
        return "sweep", sw, "sweep " + "; ".join(what)
    name = rng.choice(sorted(bases))
    sc, what = mutate(bases[name], rng, n=rng.choice([1, 1, 1, 2, 3]))
    return "scenario", sc, f"{name}: " + "; ".join(what)


@functools.lru_cache(maxsize=1)
def _inputs() -> tuple[dict[str, dict[str, Any]], str, str]:
    """The campaign's inputs (read once per process; make_case copies before it mutates)."""
    from importlib import resources

    root = Path(str(resources.files("detailsim")))
    csv_text = (root / "scenarios" / "examples" / "dumbbell4.csv").read_text()
    cdf_text = (root / "data" / "cdf" / "websearch_dctcp_bytes_pct.txt").read_text()
    return bundled_bases(), csv_text, cdf_text


def _worker(lo: int, hi: int, seed: int, current: Any, results: Any) -> None:
    bases, csv_text, cdf_text = _inputs()
    with tempfile.TemporaryDirectory(prefix="detailsim-fuzz-") as d:
        for i in range(lo, hi):
            kind, payload, desc = make_case(i, seed, bases, csv_text, cdf_text)
            current.value = i
            outcome = run_case(kind, payload, Path(d))
            results.put((i, desc, outcome))
    current.value = -1


def campaign(cases: int, workers: int, seed: int, out: Path | None = None, log_every: float = 30.0) -> dict[str, Any]:
    """Run `cases` mutants over `workers` processes; a worker stuck on one case for HANG_S is killed, the
    case recorded as a hang, and a new worker goes on from the next case."""
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    chunk = -(-cases // workers)
    todo = [(w * chunk, min(cases, (w + 1) * chunk)) for w in range(workers)]
    procs: list[list[Any]] = []  # [process, current, hi, started_case, t_case]

    def start(lo: int, hi: int) -> None:
        cur = ctx.Value("q", lo)
        p = ctx.Process(target=_worker, args=(lo, hi, seed, cur, results), daemon=True)
        p.start()
        procs.append([p, cur, hi, lo, time.monotonic()])

    for lo, hi in todo:
        if lo < hi:
            start(lo, hi)
    counts: Counter[str] = Counter()
    failures: list[dict[str, Any]] = []
    done = 0
    t0 = last = time.monotonic()

    def record(i: int, desc: str | None, outcome: str) -> None:
        nonlocal done
        done += 1
        failed = outcome.startswith("FAIL")
        counts["FAIL" if failed else outcome] += 1
        if failed:
            if desc is None:  # a worker that died or hung could not say what the case was: rebuild it here
                desc = make_case(i, seed, *_inputs())[2]
            failures.append({"case": i, "input": desc, "outcome": outcome})

    while procs:
        try:
            i, desc, outcome = results.get(timeout=1.0)
            record(i, desc, outcome)
        except Exception:  # noqa: BLE001 - queue.Empty
            pass
        now = time.monotonic()
        for entry in list(procs):
            p, cur, hi, seen, t_case = entry
            c = cur.value
            if c != seen:
                entry[3], entry[4] = c, now
            if c == -1 or (not p.is_alive() and c == seen and now - t_case > 2.0):
                if not p.is_alive() and c != -1:
                    # died without a result (abort, out of memory): a failure, go on after it
                    record(c, None, f"FAIL worker died (exit {p.exitcode})")
                    procs.remove(entry)
                    if c + 1 < hi:
                        start(c + 1, hi)
                elif c == -1:
                    procs.remove(entry)
                continue
            if now - t_case > HANG_S:
                p.kill()
                p.join()
                record(c, None, f"FAIL hang (> {HANG_S:.0f} s)")
                procs.remove(entry)
                if c + 1 < hi:
                    start(c + 1, hi)
        if now - last > log_every:
            last = now
            print(f"{done}/{cases} cases, {now - t0:.0f} s: {dict(counts)}", flush=True)
    while True:  # results still queued
        try:
            i, desc, outcome = results.get(timeout=0.5)
            record(i, desc, outcome)
        except Exception:  # noqa: BLE001
            break
    report = {"cases": cases, "seed": seed, "wall_s": round(time.monotonic() - t0, 1), "outcomes": dict(counts), "failures": failures}
    if out is not None:
        out.write_text(json.dumps(report, indent=2))
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("fuzz-report.json"))
    a = ap.parse_args()
    rep = campaign(a.cases, a.workers, a.seed, a.out)
    fails = rep["failures"]
    print(f"{a.cases} cases in {rep['wall_s']} s: {rep['outcomes']}; report in {a.out}")
    for f in fails[:20]:
        print(f"- case {f['case']} ({f['input']}): {f['outcome'].splitlines()[0]}")
    raise SystemExit(1 if fails else 0)


if __name__ == "__main__":
    main()
