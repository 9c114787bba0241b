"""The detailsim benchmark suite (`make bench`).

Each case runs in its own process so that its peak RSS is its own. Figures: events per wall second, link
traversals (a packet crossing one link) per wall second, events per traversal, instructions per traversal
(where `perf` can count them: the case's process less the same process set up but not run; on a machine
whose counters `perf` cannot see, a VM, callgrind's count of the core loop, `Sim::run_until` and what it
calls, in a run of its own under valgrind: 35 s for fattree8_fh_5ms, most of it Python's start), wall seconds per simulated
second, peak RSS. Record them in docs/benchmarks.md when the hot path changes.

    python benches/bench.py            # the whole suite
    python benches/bench.py --case steady_fh_0.2s
    python benches/bench.py --update-docs   # the whole suite, stored in docs/benchmarks.json and its table
    python benches/bench.py --no-instructions   # without counting instructions (no extra runs)
    python benches/bench.py --update-instructions   # the stored run's instructions counted again, stamped apart
    python benches/bench.py --probe   # only the processor and what a dependent load costs on it today (a few seconds)
    python benches/bench.py --cpu   # only the processor and its data caches (what benches/pair.sh heads its output with)
    python benches/bench.py --repeat 5   # each case timed in five processes of its own, the fastest kept (3 by default)

Before and after the suite it times what one dependent load costs by working set (`memory_probe`): on a
shared VM the same build runs 2-4x slower on some days than on others, most on the large fabrics, and
this says which kind of day a table was measured on.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time

FATTREE = {"topology.kind": "fattree", "topology.link_rate": "10Gbps", "topology.buffer": "1MB"}

CASES: dict[str, dict] = {
    # the headline case: paper/steady with FH, 0.2 s of arrivals
    "steady_fh_0.2s": {"scenario": "paper/steady", "scheme": "fh", "duration": "0.2s"},
    "steady_scatter_0.2s": {"scenario": "paper/steady", "scheme": "scatter", "duration": "0.2s"},
    # the DeTail stack: ALB at every hop, PFC checks on every ingress change, source ECN
    "steady_detail_0.2s": {"scenario": "paper/steady", "scheme": "detail", "duration": "0.2s"},
    # memory must not grow with simulated time beyond the flow columns: compare with the 0.2 s case
    "steady_fh_0.05s": {"scenario": "paper/steady", "scheme": "fh", "duration": "0.05s"},
    "steady_fh_0.8s": {"scenario": "paper/steady", "scheme": "fh", "duration": "0.8s"},
    # the PIAS fabric (144 hosts, 10/40 Gbps, web search at load 0.8): strict priorities with MLFQ tagging,
    # and pFabric's rank scans (lowest rank to send, highest to evict) on every egress queue and NIC
    "websearch_pias_0.01s": {"scenario": "paper/pias_websearch", "scheme": "pias", "duration": "0.01s"},
    "websearch_pfabric_0.01s": {"scenario": "paper/pias_websearch", "scheme": "pfabric", "duration": "0.01s"},
    # scaling (issue 13): the steady workload on standard fat trees at 10 Gbps with 1 MB buffers, 5 ms of
    # arrivals, the same load per host; the cost of one link traversal should not grow with the fabric
    "fattree8_fh_5ms": {"scenario": "paper/steady", "scheme": "fh", "duration": "5ms", "set": FATTREE | {"topology.k": 8}},
    "fattree8_detail_5ms": {"scenario": "paper/steady", "scheme": "detail", "duration": "5ms", "set": FATTREE | {"topology.k": 8}},
    "fattree16_fh_5ms": {"scenario": "paper/steady", "scheme": "fh", "duration": "5ms", "set": FATTREE | {"topology.k": 16}},
    "fattree16_detail_5ms": {"scenario": "paper/steady", "scheme": "detail", "duration": "5ms", "set": FATTREE | {"topology.k": 16}},
    # flat with size (issue 51): 8,192 hosts, 1 ms of arrivals; an event should cost about what one at k = 8 does
    "fattree32_fh_1ms": {"scenario": "paper/steady", "scheme": "fh", "duration": "1ms", "set": FATTREE | {"topology.k": 32}},
    # 10 Gbps DeTail, 32 long flows and short Poisson flows (issue 36's fabric, bundled as an example)
    "long_short_10g_detail_10ms": {"scenario": "examples/long_short_10g", "scheme": "detail", "duration": "10ms"},
    # issue 38: the RoCE schemes (paced senders; HPCC's telemetry at every switch egress) on the k = 8 fat tree
    # at 10 Gbps, and a shared-buffer switch under a 25 Gbps incast
    "fattree8_dcqcn_5ms": {"scenario": "paper/steady", "scheme": "dcqcn", "duration": "5ms", "set": FATTREE | {"topology.k": 8}},
    "fattree8_hpcc_5ms": {"scenario": "paper/steady", "scheme": "hpcc", "duration": "5ms", "set": FATTREE | {"topology.k": 8}},
    "rdma_incast_shared_dcqcn": {"scenario": "examples/rdma_incast", "scheme": "dcqcn", "duration": "30ms"},
    "rdma_incast_shared_hpcc": {"scenario": "examples/rdma_incast", "scheme": "hpcc", "duration": "30ms"},
}
# the same cases split in two parts on two threads (run.threads = 2, with the node order it keeps): the
# traversals per wall second of the two threads together
TWO = {"run.event_order": "node", "run.threads": 2}
for _name in ["steady_fh_0.2s", "steady_detail_0.2s", "fattree8_fh_5ms", "fattree8_detail_5ms", "fattree16_fh_5ms", "fattree16_detail_5ms"]:
    CASES[_name + "_2t"] = {**CASES[_name], "set": CASES[_name].get("set", {}) | TWO}
# another process keeps one core busy (a spinning child for the whole case): two threads must not lose
# badly to one (issue 35: at most 1.5x the one-thread time; the run paces itself, sim/barrier.rs)
for _name in ["steady_fh_0.2s", "steady_fh_0.2s_2t"]:
    CASES[_name + "_busy"] = {**CASES[_name], "busy": True}
# 3,456 hosts: minutes per case, so only on request (`--case fattree24_fh_5ms`)
EXTRA: dict[str, dict] = {
    "fattree24_fh_5ms": {"scenario": "paper/steady", "scheme": "fh", "duration": "5ms", "set": FATTREE | {"topology.k": 24}},
    "fattree24_detail_5ms": {"scenario": "paper/steady", "scheme": "detail", "duration": "5ms", "set": FATTREE | {"topology.k": 24}},
}
for _name in list(EXTRA):
    EXTRA[_name + "_2t"] = {**EXTRA[_name], "set": EXTRA[_name]["set"] | TWO}


def _spin(seconds: float) -> None:
    """Keep one core busy (a case's "busy" neighbour)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def run_case(name: str, setup_only: bool = False) -> dict:
    import detailsim

    c = {**CASES, **EXTRA}[name]
    if setup_only:
        # what the process costs without the run: Python, the scenario, the simulation built
        import json as _json

        from detailsim import _core
        from detailsim.core.scenario import prepare

        sc, _ = prepare(c["scenario"], scheme=c["scheme"], duration=c["duration"], overrides={"run.threads": 1} | (c.get("set") or {}))
        _core.Simulation(_json.dumps(sc))
        return {"case": name}
    busy = None
    if c.get("busy"):
        import multiprocessing

        busy = multiprocessing.get_context("spawn").Process(target=_spin, args=(600.0,), daemon=True)
        busy.start()
        time.sleep(0.2)  # (the neighbour is spinning before the case starts)
    try:
        t0 = time.perf_counter()
        # one thread unless the case says (a single run's default, "auto", would split on an idle machine)
        r = detailsim.run(c["scenario"], scheme=c["scheme"], duration=c["duration"], set={"run.threads": 1} | (c.get("set") or {}))
        wall = time.perf_counter() - t0
    finally:
        if busy is not None:
            busy.terminate()
            busy.join()
    s = r.summary
    core_wall = s["wall_s"]
    return {
        "case": name,
        "sim_s": s["sim_time_s"],
        "wall_s": round(wall, 3),
        "core_wall_s": core_wall,
        "events": s["events"],
        "link_traversals": s["link_traversals"],
        "events_per_s": s["events"] / core_wall,
        "traversals_per_s": s["link_traversals"] / core_wall,
        "events_per_traversal": s["events"] / max(s["link_traversals"], 1),
        "wall_per_sim_s": core_wall / s["sim_time_s"],
        "flows": s["flows"]["completed"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _child(name: str) -> dict:
    """One timed run of a case in a process of its own (`run_case`)."""
    out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def fastest(runs: list[dict]) -> dict:
    """Of several runs of one case, the one whose core loop took least wall time, with every run's traversals per
    second beside it (`traversals_per_s_runs`, in the order run): on a shared VM one run per case moved a
    figure by more than the changes it was to show (`steady_fh_0.2s` 5.10 and 4.73 M traversals/s on the same
    build the same morning)."""
    if not runs:
        raise ValueError("fastest: no runs")
    best = min(runs, key=lambda r: r["core_wall_s"])
    return best | {"runs": len(runs), "traversals_per_s_runs": [r["traversals_per_s"] for r in runs]}


PROBE_MIB = (0.25, 4.0, 32.0)


def memory_probe(steps: int = 10_000_000, mib: tuple[float, ...] = PROBE_MIB, per_page: bool = False) -> dict[str, float]:
    """Nanoseconds per dependent load through 0.25, 4 and 32 MiB (`detailsim._core.load_latency_ns`: a
    pointer chase, one cache line per step, in a random cycle): within the L2, beyond it, and about a
    large fabric's state (k = 32: 25 MB of ports). `mib`: other working sets; `per_page`: one line per
    4 KiB page of each instead (`benches/sizes.py`)."""
    from detailsim import _core

    return {f"{m:g}": round(_core.load_latency_ns(float(m), steps, per_page=per_page), 1) for m in mib}


def cpu(*where: str) -> str:
    """The processor the machine runs on, as the kernel names it, with its data caches (one core's): the
    project's VM is not always placed on the same kind of host (an AMD EPYC on earlier days, an Intel Xeon
    family 6 model 207 with a 2 MB L2 on 2026-11-29: docs/benchmarks.md, "Which machine"), and every timed
    figure depends on which. `detailsim.machine.processor`, loaded by its path: `--cpu` runs under the
    system's Python, which need not have the package. `where`: the files to read instead (tests)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "python" / "detailsim" / "machine.py"
    spec = importlib.util.spec_from_file_location("detailsim_machine", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.processor(*where)


def _probe_text(p: dict[str, float]) -> str:
    return ", ".join(f"{m} MiB {ns:.1f} ns" for m, ns in p.items())


def _instructions(args: list[str]) -> tuple[int, str] | None:
    """User-space instructions of running `args` (`perf stat`) and what it printed, None where perf cannot
    count them (a VM without hardware counters, no perf)."""
    import os
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".perf") as f:
        try:
            run = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u", "-o", f.name, *args], capture_output=True, text=True,
                                 check=True, env=os.environ | {"LC_ALL": "C"})
        except (OSError, subprocess.CalledProcessError):
            return None
        for line in f.read().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("instructions"):
                return (int(fields[0]), run.stdout) if fields[0].isdigit() else None
    return None


def _callgrind(args: list[str]) -> tuple[int, int] | None:
    """Instructions of the core loop (`Sim::run_until` and everything it calls) when running the case child
    `args` under callgrind, which counts them without hardware counters, and the link traversals of that
    run (the child prints its figures); None without valgrind."""
    import shutil
    import tempfile

    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/callgrind.out"
        try:
            run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                                  "--toggle-collect=*Sim::run_until*", *args], capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        traversals = json.loads(run.stdout.strip().splitlines()[-1])["link_traversals"]
        with open(out) as f:
            for line in f:
                if line.startswith("summary:"):
                    return int(line.split()[1]), traversals
    return None


def count_instructions(name: str) -> tuple[float, str] | None:
    """Instructions per traversal of case `name` and what counted them: `perf` (the case's process less the
    same process set up only), else callgrind (the core loop alone); each divided by the traversals of the
    run it counted (a count of one build is never divided by another's run). None where neither can."""
    child = [sys.executable, __file__, "--child", name]
    whole = _instructions(child)
    setup = _instructions([*child, "--setup-only"]) if whole is not None else None
    if whole is not None and setup is not None:
        traversals = json.loads(whole[1].strip().splitlines()[-1])["link_traversals"]
        return (whole[0] - setup[0]) / max(traversals, 1), "perf"
    counted = _callgrind(child)
    if counted is not None:
        return counted[0] / max(counted[1], 1), "callgrind"
    return None


def counted(name: str) -> bool:
    """Whether the suite counts case `name`'s instructions (not the two-thread runs, whose count is the
    one-thread run's work split, nor the runs beside a busy neighbour)."""
    return not {**CASES, **EXTRA}[name].get("busy") and "_2t" not in name


SOURCES = {"perf": "`perf stat`'s count of the case's process less the same process set up but not run",
           "callgrind": "callgrind's count of the core loop (`Sim::run_until` and what it calls; this machine's counters "
                        "are not visible to `perf`, a VM)"}


DOC = "docs/benchmarks.md"
DOC_JSON = "docs/benchmarks.json"
SOURCE = "docs/benchmarks.json by `benches/bench.py --update-docs`"


TPS, RSS = "traversals_per_s", "peak_rss_mb"


def markdown(data: dict) -> str:
    """The current-figures table of docs/benchmarks.md from the stored run (docs/benchmarks.json): one row
    per case, one thread beside two (the case's `_2t` run, where the suite has one), and the runs with a
    busy neighbour in a sentence after it."""
    by = {r["case"]: r for r in data["rows"]}
    on = data["machine"] + (f" ({data['cpu']})" if data.get("cpu") else "")
    runs = max((r.get("runs", 1) for r in data["rows"]), default=1)
    each = ("one process per case" if runs == 1 else
            f"each case timed in {runs} processes of its own and the fastest kept (every run's figure in docs/benchmarks.json)")
    lines = [f"Measured {data['date']} at {data['commit']} on {on}, {each}. Traversals per "
             "second of the core loop (the run's wall time, not the set-up's); peak RSS of the whole process (Python "
             "included). " + _memory_sentence(data), "",
             "| case | simulated s | events/traversal | instructions/traversal | traversals/s, 1 thread | traversals/s, 2 threads | "
             "wall s per simulated s, 1 thread | peak RSS MB, 1 thread | peak RSS MB, 2 threads |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        name = r["case"]
        if name.endswith("_2t") or name.endswith("_busy"):
            continue
        two = by.get(name + "_2t")
        ipt = r.get("instructions_per_traversal")
        lines.append(f"| `{name}` | {r['sim_s']:.3f} | {r['events_per_traversal']:.2f} | {'n/a' if ipt is None else f'{ipt:,.0f}'} | "
                     f"{r['traversals_per_s'] / 1e6:.2f} M | {'' if two is None else f'{two[TPS] / 1e6:.2f} M'} | "
                     f"{r['wall_per_sim_s']:.2f} | {r['peak_rss_mb']:.0f} | {'' if two is None else f'{two[RSS]:.0f}'} |")
    busy = [(n[: -len("_busy")], by[n]) for n in by if n.endswith("_busy")]
    if busy:
        lines += ["", "With another process spinning on one of the two cores: " + "; ".join(
            f"`{n}` {r['traversals_per_s'] / 1e6:.2f} M traversals/s" for n, r in busy) + "."]
    if all(r.get("instructions_per_traversal") is None for r in data["rows"]):
        lines += ["", "Instructions per traversal: n/a, this machine's counters are not visible to `perf` (a VM); "
                  "callgrind's counts of `run_json` are in the sections below."]
    else:
        used = sorted({r["instructions_source"] for r in data["rows"] if r.get("instructions_per_traversal") is not None})
        when = data.get("instructions")
        since = "" if when is None else (f", counted {when['date']} at {when['commit']} (`benches/bench.py --update-instructions`: "
                                         "a count does not depend on the machine's speed; the other columns are of the run above)")
        lines += ["", "Instructions per traversal: " + "; ".join(SOURCES[u] for u in used) + since + "."]
    return "\n".join(lines)


def _memory_sentence(data: dict) -> str:
    """What a dependent load cost on the machine before and after the run (`memory_probe`), or that the run
    was not probed."""
    m = data.get("memory")
    if m is None:
        return "The machine's memory was not probed with this run (`--probe`; runs from 2026-11-28 on store it)."
    return (f"A dependent load (`memory_probe`: a random cycle through 0.25, 4 and 32 MiB) cost {_probe_text(m['before'])} "
            f"before the suite and {_probe_text(m['after'])} after it.")


def _uncommitted(porcelain: str) -> str:
    """What a stamp adds for the files `git status --porcelain` lists as changed: their names (up to three, then
    how many more), so that a reader can tell a measurement made beside an edit of the docs from one of code
    that was never committed."""
    changed = [line[3:].strip() for line in porcelain.splitlines() if line.strip()]
    if not changed:
        return ""
    names = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f" (with uncommitted changes to {names})"


def _stamp() -> dict:
    """Date, commit and machine of a measurement made now (run from the project root)."""
    import datetime
    import os

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "commit": commit + _uncommitted(dirty),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", "cpu": cpu()}


def _write(data: dict) -> None:
    from pathlib import Path

    from detailsim.repro.docblocks import write_generated

    write_generated(Path("."), DOC, DOC_JSON, "bench-current", data, markdown(data), SOURCE)
    print(f"wrote {DOC_JSON} and the table in {DOC}")


def _store(rows: list[dict], memory: dict) -> None:
    """Write docs/benchmarks.json and the table in docs/benchmarks.md (run from the project root)."""
    _write(_stamp() | {"memory": memory, "rows": rows})


def recount(data: dict, count=count_instructions) -> dict:
    """The stored run `data` with every counted case's instructions per traversal counted again (`count`,
    by case name) and stamped with when and where; the other figures stay those of the stored run. A case
    that cannot be counted here (no perf, no valgrind) keeps no count: a figure of another build is not
    kept beside one of this."""
    rows = []
    for r in data["rows"]:
        r = dict(r)
        if counted(r["case"]):
            got = count(r["case"])
            r["instructions_per_traversal"], r["instructions_source"] = got if got is not None else (None, None)
            print(f"{r['case']:<30}{'n/a' if got is None else f'{got[0]:,.0f} ({got[1]})':>20}", flush=True)
        rows.append(r)
    return {**data, "rows": rows, "instructions": _stamp()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted({**CASES, **EXTRA}), action="append", help="run only these cases")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print one JSON object per case")
    ap.add_argument("--no-instructions", action="store_true", help="do not count instructions (perf or callgrind: extra runs of each case)")
    ap.add_argument("--update-docs", action="store_true", help="store the whole suite in docs/benchmarks.json and its table in docs/benchmarks.md")
    ap.add_argument("--probe", action="store_true", help="only name the processor and time a dependent load through 0.25, 4 and 32 MiB "
                                                          "(the machine's memory today; a few seconds) and exit")
    ap.add_argument("--cpu", action="store_true", help="only print the processor and its data caches (as every stamp names them) and exit; "
                                                        "`benches/pair.sh` heads its output with it")
    ap.add_argument("--update-instructions", action="store_true",
                    help="count the stored suite's instructions per traversal again (perf or callgrind; what does not depend on the "
                         "machine's speed) and store them with their own date and commit, keeping the stored run's other figures")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="time each case in N processes of its own and keep the fastest (default 3; the others' "
                         "traversals per second are stored beside it)")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error(f"--repeat: {a.repeat} is not allowed: a case is timed at least once (1 or more)")
    if (a.update_docs or a.update_instructions) and a.case:
        ap.error("--update-docs and --update-instructions store the whole suite: leave out --case")
    if a.update_docs and a.update_instructions:
        ap.error("--update-docs counts instructions with its run: use one of --update-docs and --update-instructions")
    if a.child:
        print(json.dumps(run_case(a.child, a.setup_only)))
        return
    if a.cpu:
        print(cpu())
        return
    if a.probe:
        print(json.dumps({"cpu": cpu(), "load_ns": memory_probe()}) if a.json else f"cpu: {cpu()}\ndependent load: {_probe_text(memory_probe())}")
        return
    if a.update_instructions:
        with open(DOC_JSON) as f:
            stored = json.load(f)
        if [r["case"] for r in stored["rows"]] != list(CASES):
            sys.exit(f"{DOC_JSON} is not a run of the whole suite as it is now: `--update-docs` first")
        _write(recount(stored))
        return
    names = a.case or list(CASES)
    print(f"# detailsim benchmark on {platform.machine()} ({cpu()}), Python {platform.python_version()}")
    hdr = (f"{'case':<30}{'sim s':>8}{'wall s':>8}{'events/s':>12}{'traversals/s':>14}{'ev/trav':>9}{'instr/trav':>12}"
           f"{'wall/sim':>10}{'flows':>9}{'peak RSS MB':>13}")
    memory = {"before": memory_probe()}
    if not a.json:
        print(f"# dependent load: {_probe_text(memory['before'])}")
        print(hdr)
    rows = []
    for n in names:
        r = fastest([_child(n) for _ in range(a.repeat)])
        r["instructions_per_traversal"] = r["instructions_source"] = None
        if not a.no_instructions and counted(n):
            got = count_instructions(n)
            if got is not None:
                r["instructions_per_traversal"], r["instructions_source"] = got
        rows.append(r)
        if a.json:
            print(json.dumps(r))
        else:
            ipt = r["instructions_per_traversal"]
            print(
                f"{n:<30}{r['sim_s']:>8.3f}{r['core_wall_s']:>8.2f}{r['events_per_s'] / 1e6:>10.2f} M"
                f"{r['traversals_per_s'] / 1e6:>12.2f} M{r['events_per_traversal']:>9.2f}{'n/a' if ipt is None else f'{ipt:,.0f}':>12}"
                f"{r['wall_per_sim_s']:>10.2f}{r['flows']:>9}{r['peak_rss_mb']:>13.0f}"
            )
    memory["after"] = memory_probe()
    if not a.json:
        print(f"# dependent load after the suite: {_probe_text(memory['after'])}")
    if a.update_docs:
        _store(rows, memory)


if __name__ == "__main__":
    main()
