"""Which machine a timed figure comes from: the processor as the kernel names it, with one core's data
caches. The project's VM is not always placed on the same kind of host (docs/benchmarks.md, "Which
machine"), and every wall time depends on which, so the benchmark suite's stamps and each reproduction's
`timing.json` name it. The standard library only: `benches/bench.py --cpu` (which `benches/pair.sh` calls
with the system's Python) loads this file by its path."""

from __future__ import annotations

from pathlib import Path


def processor(cpuinfo: str = "/proc/cpuinfo", caches: str = "/sys/devices/system/cpu/cpu0/cache") -> str:
    """E.g. "Intel(R) Xeon(R) Processor (family 6, model 207); L1d 48K, L2 2048K, L3 266240K"; "unknown"
    where the kernel does not say (not Linux)."""
    try:
        info = dict(ln.split(":", 1) for ln in Path(cpuinfo).read_text().split("\n\n")[0].splitlines() if ":" in ln)
    except OSError:
        return "unknown"
    info = {k.strip(): v.strip() for k, v in info.items()}
    name = info.get("model name", "unknown")
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    sizes = []
    for d in sorted(Path(caches).glob("index*")):
        try:
            level, kind, size = ((d / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        if kind != "Instruction":
            sizes.append(f"L{level}{'d' if kind == 'Data' else ''} {size}")
    return name + (f"; {', '.join(sizes)}" if sizes else "")
