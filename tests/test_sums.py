"""Statistics the stores keep do not depend on the order of the flow table's rows or its chunks
(`detailsim.core.sums`): a float sum depends on its order, and polars keeps none inside a group_by or
across a join without `maintain_order`."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl


def _flows(n: int = 40_000, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    done = rng.random(n) < 0.97
    fct = rng.lognormal(-7, 1.5, n)
    ideal = fct / (1 + rng.lognormal(0, 1, n))
    null_where = lambda keep, x: pl.Series(np.where(keep, x, np.nan)).fill_nan(None)  # noqa: E731
    return pl.DataFrame({
        "scheme": rng.choice(["fh", "detail", "dctcp"], n), "variant": rng.choice(["a", "b"], n),
        "seed": rng.integers(1, 6, n), "class": rng.choice(["small", "medium", "large"], n),
        "fct": null_where(done, fct), "fct_lower": null_where(~done, fct * 0.9),
        "ideal": ideal, "slowdown": null_where(done, fct / ideal), "timeouts": rng.integers(0, 3, n) * (rng.random(n) < 0.05)})


def _reorderings(f: pl.DataFrame):
    for s in range(4):
        shuffled = f.sample(fraction=1.0, shuffle=True, seed=s)
        yield shuffled
        # in pieces, as a store's runs are read
        yield pl.concat([shuffled.slice(i, 6_000) for i in range(0, f.height, 6_000)], rechunk=False)


def test_class_stats_do_not_depend_on_the_order_of_the_rows():
    """The pooled table a reproduction stores (`class_stats`: percentiles, counts and the mean ideal FCT)
    is the same frame, row order and last digit, for the same flows in any order. (Its unsorted mean, beside
    another aggregation, happened to hold under these shuffles with polars 2.1, while the same mean alone
    moved under two of these eight orders: the guard is for the path polars takes, which it does not promise.)"""
    from detailsim.repro.reproduce import class_stats

    f = _flows()
    # the rows the pooled table is built in come in the order the groups first appear: fix that order
    want = class_stats(f.sort(["scheme", "class"]), ["scheme"])
    assert want.height == 9 and want["ideal_ms"].null_count() == 0
    for g in _reorderings(f):
        got = class_stats(g.sort(["scheme", "class"], maintain_order=True), ["scheme"])
        assert got.equals(want)


def test_demonstrations_measure_the_same_whatever_the_order_of_the_rows():
    """A demonstration's record (`measure_flows`: pooled statistics, their intervals over seeds, the share
    timed out and the mean with the unfinished at their age) is the same for the flows in any order. Before
    the mean was summed in sorted order, it moved in the last digit under two of these eight orders."""
    from detailsim.repro.demonstrations import measure_flows

    f = _flows().drop("scheme")
    want = measure_flows(f.sort(["variant", "class", "seed"]))
    assert set(want) == {"a", "b"} and all(c["mean_all_lb_ms"] > 0 and c["mean_ci"] > 0 for v in want.values() for c in v.values())
    for g in _reorderings(f):
        assert measure_flows(g.sort(["variant", "class", "seed"], maintain_order=True)) == want


def test_intervals_over_seeds_do_not_depend_on_the_order_of_the_seeds():
    """`ci95` and `seed_interval` over a handful of per-seed values (a store's seeds, in the order its rows
    give them) are the same to the last digit in every order of the values. Unsorted, numpy's standard
    deviation over the 5,040 orders of these seven values gave three different intervals."""
    from detailsim.core.pooled import seed_interval
    from detailsim.repro.grading import ci95

    xs = list(np.random.default_rng(11).lognormal(0, 1, 7))
    cis = {ci95(list(p)) for p in itertools.permutations(xs)}
    ivs = {seed_interval(list(p)) for p in itertools.permutations(xs)}
    assert len(cis) == 1 and len(ivs) == 1
    lo, hi = ivs.pop()
    assert 0 < lo < np.exp(np.mean(np.log(xs))) < hi
