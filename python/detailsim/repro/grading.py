"""Grading a reproduction's claims against the papers' own numbers, by one equivalence rule.

A claim has the paper's value (a number, a range ``[lo, hi]``, a bound with one end ``None``, or ``None``
when the paper gives no number), its unit, where the paper gives it (figure, section, slide), the
sentence it comes from (``quote``, checked against ``source``: a file of ``../shared/papers`` and a line),
and a ``label``: **held out** (graded and counted), **calibration** (a number the model's open choices
were fitted on: shown, never counted as reproduced) or **by construction** (holds by a mechanism's
definition or an enforced invariant: shown, never counted). The measured value is computed from the flows
of all seeds pooled; its 95% confidence interval half-width from the same measurement on each seed alone
(Student's t over the per-seed values).

THE RULE (an equivalence rule; docs/reproduction.md and every report state it from `RULE`):

* **The band.** A number v: v ± 25% of |v|, whatever the unit (times included; a paper's 0 must be
  measured 0). A bound is literal: "over 96%" is [96, inf), "below 0.1%" is (-inf, 0.1]. A range is graded
  end by end, each measured end against the band of the paper's corresponding end. Every value is graded
  as the paper gives it (a gap of 4.9% is a value, not a bound).
* **The interval decides.** Each end is *in* when its whole 95% interval lies inside its band, *out* when
  the whole interval lies outside it, *undecided* otherwise (and with one seed, which has no interval).
* **The direction is established** when the claim's stated direction (a sign, an ordering) holds at both
  ends of the interval (for a signed value: the interval excludes zero on the stated side), and *refuted*
  when it fails at both.
* **reproduced**: every end in, and the direction not refuted.
* **direction only**: some end out (or the paper gives no number), and the direction established.
* **not reproduced**: some end out and the direction not established, or the direction refuted.
* **inconclusive**: anything else, with what would decide it (the seeds at the spread measured, or a
  longer drain when a statistic it reads is only a lower bound: flows unfinished at the end).
* **Converged.** Each value is also computed on the first half of the seeds (or at half the run length);
  when the two lie further apart than the graded value's 95% half-width, the claim keeps the verdict both
  share (each graded with the graded value's interval), and is inconclusive if they differ.
* **Labels.** held out (counted), calibration (the numbers the model was fitted on), seen (values looked at
  under the calibration's candidate readings before it was declared), property (a property we state, not a
  paper's number, graded against its own tight bound) and by construction (holds by a mechanism's
  definition or an enforced invariant): all shown, only held out counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..core.pooled import t975  # noqa: F401 - the t table, shared with the pooled table
from ..core.sums import ordered

REL_TOLERANCE = 0.25
VERDICTS = ("reproduced", "direction only", "not reproduced", "inconclusive")
LABELS = ("held out", "calibration", "seen", "property", "by construction")
# the rule in a sentence, for reports and docs (written from the code below, and tested against it)
RULE = ("an equivalence rule: each end's band is the paper's number ± 25% (a bound is literal); reproduced when every end's "
        "whole 95% interval lies inside its band and the stated direction is not refuted; direction only when an end's interval "
        "lies wholly outside and the direction holds at both ends of the interval; not reproduced when an end lies wholly "
        "outside without that, or the direction fails at both ends; inconclusive otherwise; a value that moves by more than its "
        "interval on half the seeds keeps the verdict both share")
MAX_SEEDS = 200

Value = float | list[float | None] | None


def ci95(xs: Sequence[float]) -> float | None:
    """Half-width of the 95% t-interval of the mean of `xs` (None with fewer than two finite values; the same
    for the values in any order, `core.sums.ordered`)."""
    x = ordered(v for v in xs if v is not None and np.isfinite(v))
    if len(x) < 2:
        return None
    return float(t975(len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


@dataclass(frozen=True)
class Band:
    """What the paper's number (or one end of its range) accepts: [lo, hi]; `half` is the half-width of a
    two-sided band (None for a one-sided bound)."""
    lo: float
    hi: float
    half: float | None

    @staticmethod
    def around(v: float) -> "Band":
        d = abs(v) * REL_TOLERANCE
        return Band(v - d, v + d, d)

    def contains(self, m: float) -> bool:
        return self.lo <= m <= self.hi

    def distance(self, m: float) -> float:
        return 0.0 if self.contains(m) else min(abs(m - self.lo), abs(m - self.hi))


def bands(paper: Value) -> list[Band]:
    """The band of each end the claim is graded on (one for a number or a bound, two for a range)."""
    if paper is None:
        return []
    if isinstance(paper, (int, float)):
        return [Band.around(float(paper))]
    lo, hi = paper
    if lo is not None and hi is not None:
        return [Band.around(float(lo)), Band.around(float(hi))]
    if lo is not None:
        return [Band(float(lo), math.inf, None)]
    return [Band(-math.inf, float(hi), None)]  # type: ignore[arg-type]


def _ends(paper: Value, measured: Value, ci: Any) -> list[tuple[Band, Any, Any]]:
    """(band, measured end, its half-width) per graded end."""
    bs = bands(paper)
    ms = measured if isinstance(measured, list) else [measured] * max(1, len(bs))
    cs = ci if isinstance(ci, list) else [ci] * len(ms)
    if len(bs) == 1 and len(ms) > 1:
        # a number or a bound against several measured values (e.g. every size): each is graded against it
        return [(bs[0], m, c) for m, c in zip(ms, cs)]
    return list(zip(bs, ms, cs))


def assess(b: Band, m: Any, ci: Any) -> str:
    """One end: "in" (its whole interval inside the band), "out" (wholly outside) or "undecided"."""
    if not _finite(m):
        return "out"
    if not _finite(ci):
        return "undecided"
    if m - ci >= b.lo and m + ci <= b.hi:
        return "in"
    if m + ci < b.lo or m - ci > b.hi:
        return "out"
    return "undecided"


def _shift(v: Value, ci: Any, sign: int) -> Value:
    if isinstance(v, list):
        cs = ci if isinstance(ci, list) else [ci] * len(v)
        return [None if (x is None or not _finite(c)) else x + sign * c for x, c in zip(v, cs)]
    return v + sign * ci if _finite(v) and _finite(ci) else None


def direction_over(direction: Callable[[Value], bool | None] | None, v: Value, ci: Any, within: float | None = None) -> bool | None:
    """The claim's direction over its interval: True when established, False when refuted, None otherwise
    (mixed, no interval, or a claim without a direction). A sign or an ordering is established when it holds
    at both ends of the interval (v - ci and v + ci) and the interval excludes zero; refuted when it fails at
    both and the interval excludes zero. A similarity read as "at most `within`" (our reading of "similar",
    "comparable", "low") is established when the whole interval lies at or below it, refuted when wholly
    above."""
    if direction is None or ci is None:
        return None
    lo, hi = _shift(v, ci, -1), _shift(v, ci, +1)
    if lo is None or hi is None or (isinstance(lo, list) and None in lo) or (isinstance(hi, list) and None in hi):
        return None
    if within is not None:
        ends = [x for x in (hi if isinstance(hi, list) else [hi])]
        lows = [x for x in (lo if isinstance(lo, list) else [lo])]
        return True if all(x <= within for x in ends) else False if all(x > within for x in lows) else None
    if not excludes_zero(v, ci):
        return None
    at = (direction(lo), direction(hi))
    return True if all(x is True for x in at) else False if all(x is False for x in at) else None


def excludes_zero(v: Value, ci: Any) -> bool:
    """Whether every end's interval lies on one side of zero (the stored claims without `direction_ci`
    are read so: their direction is a sign)."""
    vs = v if isinstance(v, list) else [v]
    cs = ci if isinstance(ci, list) else [ci] * len(vs)
    return all(_finite(x) and _finite(c) and (x - c > 0 or x + c < 0) for x, c in zip(vs, cs))


def _verdict(paper: Value, measured: Value, ci: Any, direction: bool | None, over: bool | None = None) -> str:
    """`direction`: the stated direction at the point estimate; `over`: over the interval (True
    established, False refuted, None neither)."""
    if over is False:
        return "not reproduced"
    if paper is None:
        if direction is None:
            return "inconclusive"
        return "direction only" if over else "inconclusive"
    ends = [assess(b, m, c) for b, m, c in _ends(paper, measured, ci)]
    if "out" in ends:
        return "direction only" if over else "not reproduced"
    if "undecided" in ends:
        return "inconclusive"
    return "reproduced"


def seeds_to_decide(paper: Value, measured: Value, ci: Any, seeds: int) -> int | None:
    """How many seeds would make every undecided end decided, from the spread of the seeds run (the
    per-seed standard deviation held fixed): None when more seeds cannot decide it (no interval, or a
    point estimate on a bound)."""
    need = 0
    for b, m, c in _ends(paper, measured, ci):
        if assess(b, m, c) != "undecided":
            continue
        if not (_finite(c) and _finite(m)) or seeds < 2:
            return None
        sd = c * math.sqrt(seeds) / t975(seeds - 1)
        # inside: the interval must fit between the point and the nearer edge; outside: reach past the edge
        target = min(m - b.lo, b.hi - m) if b.contains(m) else b.distance(m)
        if target <= 0:
            return None
        n = 2
        while t975(n - 1) * sd / math.sqrt(n) > target:
            n += 1
            if n > MAX_SEEDS:
                return MAX_SEEDS + 1
        need = max(need, n)
    return need or None


def converged(measured: Value, check: Value, ci: Any) -> bool | None:
    """Whether the graded value and its check (the value on half the seeds, or at half the run length) are
    no further apart than the graded value's 95% half-width, end by end (None: no interval, or no check)."""
    if check is None or ci is None:
        return None
    ms = measured if isinstance(measured, list) else [measured]
    cs = check if isinstance(check, list) else [check]
    hs = ci if isinstance(ci, list) else [ci] * len(ms)
    if len(cs) != len(ms) or len(hs) != len(ms):
        return None
    out = True
    for m, c, h in zip(ms, cs, hs):
        if not (_finite(m) and _finite(c) and _finite(h)):
            return None
        out &= abs(m - c) <= h
    return out


def grade(paper: Value, unit: str, measured: Value, direction: bool | None, ci: Any = 0.0,
          unbounded: Value = None, check: Value = None, over: bool | None = None) -> str:
    """The one rule (`unit` is kept for the record: every unit has the same tolerance). `direction`: whether
    the sign or ordering the claim states holds at the point estimate (None: a bare level or bound with no
    direction of its own); `over`: whether it holds over the interval (`direction_over`). `ci`: the 95%
    half-width (a list per end for a range; None: one seed, no interval). `unbounded`: the measured value
    with every lower-bound statistic it reads taken as unbounded (None: no statistic it reads is a bound).
    `check`: the value on half the seeds or at half the run length; one that lies further from the graded
    value than its interval has not converged, and the claim keeps the verdict both share."""
    v = _verdict(paper, measured, ci, direction, over)
    if unbounded is not None and (_verdict(paper, unbounded, ci, direction, over) != v or _straddles(paper, measured, unbounded)):
        return "inconclusive"
    if converged(measured, check, ci) is False and _verdict(paper, check, ci, direction, over) != v:
        return "inconclusive"
    return v


def _straddles(paper: Value, measured: Value, unbounded: Value) -> bool:
    """Whether the true value, somewhere between the bound and the unbounded value, could lie in a band the
    two put it on either side of (below at the bound, above unbounded: the same verdict at both ends, but
    not decided by the bound)."""
    for (b, m, _), (_, u, _) in zip(_ends(paper, measured, None), _ends(paper, unbounded, None)):
        m = m if _finite(m) else None
        u = u if isinstance(u, (int, float)) and not math.isnan(u) else None
        if m is None or u is None:
            continue
        lo, hi = min(m, u), max(m, u)
        if not b.contains(m) and not b.contains(u) and lo < b.lo and hi > b.hi:
            return True
    return False


def resolution(paper: Value, measured: Value, ci: Any, direction: bool | None, seeds: int, unbounded: Value = None,
               check: Value = None, over: bool | None = None) -> str | None:
    """What would resolve an inconclusive claim (None for a decided one)."""
    if grade(paper, "", measured, direction, ci, unbounded, check, over) != "inconclusive":
        return None
    if unbounded is not None and (_verdict(paper, unbounded, ci, direction, over) != _verdict(paper, measured, ci, direction, over)
                                  or _straddles(paper, measured, unbounded)):
        return "a longer drain (run.drain): a statistic it reads is only a lower bound (flows unfinished at the end)"
    if converged(measured, check, ci) is False and _verdict(paper, check, ci, direction, over) != _verdict(paper, measured, ci, direction, over):
        return "more seeds or a longer run: the value and its check on half the seeds get different verdicts"
    if paper is None or _verdict(paper, measured, ci, direction, over) != "inconclusive" or all(
            assess(b, m, c) != "undecided" for b, m, c in _ends(paper, measured, ci)):
        if direction is not None and over is None:
            return "more seeds: the stated direction holds at one end of the interval only" + (
                "" if seeds >= 2 else " (one seed has no interval)")
    if seeds < 2:
        return "at least 2 seeds or runs (one has no interval)"
    n = seeds_to_decide(paper, measured, ci, seeds)
    if n is None:
        return "more than more seeds can give: the point estimate sits on a bound of the band, or an end has no interval"
    if n > MAX_SEEDS:
        return f"more than {MAX_SEEDS} seeds at this spread"
    return f"{n} seeds at this spread"


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
    quote: str = ""
    source: str = ""
    label: str = "held out"
    label_note: str = ""
    unbounded: Value = None
    check: Value = None
    check_how: str = ""
    # the direction over the interval (`direction_over`): True established, False refuted, None neither
    direction_ci: bool | None = None
    verdict: str = field(init=False)
    resolve: str | None = field(init=False)

    def __post_init__(self) -> None:
        assert self.label in LABELS, self.label
        # graded on the numbers claims.json keeps, so that re-grading the file gives the same verdicts
        self.measured_value, self.ci95, self.unbounded = _rounded(self.measured_value), _rounded(self.ci95), _rounded(self.unbounded)
        if self.unbounded == self.measured_value:
            self.unbounded = None
        self._grade()

    def set_check(self, value: Value, how: str) -> None:
        """The convergence check: the claim's value on half the seeds, or at half the run length."""
        self.check, self.check_how = _rounded(value), how
        self._grade()

    def _grade(self) -> None:
        self.verdict = grade(self.paper_value, self.unit, self.measured_value, self.direction, self.ci95, self.unbounded, self.check,
                             self.direction_ci)
        self.resolve = resolution(self.paper_value, self.measured_value, self.ci95, self.direction, self.seeds, self.unbounded,
                                  self.check, self.direction_ci)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "experiment": self.experiment, "claim": self.claim,
                "quote": self.quote, "source": self.source, "label": self.label, "label_note": self.label_note,
                "paper": {"value": self.paper_value, "unit": self.unit, "where": self.where},
                "measured": {"value": self.measured_value, "ci95": self.ci95, "seeds": self.seeds,
                             "unbounded": self.unbounded, "detail": self.detail},
                "check": ({"value": self.check, "how": self.check_how, "converged": converged(self.measured_value, self.check, self.ci95)}
                          if self.check_how else None),
                "direction_matches": self.direction, "direction_over_interval": self.direction_ci,
                "verdict": self.verdict, "resolve": self.resolve}


def stored_over(c: dict[str, Any], within: float | None = None) -> bool | None:
    """A stored claim's direction over its interval: as recorded, or, for a claim stored before the
    equivalence rule (no `direction_over_interval`), from its numbers: a similarity with its `within`; else
    its direction read as a sign, established when it holds and every end's interval excludes zero,
    refuted when it fails and the interval excludes zero."""
    if "direction_over_interval" in c:
        return c["direction_over_interval"]
    d, m = c["direction_matches"], c["measured"]
    if within is not None and d is not None:
        return direction_over(lambda v: v, m["value"], m["ci95"], within)
    if d is None or not excludes_zero(m["value"], m["ci95"]):
        return None
    return bool(d)


def regrade(c: dict[str, Any], within: float | None = None) -> str:
    """The verdict of a claim of claims.json, from its own numbers (`within`: a similarity's reading)."""
    m, chk = c["measured"], c.get("check") or {}
    return grade(c["paper"]["value"], c["paper"]["unit"], m["value"], c["direction_matches"], m["ci95"], m.get("unbounded"), chk.get("value"),
                 stored_over(c, within))


def regrade_resolution(c: dict[str, Any], within: float | None = None) -> str | None:
    m, chk = c["measured"], c.get("check") or {}
    return resolution(c["paper"]["value"], m["value"], m["ci95"], c["direction_matches"], m.get("seeds", 1), m.get("unbounded"), chk.get("value"),
                      stored_over(c, within))


def _round(v: Any) -> Any:
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, float):
        return None if not math.isfinite(v) else float(f"{v:.4g}")
    return v


def _rounded(v: Any) -> Any:
    """Values as claims.json stores them (4 significant digits), so that a claim re-graded from the file
    gets the verdict it was given."""
    return _round(v)


def fmt_value(v: Any, unit: str) -> str:
    """A paper or measured value in words: 70%, 43-79%, >= 96%, <= 0.1%, 7.2 ms."""
    sep = "" if unit == "%" else " "
    u = unit if unit not in ("", "count") else ""

    def one(x: float | None) -> str:
        if x is None:
            return "?"
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
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
    elif m.get("seeds", 1) < 2 or ci is None:
        s += " (one seed)" if m.get("seeds", 1) < 2 else ""
    if m.get("unbounded") is not None:
        s += " (a bound: unfinished flows)"
    return s


def measure(fn: Callable[..., Value], pooled: tuple, per_seed: list[tuple]) -> tuple[Value, Any]:
    """`fn` on the pooled data and on each seed's: the pooled value and the 95% CI half-width (per end
    for a range)."""
    v = fn(*pooled)
    seeds = [fn(*s) for s in per_seed]
    if len(seeds) < 2:
        return v, None
    if isinstance(v, list):
        return v, [ci95([s[i] for s in seeds if isinstance(s, list)]) for i in range(len(v))]
    return v, ci95([s for s in seeds if not isinstance(s, list)])


def glance_table(claims: list[dict[str, Any]]) -> str:
    """The "Claims at a glance" table of docs/reproduction.md, from the claims of every experiment."""
    lines = ["| experiment | claim | paper (where; source) | measured (95% CI) | label | verdict |", "|---|---|---|---|---|---|"]
    for c in claims:
        v = c["verdict"]
        shown = v if v == "reproduced" or c["label"] != "held out" else f"**{v}**"
        if v == "inconclusive" and c.get("resolve"):
            shown += f" (needs {c['resolve']})"
        from .papers import cite

        src = cite(c["source"])
        lines.append(f"| {c['experiment']} | {c['claim']} | {fmt_value(c['paper']['value'], c['paper']['unit'])} ({c['paper']['where']}; {src}) "
                     f"| {fmt_measured(c)} | {c['label']} | {shown} |")
    return "\n".join(lines)


def counts(claims: list[dict[str, Any]], label: str = "held out") -> dict[str, int]:
    return {v: sum(1 for c in claims if c["verdict"] == v and c["label"] == label) for v in VERDICTS}


def counts_line(claims: list[dict[str, Any]]) -> str:
    held = [c for c in claims if c["label"] == "held out"]
    n = counts(claims)
    share = f" ({100 * n['reproduced'] / len(held):.0f}%)" if held else ""

    def apart(label: str, noun: str, why: str) -> str:
        cs = [c for c in claims if c["label"] == label]
        k = counts(claims, label)
        return f"{len(cs)} {noun} ({why}; {k['reproduced']} within the rule)"
    return (f"{len(held)} claims graded held out under the equivalence rule: **{n['reproduced']} reproduced**{share}, "
            f"{n['direction only']} direction only, {n['not reproduced']} not reproduced, {n['inconclusive']} inconclusive. "
            f"Apart, never counted as reproduced: {apart('calibration', 'calibration claims', 'the numbers the model was chosen on')}, "
            f"{apart('seen', 'seen claims', 'looked at under the calibration grid’s readings before it was declared')}, "
            f"{apart('property', 'properties', 'ours, not a paper’s numbers')} and "
            f"{sum(1 for c in claims if c['label'] == 'by construction')} by construction.")
