"""What one event costs by fat-tree size, beside what one load costs by working set (issue 51, "flat with size").

The paper/steady workload on fat trees of k = 8 to 32 (128 to 8,192 hosts) at 10 Gbps with 1 MB buffers,
each run long enough for about three million events, the sizes alternated round by round (each run in a
process of its own) and the fastest run of each kept; before and after, a dependent load timed through
working sets of 1 to 64 MiB (`detailsim._core.load_latency_ns`), through every line and through one line
per 4 KiB page (which tells the data's distance from the pages' translation). On a shared VM the per-event
cost of the large fabrics follows the second table: where a load's cost jumps, so does an event's.

    python benches/sizes.py                   # FH, five rounds, printed
    python benches/sizes.py --scheme detail --rounds 3
    python benches/sizes.py --update-docs     # stored in docs/benchmarks-sizes.json and its tables in docs/benchmarks.md
    python benches/sizes.py --scheme detail --update-docs   # DeTail's, in docs/benchmarks-sizes-detail.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the suite's fat-tree settings, processor and stamp)

# fat tree k -> simulated time for about three million events of paper/steady at 10 Gbps (FH)
SIZES: dict[int, str] = {8: "60ms", 12: "20ms", 16: "6ms", 20: "3.5ms", 24: "2ms", 28: "1.3ms", 32: "1ms"}
PROBE_MIB = (1, 2, 4, 6, 8, 12, 16, 32, 64)
# bytes of one port's state (`fabric::Port`: the transmitter's line, the egress and ingress queues, three
# lines each, and the rest; fabric/mod.rs asserts the size)
PORT_BYTES = 512
DOC = "docs/benchmarks.md"
SCHEMES = ("fh", "detail")


def doc_json(scheme: str) -> str:
    """Where a scheme's sweep is stored (FH's is the one the prose reads)."""
    return "docs/benchmarks-sizes.json" if scheme == "fh" else f"docs/benchmarks-sizes-{scheme}.json"


def block(scheme: str) -> str:
    """The generated block of docs/benchmarks.md that holds a scheme's tables."""
    return "bench-sizes" if scheme == "fh" else f"bench-sizes-{scheme}"


def source(scheme: str) -> str:
    return f"{doc_json(scheme)} by `benches/sizes.py{'' if scheme == 'fh' else ' --scheme ' + scheme} --update-docs`"


def hosts(k: int) -> int:
    return k**3 // 4


def ports(k: int) -> int:
    """Ports of a k-ary fat tree: 5k^2/4 switches of k ports, and a NIC per host."""
    return 5 * k**2 // 4 * k + hosts(k)


def run_size(k: int, scheme: str) -> dict:
    """One run of size `k` in this process: events, and the core loop's wall seconds (not the set-up's)."""
    import detailsim

    r = detailsim.run("paper/steady", scheme=scheme, duration=SIZES[k], set={"run.threads": 1} | bench.FATTREE | {"topology.k": k})
    s = r.summary
    return {"k": k, "events": s["events"], "traversals": s["link_traversals"], "core_wall_s": s["wall_s"]}


def _child(k: int, scheme: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(k), "--scheme", scheme], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def probe(steps: int = 5_000_000, per_page: bool = False) -> dict[str, float]:
    """Nanoseconds per dependent load through each of `PROBE_MIB` (a pointer chase in a random cycle of
    lines; `per_page`: of one line per 4 KiB page, the same pages through a 64th of the data)."""
    return bench.memory_probe(steps, mib=PROBE_MIB, per_page=per_page)


def probes() -> dict[str, dict[str, float]]:
    """The machine's loads now: through every line of each working set, and through one line per page."""
    return {"lines": probe(), "pages": probe(per_page=True)}


def summarise(runs: list[dict]) -> list[dict]:
    """Per size, in the order of `SIZES`: the fastest run's nanoseconds per event, every run's, and the
    ratio to the smallest size's."""
    rows = []
    for k in SIZES:
        mine = [r for r in runs if r["k"] == k]
        if not mine:
            continue
        ns = [round(r["core_wall_s"] / r["events"] * 1e9, 1) for r in mine]
        rows.append({"k": k, "hosts": hosts(k), "ports": ports(k), "duration": SIZES[k], "events": mine[0]["events"],
                     "traversals": mine[0]["traversals"], "ns_per_event_runs": ns, "ns_per_event": min(ns)})
    if rows:
        base = rows[0]["ns_per_event"]
        for r in rows:
            r["ratio"] = round(r["ns_per_event"] / base, 2)
    return rows


def markdown(data: dict) -> str:
    """The two tables of docs/benchmarks.md's "Flat with size" from the stored run."""
    lines = [f"Measured {data['date']} at {data['commit']} on {data['machine']} ({data['cpu']}), scheme `{data['scheme']}`, "
             f"{data['rounds']} rounds with the sizes alternated, the fastest run of each size kept (every run's figure in "
             f"{doc_json(data['scheme'])}). Port state: {PORT_BYTES} bytes per port (`fabric::Port`).", "",
             "| k | hosts | ports | port state MB | simulated | events | ns per event, fastest | against the smallest |",
             "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['k']} | {r['hosts']:,} | {r['ports']:,} | {r['ports'] * PORT_BYTES / 1e6:.1f} | {r['duration']} | "
                     f"{r['events']:,} | {r['ns_per_event']:.0f} | {r['ratio']:.2f}x |")
    pr = data["probe"]
    lines += ["", "| working set, MiB | " + " | ".join(pr["before"]["lines"]) + " |", "|---|" + "---|" * len(pr["before"]["lines"])]
    for when in ("before", "after"):
        for what, label in (("lines", "ns per dependent load"), ("pages", "the same, one line per 4 KiB page")):
            lines.append(f"| {label}, {when} | " + " | ".join(f"{v:.0f}" for v in pr[when][what].values()) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--scheme", default="fh", choices=SCHEMES, help="the scheme every size runs (default fh)")
    ap.add_argument("--rounds", type=int, default=5, metavar="N", help="rounds, each running every size once (default 5)")
    ap.add_argument("--sizes", type=int, nargs="+", choices=sorted(SIZES), metavar="K", help=f"only these k (of {sorted(SIZES)})")
    ap.add_argument("--update-docs", action="store_true", help=f"store the run in {doc_json('fh')} (or the scheme's) and its tables in {DOC}")
    a = ap.parse_args()
    if a.child is not None:
        print(json.dumps(run_size(a.child, a.scheme)))
        return
    if a.rounds < 1:
        ap.error(f"--rounds must be at least 1 (got {a.rounds})")
    sizes = a.sizes or list(SIZES)
    before = probes()
    for what, p in before.items():
        print(f"dependent load ({what}), ns: " + ", ".join(f"{m} MiB {v}" for m, v in p.items()), flush=True)
    runs = []
    for i in range(a.rounds):
        for k in sizes:
            r = _child(k, a.scheme)
            runs.append(r)
            print(f"round {i + 1} k = {k:<3} {r['events']:>10,} events {r['core_wall_s'] / r['events'] * 1e9:7.1f} ns per event", flush=True)
    after = probes()
    data = bench._stamp() | {"scheme": a.scheme, "rounds": a.rounds, "probe": {"before": before, "after": after}, "rows": summarise(runs)}
    print(markdown(data))
    if a.update_docs:
        from detailsim.repro.docblocks import write_generated

        write_generated(Path("."), DOC, doc_json(a.scheme), block(a.scheme), data, markdown(data), source(a.scheme))
        print(f"wrote {doc_json(a.scheme)} and the tables in {DOC}")


if __name__ == "__main__":
    main()
