"""The ``detailsim`` command line."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from . import _core
from .core.api import Result, build, execute
from .core.scenario import did_you_mean, duration_seconds, bundled_scenarios, prepare
from .core.results import fct_table, fmt_ms

DEMO_SCENARIO = "paper/steady"
DEMO_DURATION = "0.1s"


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


class Progress:
    """A bar over simulated time, shown only once the run has taken `after` seconds of wall time (a short run
    shows none), with one label; `close` ends its line, so what is printed next starts on a line of its own."""

    def __init__(self, file: Any = None, after: float = 2.0) -> None:
        import time

        self.file = file if file is not None else sys.stderr
        self.after = after
        self.t0 = time.monotonic()
        self.bar: Any = None

    def __call__(self, now: float, dur: float) -> None:
        import time

        if self.bar is None:
            if time.monotonic() - self.t0 < self.after:
                return
            from tqdm import tqdm

            self.bar = tqdm(total=dur, file=self.file, leave=False, dynamic_ncols=True,
                            bar_format="simulated {n:.3f} of {total:.3f} s |{bar}| {percentage:3.0f}%, {elapsed} wall, {remaining} to go")
        self.bar.n = min(now, dur)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            # leave=False clears the bar's line: the results start at the beginning of a clean line
            self.bar.close()
            self.bar = None


def _progress_bar(quiet: bool) -> Progress | None:
    """The run's progress bar on stderr (none when quiet or not on a terminal)."""
    return None if quiet or not sys.stderr.isatty() else Progress()


def _run(sc: dict[str, Any], name: str, quiet: bool) -> Result:
    bar = _progress_bar(quiet)
    try:
        return execute(sc, name, progress=bar)
    finally:
        if bar is not None:
            bar.close()


def format_table(summary: dict[str, Any]) -> str:
    rows = fct_table(summary["fct"])
    drops = ", ".join(f"{k} {v}" for k, v in summary["drops"].items() if v) or "none"
    f = summary["flows"]
    rows.append(
        f"scheme {summary['scheme']}, seed {summary['seed']}: {f['completed']}/{f['started']} flows completed in "
        f"{summary['sim_time_s']:.4f} s simulated ({summary['wall_s']:.2f} s wall{_threads(summary)}); drops: {drops}; "
        f"timeouts {summary['timeouts']}, retransmits {summary['retransmits']}"
    )
    return "\n".join(rows)


def _check_out(out: str | None, force: bool) -> None:
    """`--out` names a new or empty directory, or one replaced with --force (checked before anything runs)."""
    if out and not force:
        p = Path(out)
        if p.exists() and (not p.is_dir() or any(p.iterdir())):
            _fail(f"--out: {out!r} already exists and is not empty; choose another directory, or add --force to replace it")


# the scenario being run, saved beside an internal error so that it can be reported
_CURRENT: dict[str, Any] = {}


def _internal_error(e: BaseException) -> None:
    """A failure of ours (a panic of the core, a bug of the front end): one line, the scenario saved, exit 3."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="detailsim-internal-error-", suffix=".json")
    with open(fd, "w") as f:
        json.dump({"argv": sys.argv, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(),
                   "scenario": _CURRENT.get("scenario")}, f, indent=2, default=str)
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    kind = "" if isinstance(e, _core.InternalError) else f"{type(e).__name__}: "
    click.echo(f"internal error: {kind}{msg}; scenario saved to {path}; please report it", err=True)
    sys.exit(3)


class _Main(click.Group):
    """The command group; a failure that is not the user's (not a ScenarioError, not a usage error) ends in
    one line and exit code 3, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except _core.ScenarioError as e:
            _fail(str(e))
        except BrokenPipeError:
            # the reader went away (`detailsim reproduce --list | head`): stop quietly, as Unix tools do
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except Exception as e:  # noqa: BLE001 - reported as an internal error
            _internal_error(e)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="detailsim")
def main() -> None:
    """detailsim: packet-level datacenter network simulator for flow-completion-time tails."""


def _scenario_options(duration_example: str, set_note: str = "", seed_note: str = "",
                      required: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """SCENARIO and the options that change it: --scheme, --set, --seed, --duration (declared here once
    for every command that runs a scenario)."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed([
            click.argument("scenario", required=required),
            click.option("--scheme", help="Scheme preset (see `detailsim schemes`); replaces the scenario's scheme.preset."),
            click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                         help=f"Override any key by dotted path, e.g. topology.link_rate=10Gbps (repeatable){set_note}."),
            click.option("--seed", type=int, help=f"Master random seed (run.seed){seed_note}."),
            click.option("--duration", help=f'Arrival window (run.duration), e.g. "{duration_example}".'),
        ]):
            f = option(f)
        return f

    return wrap


@main.command("run")
@_scenario_options("0.2s")
@click.option("--out", "out", type=click.Path(file_okay=False), help="Write flows.parquet, ports.parquet, summary.json, scenario.json here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")
@click.option("--pcap", type=click.Path(dir_okay=False), help="Write the frames --pcap-filter selects to this pcap file.")
@click.option("--pcap-filter", metavar="SPEC", help="flow=ID | node=NAME | port=FROM:TO | link=A:B (several joined by |).")
@click.option("--sample", metavar="INTERVAL", help='Write timeseries.parquet (per port queues, per flow bytes) every INTERVAL, e.g. "100us" (run.sample).')
@click.option("--max-events", type=click.IntRange(min=1), help="End the run (marked incomplete) after this many events (run.max_events).")
@click.option("--max-wall", metavar="DURATION", help='End the run (marked incomplete) after this much wall-clock time, e.g. "600s" (run.max_wall).')
@click.option("--force", is_flag=True, help="Replace what --out holds (refused by default when it is not empty).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (shown on a terminal once a run takes 2 s).")
def run_cmd(scenario: str, scheme: str | None, sets: tuple[str, ...], seed: int | None, duration: str | None, out: str | None,
            as_json: bool, pcap: str | None, pcap_filter: str | None, sample: str | None, max_events: int | None,
            max_wall: str | None, force: bool, quiet: bool) -> None:
    """Run SCENARIO (a .toml path or a bundled name such as paper/steady)."""
    _check_out(out, force)
    try:
        extra = [f"run.sample={sample}"] if sample else []
        limits: dict[str, Any] = {}
        if max_events is not None:
            limits["max_events"] = max_events
        if max_wall is not None:
            limits["max_wall"] = max_wall
        sc, name = prepare(scenario, scheme=scheme, seed=seed, duration=duration, sets=list(sets) + extra, limits=limits)
        _CURRENT["scenario"] = sc
        # built once: building validates the scenario and checks the trace filter before anything runs
        built = build(sc, pcap, pcap_filter)
    except _core.ScenarioError as e:
        _fail(str(e))
    bar = _progress_bar(quiet)
    try:
        res = execute(sc, name, progress=bar, pcap=pcap, pcap_filter=pcap_filter, built=built)
    finally:
        if bar is not None:
            bar.close()
    from .core.api import invariant_problems

    for problem in invariant_problems(res.summary):
        click.echo(f"warning: {problem}", err=True)
    for nr in res.summary.get("flow_rows_not_started", []):
        click.echo(f"warning: workload[{nr['workload']}]: {nr['rows']} flow row(s) start at or after run.duration and never start", err=True)
    if res.summary.get("incomplete"):
        click.echo(f"warning: run incomplete: {res.summary['incomplete']}; flows still running are unfinished", err=True)
    if out:
        res.write(Path(out))
    if as_json:
        click.echo(json.dumps(res.summary))
    else:
        click.echo(format_table(res.summary))


@main.command("check-split")
@_scenario_options("5ms")
@click.option("--parts", type=click.IntRange(2, 64), default=2, show_default=True, help="how many parts to split the run in")
def check_split_cmd(scenario: str, scheme: str | None, sets: tuple[str, ...], seed: int | None, duration: str | None, parts: int) -> None:
    """Check that SCENARIO split in parts (run.threads = N) ends as it does on one thread: run it as it is
    and split in --parts parts taking turns on one thread, with the windows threads use, and compare the
    outcomes. Exit status 0: the same; 1: different, or an interaction faster than the window (named); 2:
    a scenario a split run does not support (the field named)."""
    from .core.api import check_split

    r = check_split(scenario, scheme=scheme, seed=seed, duration=duration, sets=list(sets), parts=parts)
    click.echo(f"window {r['window_s'] * 1e6:.3f} us")
    click.echo(f"as is: outcome {r['as_is']}")
    if r["split"] is None:
        click.echo(f"split: stopped: {r['interaction']}")
    else:
        click.echo(f"split: outcome {r['split']}")
    click.echo("same" if r["same"] else "different")
    if not r["same"]:
        raise SystemExit(1)


def _threads(summary: dict[str, Any]) -> str:
    """", N threads" for a run split in N parts."""
    n = summary.get("threads", 1)
    return f", {n} threads" if n > 1 else ""


@contextlib.contextmanager
def _live_errors() -> Iterator[None]:
    """A live run that cannot go on exits with its error's code; Ctrl-C exits 130 (its namespaces are gone)."""
    from .live import LiveError

    try:
        yield
    except LiveError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.code)
    except KeyboardInterrupt:
        click.echo("interrupted: namespaces removed, nothing written", err=True)
        sys.exit(130)


@main.command("live")
@_scenario_options("0.5s", seed_note=": the flows replayed are the simulator's for this seed", required=False)
@click.option("--out", "out", type=click.Path(file_okay=False), help="Write flows.parquet, ports.parquet, summary.json, scenario.json here.")
@click.option("--drain", default="2s", show_default=True, help="Time after the last arrival for flows to finish.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")
@click.option("--pcap", type=click.Path(dir_okay=False), help="Capture frames on every fabric port into this pcapng file (tshark).")
@click.option("--pcap-filter", default="ether proto 0x8808", show_default=True, help="BPF capture filter for --pcap (default: PFC frames).")
@click.option("--cleanup", is_flag=True, help="Remove every namespace (and veth) a live run left behind, and exit.")
@click.option("--force", is_flag=True, help="Replace what --out holds (refused by default when it is not empty).")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
def live_cmd(scenario: str | None, scheme: str | None, sets: tuple[str, ...], seed: int | None, duration: str | None, out: str | None,
             drain: str, as_json: bool, pcap: str | None, pcap_filter: str, cleanup: bool, force: bool, quiet: bool) -> None:
    """Run SCENARIO on real Linux TCP between network namespaces, switched by the simulator's components."""
    from . import live

    _check_out(out, force)

    if cleanup:
        if not live.has_net_admin():
            click.echo("error: detailsim live --cleanup needs CAP_NET_ADMIN (run as root)", err=True)
            sys.exit(2)
        gone = live.cleanup()
        click.echo(f"removed {len(gone)} namespace(s){': ' + ', '.join(gone) if gone else ''}")
        return
    if scenario is None:
        _fail("live: SCENARIO is required (or --cleanup)")
    try:
        sc, name = prepare(scenario, scheme=scheme, seed=seed, duration=duration, sets=list(sets))
        _CURRENT["scenario"] = sc
        _core.validate(json.dumps(sc))
        drain_s = duration_seconds(drain, "--drain")
    except _core.ScenarioError as e:
        _fail(str(e))
    say = (lambda m: None) if quiet or as_json else (lambda m: click.echo(m, err=True))
    with _live_errors():
        summary, flows, ports, _sim = live.run_live(sc, name, drain_s=drain_s, say=say, pcap=pcap, pcap_filter=pcap_filter)
    if out:
        from .core.results import write_outputs

        write_outputs(Path(out), summary, flows, ports, sc)
    for problem in live.problems(summary):
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(live.format_summary(summary))


@main.command("live-validate")
@click.argument("scenario", required=False, default="live/verification")
@click.option("--schemes", default="fh,detail", show_default=True, help="Comma-separated scheme presets.")
@click.option("--rates", default="50,100,150", show_default=True,
              help="Comma-separated values for workload.0.rate (retrievals/s per front-end).")
@click.option("--duration", default="8s", show_default=True, help="Arrival window of every run.")
@click.option("--seed", type=int, help="Master random seed (the same flows run and live).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override any key by dotted path (repeatable).")
@click.option("--drain", default="3s", show_default=True, help="Time after the last arrival for flows to finish.")
@click.option("--out", "out", type=click.Path(file_okay=False), help="Write validation.json and validation.md here.")
@click.option("--update-docs", "update_docs_", is_flag=True,
              help="Write docs/live/validation.json and the table in docs/live.md (run from the project root).")
def live_validate_cmd(scenario: str, schemes: str, rates: str, duration: str, seed: int | None, sets: tuple[str, ...], drain: str,
                      out: str | None, update_docs_: bool) -> None:
    """Run SCENARIO under `run` and `live` per scheme and rate; median, p99, p99.9 side by side."""
    from .repro import live_validate

    try:
        rate_list = [float(r) for r in rates.split(",") if r.strip()]
    except ValueError:
        _fail(f"--rates: comma-separated numbers (retrievals/s per front-end), got {rates!r}")
    if not rate_list or any(not (r > 0) for r in rate_list):
        _fail(f"--rates: positive numbers, got {rates!r}")
    scheme_list = [x.strip() for x in schemes.split(",") if x.strip()]
    if not scheme_list:
        _fail("--schemes: at least one scheme preset")
    if update_docs_ and not Path(live_validate.DOC).exists():
        _fail(f"live-validate: --update-docs must run from the project root (no {live_validate.DOC} here)")
    try:
        for sch in scheme_list:
            sc, _ = prepare(scenario, scheme=sch, seed=seed, duration=duration, sets=[*sets, f"workload.0.rate={rate_list[0]:g}"])
            _CURRENT["scenario"] = sc
            _core.validate(json.dumps(sc))
        drain_s = duration_seconds(drain, "--drain")
    except _core.ScenarioError as e:
        _fail(str(e))
    with _live_errors():
        res = live_validate.validate(scenario, scheme_list, rate_list, duration, seed, list(sets), drain_s, lambda m: click.echo(m, err=True))
    text = live_validate.table(res)
    if out:
        o = Path(out)
        o.mkdir(parents=True, exist_ok=True)
        (o / "validation.json").write_text(json.dumps(res, indent=1) + "\n")
        (o / "validation.md").write_text(text + "\n")
    if update_docs_:
        live_validate.update_docs(res, Path("."))
    click.echo(text)


@main.command("scenarios")
@click.option("--show", "show", metavar="NAME", help="Print a bundled scenario's TOML (to copy and edit: --show NAME > my.toml).")
def scenarios_cmd(show: str | None) -> None:
    """List the bundled scenarios, or print one (--show NAME)."""
    from .core.scenario import SCENARIO_ROOT

    items = bundled_scenarios()
    if show:
        name = show.removesuffix(".toml")
        if name not in items:
            _fail(f"--show: no bundled scenario {show!r}; bundled: {', '.join(items)}{did_you_mean(name, items)}")
        path = Path(str(SCENARIO_ROOT)) / f"{name}.toml"
        click.echo(path.read_text(), nl=False)
        # the files it reads beside it (a flow list, a topology), which a copy needs too
        import re

        refs = sorted(set(re.findall(r'^\s*file\s*=\s*"([^"]+)"', path.read_text(), flags=re.M)))
        if refs:
            click.echo(f"note: {name} reads {', '.join(refs)} from {path.parent}; copy them beside your copy", err=True)
        return
    width = max(len(k) for k in items)
    for name, desc in items.items():
        click.echo(f"{name:<{width}}  {desc}")


@main.command("init")
@click.argument("path", default="scenario.toml", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace PATH if it exists.")
def init_cmd(path: str, force: bool) -> None:
    """Write a commented starting scenario to PATH (default scenario.toml): a fat tree, a scheme and a
    workload, each key explained; run it with `detailsim run PATH`."""
    from importlib.resources import files

    p = Path(path)
    if p.exists() and not force:
        _fail(f"init: {path!r} exists; choose another path, or add --force to replace it")
    p.write_text((files("detailsim") / "data" / "templates" / "scenario.toml").read_text())
    click.echo(f"wrote {path}; run it with: detailsim run {path}")


@main.command("schemes")
def schemes_cmd() -> None:
    """List the scheme presets and the policy combination each stands for."""
    items = _core.presets()
    width = max(len(n) for n, _ in items)
    for name, desc in items:
        click.echo(f"{name:<{width}}  {desc}")


@main.command("reference")
@click.argument("section", required=False)
@click.option("--update-docs", is_flag=True, help="Rewrite the generated knob tables in docs/scenarios.md (run from the project root).")
def reference_cmd(section: str | None, update_docs: bool) -> None:
    """Every scenario section's keys: unit, default and meaning. [run], [topology], [scheme] (the presets
    and every knob table, the default per preset), [[workload]] per kind and [[fault]], from the core's
    declarations (what docs/scenarios.md shows, with more prose there). SECTION: only the sections whose
    name starts with it, e.g. `workload.cdf`, `scheme.tcp` or `topology`."""
    from .repro import reference

    if update_docs:
        changed = reference.update_docs()
        click.echo(f"{reference.DOC}: {'updated' if changed else 'already current'}")
        return
    blocks = reference.all_sections()
    if section:
        want = section.strip("[]").rstrip(".")
        blocks = [b for b in blocks if b[0] == want or b[0].startswith(want + ".")]
        if not blocks:
            names = [n for n, _, _ in reference.all_sections()]
            _fail(f"reference: no section {section!r}; sections: {', '.join(names)}{did_you_mean(want, names)}")
    for _, heading, text in blocks:
        click.echo(f"{heading}\n{text}\n")


@main.command("sweep")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="The results store (a directory).")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes of the embedded cluster (default: one per core).")
@click.option("--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786.")
@click.option("--resume", is_flag=True, help="Continue a sweep in --out: skip finished runs, rerun the rest.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sweep_cmd(sweep_file: str, out: str, workers: int | None, scheduler: str | None, resume: bool, quiet: bool) -> None:
    """Run every run of SWEEP_FILE (base scenario x axes x seeds) into the store --out."""
    from .core.sweep import load_sweep, run_sweep

    try:
        sw = load_sweep(sweep_file)
    except _core.ScenarioError as e:
        _fail(str(e))
    try:
        counts = run_sweep(sw, Path(out), workers=workers, scheduler=scheduler, resume=resume,
                           progress=not quiet and sys.stderr.isatty())
    except _core.ScenarioError as e:
        _fail(str(e))
    click.echo(
        f"{len(sw.runs)} runs: {counts['done']} done now, {counts['skipped']} already finished, "
        f"{counts['failed']} failed; results in {out}"
    )
    if counts["failed"]:
        click.echo(f"failed runs: see {Path(out) / 'failed'}", err=True)
        sys.exit(1)


@main.command("plot")
@click.argument("store", type=click.Path(file_okay=False, exists=True))
@click.option("--out", "plots_dir", type=click.Path(file_okay=False), help="Where to write the plots (default STORE/plots).")
@click.option("--baseline", default="fh", show_default=True, help="Scheme the reduction plot compares against.")
@click.option("--metric", type=click.Choice(["p50", "p99", "p999", "mean"]), default="p999", show_default=True)
@click.option("--x", "x", help="Numeric swept parameter for the percentile plot (default: the first one).")
@click.option("--size-bins", default="10", show_default=True, metavar="N|EDGES",
              help="Slowdown by flow size: N log-spaced bins, or comma-separated edges such as 0,10KB,100KB,1MB,1GB.")
def plot_cmd(store: str, plots_dir: str | None, baseline: str, metric: str, x: str | None, size_bins: str) -> None:
    """Plot a results store (CCDFs of FCT and slowdown, FCT CDFs, slowdown by flow size, a percentile
    against a parameter, the reduction over a baseline) or a single run directory (the same per class;
    with run.sample, queues and throughput over time). PNG and SVG; plots.json lists what each drew."""
    from .outputs.plots import draw_store, parse_size_bins, plot_run
    from .outputs.report import is_run_dir

    try:
        bins = parse_size_bins(size_bins)
    except ValueError as e:
        _fail(str(e))
    if is_run_dir(store):
        for f in plot_run(store, plots_dir):
            click.echo(str(f))
        return
    if not (Path(store) / "sweep.json").exists():
        _fail(f"store: {store!r} is neither a sweep results store (no sweep.json) nor a run directory (no summary.json)")
    for dr in draw_store(store, plots_dir, baseline=baseline, metric=metric, x=x, size_bins=bins):
        for f in dr.files:
            click.echo(str(f))
        if dr.note:
            click.echo(f"note: {dr.note}", err=True)


@main.command("export")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["csv", "hpcc-fct"]), required=True,
              help="csv: the flow table as it is (every column, a header; times in seconds); hpcc-fct: the HPCC "
                   "simulator's fct.txt lines (sip dip sport dport size start_ns fct_ns standalone_fct_ns).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="The file to write (default RUN_DIR/flows.csv or RUN_DIR/fct.txt).")
def export_cmd(run_dir: str, fmt: str, output: str | None) -> None:
    """Write a run's flows (a `detailsim run --out` directory, or a sweep store) as CSV, or in another
    simulator's format: hpcc-fct for Parsimon- and m3-style tools (finished flows, in order of completion;
    the standalone FCT is the flow's ideal one)."""
    import json

    import polars as pl

    from .core.formats import host_node_ids, write_hpcc_fct
    from .outputs.report import is_run_dir

    if fmt == "csv":
        from .core.sweep import read_store

        d = Path(run_dir)
        if is_run_dir(run_dir):
            flows = pl.read_parquet(d / "flows.parquet")
        elif (d / "sweep.json").exists():
            flows = read_store(d, tables=("flows",))["flows"]  # a store's flows, with its swept parameters
        else:
            _fail(f"run_dir: {run_dir!r} is neither a run directory (flows.parquet) nor a sweep store (sweep.json)")
        out = Path(output) if output else d / "flows.csv"
        flows.with_columns(pl.col("class").cast(pl.String)).write_csv(out)
        click.echo(f"{out}: {flows.height} flows")
        return
    if not is_run_dir(run_dir):
        _fail(f"run_dir: {run_dir!r} is not a run directory (no summary.json and flows.parquet; write one with detailsim run --out)")
    d = Path(run_dir)
    sc = json.loads((d / "scenario.json").read_text()) if (d / "scenario.json").exists() else {}
    out = Path(output) if output else d / "fct.txt"
    n = write_hpcc_fct(pl.read_parquet(d / "flows.parquet"), out, host_node_ids(sc))
    click.echo(f"{out}: {n} finished flows")
    # what cannot be HPCC's own (docs/coming-from.md, "FCT and the ideal FCT, here and in the other simulators")
    click.echo("note: fct and standalone_fct are this simulator's: fct ends when the receiver has the last byte (HPCC's "
               "when the sender has its ACK), standalone_fct is the flow alone at line rate (HPCC's is base_rtt + "
               "bytes / bottleneck); docs/coming-from.md compares them", err=True)


@main.command("crosscheck")
@click.option("--case", "cases", multiple=True, help="Run only this case (repeatable; default: all).")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="Write the results as JSON here.")
@click.option("--update-docs", is_flag=True, help="Rewrite docs/validation.md's generated:crosscheck table and docs/validation/crosscheck.json (run from the project root).")
@click.option("--ours-only", is_flag=True, help="Run only this simulator's side again, keeping ns-3's stored figures (after a change of the model; no ns-3 needed).")
@click.option("--vary", "varied", multiple=True, metavar="FIELD=VALUE",
              help="What-if: change the case on both sides (queue, mark, initial_window, g, end, host_rate, bottleneck_rate, delay, min_rto; repeatable).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="What-if: override this side's scenario (as `run --set`; repeatable).")
@click.option("--ns3-set", "attrs", multiple=True, metavar="ns3::Type::Attribute=VALUE",
              help="What-if: set an ns-3 attribute default after the case's own (repeatable).")
def crosscheck_cmd(cases: tuple[str, ...], out: str | None, update_docs: bool, ours_only: bool, varied: tuple[str, ...],
                   sets: tuple[str, ...], attrs: tuple[str, ...]) -> None:
    """Run the crosscheck scenarios in ns-3 (the `ns3` wheel: `make crosscheck` installs it) and here, and
    print each headline figure on both with the difference (docs/validation.md, "Checked against ns-3").
    --vary changes a case on both sides, --set and --ns3-set one side or the other, to show what a difference
    comes from."""
    from .repro import crosscheck as X

    names = list(cases) or list(X.CASES)
    unknown = [n for n in names if n not in X.CASES]
    if unknown:
        _fail(f"--case: no case {unknown[0]!r}; cases: {', '.join(X.CASES)}{did_you_mean(unknown[0], X.CASES)}")
    if update_docs and (sets or attrs or varied):
        _fail("crosscheck: --update-docs writes the cases as they are; leave out --vary, --set and --ns3-set")
    try:
        for n in names:
            X.vary(X.CASES[n], list(varied))
    except ValueError as e:
        _fail(str(e))
    if ours_only and attrs:
        _fail("crosscheck: --ns3-set needs ns-3 runs; leave out --ours-only")
    bad = [a for a in attrs if not a.startswith("ns3::") or "=" not in a]
    if bad:
        _fail(f"--ns3-set: {bad[0]!r} is not ns3::Type::Attribute=VALUE")
    progress = lambda n: click.echo(f"{n} ...", err=True)  # noqa: E731
    if ours_only:
        import json

        stored_path = Path.cwd() / X.DOC_JSON
        if not stored_path.exists():
            _fail(f"--ours-only: no stored results {X.DOC_JSON} (run from the project root)")
        try:
            res = X.rerun_ours(json.loads(stored_path.read_text()), names, progress, list(sets), list(varied))
        except KeyError as e:
            _fail(f"--ours-only: case {e.args[0]!r} has no stored ns-3 figures; run it with ns-3 first")
        if out:
            Path(out).write_text(json.dumps(res, indent=1) + "\n")
    else:
        import importlib.util

        # found, not imported: importing it loads cling, whose noise crosscheck.ns3() filters
        if importlib.util.find_spec("ns") is None:
            _fail("crosscheck: ns-3's Python bindings are not installed (`make crosscheck` installs the ns3 wheel into the venv)")
        try:
            res = X.main(names, Path(out) if out else None, progress=progress, sets=list(sets), attrs=list(attrs),
                         varied=list(varied))
        except RuntimeError as e:
            _fail(f"crosscheck: {e}")
    click.echo(X.table(res))
    if update_docs:
        X.update_docs(res, Path.cwd())


@main.command("report")
@click.argument("store", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=False))
@click.option("--baseline", default="fh", show_default=True)
@click.option("--metric", type=click.Choice(["p50", "p99", "p999", "mean"]), default="p999", show_default=True)
def report_cmd(store: str, output: str, baseline: str, metric: str) -> None:
    """Write one self-contained HTML report of a results store or of a single run directory."""
    from .outputs.report import build_report, build_run_report, is_run_dir

    if is_run_dir(store):
        click.echo(str(build_run_report(store, output)))
        return
    if not (Path(store) / "sweep.json").exists():
        _fail(f"store: {store!r} is neither a sweep results store (no sweep.json) nor a run directory (no summary.json)")
    click.echo(str(build_report(store, output, baseline=baseline, metric=metric)))


@main.command("reproduce")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the reproductions.")
@click.option("--quick", is_flag=True, help="Shorter, smaller runs (for CI); the full ones are what the docs quote.")
@click.option("--out", "out", default="results/reproduce", show_default=True, type=click.Path(file_okay=False))
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes of the embedded cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--regrade", is_flag=True, help="Run nothing: grade the claims again from the runs OUT already holds (no plots).")
@click.option("--reading", "readings", multiple=True, metavar="NAME|KEY=VALUE",
              help="Run the DeTail paper scenarios under another reading of an open choice (docs/model.md): a declared one "
                   "by name (rto_linux, fh_ingress_shared, rto_linux_fh_ingress_shared, egress_eighths, frontends_first; with `all`, only the reproductions "
                   "it applies to; with --update-docs, the claims of the reproductions run replace theirs in "
                   "docs/reproduction/readings/NAME.json), or KEY=VALUE, "
                   "e.g. scheme.egress_sharing=eighths (repeatable; into its own OUT).")
@click.option("--regrade-docs", "regrade_docs", is_flag=True,
              help="Run nothing: grade docs/reproduction/claims.json again from its own numbers under today's rule and labels "
                   "(the claims of every experiment OUT holds a claims.json for replace the stored ones), and regenerate the "
                   "blocks that show them, and the per-experiment sections of the reproductions OUT holds (run from the project root).")
@click.option("--update-docs", "update_docs_", is_flag=True,
              help="After `all`: copy OUT/claims.json to docs/reproduction/claims.json and regenerate the verdict tables "
                   "and counts in docs/reproduction.md and README.md (run from the project root).")
def reproduce_cmd(name: str | None, list_: bool, quick: bool, out: str, workers: int | None, scheduler: str | None, quiet: bool,
                  regrade: bool, readings: tuple[str, ...], regrade_docs: bool, update_docs_: bool) -> None:
    """Reproduce an evaluation of the DeTail, DIBS or PIAS papers, or DeTail beside DCQCN and HPCC (NAME, `modern` or `all`): sweep, plots, table, claims."""
    from .repro.readings import READINGS, reproductions_for
    from .repro.reproduce import GROUPS, REPROS, collect_claims, reproduce, update_docs

    if regrade_docs:
        from .repro.reproduce import DOC_CLAIMS, regrade_stored

        if not Path("docs/reproduction.md").exists():
            _fail("reproduce: --regrade-docs must run from the project root (no docs/reproduction.md here)")
        outp = Path(out)
        fresh = collect_claims(outp) if outp.is_dir() else []
        claims = regrade_stored(json.loads(Path(DOC_CLAIMS).read_text()), fresh)
        # the per-experiment sections of the reproductions OUT holds are rewritten too (the others kept)
        for p in update_docs(claims, Path("."), outp if fresh else None):
            click.echo(f"wrote {p}")
        return
    if list_ or name is None:
        from .repro.reproduce import DOC_TIMINGS

        # what the full run took when the docs' numbers were made (the source tree's record; none in a wheel)
        rec = Path(__file__).resolve().parents[2] / DOC_TIMINGS
        timings = json.loads(rec.read_text()) if rec.exists() else {}

        def took(n: str) -> str:
            t = timings.get(n)
            if not t:
                return "-"
            m = t["wall_s"] / 60
            return f"{t['wall_s']:.0f} s" if m < 1 else f"{m:.0f} min"
        width = max(len(n) for n in REPROS)
        if timings:
            click.echo(f"(the second column: the full run's wall time with {next(iter(timings.values()))['workers']} workers, as "
                       "docs/reproduction.md records it; --quick is shorter)", err=True)
        for n, r in REPROS.items():
            click.echo(f"{n:<{width}}  {took(n):>9}  {r.title}" if timings else f"{n:<{width}}  {r.title}")
        for g, members in GROUPS.items():
            total = sum(timings[m]["wall_s"] for m in members if m in timings) / 60
            click.echo(f"{g:<{width}}  {f'{total:.0f} min' if timings else '':>9}  runs {', '.join(members)}")
        if name is None and not list_:
            click.echo("\nrun one with: detailsim reproduce NAME [--quick]   (or: all)", err=True)
        return
    declared_name = readings[0] if len(readings) == 1 and readings[0] in READINGS else None
    if update_docs_:
        # checked before anything runs; a declared reading's claims are stored per experiment (the run of
        # one reproduction under it replaces that experiment's claims and keeps the others)
        if quick or (name != "all" and declared_name is None):
            _fail("reproduce: --update-docs takes the full `all` run (not --quick), whose numbers the docs quote, "
                  "or a declared --reading NAME's run of one reproduction or all")
        if not Path("docs/reproduction.md").exists():
            _fail("reproduce: --update-docs must run from the project root (no docs/reproduction.md here)")
    if regrade and quick:
        _fail("reproduce: --regrade grades what the store holds (quick or not); leave out --quick")

    reading: dict[str, Any] = {}
    declared = None
    for a in readings:
        if a in READINGS and len(readings) == 1:
            declared = READINGS[a]
            reading = dict(declared.set)
            continue
        k, sep, v = a.partition("=")
        if not sep or not k.strip():
            _fail(f"reproduce: --reading {a!r}: expected a declared reading ({', '.join(READINGS)}; alone) or KEY=VALUE, "
                  "e.g. scheme.egress_sharing=eighths")
        from .core.scenario import _parse_value

        reading[k.strip()] = _parse_value(v.strip())
    if reading and update_docs_ and declared is None:
        _fail("reproduce: --update-docs takes the adopted model's run or a declared --reading NAME "
              f"({', '.join(READINGS)}); a run under KEY=VALUE goes in its own OUT")
    if name == "all":
        names = reproductions_for(REPROS, declared.scenarios if declared else None) if reading else list(REPROS)
    else:
        names = GROUPS.get(name, [name])
    for n in names:
        if n not in REPROS:
            _fail(f"reproduce: unknown reproduction {n!r}; known: {', '.join(REPROS)}, {', '.join(GROUPS)}, all"
                  f"{did_you_mean(n, [*REPROS, *GROUPS, 'all'])}")
    outp = Path(out)
    parts = []
    progress = not quiet and sys.stderr.isatty()
    # several reproductions run one after another, each in a process of its own: the memory one takes
    # (sweep frames, plots) goes back to the system before the next starts (in one process `all` grew past
    # 24 GB and was killed)
    fresh = len(names) > 1 and not regrade
    pool = None
    if fresh:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1)
    try:
        for n in names:
            if pool is not None:
                err, md = pool.submit(_reproduce_one, n, str(outp), quick, workers, scheduler, progress, reading).result()
                if err:
                    _fail(err)
            else:
                try:
                    md = reproduce(n, outp, quick=quick, workers=workers, scheduler=scheduler, progress=progress, regrade=regrade, reading=reading)
                except (_core.ScenarioError, FileNotFoundError) as e:
                    _fail(str(e))
            click.echo(md)
            parts.append(md)
    finally:
        if pool is not None:
            pool.shutdown()
    if len(names) > 1:
        from .repro.grading import counts_line, glance_table

        claims = collect_claims(outp, names)
        (outp / "claims.json").write_text(json.dumps(claims, indent=2) + "\n")
        (outp / "README.md").write_text("# Reproductions" + (" (quick)" if quick else "") + "\n\n" + counts_line(claims) + "\n\n"
                                        + glance_table(claims) + "\n\n" + "\n".join(parts))
        click.echo(counts_line(claims).replace("**", ""), err=True)
    if update_docs_ and declared is not None:
        from .repro.readings import READINGS_DIR, merge_reading
        from .repro.reproduce import DOC_CLAIMS

        dest = Path(READINGS_DIR) / f"{declared.name}.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        kept = json.loads(dest.read_text()) if dest.exists() else []
        dest.write_text(json.dumps(merge_reading(kept, collect_claims(outp, names), names, list(REPROS)), indent=2) + "\n")
        click.echo(f"updated {dest}", err=True)
        # the adopted claims as they stand; the readings table is regenerated beside them
        for p in update_docs(json.loads(Path(DOC_CLAIMS).read_text()), Path(".")):
            click.echo(f"updated {p}", err=True)
    elif update_docs_:
        for p in update_docs(collect_claims(outp), Path("."), outp):
            click.echo(f"updated {p}", err=True)


def _reproduce_one(name: str, out: str, quick: bool, workers: int | None, scheduler: str | None, progress: bool,
                   reading: dict[str, Any] | None = None) -> tuple[str | None, str]:
    """One reproduction in a worker process (`reproduce all`): (error, Markdown)."""
    from .repro.reproduce import reproduce

    try:
        return None, reproduce(name, Path(out), quick=quick, workers=workers, scheduler=scheduler, progress=progress, reading=reading)
    except (_core.ScenarioError, FileNotFoundError) as e:
        return str(e), ""


@main.group("analyze")
def analyze_grp() -> None:
    """Analyses of results: the pooled table of a store, and the paper's Section 2 (no network simulation)."""


@analyze_grp.command("pooled")
@click.argument("store", type=click.Path(file_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["md", "csv"]), default="md", show_default=True,
              help="md: a Markdown table, each statistic as value [95% interval]; csv: one column per value and interval end.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of standard output.")
def analyze_pooled(store: str, fmt: str, output: str | None) -> None:
    """The table that goes in a paper: per series (the swept parameters other than the seed, e.g. scheme x
    load) and class, seeds pooled, count, unfinished, mean, p50, p99, p99.9 and the slowdown's p50, p99,
    p99.9, each with its 95% interval over seeds (Student's t on the logarithm of each seed's value)."""
    from .core.pooled import to_markdown
    from .core.store import open_store

    st = open_store(store)
    if not st.summary.height:
        _fail(f"store: {store!r} holds no finished run")
    t = st.pooled()
    text = to_markdown(t, st.keys) if fmt == "md" else t.write_csv()
    if output:
        Path(output).write_text(text)
        click.echo(f"{output}: {t.height} rows")
    else:
        click.echo(text, nl=False)


@analyze_grp.command("workflow")
@click.option("--fct-from", "src", required=True, help="A run's --out directory, a sweep store, a flows .parquet, or a CDF file.")
@click.option("--class", "cls", help="Use the flows of this class (e.g. retrieval/8KB).")
@click.option("--where", multiple=True, metavar="COL=VALUE", help="Filter flows, e.g. scheme=detail (repeatable).")
@click.option("--cdf-unit", type=click.Choice(["s", "ms", "us"]), default="ms", show_default=True, help="Unit of a CDF file's values.")
@click.option("--workers", type=click.IntRange(min=1), help="Partition-aggregate: workers per workflow.")
@click.option("--sequential", "seq", type=click.IntRange(min=1), help="Sequential: retrievals per workflow.")
@click.option("--deadline", required=True, help='Deadline, e.g. "10ms".')
@click.option("--trials", type=click.IntRange(min=100), default=10_000, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def analyze_workflow(src: str, cls: str | None, where: tuple[str, ...], cdf_unit: str, workers: int | None, seq: int | None,
                     deadline: str, trials: int, seed: int, as_json: bool) -> None:
    """Monte Carlo over an FCT distribution: deadline misses of partition-aggregate workflows (--workers N),
    the 99.9th percentile of sequential workflows (--sequential N), or, with neither, how many sequential
    retrievals fit under the deadline at the 99.9th percentile."""
    from .core import analyze as an

    try:
        dl = duration_seconds(deadline, "--deadline")
        d = an.load_dist(src, cls, list(where), cdf_unit)
    except _core.ScenarioError as e:
        _fail(str(e))
    if workers and seq:
        _fail("--workers and --sequential: give one of them (or neither, for the inverse question)")
    if workers:
        res = an.partition_aggregate(d, workers, dl, trials, seed)
        text = (f"partition-aggregate, {workers} workers, deadline {deadline}, {trials} trials ({d.describe()}):\n"
                f"  mean workers missing the deadline {res['mean_misses']:.3f}; all met in {res['p_all_met'] * 100:.2f}% of workflows;"
                f" 99.9th percentile of misses {res['p999_misses']}\n  misses: " + ", ".join(f"{k}: {v}" for k, v in res["distribution"].items()))
    elif seq:
        res = an.sequential(d, seq, dl, trials, seed)
        text = (f"sequential, {seq} retrievals, {trials} trials ({d.describe()}):\n  completion mean {res['mean_s'] * 1e3:.3f} ms,"
                f" p99 {res['p99_s'] * 1e3:.3f} ms, p99.9 {res['p999_s'] * 1e3:.3f} ms; misses the {deadline} deadline in {res['p_miss'] * 100:.3f}%")
    else:
        res = an.fit_sequential(d, dl, trials, seed)
        text = (f"at most {res['max_sequential_retrievals']} sequential retrievals complete within {deadline} at the 99.9th percentile"
                f" ({d.describe()}, {trials} trials)")
    click.echo(json.dumps(res) if as_json else text)


@main.command("demonstrate")
@click.argument("ids", nargs=-1)
@click.option("--list", "list_", is_flag=True, help="List the demonstrations and the claims each is about.")
@click.option("--out", "out", default="results/demonstrate", show_default=True, type=click.Path(file_okay=False))
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes of the embedded cluster.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--update-docs", "update_docs_", is_flag=True,
              help="Store what they measured in docs/reproduction/demonstrations.json and regenerate the prose that quotes "
                   "it (run from the project root).")
def demonstrate_cmd(ids: tuple[str, ...], list_: bool, out: str, workers: int | None, quiet: bool, update_docs_: bool) -> None:
    """Run the demonstrations of why claims do not reproduce (IDS, or all): docs/reproduction.md, "Claims that do not reproduce, and why"."""
    from .repro.demonstrations import DEMOS, run_demo, store

    if list_:
        for d in DEMOS.values():
            click.echo(f"{d.id}  ({', '.join(d.claims)}): {d.what}")
        return
    for i in ids:
        if i not in DEMOS:
            _fail(f"demonstrate: unknown demonstration {i!r}; known: {', '.join(DEMOS)}{did_you_mean(i, DEMOS)}")
    if update_docs_ and not Path("docs/reproduction.md").exists():
        _fail("demonstrate: --update-docs must run from the project root (no docs/reproduction.md here)")
    records = {}
    for i in ids or list(DEMOS):
        records[i] = run_demo(DEMOS[i], Path(out), workers=workers, progress=not quiet and sys.stderr.isatty())
        click.echo(json.dumps({i: records[i]["measured"]}, indent=1, default=str))
    if update_docs_:
        from .repro.reproduce import DOC_CLAIMS, update_docs

        click.echo(f"updated {store(records, Path('.'))}", err=True)
        for p in update_docs(json.loads(Path(DOC_CLAIMS).read_text()), Path(".")):
            click.echo(f"updated {p}", err=True)


@main.command("pias-thresholds")
@click.option("--cdf", "cdf", required=True, help="Flow-size CDF: websearch, datamining, or a file.")
@click.option("--load", type=float, required=True, help="Load rho in (0, 1).")
@click.option("--queues", type=click.IntRange(1, 8), default=8, show_default=True)
@click.option("--method", type=click.Choice(["all", "optimal", "equal-split", "paper"]), default="all", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def pias_thresholds_cmd(cdf: str, load: float, queues: int, method: str, as_json: bool) -> None:
    """PIAS demotion thresholds: the bound-minimising ones (exact dynamic programming), equal split, and the
    PIAS authors' published sets, with the fractions S_j and the bound T of each."""
    from .core.cdf import load_points
    from .core.pias import solve

    try:
        points = load_points(cdf, field="--cdf")
        methods = ["optimal", "equal-split", "paper"] if method == "all" else [method]
        results = []
        for m in methods:
            try:
                results.append(solve(points, cdf, load, queues, m))
            except _core.ScenarioError:
                if method != "all":
                    raise
    except _core.ScenarioError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(results if method == "all" else results[0]))
        return
    for r in results:
        click.echo(f"{r['method']:<12} bound {r['bound']:.4f}  S = " + ", ".join(f"{x:.3f}" for x in r["fractions"]))
        click.echo(f"{'':<12} thresholds (bytes) " + ", ".join(str(a) for a in r["thresholds_bytes"]))


DEMO_SCHEMES = ["fh", "lps", "detail"]


def format_comparison(results: dict[str, dict[str, Any]], baseline: str = "fh", target: str = "detail") -> str:
    """Median / p99 / p99.9 per retrieval size for each scheme, and `target`'s reduction over `baseline`."""
    base = results[baseline]
    classes = [c for c in base["fct"] if c.startswith("retrieval/")]
    head = f"{'class':<16}{'scheme':<9}{'p50':>12}{'p99':>12}{'p99.9':>12}   (ms; cut = {target}'s reduction over {baseline}; >=: a bound)"
    rows = [head]
    for cls in classes:
        for name, s in results.items():
            st = s["fct"][cls]
            rows.append(f"{cls:<16}{name:<9}" + "".join(f"{fmt_ms(st[f'{m}_ms'], st.get(f'{m}_lb', False)):>12}" for m in ("p50", "p99", "p999")))
        a, b = base["fct"][cls], results[target]["fct"][cls]
        cuts = []
        for m in ("p50", "p99", "p999"):
            bound = {(True, False): ">= ", (False, True): "<= ", (True, True): "? "}.get((bool(a.get(f"{m}_lb")), bool(b.get(f"{m}_lb"))), "")
            cuts.append(f"{bound}{(a[f'{m}_ms'] - b[f'{m}_ms']) / a[f'{m}_ms'] * 100:.0f}%")
        rows.append(f"{'':<16}{'cut':<9}" + "".join(f"{c:>12}" for c in cuts))
    rows.append("")
    for name, s in results.items():
        rows.append(
            f"{name:<8} congestion drops {s['congestion_drops']:>6}, timeouts {s['timeouts']:>5}, "
            f"PFC frames {s['pfc']['pause_frames']:>7}, {s['flows']['completed']} flows, {s['wall_s']:.1f} s wall"
        )
    return "\n".join(rows)


@main.command("demo")
@click.option("--duration", default=DEMO_DURATION, show_default=True, help="Arrival window of each run.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def demo_cmd(duration: str, quiet: bool) -> None:
    """Run the embedded default (paper/steady) with FH, LPS and DeTail; print FCT tails and DeTail's reduction."""
    results: dict[str, dict[str, Any]] = {}
    for scheme in DEMO_SCHEMES:
        sc, name = prepare(DEMO_SCENARIO, scheme=scheme, duration=duration)
        if not results:
            click.echo(f"detailsim demo: {name}: {sc.get('description', '')}; {duration} of arrivals per scheme, seed 1\n")
        results[scheme] = _run(sc, name, quiet).summary
    click.echo(format_comparison(results))


if __name__ == "__main__":
    main()
