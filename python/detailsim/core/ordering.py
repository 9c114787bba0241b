"""The order a reader expects of a sweep's values, a table's rows and a figure's series: numbers by value,
quantities with a unit by magnitude (500us before 1ms before 10ms), other text with its numbers read as
numbers (retrieval/2KB before retrieval/8KB before retrieval/32KB)."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

# a whole value that is a quantity with a unit (as scenarios write them): ordered by its magnitude
_QUANTITY = re.compile(r"\s*(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*(ps|ns|us|µs|ms|s|B|KB|KiB|MB|MiB|GB|GiB|bps|Kbps|Mbps|Gbps|Tbps)\s*")
# sizes as scenarios write them (binary: KB = 1024 bytes)
SIZE_UNITS = {"B": 1, "KB": 1024, "KiB": 1024, "MB": 1024**2, "MiB": 1024**2, "GB": 1024**3, "GiB": 1024**3}
_SCALE = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, **SIZE_UNITS,
          "bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}


def natural_key(v: Any) -> tuple[Any, ...]:
    """Order values as a reader expects: numbers by value; a quantity with a unit by its magnitude (1ms
    before 5ms before 10ms before 200ms, 500us before 1ms); other text with its numbers read as numbers
    (retrieval/2KB before retrieval/8KB before retrieval/32KB)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    m = _QUANTITY.fullmatch(str(v))
    if m:
        return (0, float(m.group(1)) * _SCALE[m.group(2)], m.group(2))
    parts = re.split(r"(\d+(?:\.\d+)?)", str(v))
    return (1, 0.0, tuple((0, float(x), "") if i % 2 else (1, 0.0, x) for i, x in enumerate(parts)))


def series_values(flows_or_summary: pl.DataFrame, keys: list[str], spec_axes: dict[str, Any] | None = None) -> dict[str, list[Any]]:
    """Each key's values, in the sweep's own order where it lists them, else in natural order."""
    out = {}
    for k in keys:
        have = flows_or_summary[k].unique().to_list()
        given = (spec_axes or {}).get(k)
        if isinstance(given, list) and set(map(str, have)) <= set(map(str, given)):
            order = {str(v): i for i, v in enumerate(given)}
            out[k] = sorted(have, key=lambda v: order[str(v)])
        else:
            out[k] = sorted(have, key=natural_key)
    return out
