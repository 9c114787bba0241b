"""Runs that show why a claim does not reproduce (docs/reproduction.md, "Claims that do not reproduce, and
why"). A demonstration names the claims it is about, a scenario, and variants that differ in keys the
papers leave open (or in a way the section states); `detailsim demonstrate [ID...] --out DIR` runs each
through the sweep machinery (DIR/ID, resumable) and measures every variant's classes, seeds pooled
(nearest-rank percentiles over all measured flows, the 95% interval over seeds, the share of flows with a
timeout). `--update-docs` stores the measurements in docs/reproduction/demonstrations.json, which the
section's generated prose quotes: a number there is a measurement of a named, re-runnable demonstration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

DOC_DEMOS = Path("docs/reproduction/demonstrations.json")
NO_ECN = {"scheme.source_ecn": False, "scheme.tcp.ecn": False}


@dataclass(frozen=True)
class Demo:
    id: str
    claims: tuple[str, ...]
    what: str
    base: str
    # label -> the keys it sets ("scheme" and scenario keys); every variant sets the same keys
    variants: dict[str, dict[str, Any]]
    seeds: int = 4
    set: dict[str, Any] = field(default_factory=dict)
    classes: tuple[str, ...] | None = None

    def spec(self) -> dict[str, Any]:
        keys = list(next(iter(self.variants.values())))
        for label, v in self.variants.items():
            if set(v) != set(keys):
                raise ValueError(f"demonstration {self.id}: variant {label!r} sets {sorted(v)}, the first sets {sorted(keys)}")
        zipped = {"variant": list(self.variants)} | {k: [v[k] for v in self.variants.values()] for k in keys}
        return {"name": f"demonstrate_{self.id}", "description": f"detailsim demonstrate {self.id}: {self.what}", "base": self.base,
                "seeds": self.seeds, "set": dict(self.set), "axes": {}, "zip": [zipped], "labels": ["variant"]}

    def command(self) -> str:
        return f"detailsim demonstrate {self.id}"


BURST_80 = {"workload.burst_length": "80ms", "run.duration": "0.3s", **NO_ECN}

def _arrivals_on(id: str, claim: str, workload: str, runs: str, baseline: str, window: str, drain: str) -> Demo:
    """A leaf-spine reproduction's runs (`runs`: its scenario, window and seeds) at load 0.8 with arrivals kept on
    while the measured flows finish, `baseline` against PIAS: a drained run stops the short flows that make
    the schemes differ on the long ones (LAS starves them only while short ones keep coming)."""
    return Demo(id, (claim,),
                f"Section 5.3's {workload} at load 0.8 on the leaf-spine ({runs}'s window and seeds), arrivals kept on "
                f"(`run.keep_load`) while the measured flows finish, {baseline.upper()} against PIAS",
                f"paper/{runs}", {baseline: {"scheme": baseline}, "pias": {"scheme": "pias"}},
                seeds=3, set={"run.duration": window, "workload.load": 0.8, "run.keep_load": True, "run.drain": drain},
                classes=("small", "medium", "large"))


# The memcached servers' time per request (`server_time`): the paper's base query, "around 650us in our testbed"
# (PIAS 003:285), less the base query the network model gives without it (0.2497 ms: claims.json,
# pias_memcached.base, at 2026-11-27), rounded to the microsecond.
MEMCACHED_SERVER_TIME = "400us"
MEMCACHED_LOADS = ("none", 0.5, 0.6, 0.7, 0.8)


def _memcached_variants() -> dict[str, dict[str, Any]]:
    """DCTCP at every background load and PIAS at 0.8, at 20 and 40 queries/s (the claims' points)."""
    out: dict[str, dict[str, Any]] = {}
    for qps in (20, 40):
        for scheme, loads in (("dctcp", MEMCACHED_LOADS), ("pias", (0.8,))):
            for load in loads:
                out[f"{scheme}_{qps}qps_{load}"] = {"scheme": scheme, "workload.0.rate": qps,
                                                    "workload.1.load": 1e-9 if load == "none" else load}
    return out


DEMOS: dict[str, Demo] = {d.id: d for d in [
    Demo("scatter_fh_around_link", ("scatter.degraded_worse",),
         "Figure 4 degraded: FH's flows hashed over the 100 Mbps link (as the reproduction) and routed around it "
         "(the link down for FH), against scatter, which sprays over it",
         "paper/scatter",
         {"fh": {"scheme": "fh", "fault": [{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps"}]},
          "fh_around": {"scheme": "fh", "fault": [{"kind": "link_down", "link": "agg_core#0"}]},
          "scatter": {"scheme": "scatter", "fault": [{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps"}]}},
         seeds=3, set={"run.duration": "0.3s", "run.drain": "5s"}),
    Demo("disconnected_80ms", ("disconnected.fh_2kb_p999", "disconnected.lps_worse"),
         "Figure 12's 80 ms bursts under the readings of FH's ingress and the egress division the text leaves open",
         "paper/disconnected",
         {"fh": {"scheme": "fh", "scheme.ingress_sharing": "eighths", "scheme.egress_sharing": "in_use"},
          "fh_ingress_shared": {"scheme": "fh", "scheme.ingress_sharing": "shared", "scheme.egress_sharing": "in_use"},
          "fh_egress_eighths": {"scheme": "fh", "scheme.ingress_sharing": "eighths", "scheme.egress_sharing": "eighths"},
          "lps": {"scheme": "lps", "scheme.ingress_sharing": "eighths", "scheme.egress_sharing": "in_use"},
          "lps_egress_eighths": {"scheme": "lps", "scheme.ingress_sharing": "eighths", "scheme.egress_sharing": "eighths"}},
         seeds=4, set=BURST_80, classes=("retrieval/2KB", "retrieval/8KB", "retrieval/32KB")),
    # slide 30 ("Evaluated push-back w/o adaptive load balancing - Performs worse than baseline") follows the
    # page-creation results of slide 29: PFC alone on that workload, healthy and with the degraded link
    Demo("pfc_alone_page_creation", ("pfc_alone.worse_than_fh",),
         "slide 30's PFC alone on slide 29's page creation (sequential workflows of 2-32 KB retrievals), healthy and with a degraded core-agg link",
         "paper/sequential",
         {f"{s}_{v}": {"scheme": s, "fault": f} for v, f in (("healthy", []), ("degraded", [{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps"}]))
          for s in ("fh", "pfc_only", "detail")},
         seeds=4, set={"run.duration": "0.3s", "run.drain": "10s", "workload.0.sizes": ["2KB", "4KB", "8KB", "16KB", "32KB"], **NO_ECN},
         classes=("workflow/sequential", "retrieval/2KB", "retrieval/32KB")),
    Demo("memcached_server_time", ("pias_memcached.base", "pias_memcached.dctcp_mean_40qps", "pias_memcached.dctcp_mean_20qps",
                                   "pias_memcached.mean_cut", "pias_memcached.p99_cut"),
         f"the memcached-like queries of pias_memcached with every server taking {MEMCACHED_SERVER_TIME} on each request "
         "(the paper's 650 us base query less the network's), DCTCP at every background load and PIAS at 0.8",
         "paper/pias_memcached", _memcached_variants(), seeds=4,
         set={"run.duration": "30s", "workload.0.server_time": MEMCACHED_SERVER_TIME}, classes=("workflow/partition-aggregate/15",)),
    _arrivals_on("las_arrivals_on", "pias_leafspine.beats_las_overall", "web search", "pias_websearch", "las", "0.1s", "0.5s"),
    _arrivals_on("dm_arrivals_on", "pias_leafspine.large_dm", "data mining", "pias_datamining", "dctcp", "0.15s", "1s"),
]}


def measure(d: Path) -> dict[str, Any]:
    """What a demonstration's store measured (`measure_flows` of its flow table)."""
    from ..core.sweep import read_store

    return measure_flows(read_store(d, columns=["variant", "seed", "class", "fct", "fct_lower", "timeouts"], tables=("flows",))["flows"])


def measure_flows(f: pl.DataFrame) -> dict[str, Any]:
    """Per variant and class of a demonstration's flows: the pooled statistics (ms), their 95% interval over
    seeds (`<metric>_ci`), the share of measured flows with a timeout (%) and the mean over every measured
    flow with the unfinished at their age (`mean_all_lb_ms`, a lower bound of the mean). The same flows in
    any row order give the same record, to the last digit (`core.sums`)."""
    from ..core.sums import sorted_mean
    from ..outputs.plots import pooled_percentiles, seed_ci

    stats = pooled_percentiles(f, ["variant"])
    ci = seed_ci(f, ["variant"])
    # the share of flows with a timeout (%), and how many timeouts the flow at the 99.9th percentile of the
    # timeout count had (nearest rank)
    # and the mean over every measured flow with the unfinished ones at their age when the run ended (a lower
    # bound of the mean: an unfinished flow takes at least that long), ms
    to = f.group_by(["variant", "class"]).agg((pl.col("timeouts") > 0).mean().alias("timeouts_pct") * 100,
                                              pl.col("timeouts").sort().gather((pl.len() * 0.999).ceil().cast(pl.Int64) - 1).first().alias("timeouts_p999"),
                                              (sorted_mean(pl.coalesce("fct", "fct_lower")) * 1e3).alias("mean_all_lb_ms"))
    out: dict[str, Any] = {}
    for row in stats.join(to, on=["variant", "class"], how="left", maintain_order="left").iter_rows(named=True):
        c = {k: v for k, v in row.items() if k not in ("variant", "class")}
        if ci is not None:
            m = ci.filter((pl.col("variant") == row["variant"]) & (pl.col("class") == row["class"]))
            c.update({k: m[k][0] for k in m.columns if k.endswith("_ci")} if m.height else {})
        out.setdefault(row["variant"], {})[row["class"]] = c
    return out


def run_demo(demo: Demo, out: Path, workers: int | None = None, scheduler: str | None = None, progress: bool = False) -> dict[str, Any]:
    """Run (or resume) a demonstration into out/ID and return its record for demonstrations.json."""
    from ..core.sweep import run_store

    d = out / demo.id
    d.mkdir(parents=True, exist_ok=True)
    run_store(demo.spec(), d, demo.command(), workers, scheduler, progress)
    got = measure(d)
    if demo.classes:
        got = {v: {c: s for c, s in cls.items() if c in demo.classes} for v, cls in got.items()}
    return {"claims": list(demo.claims), "what": demo.what, "command": demo.command(), "base": demo.base,
            "variants": demo.variants, "set": demo.set, "seeds": demo.seeds, "measured": got}


def load_demos(root: Path) -> dict[str, Any]:
    p = root / DOC_DEMOS
    return json.loads(p.read_text()) if p.exists() else {}


def store(records: dict[str, dict[str, Any]], root: Path) -> Path:
    """Merge `records` into docs/reproduction/demonstrations.json (those of demonstrations no longer declared
    are dropped)."""
    p = root / DOC_DEMOS
    have = json.loads(p.read_text()) if p.exists() else {}
    merged = {k: v for k, v in {**have, **records}.items() if k in DEMOS}
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(dict(sorted(merged.items())), indent=1, default=str) + "\n")
    return p
