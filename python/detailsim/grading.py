"""Grading a reproduction's claims against the papers' own numbers, by one rule.

A claim has the paper's value (a number, a range ``[lo, hi]`` or a bound with one end ``None``, or
``None`` when the paper gives no number), its unit, and where the paper gives it (figure, section,
slide). The measured value is computed from the flows of all seeds pooled; its 95% confidence interval
from the same measurement on each seed separately (Student's t over the per-seed values).

THE RULE (docs/reproduction.md quotes it):

* **reproduced** when the measured value lies within the paper's value widened by the tolerance of its
  unit, and its direction (the sign of the effect, or the ordering the claim states) matches:
  percentages, ratios and counts within +/-25% relative of the paper's value (so a paper value of 0
  must be measured as 0); absolute times within a factor of 1.5. A range is reproduced when both of its
  ends are (each measured end against the paper's corresponding end), a bound when its one end is.
* **direction only** when the direction matches but the size does not, or the paper gives no number.
* **not reproduced** otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

REL_TOLERANCE = 0.25
TIME_FACTOR = 1.5
TIME_UNITS = {"ms", "s", "us"}
VERDICTS = ("reproduced", "direction only", "not reproduced")

# two-sided 95% quantiles of Student's t by degrees of freedom (the standard table); 1.96 beyond 30
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}

Value = float | list[float | None] | None


def t975(df: int) -> float:
    if df <= 0:
        return math.nan
    keys = [k for k in _T975 if k <= df]
    return _T975[max(keys)] if df <= 30 else 1.96


def ci95(xs: Sequence[float]) -> float | None:
    """Half-width of the 95% t-interval of the mean of `xs` (None with fewer than two finite values)."""
    x = np.array([v for v in xs if v is not None and np.isfinite(v)], dtype=float)
    if len(x) < 2:
        return None
    return float(t975(len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def _widen(v: float, unit: str, side: str) -> float:
    """The tolerance around one end `v` of the paper's value: side 'lo' gives the lowest accepted value,
    'hi' the highest."""
    if unit in TIME_UNITS:
        return v / TIME_FACTOR if side == "lo" else v * TIME_FACTOR
    d = abs(v) * REL_TOLERANCE
    return v - d if side == "lo" else v + d


def within(paper: Value, unit: str, measured: Value) -> bool:
    """Whether `measured` matches `paper` within the unit's tolerance (see the module docstring)."""
    if paper is None or measured is None:
        return False
    if isinstance(paper, (int, float)):
        if isinstance(measured, list):
            return all(m is not None and within(paper, unit, m) for m in measured)
        return _widen(paper, unit, "lo") <= measured <= _widen(paper, unit, "hi")
    lo, hi = paper
    mlo, mhi = (measured if isinstance(measured, list) else [measured, measured])
    if mlo is None or mhi is None or not (np.isfinite(mlo) and np.isfinite(mhi)):
        return False
    if lo is not None and hi is not None:
        # a range: each end against the paper's corresponding end
        return _widen(lo, unit, "lo") <= mlo <= _widen(lo, unit, "hi") and _widen(hi, unit, "lo") <= mhi <= _widen(hi, unit, "hi")
    if lo is not None:
        return mlo >= _widen(lo, unit, "lo")
    return mhi <= _widen(hi, unit, "hi")


def grade(paper: Value, unit: str, measured: Value, direction: bool | None) -> str:
    """The one rule. `direction`: whether the sign or ordering the claim states holds (None: the claim is a
    bare level or bound with no direction of its own, so it is reproduced or not)."""
    if paper is not None and direction is not False and within(paper, unit, measured):
        return "reproduced"
    if direction:
        return "direction only"
    return "not reproduced"


@dataclass
class Claim:
    id: str
    experiment: str
    claim: str
    paper_value: Value
    unit: str
    where: str
    measured_value: Value
    ci95: float | list[float | None] | None
    direction: bool | None
    detail: str = ""
    seeds: int = 1
    verdict: str = field(init=False)

    def __post_init__(self) -> None:
        self.verdict = grade(self.paper_value, self.unit, self.measured_value, self.direction)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "experiment": self.experiment, "claim": self.claim,
                "paper": {"value": self.paper_value, "unit": self.unit, "where": self.where},
                "measured": {"value": _round(self.measured_value), "ci95": _round(self.ci95), "seeds": self.seeds,
                             "detail": self.detail},
                "direction_matches": self.direction, "verdict": self.verdict}


def _round(v: Any) -> Any:
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, float):
        return None if not math.isfinite(v) else round(v, 3)
    return v


def fmt_value(v: Any, unit: str) -> str:
    """A paper or measured value in words: 70%, 43-79%, >= 96%, <= 0.1%, 7.2 ms."""
    sep = "" if unit == "%" else " "
    u = unit if unit not in ("", "count") else ""

    def one(x: float | None) -> str:
        if x is None:
            return "?"
        return f"{x:.3g}" if abs(x) < 10 else f"{x:.0f}"
    if v is None:
        return "no number"
    if isinstance(v, list):
        lo, hi = v
        if lo is None:
            return f"<= {one(hi)}{sep}{u}".rstrip()
        if hi is None:
            return f">= {one(lo)}{sep}{u}".rstrip()
        return f"{one(lo)} to {one(hi)}{sep}{u}".rstrip()
    return f"{one(v)}{sep}{u}".rstrip()


def fmt_measured(c: dict[str, Any]) -> str:
    m, unit = c["measured"], c["paper"]["unit"]
    v, ci = m["value"], m["ci95"]
    if isinstance(v, list):
        s = f"{fmt_value(v[0], unit)} to {fmt_value(v[1], unit)}"
    else:
        s = fmt_value(v, unit)
    if ci is not None and not isinstance(ci, list):
        s += f" ± {ci:.2g}"
    elif isinstance(ci, list) and all(x is not None for x in ci):
        s += f" (± {ci[0]:.2g}, ± {ci[1]:.2g})"
    return s


def measure(fn: Callable[..., Value], pooled: tuple, per_seed: list[tuple]) -> tuple[Value, Any]:
    """`fn` on the pooled data and on each seed's: the pooled value and the 95% CI half-width (per end
    for a range)."""
    v = fn(*pooled)
    seeds = [fn(*s) for s in per_seed]
    if len(seeds) < 2:
        return v, None
    if isinstance(v, list):
        return v, [ci95([s[i] for s in seeds if isinstance(s, list)]) for i in range(2)]
    return v, ci95([s for s in seeds if not isinstance(s, list)])


def glance_table(claims: list[dict[str, Any]]) -> str:
    """The "Claims at a glance" table of docs/reproduction.md, from the claims of every experiment."""
    lines = ["| experiment | claim | paper (where) | measured (95% CI) | verdict |", "|---|---|---|---|---|"]
    for c in claims:
        v = c["verdict"]
        shown = v if v == "reproduced" else f"**{v}**"
        lines.append(f"| {c['experiment']} | {c['claim']} | {fmt_value(c['paper']['value'], c['paper']['unit'])} ({c['paper']['where']}) "
                     f"| {fmt_measured(c)} | {shown} |")
    return "\n".join(lines)


def counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    return {v: sum(1 for c in claims if c["verdict"] == v) for v in VERDICTS}


def counts_line(claims: list[dict[str, Any]]) -> str:
    n = counts(claims)
    return (f"{len(claims)} claims graded against the papers' own numbers: **{n['reproduced']} reproduced**, "
            f"{n['direction only']} direction only, {n['not reproduced']} not reproduced")
