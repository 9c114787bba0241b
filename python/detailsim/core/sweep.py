"""Sweeps: a base scenario crossed with axes, run on Dask (an embedded LocalCluster or a cluster of many
machines), stored run by run so that a killed sweep loses nothing it finished.

A sweep file (TOML)::

    description = "FH vs DeTail over retrieval rates"
    base = "paper/steady"             # bundled name or path (relative to this file)
    seeds = 5                         # seeds 1..5, or an explicit list [1, 7, 9]

    [set]                             # overrides applied to every run
    "run.duration" = "0.1s"

    [axes]                            # crossed with each other
    scheme = ["fh", "lps", "detail"]  # `scheme` is scheme.preset
    "workload.rate" = [500, 1000, 2000]

    [[zip]]                           # axes advanced together (equal lengths), crossed with the rest
    "topology.link_rate" = ["1Gbps", "10Gbps"]
    "topology.buffer" = ["128KB", "1MB"]

``labels = ["variant"]`` marks axes that only name runs (a zipped ``variant = ["healthy", "degraded"]``
beside ``fault = [[], [...]]``), and ``hide = ["fault"]`` keeps an axis out of plot legends.

The results store (``OUT``)::

    OUT/sweep.json               the expanded sweep (every run's id and parameters)
    OUT/summary/<run>.parquet    one row per finished run: parameters, counters, the summary as JSON
    OUT/fct/<run>.parquet        one row per (run, class): count, mean, p50, p99, p99.9, max (ms)
    OUT/flows/<run>.parquet      one row per flow, with the run's parameters as columns
    OUT/failed/<run>.json        the error of a run that failed

Every file is written to a temporary name and renamed into place; a run's summary is written last and is
what marks it finished, so ``--resume`` reruns exactly the runs without one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import tomllib
import traceback
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .._core import ScenarioError
from .scenario import prepare, require_workload

# the most runs one sweep may expand to (each is validated before anything runs)
MAX_RUNS = 100_000
SWEEP_KEYS = {"description", "base", "seeds", "set", "axes", "zip", "name", "claims", "plots", "hide", "labels"}


@dataclass
class Run:
    run_id: str
    params: dict[str, Any]
    scenario: dict[str, Any] = field(repr=False)
    name: str = ""


@dataclass
class Sweep:
    spec: dict[str, Any]
    runs: list[Run]
    axes: list[str]
    source: str = ""


def run_id(params: dict[str, Any], scenario: dict[str, Any]) -> str:
    """The run's parameters and its fully resolved scenario: editing the base scenario (or a CDF, or the
    code's presets' inputs) gives new ids, so `--resume` never mixes results of different scenarios."""
    key = json.dumps({"params": params, "scenario": scenario}, sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _normalise(values: list[Any], where: str) -> list[Any]:
    if not isinstance(values, list) or not values:
        raise ScenarioError(f"{where}: must be a non-empty list of values")
    if any(isinstance(v, (list, dict)) for v in values):
        return values  # structured values (e.g. a list of faults) go to the scenario as they are
    if any(isinstance(v, float) for v in values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    kinds = {type(v) for v in values}
    if len(kinds) > 1:
        raise ScenarioError(f"{where}: values must all be of one kind (got {', '.join(sorted(k.__name__ for k in kinds))})")
    return values


def load_sweep(source: str | Path | dict[str, Any]) -> Sweep:
    """Read and expand a sweep; every run's scenario is validated before anything runs."""
    from .. import _core

    if isinstance(source, dict):
        spec, base_dir, src = json.loads(json.dumps(source)), Path.cwd(), "<dict>"
    else:
        path = Path(source)
        try:
            spec = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ScenarioError(f"sweep: no such file {str(path)!r}") from None
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: not valid TOML: {e}") from None
        base_dir, src = path.resolve().parent, str(path)
    unknown = set(spec) - SWEEP_KEYS
    if unknown:
        from .scenario import did_you_mean

        key = sorted(unknown)[0]
        raise ScenarioError(f"sweep.{key}: unknown key; allowed: {', '.join(sorted(SWEEP_KEYS))}{did_you_mean(key, SWEEP_KEYS)}")
    base = spec.get("base")
    if not isinstance(base, (str, dict)):
        raise ScenarioError("sweep.base: required: a bundled scenario name, a scenario path, or an inline table")
    if isinstance(base, str) and not Path(base).is_absolute() and (base_dir / base).is_file():
        base = str(base_dir / base)
    seeds = spec.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if not 1 <= seeds <= MAX_RUNS:
            raise ScenarioError(f"sweep.seeds: a number of seeds from 1 to {MAX_RUNS}, got {seeds}")
        seed_list = list(range(1, seeds + 1))
    elif (isinstance(seeds, list) and seeds and len(seeds) <= MAX_RUNS
          and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**64 for x in seeds)):
        seed_list = seeds
    else:
        raise ScenarioError(f"sweep.seeds: a number of seeds (1..N) or a list of up to {MAX_RUNS} integers from 0 to 2^64-1")
    fixed = spec.get("set", {})
    axes = spec.get("axes", {})
    zips = spec.get("zip", [])
    if not isinstance(fixed, dict) or not isinstance(axes, dict) or not isinstance(zips, list):
        raise ScenarioError("sweep: [set] and [axes] are tables, [[zip]] a list of tables")
    # groups of axes: each plain axis is its own group; each zip table one group
    groups: list[list[tuple[str, list[Any]]]] = [[(k, _normalise(v, f"axes.{k}"))] for k, v in axes.items()]
    for i, z in enumerate(zips):
        if not isinstance(z, dict) or not z:
            raise ScenarioError(f"zip[{i}]: must be a non-empty table of equal-length lists")
        cols = [(k, _normalise(v, f"zip[{i}].{k}")) for k, v in z.items()]
        lengths = {len(v) for _, v in cols}
        if len(lengths) != 1:
            raise ScenarioError(f"zip[{i}]: lists must have equal lengths (got {sorted(lengths)})")
        groups.append(cols)
    names = [k for g in groups for k, _ in g]
    if len(set(names)) != len(names):
        raise ScenarioError("sweep: an axis appears twice")
    if "seed" in names:
        raise ScenarioError("axes.seed: use `seeds` for seeds")
    labels = spec.get("labels", [])
    if not isinstance(labels, list) or any(lb not in names for lb in labels):
        raise ScenarioError("sweep.labels: a list of axis names that only label runs (they are not scenario keys)")
    total = len(seed_list)
    for g in groups:
        total *= len(g[0][1])
    if total > MAX_RUNS:
        raise ScenarioError(f"sweep: {total} runs (axes x zips x seeds); at most {MAX_RUNS} in one sweep")
    combos: list[dict[str, Any]] = [{}]
    for g in groups:
        n = len(g[0][1])
        combos = [{**c, **{k: v[i] for k, v in g}} for c in combos for i in range(n)]
    runs: list[Run] = []
    for combo, seed in product(combos, seed_list):
        params = {**combo, "seed": seed}
        overrides = dict(fixed)
        scheme = None
        for k, v in combo.items():
            if k == "scheme":
                scheme = v
            elif k not in labels:
                overrides[k] = v
        try:
            sc, name = prepare(base, scheme=scheme, seed=seed, overrides=overrides)
            _core.validate(json.dumps(sc))
            require_workload(sc)
        except ScenarioError as e:
            label = ", ".join(f"{k}={v}" for k, v in params.items())
            raise ScenarioError(f"{e} (in the run {label})") from None
        runs.append(Run(run_id(params, sc), params, sc, name))
    return Sweep(spec=spec, runs=runs, axes=names + ["seed"], source=src)


# ---------------------------------------------------------------- execution (runs on Dask workers)


def execute_run(run: Run) -> dict[str, Any]:
    """Run one simulation; never raises (a failure comes back as {"error": ...})."""
    from .api import execute, one_thread_unless_set

    try:
        # the workers share the machine's cores: each run on one thread (unless the sweep sets run.threads)
        res = execute(one_thread_unless_set(run.scenario), run.name)
        return {"run_id": run.run_id, "summary": res.summary, "flows": res.flows}
    except BaseException as e:  # noqa: BLE001 - a failed run must not stop the sweep
        return {"run_id": run.run_id, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}


# ---------------------------------------------------------------- the store


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _scalar(v: Any) -> Any:
    return json.dumps(v) if isinstance(v, (list, dict)) else v


def _param_columns(df: pl.DataFrame, run: Run) -> pl.DataFrame:
    cols = [pl.lit(run.run_id).alias("run_id")]
    cols += [pl.lit(_scalar(v)).alias(k) for k, v in run.params.items()]
    # class as plain strings: runs of one sweep may have different class sets
    df = df.with_columns(pl.col("class").cast(pl.String))
    return df.with_columns(cols).select(["run_id", *run.params.keys(), *df.columns])


def summary_row(run: Run, summary: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": run.run_id, **{k: _scalar(v) for k, v in run.params.items()}}
    row["scheme_name"] = summary["scheme"]
    for k in ("sim_time_s", "wall_s", "events", "link_traversals", "timeouts", "retransmits", "ecn_marks", "congestion_drops"):
        row[k] = summary[k]
    row["flows_started"] = summary["flows"]["started"]
    row["flows_completed"] = summary["flows"]["completed"]
    for k, v in summary["drops"].items():
        row[f"drops_{k}"] = v
    row["pfc_pause_frames"] = summary["pfc"]["pause_frames"]
    row["pfc_paused_time_s"] = summary["pfc"]["paused_time_s"]
    row["summary_json"] = json.dumps(summary)
    return row


def store_result(out: Path, run: Run, result: dict[str, Any]) -> None:
    rid = run.run_id
    if "error" in result:
        _atomic_write(out / "failed" / f"{rid}.json",
                      lambda p: p.write_text(json.dumps({"run_id": rid, "params": run.params, **{k: result[k] for k in ("error", "traceback")}}, indent=2)))
        return
    flows = _param_columns(result["flows"], run)
    _atomic_write(out / "flows" / f"{rid}.parquet", lambda p: flows.write_parquet(p))
    params = {k: _scalar(v) for k, v in run.params.items()}
    fct_rows = [{"run_id": rid, **params, "class": c, **st} for c, st in result["summary"]["fct"].items()]
    fct = pl.DataFrame(fct_rows, schema_overrides={k: pl.Float64 for k in ("mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms")})
    _atomic_write(out / "fct" / f"{rid}.parquet", lambda p: fct.write_parquet(p))
    row = pl.DataFrame([summary_row(run, result["summary"])])
    # the summary is written last: its presence is what marks the run finished
    _atomic_write(out / "summary" / f"{rid}.parquet", lambda p: row.write_parquet(p))
    (out / "failed" / f"{rid}.json").unlink(missing_ok=True)


def finished_runs(out: Path) -> set[str]:
    d = out / "summary"
    return {p.stem for p in d.glob("*.parquet")} if d.is_dir() else set()


def _manifest(sw: Sweep) -> dict[str, Any]:
    # a shortened copy for the record: run 0's own scenario must stay whole (it has not run yet)
    base = dict(sw.runs[0].scenario) if sw.runs else {}
    base["workload"] = [dict(w, rows=w["rows"][:20] + [f"... {len(w['rows']) - 20} more rows"]) if len(w.get("rows", [])) > 20 else w
                        for w in base.get("workload", [])]
    return {"spec": sw.spec, "source": sw.source, "axes": sw.axes, "base_scenario": base,
            "runs": [{"run_id": r.run_id, "params": r.params} for r in sw.runs]}


def prepare_store(out: Path, sw: Sweep, resume: bool) -> None:
    mpath = out / "sweep.json"
    if mpath.exists():
        old = json.loads(mpath.read_text())
        if not resume:
            raise ScenarioError(f"--out: {str(out)!r} already holds a sweep; add --resume to continue it, or choose another directory")
        if {r["run_id"] for r in old["runs"]} != {r.run_id for r in sw.runs}:
            raise ScenarioError(f"--out: {str(out)!r} holds a different sweep (other runs); choose another directory")
        return
    if out.exists() and any(out.iterdir()):
        raise ScenarioError(f"--out: {str(out)!r} exists and is not a sweep directory")
    manifest = _manifest(sw)
    _atomic_write(mpath, lambda p: p.write_text(json.dumps(manifest, indent=2, default=str)))


def run_sweep(
    sw: Sweep,
    out: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    progress: bool = True,
) -> dict[str, int]:
    """Run every unfinished run of `sw` into the store at `out`. Returns counts (done, failed, skipped)."""
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    out = Path(out)
    prepare_store(out, sw, resume)
    done = finished_runs(out)
    todo = [r for r in sw.runs if r.run_id not in done]
    counts = {"done": 0, "failed": 0, "skipped": len(sw.runs) - len(todo)}
    if not todo:
        return counts
    if scheduler:
        client = Client(scheduler, timeout="30s")
        cluster = None
    else:
        n = workers or os.cpu_count() or 1
        # dashboard on a free port (":0"): None means dask's default 8787, which a second sweep on the machine
        # finds taken (a warning, and an error where warnings are errors)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(cluster)
    bar = tqdm(total=len(sw.runs), initial=counts["skipped"], unit="run", disable=not progress, dynamic_ncols=True)
    by_id = {r.run_id: r for r in todo}
    try:
        futures = client.map(execute_run, todo, pure=False, key=[f"run-{r.run_id}" for r in todo])
        for fut in as_completed(futures):
            try:
                result = fut.result()
            except Exception as e:  # noqa: BLE001 - a worker that died
                rid = fut.key.removeprefix("run-")
                result = {"run_id": rid, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
            run = by_id[result["run_id"]]
            store_result(out, run, result)
            counts["failed" if "error" in result else "done"] += 1
            bar.set_postfix(done=counts["done"] + counts["skipped"], failed=counts["failed"],
                            remaining=len(todo) - counts["done"] - counts["failed"], refresh=False)
            bar.update(1)
    finally:
        bar.close()
        client.close()
        if cluster is not None:
            cluster.close()
    return counts


# ---------------------------------------------------------------- reading


def sweep_axes(out: Path, summary: pl.DataFrame) -> list[str]:
    """The swept parameters (other than the seed) that take more than one value."""
    m = json.loads((Path(out) / "sweep.json").read_text())
    hide = set(m["spec"].get("hide", []))
    return [a for a in m["axes"] if a != "seed" and a not in hide and a in summary.columns and summary[a].n_unique() > 1]


def read_store(out: str | Path, classes: list[str] | None = None, drop: tuple[str, ...] = (),
               columns: list[str] | None = None, tables: tuple[str, ...] = ("summary", "fct", "flows")) -> dict[str, pl.DataFrame]:
    """The store's tables as polars DataFrames: summary, fct, flows (lazily read would be
    ``pl.scan_parquet(out / "flows" / "*.parquet")``). `classes`: only those flows; `drop` these flow
    columns, or keep only `columns` (those a file has); each file filtered as it is read, so a large
    store's whole flow table need not fit. `tables`: only these."""
    out = Path(out)
    result = {}
    for name in tables:
        files = sorted((out / name).glob("*.parquet"))
        if name == "flows" and (classes is not None or drop or columns is not None):
            def one(f: Path) -> pl.DataFrame:
                q = pl.scan_parquet(f)
                if classes is not None:
                    q = q.filter(pl.col("class").cast(pl.String).is_in(classes))
                have = q.collect_schema().names()
                if columns is not None:
                    q = q.select([c for c in columns if c in have])
                return q.drop([c for c in drop if c in have and (columns is None or c in columns)]).collect()
            frames = [one(f) for f in files]
        else:
            frames = [pl.read_parquet(f) for f in files]
        frames = [f.with_columns(pl.col("class").cast(pl.String)) if "class" in f.columns else f for f in frames]
        result[name] = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    return result


def wait_for(n: int, out: Path, timeout: float) -> bool:
    """Test helper: wait until `n` runs are finished in `out`."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if len(finished_runs(out)) >= n:
            return True
        time.sleep(0.05)
    return False


def run_store(spec: dict[str, Any], d: Path, source: str, workers: int | None, scheduler: str | None, progress: bool) -> dict[str, int]:
    """Run a sweep into the store `d`, keeping the runs of an earlier sweep there that this one repeats (a
    reproduction given more seeds runs only the new ones) and removing the others. The counts of runs done,
    failed and skipped (kept from the store)."""
    sw = load_sweep(spec)
    sw.source = source
    resume = (d / "sweep.json").exists()
    if resume:
        old = json.loads((d / "sweep.json").read_text())
        keep = {x.run_id for x in sw.runs}
        if {x["run_id"] for x in old["runs"]} != keep:
            for sub in ("summary", "fct", "flows", "failed"):
                for f in (d / sub).glob("*"):
                    if f.stem not in keep:
                        f.unlink()
            (d / "sweep.json").write_text(json.dumps(_manifest(sw), indent=2, default=str))
    return run_sweep(sw, d, workers=workers, scheduler=scheduler, resume=resume, progress=progress)
