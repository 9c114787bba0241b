"""Flow-size CDF files: the bundled ones (data/cdf/README.md says where they come from) and users' own.

Formats, detected from the columns:
- ns-2 Empirical, three columns ``<packets> <unused> <cumulative probability>``: sizes are packets x 1460 B;
- two columns ``<bytes> <cumulative probability>``, the probability as a fraction (0..1) or a percent
  (0..100, recognised by a last value of 100).
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

from .._core import ScenarioError

DATA = Path(str(resources.files("detailsim") / "data" / "cdf"))
BUNDLED = {
    "websearch": "websearch_dctcp_pkts1460_ns2.tcl",
    "datamining": "datamining_vl2_pkts1460_ns2.tcl",
    "websearch_bytes": "websearch_dctcp_bytes_pct.txt",
    "datamining_fine": "datamining_vl2_bytes_frac_trafficgenerator.txt",
    "hadoop": "fb_hadoop_bytes_pct.txt",
}
NS2_PACKET = 1460


def read_text(path: Path, field: str, what: str) -> str:
    """A text file's contents; a binary or unreadable file is a ScenarioError naming `field` and `what` the
    file should hold."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{field}: {path.name}: not a text file (expected {what})") from None
    except OSError as e:
        raise ScenarioError(f"{field}: cannot read {str(path)!r}: {e.strerror}") from None


def numeric_rows(path: Path, field: str, what: str) -> list[tuple[int, list[float]]]:
    """The one reader of the CDF text files (a flow-size CDF, an FCT CDF): per line that holds anything
    before a `#`, its number and its numbers (separated by spaces or commas), each finite and
    non-negative; anything else is a ScenarioError naming `field`, the file and the line."""
    rows: list[tuple[int, list[float]]] = []
    for i, line in enumerate(read_text(path, field, what).splitlines(), 1):
        parts = line.split("#")[0].replace(",", " ").split()
        if not parts:
            continue
        try:
            nums = [float(x) for x in parts]
        except ValueError:
            raise ScenarioError(f"{field}: {path.name}:{i}: not numbers (expected {what}): {line!r}") from None
        if not all(math.isfinite(x) and x >= 0 for x in nums):
            raise ScenarioError(f"{field}: {path.name}:{i}: values must be finite and non-negative: {line!r}")
        rows.append((i, nums))
    return rows


def load_points(spec: str, base: Path | None = None, field: str = "cdf") -> list[list[float]]:
    """(bytes, cumulative probability 0..1) points of a bundled name or a file."""
    if not isinstance(spec, str) or not spec:
        raise ScenarioError(f"{field}: a bundled CDF name ({', '.join(BUNDLED)}) or a file path, got {spec!r}")
    if spec in BUNDLED:
        path = DATA / BUNDLED[spec]
    else:
        path = Path(spec)
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise ScenarioError(f"{field}: {spec!r} is neither a bundled CDF ({', '.join(BUNDLED)}) nor a file")
    rows: list[list[float]] = []
    for i, nums in numeric_rows(path, field, "lines of numbers"):
        if len(nums) == 3:
            rows.append([nums[0] * NS2_PACKET, nums[2]])
        elif len(nums) == 2:
            rows.append(nums)
        else:
            raise ScenarioError(f"{field}: {path.name}:{i}: expected 2 or 3 columns, got {len(nums)}")
    if len(rows) < 2:
        raise ScenarioError(f"{field}: {path.name}: needs at least two points")
    if rows[-1][1] > 1.0 + 1e-9:
        rows = [[x, p / 100.0] for x, p in rows]
    for (x0, p0), (x1, p1) in zip(rows, rows[1:]):
        if x1 < x0 or p1 < p0:
            raise ScenarioError(f"{field}: {path.name}: sizes and probabilities must not decrease (at size {x1:g})")
    if abs(rows[-1][1] - 1.0) > 1e-6:
        raise ScenarioError(f"{field}: {path.name}: the last cumulative probability must be 1 (or 100 in percent), got {rows[-1][1]:g}")
    if rows[-1][0] < 1:
        raise ScenarioError(f"{field}: {path.name}: the largest size must be at least 1 byte")
    if rows[0][1] > 0:
        rows.insert(0, [rows[0][0], 0.0])
    return rows


def mean_bytes(points: list[list[float]]) -> float:
    return sum((a[0] + b[0]) / 2 * (b[1] - a[1]) for a, b in zip(points, points[1:]))


def quantile(points: list[list[float]], q: float) -> float:
    """F^-1(q) of the piecewise-linear CDF."""
    for (x0, p0), (x1, p1) in zip(points, points[1:]):
        if q <= p1 and p1 > p0:
            return x0 + (max(q, p0) - p0) / (p1 - p0) * (x1 - x0)
    return points[-1][0]
