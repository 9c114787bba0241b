"""Reproductions of the DeTail paper's evaluations, each a predefined sweep run through the sweep
machinery, with its plot, a Markdown table and a claims table.

    detailsim reproduce --list
    detailsim reproduce NAME [--quick] [--out DIR] [--workers N] [--scheduler ADDRESS]
    detailsim reproduce all --quick

Each writes DIR/NAME/: the results store (Parquet), plots (PNG and SVG), table.md, claims.json and
report.html. ``--quick`` shortens every run (fewer seeds, shorter arrival windows) for CI; the full
versions are what docs/reproduction.md quotes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .plots import pooled_percentiles, reduction_table
from .sweep import load_sweep, read_store, run_sweep

SIZES = ["retrieval/2KB", "retrieval/8KB", "retrieval/32KB"]
DEGRADE = [{"kind": "degrade", "link": "agg_core#0", "rate": "100Mbps"}]


@dataclass
class Claim:
    claim: str
    paper: str
    measured: str
    holds: bool


@dataclass
class Repro:
    name: str
    title: str
    base: str
    axes: dict[str, list[Any]]
    seeds: int = 2
    set: dict[str, Any] = field(default_factory=dict)
    zip: list[dict[str, list[Any]]] = field(default_factory=list)
    quick_set: dict[str, Any] = field(default_factory=dict)
    quick_axes: dict[str, list[Any]] = field(default_factory=dict)
    classes: list[str] = field(default_factory=lambda: list(SIZES))
    claims: Callable[[pl.DataFrame, pl.DataFrame], list[Claim]] | None = None
    hide: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    plot_x: str | None = None
    baseline: str = "fh"
    # what the percentile and reduction plots show (the PIAS claims are about mean FCT)
    metric: str = "p999"

    def sweep_spec(self, quick: bool) -> dict[str, Any]:
        axes = {**self.axes, **(self.quick_axes if quick else {})}
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.title + (" (quick)" if quick else ""),
            "base": self.base,
            "seeds": 1 if quick else self.seeds,
            "set": {**self.set, **(self.quick_set if quick else {})},
            "axes": axes,
        }
        if self.zip:
            spec["zip"] = self.zip
        if self.hide:
            spec["hide"] = self.hide
        if self.labels:
            spec["labels"] = self.labels
        return spec


# ---------------------------------------------------------------- helpers for claims


def pct(stats: pl.DataFrame, cls: str, metric: str = "p999", **where: Any) -> float:
    q = stats.filter(pl.col("class") == cls)
    for k, v in where.items():
        q = q.filter(pl.col(k) == v)
    return float(q[f"{metric}_ms"][0]) if q.height else float("nan")


def cut(stats: pl.DataFrame, cls: str, metric: str = "p999", scheme: str = "detail", base: str = "fh", **where: Any) -> float:
    a, b = pct(stats, cls, metric, scheme=base, **where), pct(stats, cls, metric, scheme=scheme, **where)
    return (a - b) / a * 100


def fmt_cuts(xs: list[float]) -> str:
    return ", ".join(f"{x:.0f}%" for x in xs)


def steady_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    rates = sorted(stats["workload.rate"].unique().to_list())
    out = []
    for m, name in [("p99", "99th"), ("p999", "99.9th")]:
        cuts = [cut(stats, c, m, **{"workload.rate": r}) for r in rates for c in SIZES]
        out.append(Claim(f"DeTail cuts the {name} percentile of every size", "substantially, up to ~70%",
                         f"{min(cuts):.0f}% to {max(cuts):.0f}% over sizes x rates", min(cuts) > 0))
    by_rate = [sum(cut(stats, c, "p999", **{"workload.rate": r}) for c in SIZES) / 3 for r in rates]
    out.append(Claim("the 99.9th percentile cut grows with the retrieval rate", "grows with the rate",
                     "mean cut by rate " + ", ".join(f"{r}/s: {c:.0f}%" for r, c in zip(rates, by_rate)),
                     all(a <= b for a, b in zip(by_rate, by_rate[1:]))))
    med = [-cut(stats, c, "p50", **{"workload.rate": r}) for r in rates for c in SIZES]
    out.append(Claim("the median does not get worse", "no worse", f"DeTail median change {min(med):+.0f}% to {max(med):+.0f}%", max(med) <= 10))
    drops = summary.filter(pl.col("scheme") == "detail")["congestion_drops"].sum()
    out.append(Claim("DeTail never drops a packet because of congestion", "no congestion drops", f"{drops} congestion drops", drops == 0))
    return out


def bursty_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    lengths = sorted(stats["workload.burst_length"].unique().to_list())
    cuts = [cut(stats, c, "p999", **{"workload.burst_length": b}) for b in lengths for c in SIZES]
    to_fh = summary.filter(pl.col("scheme") == "fh")["timeouts"].sum()
    to_dt = summary.filter(pl.col("scheme") == "detail")["timeouts"].sum()
    return [
        Claim("DeTail cuts the 99.9th percentile by roughly half or more", ">= ~50%", f"{min(cuts):.0f}% to {max(cuts):.0f}%", min(cuts) >= 45),
        Claim("FH suffers timeouts, DeTail none", "FH > 0, DeTail 0", f"FH {to_fh}, DeTail {to_dt}", to_fh > 0 and to_dt == 0),
    ]


def fault_claims(kind: str) -> Callable[[pl.DataFrame, pl.DataFrame], list[Claim]]:
    def claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
        cuts = [cut(stats, c, "p999") for c in SIZES]
        worse = [(c.split("/")[1], m, cut(stats, c, m, scheme="lps")) for c in SIZES for m in ("p50", "p99", "p999")]
        worst = min(worse, key=lambda w: w[2])
        return [
            Claim(f"with a {kind} core-agg link DeTail's advantage over FH is large", "grows sharply (vs the healthy fabric)",
                  f"p99.9 cut {fmt_cuts(cuts)} (2/8/32 KB)", min(cuts) > 50),
            Claim("LPS can be worse than FH", "LPS worse than FH in some cases",
                  f"LPS vs FH, worst case: {worst[0]} {worst[1]} {-worst[2]:+.0f}%; p99.9 cut {fmt_cuts([cut(stats, c, 'p999', scheme='lps') for c in SIZES])}",
                  worst[2] < 0),
        ]
    return claims


def long_flow_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    m = {s: float(stats.filter((pl.col("class") == "background") & (pl.col("scheme") == s))["mean_ms"][0]) for s in ("fh", "lps", "detail")}
    return [Claim("long low-priority flows are not hurt", "mean FCT no worse than FH",
                  f"mean FCT of the 1/16/64 MB flows: FH {m['fh']:.0f} ms, LPS {m['lps']:.0f} ms, DeTail {m['detail']:.0f} ms",
                  m["detail"] <= m["fh"] * 1.05)]


def workflow_claims(cls: str) -> Callable[[pl.DataFrame, pl.DataFrame], list[Claim]]:
    def claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
        c = cut(stats, cls, "p999")
        return [Claim(f"{cls.split('/')[1]} workflows gain at the 99.9th percentile", "gain", f"workflow p99.9 cut {c:.0f}%", c > 0)]
    return claims


def scatter_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    healthy = [cut(stats, c, "p999", scheme="scatter", variant="healthy") for c in SIZES]
    degraded = [cut(stats, c, "p999", scheme="scatter", variant="degraded") for c in SIZES]
    return [
        Claim("packet scatter beats flow hashing at the tail (infinite buffers, no retransmission)", "lower tail than hashing",
              f"p99.9 cut by scatter {fmt_cuts(healthy)}", min(healthy) > 0),
        Claim("with a degraded link, packet scatter suffers (it keeps using the slow link)", "scatter hurt by the asymmetry",
              f"p99.9 cut by scatter {fmt_cuts(degraded)}", min(degraded) < min(healthy)),
    ]


def incast_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    drops = summary["congestion_drops"].sum()
    s = summary.sort(["scheme.tcp.rto_min", "workload.0.senders"])
    cells = [f"RTO {r['scheme.tcp.rto_min']} x {r['workload.0.senders']} senders: {r['retransmits']}" for r in s.iter_rows(named=True)]
    big = summary.filter(pl.col("scheme.tcp.rto_min") == "200ms")["retransmits"].sum()
    small = summary.filter(pl.col("scheme.tcp.rto_min") != "200ms")["retransmits"].sum()
    return [
        Claim("under PFC nothing is lost, so every retransmission is spurious", "lossless", f"{drops} congestion drops", drops == 0),
        Claim("small timeouts cause spurious retransmissions under incast; 200 ms avoids them", "choose the RTO above the incast's queueing delay",
              "; ".join(cells), big == 0 and small > 0),
    ]


def mean_of(stats: pl.DataFrame, cls: str, **where: Any) -> float:
    q = stats.filter(pl.col("class") == cls)
    for k, v in where.items():
        q = q.filter(pl.col(k) == v)
    return float(q["mean_ms"][0]) if q.height else float("nan")


def dibs_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    degrees = sorted(summary["incast_degree"].unique().to_list())
    top = degrees[-1]
    cls = f"workflow/partition-aggregate/{top}"
    a = pct(stats, cls, "p99", scheme="dctcp", incast_degree=top)
    b = pct(stats, cls, "p99", scheme="dibs", incast_degree=top)
    d_drops = summary.filter(pl.col("scheme") == "dctcp")["congestion_drops"].sum()
    b_drops = summary.filter(pl.col("scheme") == "dibs")["congestion_drops"].sum()
    bg = [(pct(stats, "medium", "p99", scheme="dctcp", incast_degree=n), pct(stats, "medium", "p99", scheme="dibs", incast_degree=n)) for n in degrees]
    return [
        Claim("DIBS avoids the losses", "drops near zero", f"congestion drops: DCTCP {d_drops}, DIBS {b_drops}", b_drops <= max(1, d_drops // 20)),
        Claim("as the incast degree grows DIBS improves the query completion tail", "99th QCT lower with DIBS",
              f"degree {top}: 99th QCT DCTCP {a:.2f} ms, DIBS {b:.2f} ms", b < a),
        Claim("little collateral damage to background flows", "background p99 about the same",
              "medium background p99 (DCTCP -> DIBS): " + ", ".join(f"{x:.1f} -> {y:.1f} ms" for x, y in bg),
              all(y <= 1.5 * x for x, y in bg)),
    ]


def small_cut(stats: pl.DataFrame, base: str, load: float, scheme: str = "pias") -> float:
    b = mean_of(stats, "small", scheme=base, **{"workload.load": load})
    return (b - mean_of(stats, "small", scheme=scheme, **{"workload.load": load})) / b * 100


def pias_claims(cdf: str) -> Callable[[pl.DataFrame, pl.DataFrame], list[Claim]]:
    return lambda stats, summary: _pias_claims(stats, cdf)


def _pias_claims(stats: pl.DataFrame, cdf: str) -> list[Claim]:
    loads = sorted(stats["workload.load"].unique().to_list())
    schemes = set(stats["scheme"].unique().to_list())
    cuts = [small_cut(stats, "dctcp", l) for l in loads]
    out = [Claim("PIAS cuts the average FCT of small flows versus DCTCP", "up to about half",
                 "small-flow mean FCT cut by load " + ", ".join(f"{l}: {c:.0f}%" for l, c in zip(loads, cuts)), min(cuts) > 0)]
    if "l2dct" in schemes:
        l2 = [small_cut(stats, "l2dct", l) for l in loads]
        out.append(Claim("... and by less versus L2DCT", "a smaller cut than versus DCTCP",
                         "small-flow mean FCT cut vs L2DCT by load " + ", ".join(f"{l}: {c:.0f}%" for l, c in zip(loads, l2)),
                         all(0 < c2 < c1 for c1, c2 in zip(cuts, l2))))
    if "las" in schemes:
        sm = [(mean_of(stats, "small", scheme="las", **{"workload.load": l}), mean_of(stats, "small", scheme="pias", **{"workload.load": l})) for l in loads]
        out.append(Claim("PIAS is close to LAS for short flows", "close",
                         "small mean FCT LAS vs PIAS: " + ", ".join(f"{l}: {a:.3f} vs {b:.3f} ms" for l, (a, b) in zip(loads, sm)),
                         all(b <= 1.5 * a for a, b in sm)))
    if "pfabric" in schemes and cdf == "datamining":
        pf = [(mean_of(stats, "small", scheme="pfabric", **{"workload.load": l}), mean_of(stats, "small", scheme="pias", **{"workload.load": l})) for l in loads]
        out.append(Claim("PIAS is within a few percent of pFabric for small flows (data mining)", "within a few percent",
                         "small mean FCT pFabric vs PIAS: " + ", ".join(f"{l}: {a:.3f} vs {b:.3f} ms" for l, (a, b) in zip(loads, pf)),
                         all(b <= 1.1 * a for a, b in pf)))
    return out


def las_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    q = stats.filter(pl.col("class") == "large")
    m = {r["scheme"]: (r["mean_ms"] or float("nan"), r["count"], r["unfinished"] or 0) for r in q.iter_rows(named=True)}
    if "las" not in m or "pias" not in m:
        return [Claim("PIAS is much better than LAS for long flows in web search (LAS starves them)", "much lower large-flow FCT",
                      "no large flows in this run", False)]
    (la, lc, lu), (pa, pc, pu) = m["las"], m["pias"]
    # unfinished flows have no FCT, so the mean over finished ones flatters the scheme that starves: the
    # claim needs PIAS to finish more large flows in the same time, and no slower on average
    return [Claim("PIAS is much better than LAS for long flows in web search (LAS starves them)", "much lower large-flow FCT",
                  f"large flows under sustained load 0.8: LAS {lc} done (mean {la:.1f} ms), {lu} unfinished at the end of the drain; "
                  f"PIAS {pc} done (mean {pa:.1f} ms), {pu} unfinished",
                  pc > lc and pa <= la)]


def oversubscribed_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    loads = sorted(stats["workload.load"].unique().to_list())
    cuts = [small_cut(stats, "dctcp", l) for l in loads]
    return [Claim("PIAS still beats DCTCP on the 3:1 oversubscribed fabric with ECMP", "lower small-flow mean FCT",
                  "small-flow mean FCT cut vs DCTCP by core load " + ", ".join(f"{l}: {c:.0f}%" for l, c in zip(loads, cuts)),
                  min(cuts) > 0)]


def mismatch_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    m = {(t, e): mean_of(stats, "medium", thresholds=t, ecn=e) for t in ("matched", "mismatched") for e in ("on", "off")}
    return [Claim("ECN rescues medium flows when the thresholds are mismatched to the traffic", "lower medium FCT with ECN",
                  f"web search with data-mining thresholds: medium mean FCT {m['mismatched', 'on']:.2f} ms with ECN, "
                  f"{m['mismatched', 'off']:.2f} ms without (matched thresholds: {m['matched', 'on']:.2f} / {m['matched', 'off']:.2f} ms)",
                  m["mismatched", "on"] < m["mismatched", "off"])]


def threshold_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    out = []
    for cdf in sorted(stats["workload.cdf"].unique().to_list()):
        o = mean_of(stats, "medium", **{"scheme.pias.thresholds": "optimal", "workload.cdf": cdf})
        e = mean_of(stats, "medium", **{"scheme.pias.thresholds": "equal-split", "workload.cdf": cdf})
        out.append(Claim(f"optimised thresholds beat equal split for medium flows ({cdf})", "lower medium-flow mean FCT",
                         f"medium mean FCT optimal {o:.2f} ms, equal split {e:.2f} ms", o < e))
    return out


def queues_claims(stats: pl.DataFrame, summary: pl.DataFrame) -> list[Claim]:
    m = {v: mean_of(stats, "small", variant=v) for v in stats["variant"].unique().to_list()}
    d, two, four, eight = (m.get(k, float("nan")) for k in ("dctcp", "2 queues", "4 queues", "8 queues"))
    share = (d - two) / (d - eight) * 100 if d != eight else float("nan")
    return [Claim("with 2 queues almost as good for small flows as with 8", "close",
                  f"small-flow mean FCT: DCTCP {d:.3f} ms, PIAS with 2 / 4 / 8 queues {two:.3f} / {four:.3f} / {eight:.3f} ms; "
                  f"2 queues give {share:.0f}% of the 8-queue gain over DCTCP",
                  share >= 75)]


PIAS_SCHEMES = ["tcp", "dctcp", "l2dct", "las", "pias", "pfabric"]

REPROS: dict[str, Repro] = {
    r.name: r
    for r in [
        Repro("scatter", "Section 3.3 / Figure 4: packet scatter vs flow hashing, infinite buffers, no retransmission, healthy and degraded",
              "paper/scatter", {"scheme": ["fh", "scatter"]},
              zip=[{"variant": ["healthy", "degraded"], "fault": [[], DEGRADE]}], hide=["fault"], labels=["variant"],
              set={"run.duration": "0.1s"}, quick_set={"run.duration": "0.02s"}, claims=scatter_claims),
        Repro("incast", "Section 4.3.4: timeout selection under incast (1 MB from all servers, 25 times), spurious retransmissions",
              "paper/incast", {"workload.0.senders": [16, 64, 128], "scheme.tcp.rto_min": ["1ms", "5ms", "10ms", "200ms"]}, seeds=1,
              set={"topology.hosts": 129}, quick_set={"workload.repeats": 5}, classes=["incast"], claims=incast_claims, plot_x="workload.0.senders"),
        Repro("verification", "Section 5: simulator verification workload on the 16-server testbed topology",
              "paper/verification", {"scheme": ["fh", "detail"], "workload.rate": [100, 500, 1000, 1500]},
              set={"run.duration": "0.5s"}, quick_set={"run.duration": "0.1s"}, quick_axes={"workload.rate": [100, 1500]}),
        Repro("steady_cdf", "Figure: CDF of retrieval completion times, steady workload at 2000 retrievals/s",
              "paper/steady", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.03s"}),
        Repro("steady", "Figure: reduction of the 99th / 99.9th percentile over FH, steady workload, 3 sizes x 3 rates",
              "paper/steady", {"scheme": ["fh", "lps", "detail"], "workload.rate": [500, 1000, 2000]},
              set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.02s"}, claims=steady_claims),
        Repro("steady_priority_eviction", "The steady workload against an FH baseline whose full ingress buffers drop lower-priority packets first (a test of why the cut does not grow with the rate)",
              "paper/steady", {"workload.rate": [500, 1000, 2000]},
              zip=[{"scheme": ["fh", "detail"], "scheme.priority_eviction": [True, False]}], hide=["scheme.priority_eviction"],
              set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.02s"}, claims=steady_claims),
        Repro("bursty", "Figure: reduction of the 99.9th percentile over FH, bursty workload, 3 sizes x 3 burst lengths",
              "paper/bursty", {"scheme": ["fh", "lps", "detail"], "workload.burst_length": ["20ms", "40ms", "80ms"]},
              set={"run.duration": "0.3s"}, quick_set={"run.duration": "0.1s"}, claims=bursty_claims),
        Repro("long_flows", "Long background flows on the 16-server testbed: mean FCT of 1/16/64 MB low-priority flows",
              "paper/long_flows", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "1s"},
              quick_set={"run.duration": "0.1s"}, classes=[*SIZES, "background"], claims=long_flow_claims),
        Repro("disconnected", "Disconnected core-agg link: FH, LPS and DeTail on the steady workload",
              "paper/disconnected", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.2s"},
              quick_set={"run.duration": "0.02s"}, claims=fault_claims("disconnected")),
        Repro("degraded", "Degraded core-agg link (100 Mbps): FH, LPS and DeTail on the steady workload",
              "paper/degraded", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.2s"},
              quick_set={"run.duration": "0.02s"}, claims=fault_claims("degraded")),
        Repro("sequential", "Sequential workflows: workflow and retrieval completion times",
              "paper/sequential", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.2s"},
              quick_set={"run.duration": "0.03s"}, classes=["workflow/sequential", "retrieval/8KB"],
              claims=workflow_claims("workflow/sequential")),
        Repro("dibs_incast", "DIBS: 99th query completion time vs incast degree, DCTCP alone vs DIBS + DCTCP, with web-search background",
              "paper/dibs", {"scheme": ["dctcp", "dibs"]}, seeds=2,
              zip=[{"incast_degree": [10, 20, 40], "workload.0.fanouts": [[10], [20], [40]]}], labels=["incast_degree"],
              hide=["workload.0.fanouts"], set={"run.duration": "0.2s"}, quick_set={"run.duration": "0.05s"},
              classes=["workflow/partition-aggregate/10", "workflow/partition-aggregate/20", "workflow/partition-aggregate/40", "small", "medium"],
              claims=dibs_claims, baseline="dctcp", plot_x="incast_degree"),
        Repro("pias_websearch", "PIAS vs TCP, DCTCP, L2DCT, LAS and pFabric on the 144-host leaf-spine, web search, loads 0.5-0.8",
              "paper/pias_websearch", {"scheme": PIAS_SCHEMES, "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=1,
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], claims=pias_claims("websearch"), baseline="dctcp", metric="mean"),
        Repro("pias_datamining", "PIAS vs TCP, DCTCP, L2DCT, LAS and pFabric on the 144-host leaf-spine, data mining, loads 0.5-0.8",
              "paper/pias_datamining", {"scheme": PIAS_SCHEMES, "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=1,
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], claims=pias_claims("datamining"), baseline="dctcp", metric="mean"),
        Repro("pias_thresholds", "PIAS thresholds: optimal (exact bound minimum) vs equal split vs the authors' sets, load 0.8",
              "paper/pias_websearch", {"scheme.pias.thresholds": ["optimal", "equal-split", "paper"]}, seeds=3,
              zip=[{"workload.cdf": ["websearch", "datamining"], "scheme.ecn_threshold": ["117KB", "95KB"]}],
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"},
              classes=["small", "medium", "large"], claims=threshold_claims, metric="mean"),
        Repro("pias_las", "LAS vs PIAS for long flows under sustained load: web search at 0.8, arrivals kept on (run.keep_load) while the measured flows finish",
              "paper/pias_websearch", {"scheme": ["las", "pias"]}, seeds=1,
              set={"run.duration": "0.03s", "run.keep_load": True, "run.drain": "0.5s"},
              quick_set={"run.duration": "0.005s", "run.drain": "0.1s"},
              classes=["small", "medium", "large"], claims=las_claims, baseline="las"),
        Repro("pias_oversubscribed", "PIAS vs DCTCP on the 3:1 oversubscribed leaf-spine (3 x 48 hosts, 4 spines) with ECMP, web search, loads 0.5-0.8 on the leaf-spine links",
              "paper/pias_oversubscribed", {"scheme": ["tcp", "dctcp", "pias"], "workload.load": [0.5, 0.6, 0.7, 0.8]}, seeds=1,
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"}, quick_axes={"workload.load": [0.5, 0.8]},
              classes=["small", "medium", "large"], claims=oversubscribed_claims, baseline="dctcp", metric="mean"),
        Repro("pias_mismatch", "PIAS with thresholds mismatched to the traffic (web search run with data-mining thresholds), with and without ECN, load 0.8",
              "paper/pias_websearch", {}, seeds=1,
              zip=[{"thresholds": ["matched", "mismatched"], "scheme.pias.cdf": ["websearch", "datamining"]},
                   {"ecn": ["on", "off"], "scheme.ecn_marking": ["per_port", "none"]}],
              labels=["thresholds", "ecn"], hide=["scheme.pias.cdf", "scheme.ecn_marking"],
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"},
              classes=["small", "medium", "large"], claims=mismatch_claims, plot_x="thresholds", metric="mean"),
        Repro("pias_queues", "PIAS with 2, 4 and 8 queues against DCTCP, web search at load 0.8",
              "paper/pias_websearch", {}, seeds=3,
              zip=[{"variant": ["dctcp", "2 queues", "4 queues", "8 queues"], "scheme": ["dctcp", "pias", "pias", "pias"],
                    "scheme.pias.queues": [8, 2, 4, 8]}],
              labels=["variant"], hide=["scheme", "scheme.pias.queues"],
              set={"run.duration": "0.03s"}, quick_set={"run.duration": "0.005s"},
              classes=["small", "medium", "large"], claims=queues_claims, plot_x="variant", metric="mean"),
        Repro("partition_aggregate", "Partition-aggregate workflows: workflow completion per fan-out",
              "paper/partition_aggregate", {"scheme": ["fh", "lps", "detail"]}, set={"run.duration": "0.2s"},
              quick_set={"run.duration": "0.03s"},
              classes=["workflow/partition-aggregate/10", "workflow/partition-aggregate/20", "workflow/partition-aggregate/40", "retrieval/2KB"],
              claims=workflow_claims("workflow/partition-aggregate/40")),
    ]
}


def markdown_table(stats: pl.DataFrame, keys: list[str], classes: list[str], baseline: str = "fh") -> str:
    """Pooled p50 / p99 / p99.9 per series and class (over completed flows; `unfinished` counts the
    measured flows still running when the run's drain time ran out), with the reduction over FH."""
    has_fh = "scheme" in keys and baseline in stats["scheme"].to_list()
    red = reduction_table(stats, keys, baseline, "p999") if has_fh else None
    red99 = reduction_table(stats, keys, baseline, "p99") if has_fh else None
    head = [*keys, "class", "flows", "unfinished", "mean ms", "p50 ms", "p99 ms", "p99.9 ms"] + (["cut p99", "cut p99.9"] if has_fh else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {c: i for i, c in enumerate(classes)}
    rows = (stats.filter(pl.col("class").is_in(classes))
            .with_columns(pl.col("class").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
            .sort([*keys, "_o"]).drop("_o"))
    for r in rows.iter_rows(named=True):
        cells = [str(r[k]) for k in keys] + [r["class"], str(r["count"]), str(r.get("unfinished") or 0), f"{r['mean_ms']:.3f}",
                                             f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}", f"{r['p999_ms']:.3f}"]
        if has_fh:
            def find(t: pl.DataFrame) -> str:
                q = t.filter(pl.col("class") == r["class"])
                for k in keys:
                    q = q.filter(pl.col(k) == r[k])
                return f"{q['reduction_pct'][0]:.0f}%" if q.height else ""
            cells += [find(red99), find(red)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def claims_markdown(claims: list[Claim]) -> str:
    lines = ["| claim | paper | measured | verdict |", "|---|---|---|---|"]
    lines += [f"| {c.claim} | {c.paper} | {c.measured} | {'holds' if c.holds else '**does not hold**'} |" for c in claims]
    return "\n".join(lines)


def reproduce(name: str, out: Path, quick: bool = False, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True) -> str:
    """Run one reproduction into out/name; returns its Markdown (table and claims)."""
    from .plots import plot_store, sweep_axes
    from .report import build_report

    r = REPROS[name]
    d = out / name
    spec = r.sweep_spec(quick)
    sw = load_sweep(spec)
    sw.source = f"detailsim reproduce {name}{' --quick' if quick else ''}"
    resume = (d / "sweep.json").exists()
    if resume:
        old = json.loads((d / "sweep.json").read_text())
        if {x["run_id"] for x in old["runs"]} != {x.run_id for x in sw.runs}:
            import shutil

            shutil.rmtree(d)  # an earlier run of the other variant (quick / full): start again
            resume = False
    run_sweep(sw, d, workers=workers, scheduler=scheduler, resume=resume, progress=progress)
    t = read_store(d)
    keys = [k for k in sweep_axes(d, t["summary"]) if k not in r.hide]
    stats = pooled_percentiles(t["flows"], keys)
    allf = t["flows"].with_columns(pl.col("class").cast(pl.String))
    unfinished = allf.group_by([*keys, "class"]).agg(pl.col("fct").is_null().sum().alias("unfinished"))
    stats = stats.join(unfinished, on=[*keys, "class"], how="left")
    claims = r.claims(stats, t["summary"]) if r.claims else []
    (d / "claims.json").write_text(json.dumps([c.__dict__ for c in claims], indent=2))
    for f in (d / "plots").glob("*"):
        f.unlink()
    plot_store(d, d / "plots", x=r.plot_x, baseline=r.baseline, metric=r.metric)
    build_report(d, d / "report.html", baseline=r.baseline, metric=r.metric)
    md = f"## {name}: {r.title}\n\n{markdown_table(stats, keys, r.classes, r.baseline)}\n"
    if claims:
        md += "\n" + claims_markdown(claims) + "\n"
    (d / "table.md").write_text(md)
    return md

# DeTail's evaluations first, then DIBS and PIAS
ORDER = ["scatter", "incast", "verification", "steady_cdf", "steady", "steady_priority_eviction", "bursty", "long_flows", "disconnected", "degraded",
         "sequential", "partition_aggregate", "dibs_incast", "pias_websearch", "pias_datamining", "pias_las", "pias_oversubscribed", "pias_thresholds", "pias_queues",
         "pias_mismatch"]
REPROS = {k: REPROS[k] for k in ORDER}
