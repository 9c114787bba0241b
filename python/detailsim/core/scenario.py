"""Scenario files: loading (path or bundled name), dotted-key overrides, and front-end resolution
(CSV flow lists and custom-topology files are read here, then the whole scenario goes to the Rust core
as JSON, where the one schema validates it)."""

from __future__ import annotations

import copy

import json
import math
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from .._core import ScenarioError

SCENARIO_ROOT = resources.files("detailsim") / "scenarios"


def did_you_mean(word: str, choices: list[str] | Any) -> str:
    """"; did you mean 'x'?" for the choice closest to a misspelt `word` (difflib's ratio, as the core's
    errors do with edit distance), or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def bundled_scenarios() -> dict[str, str]:
    """Bundled scenario names (e.g. ``paper/steady``) with their descriptions."""
    out: dict[str, str] = {}
    root = Path(str(SCENARIO_ROOT))
    for p in sorted(root.rglob("*.toml")):
        name = p.relative_to(root).with_suffix("").as_posix()
        try:
            desc = tomllib.loads(p.read_text()).get("description", "")
        except tomllib.TOMLDecodeError:
            desc = "(unreadable)"
        out[name] = desc
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file (TOML is UTF-8 text)") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None


def load_scenario(scenario: str | Path | dict[str, Any]) -> tuple[dict[str, Any], str, Path]:
    """Return (scenario dict, display name, base directory for relative paths)."""
    if isinstance(scenario, dict):
        try:
            # a JSON round trip is a deep copy (and much faster than copy.deepcopy on large flow lists)
            return json.loads(json.dumps(scenario)), "<dict>", Path.cwd()
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"scenario: not representable as JSON: {e}") from None
    s = str(scenario)
    p = Path(s)
    if p.is_file():
        return _read_toml(p), s, p.resolve().parent
    bundled = Path(str(SCENARIO_ROOT)) / (s.removesuffix(".toml") + ".toml")
    if bundled.is_file():
        return _read_toml(bundled), s.removesuffix(".toml"), bundled.parent
    names = ", ".join(bundled_scenarios())
    raise ScenarioError(f"scenario: {s!r} is neither a file nor a bundled scenario; bundled: {names}"
                        f"{did_you_mean(s, bundled_scenarios())}")


def _show(v: Any) -> str:
    """A value as the user wrote it, for an error message (short)."""
    names = {dict: "a table", list: "a list", bool: "a boolean", str: "a string", int: "a number", float: "a number"}
    r = repr(v)
    return f"{names.get(type(v), type(v).__name__)} {r if len(r) <= 40 else r[:37] + '...'}"


def check_shape(sc: Any) -> None:
    """The shape the front end relies on (tables, lists, strings where it reads them), checked before it
    reads the scenario; the Rust schema checks every value afterwards."""
    if not isinstance(sc, dict):
        raise ScenarioError(f"scenario: a table with [run], [topology], [scheme], [[workload]], [[fault]]; got {_show(sc)}")
    for k in ("run", "topology", "scheme"):
        if k in sc and not isinstance(sc[k], dict):
            raise ScenarioError(f"{k}: must be a table, got {_show(sc[k])}")
    for k in ("workload", "fault"):
        if k in sc:
            if not isinstance(sc[k], list):
                raise ScenarioError(f"{k}: must be a list of tables ([[{k}]]), got {_show(sc[k])}")
            for i, w in enumerate(sc[k]):
                if not isinstance(w, dict):
                    raise ScenarioError(f"{k}[{i}]: must be a table, got {_show(w)}")
    for i, w in enumerate(sc.get("workload", [])):
        for key in ("kind", "file", "cdf"):
            if key in w and not isinstance(w[key], str):
                raise ScenarioError(f"workload[{i}].{key}: must be a string, got {_show(w[key])}")
        if "rows" in w and not isinstance(w["rows"], list):
            raise ScenarioError(f"workload[{i}].rows: must be a list of flows, got {_show(w['rows'])}")
    scheme = sc.get("scheme", {})
    for key in ("tcp", "pfc", "pias", "red", "dibs"):
        if key in scheme and not isinstance(scheme[key], dict):
            raise ScenarioError(f"scheme.{key}: must be a table, got {_show(scheme[key])}")
    if "preset" in scheme and not isinstance(scheme["preset"], str):
        raise ScenarioError(f"scheme.preset: must be a string (a scheme name), got {_show(scheme['preset'])}")
    topo = sc.get("topology", {})
    if "file" in topo and not isinstance(topo["file"], str):
        raise ScenarioError(f"topology.file: must be a string (a path), got {_show(topo['file'])}")


def check_finite(v: Any, path: str = "") -> None:
    """Refuse NaN and infinities anywhere in the scenario, naming the field (JSON, the core's input, has none)."""
    if isinstance(v, float) and not math.isfinite(v):
        raise ScenarioError(f"{path or 'scenario'}: must be a finite number, got {v}")
    if isinstance(v, dict):
        for k, x in v.items():
            check_finite(x, f"{path}.{k}" if path else str(k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            check_finite(x, f"{path}[{i}]")


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_override(sc: dict[str, Any], assignment: str) -> None:
    """Apply ``dotted.key=value``; list items are addressed by index (``workload.0.rate=500``)."""
    if "=" not in assignment:
        raise ScenarioError(f"--set {assignment!r}: expected dotted.key=value, e.g. topology.link_rate=10Gbps")
    key, text = assignment.split("=", 1)
    set_path(sc, key.strip(), _parse_value(text.strip()))


def set_path(sc: dict[str, Any], key: str, value: Any) -> None:
    """Set `value` at dotted path `key`. A numeric component indexes a list; a name applied to a list
    (``workload.rate``) sets the key in every element that already has it (so ``workload.rate`` changes
    the retrieval rate and leaves a background workload alone)."""
    parts = key.split(".")
    if not all(parts):
        raise ScenarioError(f"{key}: empty path component")
    if not _set(sc, parts, value, key, 0):
        raise ScenarioError(f"{key}: no list element has the key {parts[-1]!r}")


def _set(cur: Any, parts: list[str], value: Any, key: str, depth: int) -> bool:
    part = parts[depth]
    last = depth == len(parts) - 1
    where = ".".join(parts[: depth + 1])
    if isinstance(cur, list):
        if part.isdigit():
            i = int(part)
            if i >= len(cur):
                raise ScenarioError(f"{where}: list index must be 0..{len(cur) - 1}")
            if last:
                cur[i] = value
                return True
            return _set(cur[i], parts, value, key, depth + 1)
        # broadcast over the elements
        hit = False
        for el in cur:
            if isinstance(el, dict) and part in el:
                hit |= _set(el, parts, value, key, depth)
        return hit
    if not isinstance(cur, dict):
        raise ScenarioError(f"{where}: is a value, not a table")
    if last:
        cur[part] = value
        return True
    nxt = cur.get(part)
    if nxt is None:
        nxt = cur[part] = {}
    elif not isinstance(nxt, (dict, list)):
        raise ScenarioError(f"{where}: is a value, not a table")
    return _set(nxt, parts, value, key, depth + 1)


def _one_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _resolve_flows(w: dict[str, Any], i: int, base: Path) -> None:
    """A flow-list CSV (src,dst,size_bytes,start_s[,priority]) into `rows`; an error names the file and the
    row (rows counted from 1 after the header), and `source` tells the core's checks where rows came from."""
    import polars as pl

    f = w.pop("file")
    path = Path(f) if Path(f).is_absolute() else base / f
    field = f"workload[{i}].file"
    need = ["src", "dst", "size_bytes", "start_s"]
    try:
        df = pl.read_csv(path, infer_schema=False)  # every column as text: the casts below say what is wrong
    except FileNotFoundError:
        raise ScenarioError(f"{field}: no such file {str(path)!r}") from None
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{field}: cannot read {str(path)!r} as CSV: {_one_line(e)}") from None
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ScenarioError(f"{field}: {path.name} lacks column(s) {', '.join(missing)}; expected a header src,dst,size_bytes,start_s[,priority]")
    extra = [c for c in df.columns if c not in need + ["priority"]]
    if extra:
        raise ScenarioError(f"{field}: {path.name} has unknown column(s) {', '.join(map(repr, extra))}; allowed: src, dst, size_bytes, start_s, priority")
    if "priority" not in df.columns:
        df = df.with_columns(pl.lit("0").alias("priority"))
    if df.height == 0:
        raise ScenarioError(f"{field}: {path.name} has no flows (a header and no rows)")
    allowed = {"src": "a host index (a whole number >= 0)", "dst": "a host index (a whole number >= 0)",
               "size_bytes": "a whole number of bytes from 1 to 2^50", "priority": "0 (highest) to 7 (lowest)",
               "start_s": "a start time in seconds, finite and >= 0"}
    cols = {}
    for c in ["src", "dst", "size_bytes", "priority", "start_s"]:
        raw = df[c].str.strip_chars()
        v = raw.cast(pl.Float64 if c == "start_s" else pl.Int64, strict=False)
        ok = v.is_not_null()
        ok = ok & (v.is_finite() if c == "start_s" else True)
        lo, hi = {"size_bytes": (1, 2**50), "priority": (0, 7), "start_s": (0, 1e9)}.get(c, (0, 2**31 - 1))
        ok = ok & (v >= lo) & (v <= hi)
        bad = (~ok.fill_null(False)).arg_true()
        if len(bad):
            j = int(bad[0])
            raise ScenarioError(f"{field}: {path.name} row {j + 1}: {c} must be {allowed[c]}, got {raw[j]!r}")
        cols[c] = v
    same = (cols["src"] == cols["dst"]).arg_true()
    if len(same):
        raise ScenarioError(f"{field}: {path.name} row {int(same[0]) + 1}: dst must differ from src")
    rows = pl.DataFrame({c: cols[c] for c in ["src", "dst", "size_bytes", "start_s", "priority"]}).to_dicts()
    for j, r in enumerate(rows):
        r["id"] = j + 1  # the data row, from 1: the flow table's input_id
    w["rows"] = rows
    w["source"] = path.name


PIAS_PRESETS = {"pias", "detail_pias"}


def _resolve_pias(sc: dict[str, Any], base: Path) -> None:
    """`[scheme.pias] thresholds = "optimal" | "equal-split" | "paper" | [bytes...]`, `queues = 8`: checked here
    with the front end's messages, and a `cdf` named in the table read into `points`; the core solves the
    thresholds (`mechanisms::pias`) from them, or from the scenario's first CDF workload (its flow sizes and
    load), or, where neither gives a distribution with a load, from the traffic every workload offers (the
    same with no table at all), into scheme.tcp.mlfq_thresholds."""
    scheme = sc.get("scheme")
    if not isinstance(scheme, dict) or "pias" not in scheme:
        return
    cfg = scheme["pias"]
    if scheme.get("preset", "fh") not in PIAS_PRESETS:
        scheme.pop("pias")
        return  # the table configures the PIAS presets only (a sweep may cross pias with dctcp)
    if not isinstance(cfg, dict):
        raise ScenarioError("scheme.pias: a table with thresholds and queues")
    unknown = set(cfg) - {"thresholds", "queues", "cdf", "load"}
    if unknown:
        raise ScenarioError(f"scheme.pias.{sorted(unknown)[0]}: unknown key; allowed: thresholds, queues, cdf, load")
    method = cfg.get("thresholds", "optimal")
    queues = cfg.get("queues", 8)
    if not isinstance(queues, int) or isinstance(queues, bool) or not 1 <= queues <= 8:
        raise ScenarioError(f"scheme.pias.queues: a whole number of queues, 1 to 8; got {_show(queues)}")
    if isinstance(method, list):
        return
    if not isinstance(method, str):
        raise ScenarioError(f"scheme.pias.thresholds: \"optimal\", \"equal-split\", \"paper\" or a list of byte thresholds; got {_show(method)}")
    i, w = next(((i, w) for i, w in enumerate(sc.get("workload", [])) if w.get("kind") == "cdf"), (None, {}))
    load_field = f"workload[{i}].load"
    if "cdf" in cfg:
        from .cdf import load_points

        cfg["cdf"] = str(cfg["cdf"])
        cfg["points"] = load_points(cfg["cdf"], base, "scheme.pias.cdf")
        w = {**w, "cdf": cfg["cdf"], "points": cfg["points"]}
    if "load" in cfg:
        w, load_field = {**w, "load": cfg["load"]}, "scheme.pias.load"
    if "load" in w and (not isinstance(w["load"], (int, float)) or isinstance(w["load"], bool) or not 0 < w["load"] < 1):
        raise ScenarioError(f"{load_field}: a load in (0, 1) (the PIAS thresholds are derived from it), got {_show(w['load'])}")


FOREIGN_FLOWS = {"hpcc_flows": "the HPCC simulator's flow file", "htsim_cm": "a csg-htsim connection matrix"}


def _resolve_hpcc_topology(topo: dict[str, Any], base: Path) -> dict[int, int]:
    """`[topology] kind = "hpcc", file = ...` into a custom topology; each HPCC host id's host index."""
    from .formats import read_hpcc_topology

    if "file" not in topo:
        raise ScenarioError('topology.file: required for kind "hpcc" (the HPCC simulator\'s topology file)')
    for k in ("nodes", "links"):
        if k in topo:
            raise ScenarioError(f'topology.{k}: not with kind "hpcc" (its file lists the nodes and links)')
    f = Path(topo.pop("file"))
    nodes, links, host_of = read_hpcc_topology(f if f.is_absolute() else base / f)
    topo.update(kind="custom", nodes=nodes, links=links)
    return host_of


def _resolve_foreign_flows(w: dict[str, Any], i: int, base: Path, host_of: dict[int, int] | None) -> None:
    """An HPCC flow file or an htsim connection matrix into a `flows` workload, each row's file line kept
    for the core's messages; `priority` (optional) gives every flow that priority."""
    from .formats import read_hpcc_flows, read_htsim_cm

    kind = w["kind"]
    allowed = ["file", "priority", "class"] + (["start_unit"] if kind == "htsim_cm" else [])
    unknown = set(w) - {"kind", *allowed}
    if unknown:
        raise ScenarioError(f"workload[{i}].{sorted(unknown)[0]}: unknown key for kind {kind!r}; allowed: {', '.join(allowed)}")
    if "file" not in w:
        raise ScenarioError(f"workload[{i}].file: required for kind {kind!r} ({FOREIGN_FLOWS[kind]})")
    prio = w.get("priority")
    if prio is not None and (not isinstance(prio, int) or isinstance(prio, bool) or not 0 <= prio <= 7):
        raise ScenarioError(f"workload[{i}].priority: 0 (highest) to 7 (lowest), given to every flow of the file; got {_show(prio)}")
    f = Path(w["file"])
    path = f if f.is_absolute() else base / f
    field = f"workload[{i}].file"
    unit = w.get("start_unit", "ps")
    if not isinstance(unit, str):
        raise ScenarioError(f"workload[{i}].start_unit: a unit name (ps, ns, us, ms, s), got {_show(unit)}")
    rows = read_hpcc_flows(path, field, host_of) if kind == "hpcc_flows" else read_htsim_cm(path, field, unit, f"workload[{i}].start_unit")
    lines = [r.pop("line") for r in rows]
    if prio is not None:
        for r in rows:
            r["priority"] = prio
    out = {"kind": "flows", "rows": rows, "source": path.name, "lines": lines}
    if "class" in w:
        out["class"] = w["class"]
    w.clear()
    w.update(out)


def resolve(sc: dict[str, Any], base: Path) -> dict[str, Any]:
    """Front-end resolution of files referenced by the scenario (modifies `sc`, a private copy, whose shape
    `check_shape` has passed)."""
    topo0 = sc.get("topology")
    host_of = _resolve_hpcc_topology(topo0, base) if isinstance(topo0, dict) and topo0.get("kind") == "hpcc" else None
    for i, w in enumerate(sc.get("workload", []) or []):
        if isinstance(w, dict) and w.get("kind") in FOREIGN_FLOWS:
            _resolve_foreign_flows(w, i, base, host_of)
        if isinstance(w, dict) and w.get("kind") == "flows" and "file" in w:
            _resolve_flows(w, i, base)
        if isinstance(w, dict) and w.get("kind") == "cdf" and "points" not in w:
            from .cdf import load_points

            if "cdf" not in w:
                raise ScenarioError(f"workload[{i}].cdf: required: a bundled CDF (websearch, datamining) or a file")
            w["points"] = load_points(w["cdf"], base, f"workload[{i}].cdf")
    _resolve_pias(sc, base)
    topo = sc.get("topology")
    if isinstance(topo, dict) and "file" in topo:
        f = Path(topo.pop("file"))
        path = f if f.is_absolute() else base / f
        if path.suffix == ".json":
            try:
                data = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ScenarioError(f"topology.file: cannot read {str(path)!r}: {_one_line(e)}") from None
        else:
            data = _read_toml(path)
        if not isinstance(data, dict):
            raise ScenarioError(f"topology.file: {path.name} must hold a table with `nodes` and `links`")
        for k in ("nodes", "links"):
            if k in data:
                topo[k] = data[k]
    check_finite(sc)
    return sc


def require_workload(sc: dict[str, Any]) -> None:
    """A scenario that would run nothing is refused (checked once the core has validated the rest, so that
    an error elsewhere is named first)."""
    if not sc.get("workload"):
        raise ScenarioError("workload: the scenario has no [[workload]], so nothing would run; add at least one "
                            "(kinds: retrieval, background, flows, sequential, partition_aggregate, incast, cdf, hpcc_flows, "
                            "htsim_cm; docs/scenarios.md), e.g. [[workload]] kind = \"incast\" senders = 8 total = \"512KB\"")


def prepare(
    scenario: str | Path | dict[str, Any],
    scheme: str | None = None,
    seed: int | None = None,
    duration: str | None = None,
    sets: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """Load a scenario and apply the command line's or the caller's overrides; `limits` (max_events,
    max_wall) go into [run] last."""
    sc, name, base = load_scenario(scenario)
    for a in sets or []:
        apply_override(sc, a)
    for k, v in (overrides or {}).items():
        if not isinstance(k, str):
            raise ScenarioError(f"overrides: keys are dotted paths (strings), got {_show(k)}")
        # a copy: a table given as a value (a sweep's `set`) is shared by every run, and a later key of the
        # same overrides (an axis's `workload.1.rate`) must change this run's scenario only
        set_path(sc, k, copy.deepcopy(v))
    check_shape(sc)
    if scheme is not None:
        sc.setdefault("scheme", {})["preset"] = scheme
    if seed is not None:
        sc.setdefault("run", {})["seed"] = int(seed)
    if duration is not None:
        sc.setdefault("run", {})["duration"] = duration
    for k, v in (limits or {}).items():
        sc.setdefault("run", {})[k] = v
    return resolve(sc, base), name


def duration_seconds(text: str, field: str) -> float:
    """Seconds from a duration string, with the core's parser (and its error message)."""
    from .. import _core

    try:
        probe = {"topology": {"kind": "single_switch", "hosts": 2}, "run": {"drain": text}}
        _core.validate(json.dumps(probe))
    except ScenarioError as e:
        raise ScenarioError(f"{field}: {str(e).split(': ', 1)[1]}") from None
    units = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
    for u in sorted(units, key=len, reverse=True):
        if text.strip().endswith(u):
            return float(text.strip()[: -len(u)]) * units[u]
    raise ScenarioError(f"{field}: expected a duration such as \"10ms\"")
