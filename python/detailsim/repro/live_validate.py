"""Live mode against the simulator, as the DeTail paper checked its NS-3 model against its Click testbed.

`detailsim live-validate` runs one scenario (by default ``live/verification``: the paper's 16-server
testbed with every rate divided by 10) under ``run`` and ``live`` for each scheme and retrieval rate, with
the same seed, so both replay the very same flows. Per flow class it reports the median, p99 and p99.9
of both, their difference, and a paired bootstrap 95% interval of that difference (flows are resampled
together, since flow i is the same request in both). The emulator's own error (ring drops, pacing
lateness, how late the hosts started flows, forwarder load) sits beside every row, because a difference
is only the model's when the emulator kept up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .docblocks import block_of, write_generated
from ..core.results import QUANTILES, nearest_rank

DEFAULT_SCENARIO = "live/verification"
DEFAULT_SCHEMES = ("fh", "detail")
#: The paper's 500, 1000 and 1500 retrievals/s per front-end, divided by 10 with the link rates.
DEFAULT_RATES = (50, 100, 150)
DOC = "docs/live.md"
DOC_JSON = "docs/live/validation.json"
SOURCE = f"{DOC_JSON} by `detailsim live-validate --update-docs`"
BLOCK = "live-validation"
BOOTSTRAP = 400


def _q(x: np.ndarray, q: float) -> float:
    return nearest_rank(np.sort(x), q) * 1e3


def _diff(run_s: np.ndarray, other: np.ndarray, q: float, idx: np.ndarray | None) -> dict[str, Any]:
    r, o = _q(run_s, q), _q(other, q)
    d: dict[str, Any] = {"ms": o, "diff_ms": o - r, "diff_pct": 100.0 * (o - r) / r if r > 0 else None}
    if idx is not None:
        boots = np.array([_q(other[i], q) - _q(run_s[i], q) for i in idx])
        d["diff_ci95_ms"] = [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))]
    return d


def compare_class(run_s: np.ndarray, live_s: np.ndarray, host_s: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """Run and live FCTs (seconds) of the same flows, paired by position, and the part of each live FCT
    its hosts' agents spent being scheduled: per quantile, run's value (ms), live's and live's without
    the host delay, each with its difference from run and the paired bootstrap 95% interval of it."""
    out: dict[str, Any] = {"count": int(len(run_s))}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(run_s), size=(BOOTSTRAP, len(run_s))) if len(run_s) else None
    net = live_s - host_s
    for name, q in QUANTILES.items():
        out[name] = {"run_ms": _q(run_s, q), "live": _diff(run_s, live_s, q, idx), "live_net": _diff(run_s, net, q, idx),
                     "host_delay_ms": _q(host_s, q)}
    return out


def emulator_health(summary: dict[str, Any]) -> dict[str, Any]:
    e = summary["emulator"]
    return {"ring_drops": e["ring_drops"], "send_failures": e["send_failures"], "pacing_late_p99_us": e["pacing_late_us"]["p99"],
            "pacing_late_max_us": e["pacing_late_us"]["max"], "flow_start_late_p99_us": e["flow_start_late_us"]["p99"],
            "forwarder_busy": e["cpu_saturation"], "flows_completed": summary["flows"]["completed"], "flows_planned": summary["flows"]["planned"],
            "retransmits": summary["retransmits"], "pfc_frames": summary["pfc"]["pause_frames"], "ecn_marks": summary["ecn_marks"],
            "drops": summary["drops"]}


def validate(scenario: str, schemes: list[str], rates: list[float], duration: str | None, seed: int | None,
             sets: list[str], drain_s: float, say: Callable[[str], None]) -> dict[str, Any]:
    """Run every (scheme, rate) under run and live; the comparison as one JSON-able dict."""
    import polars as pl

    from ..live import run_live
    from ..core.scenario import prepare

    cases = []
    for scheme in schemes:
        for rate in rates:
            sc, name = prepare(scenario, scheme=scheme, seed=seed, duration=duration, sets=[*sets, f"workload.0.rate={rate:g}"])
            say(f"== {scheme}, {rate:g} retrievals/s per front-end")
            summary, live, _ports, sim = run_live(sc, name, drain_s=drain_s, say=say)
            both = sim.flows.select("id", "class", pl.col("fct").alias("run")).join(
                live.select("id", pl.col("fct").alias("live"), pl.col("host_delay").fill_null(0.0)), on="id")
            classes = {}
            for cls in both["class"].unique(maintain_order=True).to_list():
                c = both.filter((pl.col("class") == cls) & pl.col("run").is_not_null() & pl.col("live").is_not_null())
                classes[str(cls)] = compare_class(c["run"].to_numpy(), c["live"].to_numpy(), c["host_delay"].to_numpy(), seed=len(cases))
            cases.append({"scheme": scheme, "rate": rate, "seed": summary["seed"], "classes": classes, "emulator": emulator_health(summary),
                          "sim": {"retransmits": sim.summary["retransmits"], "timeouts": sim.summary["timeouts"],
                                  "pfc_pauses": sim.summary["pfc"]["pauses"], "drops": sim.summary["congestion_drops"]}})
    return {"scenario": scenario, "duration": duration, "sets": sets, "cases": cases}


def _fmt_diff(d: dict[str, Any]) -> str:
    pct = "" if d["diff_pct"] is None else f"{d['diff_pct']:+.0f}%"
    ci = d.get("diff_ci95_ms")
    # bold: the paired bootstrap interval of the difference excludes 0
    return f"**{pct}**" if ci and (ci[0] > 0 or ci[1] < 0) else pct


QUANTILE_TITLES = {"p50": "Median", "p99": "99th percentile", "p999": "99.9th percentile"}


def table(res: dict[str, Any]) -> str:
    """The side-by-side tables docs/live.md shows: one per quantile, then the emulator's health."""
    lines: list[str] = []
    for q, title in QUANTILE_TITLES.items():
        lines += [f"**{title}** (ms; Δ against run, bold where the paired bootstrap 95% interval excludes 0)", "",
                  "| scheme | rate/s | class | flows | run | live | Δ | host delay | live − host delay | Δ |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for c in res["cases"]:
            for cls, v in c["classes"].items():
                d = v[q]
                lines.append(f"| {c['scheme']} | {c['rate']:g} | {cls.replace('retrieval/', '')} | {v['count']} | {d['run_ms']:.2f} | "
                             f"{d['live']['ms']:.2f} | {_fmt_diff(d['live'])} | {d['host_delay_ms']:.2f} | {d['live_net']['ms']:.2f} | {_fmt_diff(d['live_net'])} |")
        lines.append("")
    lines.append("**The emulator's own error** per run")
    lines.append("")
    lines.append("| scheme | rate/s | flows done | ring drops | pacing late p99 / max (µs) | flow start late p99 (µs) | forwarder busy | retransmits live / run | PFC frames live / pauses run | drops live / run |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for c in res["cases"]:
        e, s = c["emulator"], c["sim"]
        drops = sum(e["drops"].values())
        lines.append(f"| {c['scheme']} | {c['rate']:g} | {e['flows_completed']}/{e['flows_planned']} | {e['ring_drops']} | "
                     f"{e['pacing_late_p99_us']:.0f} / {e['pacing_late_max_us']:.0f} | {e['flow_start_late_p99_us']:.0f} | "
                     f"{100 * e['forwarder_busy']:.0f}% | {e['retransmits']} / {s['retransmits']} | {e['pfc_frames']} / {s['pfc_pauses']} | {drops} / {s['drops']} |")
    return "\n".join(lines)


def update_docs(res: dict[str, Any], root: Path) -> None:
    write_generated(root, DOC, DOC_JSON, BLOCK, res, table(res), SOURCE)


def doc_block(root: Path) -> str | None:
    return block_of((root / DOC).read_text(), BLOCK, source=SOURCE)
