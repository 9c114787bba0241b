"""PIAS demotion thresholds (Bai et al., NSDI 2015): the core's solver (`mechanisms::pias` in the Rust
core, which also resolves `[scheme.pias]` in a scenario), for the `pias-thresholds` command and analysis.

With S_j = F(alpha_j) the fraction of flows smaller than threshold j (S_0 = 0, S_K = 1), theta_l = S_l - S_{l-1}
and rho the load, the paper's bound on the average FCT (each queue an M/M/1) is

    T(S) = rho * sum_l theta_l (1 - S_{l-1}) / (1 - rho S_{l-1}).

The paper's closed form has no non-negative solution for usual loads (see shared/spec/pias.md), so the solver
minimises T exactly on a fine grid of S by dynamic programming, then maps S through the flow-size CDF:
alpha_j = F^-1(S_j). Also: the equal-split heuristic (alpha_j is the 100 j / K-th percentile flow size) and
the thresholds of the PIAS authors' own ns-2 scripts.
"""

from __future__ import annotations

import json

from .. import _core


def bound(s: list[float], rho: float) -> float:
    """T(S) for interior fractions s = (S_1..S_{K-1})."""
    return _core.pias_bound([float(x) for x in s], float(rho))


def optimal_fractions(rho: float, queues: int, grid: int = 2000) -> list[float]:
    """The S_1..S_{K-1} minimising T, exactly on a grid of `grid` steps (dynamic programming)."""
    try:
        return _core.pias_optimal_fractions(float(rho), int(queues), int(grid))
    except _core.ScenarioError as e:
        raise _core.ScenarioError(f"--{e}") from None


def fractions_of(points: list[list[float]], alphas: list[int]) -> list[float]:
    """S_j = F(alpha_j)."""
    return _core.pias_fractions_of([[float(x), float(p)] for x, p in points], [int(a) for a in alphas])


def solve(points: list[list[float]], cdf: str, load: float, queues: int, method: str) -> dict:
    """Thresholds by `method` ("optimal", "equal-split", "paper") with their fractions and bound."""
    if not 0 < load < 1:
        raise _core.ScenarioError(f"--load: must be in (0, 1), got {load}")
    return json.loads(_core.pias_solve([[float(x), float(p)] for x, p in points], cdf, float(load), int(queues), method))
