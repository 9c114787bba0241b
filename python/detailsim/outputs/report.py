"""``detailsim report DIR -o report.html``: one self-contained HTML file (inline CSS, images as data URIs,
no network access needed) with the sweep, the base scenario, a summary table per run, FCT tables, the
plots and, for a reproduction, its claims table."""

from __future__ import annotations

import base64
import datetime as dt
import json
import tempfile
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from ..repro.grading import RULE, fmt_measured, fmt_value
from ..repro.papers import cite
from .plots import plot_store
from ..core.sweep import read_store

TEMPLATE = jinja2.Template(
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>detailsim report: {{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: right; }
th { background: #f2f2f2; } td.l, th.l { text-align: left; }
pre { background: #f7f7f7; padding: 1em; overflow-x: auto; font-size: .8em; }
figure { display: inline-block; margin: .5em; vertical-align: top; } figure img { max-width: 560px; border: 1px solid #eee; }
figure.wide { display: block; } figure.wide img { max-width: 100%; }
.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: .4em .8em; }
table.pooled td { white-space: nowrap; } .ci { color: #777; font-size: .85em; }
.ok { color: #176117; font-weight: 600; } .no { color: #a11; font-weight: 600; } .meta { color: #666; }
</style></head>
<body data-images="{{ images|length }}" data-images-loaded="0">
<h1>{{ title }}</h1>
<p class="meta">{{ description }}<br>source: {{ source }} · {{ n_runs }} runs ({{ n_failed }} failed) · generated {{ now }} by detailsim {{ version }}</p>

{% if claims %}
<h2>Reproduction claims</h2>
<p class="meta">Graded against the paper's own numbers by {{ rule }} (docs/reproduction.md). Labels: held out claims are counted;
calibration, seen, property and by-construction claims are shown apart.</p>
<table><tr><th class="l">claim</th><th class="l">the paper's sentence (source)</th><th class="l">paper (where)</th><th class="l">measured (95% CI)</th><th class="l">how measured</th><th class="l">label</th><th>verdict</th></tr>
{% for c in claims %}<tr><td class="l">{{ c.claim }}</td><td class="l">“{{ c.quote }}” ({{ c.cite }})</td><td class="l">{{ c.paper_text }} ({{ c.paper.where }})</td><td class="l">{{ c.measured_text }}</td>
<td class="l">{{ c.measured.detail }}</td><td class="l">{{ c.label }}</td>
<td class="{{ 'ok' if c.verdict == 'reproduced' else 'no' }}">{{ c.verdict }}</td></tr>{% endfor %}
</table>
{% endif %}

<h2>Plots</h2>
{% for n in plot_notes %}<p class="note">{{ n|e }}</p>
{% endfor %}{% for img in images %}<figure class="{{ 'wide' if img.wide else '' }}"><img alt="{{ img.name }}" src="data:image/png;base64,{{ img.data }}"><figcaption>{{ img.name }}</figcaption></figure>
{% endfor %}

{% if pooled_table %}
<h2>FCT and slowdown per series and class, seeds pooled</h2>
{{ pooled_table }}
{% endif %}

<h2>Runs</h2>
{{ runs_table }}

<h2>Flow completion times per run and class (ms)</h2>
{{ fct_table }}

<h2>Sweep</h2>
<pre>{{ spec }}</pre>
<h2>Base scenario</h2>
<pre>{{ scenario }}</pre>
<script>
window.addEventListener("load", function () {
  var ok = 0; var imgs = document.images;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  document.body.setAttribute("data-images-loaded", String(ok));
});
</script>
</body></html>
"""
)


def html_table(df: pl.DataFrame, float_fmt: str = "{:.3f}") -> str:
    def cell(v: object) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return float_fmt.format(v)
        return jinja2.filters.escape(str(v))  # type: ignore[attr-defined]

    head = "".join(f'<th class="l">{jinja2.filters.escape(c)}</th>' for c in df.columns)  # type: ignore[attr-defined]
    body = "\n".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in df.iter_rows())
    return f"<table><tr>{head}</tr>\n{body}</table>"


BOUNDS_NOTE = ("<p>Percentiles over all measured flows; <code>unfinished</code>: flows still running when the run ended "
               "(the mean leaves them out); &ge; X: a lower bound, the percentile's rank falls on an unfinished flow.</p>")


def bounds_shown(f: pl.DataFrame) -> pl.DataFrame:
    """FCT statistics for display: each statistic with a lower-bound flag (`<m>_lb`) as text, ">= X" where
    it is a bound, the flags dropped."""
    from ..core.results import BOUNDED

    for m in BOUNDED:
        v, lb = f"{m}_ms", f"{m}_lb"
        if v in f.columns and lb in f.columns:
            f = f.with_columns(pl.when(pl.col(lb)).then(pl.lit("≥ ") + pl.col(v).round(3).cast(pl.String))
                               .otherwise(pl.col(v).round(3).cast(pl.String)).alias(v)).drop(lb)
    return f


def embedded(files: list[Path]) -> list[dict[str, Any]]:
    """The PNGs among `files` as the template embeds them: name, base64 data, and whether the image is wide
    (its PNG header's width over 800 pixels)."""
    out = []
    for p in files:
        if p.suffix == ".png":
            raw = p.read_bytes()
            out.append({"name": p.stem, "data": base64.b64encode(raw).decode(), "wide": int.from_bytes(raw[16:20], "big") > 800})
    return out


def pooled_html(out: Path) -> str:
    """The store's pooled table (`core.pooled.store_pooled`, as `Store.pooled` gives it) as HTML, with its note."""
    from ..core.pooled import NOTE, display_table, store_pooled

    t = display_table(*store_pooled(out))
    # the interval in small grey type after its value, on one line
    esc = jinja2.filters.escape  # type: ignore[attr-defined]
    head = "".join(f'<th class="l">{esc(c)}</th>' for c in t.columns)

    def cell(v: str) -> str:
        value, sep, iv = v.partition(" [")
        return f"<td>{esc(value)}" + (f' <span class="ci">[{esc(iv)}</span>' if sep else "") + "</td>"

    body = "\n".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in t.iter_rows())
    return f'<table class="pooled"><tr>{head}</tr>\n{body}</table><p class="meta">{esc(NOTE)}</p>'


def build_report(out: str | Path, html_path: str | Path, baseline: str = "fh", metric: str = "p999",
                 plots_dir: str | Path | None = None) -> Path:
    """The store's HTML report; `plots_dir`: embed the plots already drawn there instead of drawing them."""
    from .. import __version__

    out = Path(out)
    manifest = json.loads((out / "sweep.json").read_text())
    t = read_store(out, tables=("summary", "fct"))
    params = [a for a in manifest["axes"]]
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(Path(plots_dir).glob("*.png")) if plots_dir else plot_store(out, tmp, baseline=baseline, metric=metric)
        listing = Path(plots_dir or tmp) / "plots.json"
        drawn = json.loads(listing.read_text()) if listing.exists() else []
        plot_notes = [d["note"] for d in drawn if d.get("note")]
        # in the order the figures were drawn (tails first), then any other image in the directory
        order = {f: i for i, f in enumerate(x for d in drawn for x in d.get("files", []))}
        files = sorted(files, key=lambda p: (order.get(p.name, len(order)), p.name))
        images = embedded(files)
    s = t["summary"]
    if s.height:
        cols = [c for c in ["run_id", *params, "flows_completed", "flows_started", "congestion_drops", "timeouts",
                            "retransmits", "pfc_pause_frames", "ecn_marks", "sim_time_s", "wall_s"] if c in s.columns]
        runs_table = html_table(s.select(cols).sort([c for c in params if c in s.columns]))
    else:
        runs_table = "<p>No finished runs.</p>"
    f = t["fct"]
    if f.height:
        fcols = [c for c in [*params, "class", "count", "unfinished", "mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms"] if c in f.columns]
        fct_table = html_table(bounds_shown(f).select(fcols).sort([c for c in [*params, "class"] if c in f.columns])) + BOUNDS_NOTE
    else:
        fct_table = ""
    pooled_table = pooled_html(out) if s.height else ""
    failed = list((out / "failed").glob("*.json")) if (out / "failed").is_dir() else []
    claims_path = out / "claims.json"
    claims = json.loads(claims_path.read_text()) if claims_path.exists() else []
    if claims:
        # the paper's numbers beside the measured ones, first among the plots
        from .plots import plot_claims

        with tempfile.TemporaryDirectory() as tmp:
            for dr in plot_claims(claims, Path(tmp)):
                if dr.note:
                    plot_notes.append(dr.note)
                images = embedded(dr.files) + images
    for c in claims:
        c["paper_text"], c["measured_text"] = fmt_value(c["paper"]["value"], c["paper"]["unit"]), fmt_measured(c)
        c["cite"] = cite(c["source"])
    spec = manifest["spec"]
    html = TEMPLATE.render(
        title=spec.get("name") or Path(manifest.get("source", "sweep")).stem,
        description=spec.get("description", ""),
        source=manifest.get("source", ""),
        n_runs=len(manifest["runs"]),
        n_failed=len(failed),
        now=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        claims=claims, rule=RULE,
        images=images, plot_notes=plot_notes, pooled_table=pooled_table,
        runs_table=runs_table,
        fct_table=fct_table,
        spec=json.dumps(spec, indent=2),
        scenario=json.dumps(manifest.get("base_scenario", {}), indent=2),
    )
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(html)
    return html_path


def is_run_dir(path: str | Path) -> bool:
    """A directory written by ``detailsim run --out`` (rather than a sweep store)."""
    p = Path(path)
    return (p / "summary.json").exists() and (p / "flows.parquet").exists() and not (p / "sweep.json").exists()


def build_run_report(run_dir: str | Path, html_path: str | Path) -> Path:
    """The report of one run directory: its counters, FCT and goodput tables, plots and scenario."""
    from .. import __version__
    from .plots import plot_run

    run_dir = Path(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    scenario = json.loads((run_dir / "scenario.json").read_text()) if (run_dir / "scenario.json").exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        images = embedded(plot_run(run_dir, tmp))
    facts = {k: summary.get(k) for k in ["scenario", "scheme", "seed", "sim_time_s", "wall_s", "events", "congestion_drops",
                                          "timeouts", "retransmits", "ecn_marks", "nic_backpressure"]}
    facts["flows_completed"] = summary["flows"]["completed"]
    facts["flows_started"] = summary["flows"]["started"]
    runs_table = html_table(pl.DataFrame([facts]))
    # every class's statistics, the mean slowdown included (null for a class without an ideal FCT)
    fct = pl.DataFrame([{"class": c, **s, "mean_slowdown": s.get("mean_slowdown")} for c, s in summary["fct"].items()],
                       infer_schema_length=None)
    fct_table = html_table(bounds_shown(fct)) + BOUNDS_NOTE if fct.height else ""
    if "goodput" in summary:
        g = pl.DataFrame([{"class": c, "flows": v["flows"], "total_Mbps": v["total_bps"] / 1e6,
                           "mean_Mbps": (v["mean_bps"] or 0) / 1e6, "jain": v["jain"]} for c, v in summary["goodput"].items()])
        fct_table += "<h2>Goodput in the measurement window</h2>" + html_table(g)
    html = TEMPLATE.render(
        title=run_dir.name, description=scenario.get("description", ""), source=str(run_dir), n_runs=1, n_failed=0,
        now=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), version=__version__, claims=[], rule=RULE,
        images=images, plot_notes=[], pooled_table="", runs_table=runs_table, fct_table=fct_table, spec="(a single run)",
        scenario=json.dumps(scenario, indent=2),
    )
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(html)
    return html_path
