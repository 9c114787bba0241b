"""Scenario files: loading (path or bundled name), dotted-key overrides, and front-end resolution
(CSV flow lists and custom-topology files are read here, then the whole scenario goes to the Rust core
as JSON, where the one schema validates it)."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from ._core import ScenarioError

SCENARIO_ROOT = resources.files("detailsim") / "scenarios"


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
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
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
    raise ScenarioError(f"scenario: {s!r} is neither a file nor a bundled scenario; bundled: {names}")


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


def _resolve_flows(w: dict[str, Any], i: int, base: Path) -> None:
    import polars as pl

    f = w.pop("file")
    path = Path(f) if Path(f).is_absolute() else base / f
    field = f"workload[{i}].file"
    need = ["src", "dst", "size_bytes", "start_s"]
    try:
        df = pl.read_csv(path)
    except FileNotFoundError:
        raise ScenarioError(f"{field}: no such file {str(path)!r}") from None
    except (pl.exceptions.PolarsError, OSError) as e:
        raise ScenarioError(f"{field}: cannot read {str(path)!r} as CSV: {e}") from None
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ScenarioError(f"{field}: CSV lacks column(s) {', '.join(missing)}; expected src,dst,size_bytes,start_s,priority")
    if "priority" not in df.columns:
        df = df.with_columns(pl.lit(0).alias("priority"))
    try:
        df = df.select(
            pl.col("src").cast(pl.Int64, strict=True),
            pl.col("dst").cast(pl.Int64, strict=True),
            pl.col("size_bytes").cast(pl.Int64, strict=True),
            pl.col("start_s").cast(pl.Float64, strict=True),
            pl.col("priority").cast(pl.Int64, strict=True),
        )
    except pl.exceptions.PolarsError:
        raise ScenarioError(f"{field}: columns must be numeric (src, dst, size_bytes, priority integers; start_s seconds)") from None
    for c in ["src", "dst", "size_bytes", "priority"]:
        if df[c].null_count() or (df[c] < 0).any():
            raise ScenarioError(f"{field}: column {c} must be non-negative with no empty cells")
    w["rows"] = df.to_dicts()


PIAS_PRESETS = {"pias", "detail_pias"}


def _resolve_pias(sc: dict[str, Any], base: Path) -> None:
    """`[scheme.pias] thresholds = "optimal" | "equal-split" | "paper" | [bytes...]`, `queues = 8`: turned into
    scheme.tcp.mlfq_thresholds from the scenario's first CDF workload (its flow sizes and load), or from
    `cdf` / `load` given in the table (thresholds derived for other traffic: a mismatch study)."""
    scheme = sc.get("scheme")
    if not isinstance(scheme, dict) or "pias" not in scheme:
        return
    cfg = scheme.pop("pias")
    if scheme.get("preset", "fh") not in PIAS_PRESETS:
        return  # the table configures the PIAS presets only (a sweep may cross pias with dctcp)
    if not isinstance(cfg, dict):
        raise ScenarioError("scheme.pias: a table with thresholds and queues")
    unknown = set(cfg) - {"thresholds", "queues", "cdf", "load"}
    if unknown:
        raise ScenarioError(f"scheme.pias.{sorted(unknown)[0]}: unknown key; allowed: thresholds, queues, cdf, load")
    method = cfg.get("thresholds", "optimal")
    queues = int(cfg.get("queues", 8))
    if not 1 <= queues <= 8:
        raise ScenarioError(f"scheme.pias.queues: 1 to 8, got {queues}")
    if isinstance(method, list):
        alphas = method
    else:
        from .pias import solve

        w = next((w for w in sc.get("workload", []) if isinstance(w, dict) and w.get("kind") == "cdf"), None) or {}
        if "cdf" in cfg:
            from .cdf import load_points

            w = {**w, "cdf": str(cfg["cdf"]), "points": load_points(str(cfg["cdf"]), base, "scheme.pias.cdf")}
        if "load" in cfg:
            load = cfg["load"]
            if not isinstance(load, (int, float)) or not 0 < load < 1:
                raise ScenarioError(f"scheme.pias.load: a load in (0, 1), got {load!r}")
            w = {**w, "load": load}
        if "points" not in w or "load" not in w:
            raise ScenarioError("scheme.pias.thresholds: \"optimal\", \"equal-split\" and \"paper\" need a cdf workload with a load "
                                "(or scheme.pias.cdf and scheme.pias.load)")
        alphas = solve(w["points"], str(w.get("cdf", "")), float(w["load"]), queues, str(method))["thresholds_bytes"]
    scheme.setdefault("tcp", {})["mlfq_thresholds"] = alphas


def resolve(sc: dict[str, Any], base: Path) -> dict[str, Any]:
    """Front-end resolution of files referenced by the scenario (modifies `sc`, a private copy)."""
    for i, w in enumerate(sc.get("workload", []) or []):
        if isinstance(w, dict) and w.get("kind") == "flows" and "file" in w:
            _resolve_flows(w, i, base)
        if isinstance(w, dict) and w.get("kind") == "cdf" and "points" not in w:
            from .cdf import load_points

            if "cdf" not in w:
                raise ScenarioError(f"workload[{i}].cdf: required: a bundled CDF (websearch, datamining) or a file")
            w["points"] = load_points(str(w["cdf"]), base, f"workload[{i}].cdf")
    _resolve_pias(sc, base)
    topo = sc.get("topology")
    if isinstance(topo, dict) and "file" in topo:
        f = Path(topo.pop("file"))
        path = f if f.is_absolute() else base / f
        if path.suffix == ".json":
            try:
                data = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError) as e:
                raise ScenarioError(f"topology.file: cannot read {str(path)!r}: {e}") from None
        else:
            data = _read_toml(path)
        for k in ("nodes", "links"):
            if k in data:
                topo[k] = data[k]
    return sc


def prepare(
    scenario: str | Path | dict[str, Any],
    scheme: str | None = None,
    seed: int | None = None,
    duration: str | None = None,
    sets: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """Load a scenario and apply the command line's or the caller's overrides."""
    sc, name, base = load_scenario(scenario)
    for a in sets or []:
        apply_override(sc, a)
    for k, v in (overrides or {}).items():
        set_path(sc, k, v)
    if scheme is not None:
        sc.setdefault("scheme", {})["preset"] = scheme
    if seed is not None:
        sc.setdefault("run", {})["seed"] = int(seed)
    if duration is not None:
        sc.setdefault("run", {})["duration"] = duration
    return resolve(sc, base), name
