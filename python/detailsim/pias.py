"""PIAS demotion thresholds (Bai et al., NSDI 2015).

With S_j = F(alpha_j) the fraction of flows smaller than threshold j (S_0 = 0, S_K = 1), theta_l = S_l - S_{l-1}
and rho the load, the paper's bound on the average FCT (each queue an M/M/1) is

    T(S) = rho * sum_l theta_l (1 - S_{l-1}) / (1 - rho S_{l-1}).

The paper's closed form has no non-negative solution for usual loads (see shared/spec/pias.md), so this
module minimises T exactly on a fine grid of S by dynamic programming (an optimal partition of [0, 1] into
K pieces, the cost of a piece depending only on its ends), then maps S through the flow-size CDF:
alpha_j = F^-1(S_j). Also: the equal-split heuristic (alpha_j is the 100 j / K-th percentile flow size) and
the thresholds of the PIAS authors' own ns-2 scripts.
"""

from __future__ import annotations

import numpy as np

from ._core import ScenarioError
from .cdf import quantile

PKT = 1460
# HKUST-SING/PIAS-NS2 scripts/run_pias_dctcp.py and run_pias_vl2.py (packets of 1460 B), 8 queues
PAPER = {
    "websearch": {None: [46, 1084, 1717, 1943, 1989, 1999, 2001]},
    "datamining": {
        0.9: [750, 1083, 1416, 13705, 14952, 21125, 28253],
        0.8: [745, 1083, 1391, 13689, 14936, 21149, 27245],
        0.7: [907, 1301, 1619, 12166, 12915, 21313, 26374],
        0.6: [840, 1232, 1617, 11950, 12238, 21494, 25720],
        0.5: [805, 1106, 1401, 10693, 11970, 21162, 22272],
    },
}


def bound(s: np.ndarray | list[float], rho: float) -> float:
    """T(S) for interior fractions s = (S_1..S_{K-1})."""
    pts = np.concatenate([[0.0], np.asarray(s, dtype=float), [1.0]])
    a, b = pts[:-1], pts[1:]
    return float(rho * np.sum((b - a) * (1 - a) / (1 - rho * a)))


def optimal_fractions(rho: float, queues: int, grid: int = 2000) -> list[float]:
    """The S_1..S_{K-1} minimising T, exactly on a grid of `grid` steps (dynamic programming)."""
    if not 0 < rho < 1:
        raise ScenarioError(f"--load: must be in (0, 1), got {rho}")
    if queues < 1:
        raise ScenarioError("--queues: at least 1")
    g = np.linspace(0.0, 1.0, grid + 1)
    # cost[i, j] of a piece from g[i] to g[j] (j >= i)
    a = g[:, None]
    b = g[None, :]
    cost = np.where(b >= a, rho * (b - a) * (1 - a) / (1 - rho * a), np.inf)
    best = cost[0].copy()  # best[j]: one piece from 0 to g[j]
    choice = []
    for _ in range(queues - 1):
        tot = best[:, None] + cost  # previous end i, new end j
        arg = np.argmin(tot, axis=0)
        best = tot[arg, np.arange(grid + 1)]
        choice.append(arg)
    # backtrack from the end at 1.0
    ends = [grid]
    for arg in reversed(choice):
        ends.append(int(arg[ends[-1]]))
    ends = ends[::-1]  # 0-piece start omitted: ends[0] is S_1's index ... ends[-1] = grid
    return [float(g[i]) for i in ends[:-1]]


def equal_split_fractions(queues: int) -> list[float]:
    return [j / queues for j in range(1, queues)]


def thresholds(points: list[list[float]], fractions: list[float]) -> list[int]:
    """alpha_j = F^-1(S_j) in bytes (rounded up to whole bytes)."""
    return [int(np.ceil(quantile(points, s))) for s in fractions]


def paper_thresholds(cdf: str, load: float, queues: int) -> list[int]:
    if queues != 8:
        raise ScenarioError("pias thresholds \"paper\": the authors published sets for 8 queues only")
    sets = PAPER.get(cdf)
    if sets is None:
        raise ScenarioError(f"pias thresholds \"paper\": published for websearch and datamining, not {cdf!r}")
    key = None if None in sets else min(sets, key=lambda x: abs(x - load))
    return [p * PKT for p in sets[key]]


def fractions_of(points: list[list[float]], alphas: list[int]) -> list[float]:
    """S_j = F(alpha_j)."""
    xs = np.array([p[0] for p in points])
    ps = np.array([p[1] for p in points])
    return [float(np.interp(a, xs, ps)) for a in alphas]


def solve(points: list[list[float]], cdf: str, load: float, queues: int, method: str) -> dict:
    if method == "optimal":
        s = optimal_fractions(load, queues)
        alphas = thresholds(points, s)
    elif method == "equal-split":
        s = equal_split_fractions(queues)
        alphas = thresholds(points, s)
    elif method == "paper":
        alphas = paper_thresholds(cdf, load, queues)
        s = fractions_of(points, alphas)
    else:
        raise ScenarioError(f"pias thresholds: unknown method {method!r}; allowed: optimal, equal-split, paper, or a list")
    return {"method": method, "queues": queues, "load": load, "fractions": s, "thresholds_bytes": alphas,
            "thresholds_packets": [round(a / PKT, 1) for a in alphas], "bound": bound(s, load)}
