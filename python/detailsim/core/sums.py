"""Float sums whose result does not depend on the order of the rows.

A float sum rounds at every step, so the same values summed in another order can differ in the last digit.
polars gives no fixed row order after a `join` without `maintain_order` or inside a `group_by`'s groups,
and its sums split the work by thread and by chunk: with polars 2.1 on this project's 2-core VM, a table of
2 million random floats in 24 groups, grouped and averaged 20 more times (`group_by(...).agg(pl.col(x).mean())`),
never gave the first call's result again (the means moved by up to 2e-14), and with `maintain_order=True`
some calls still did not; sorted first, every call gave the same. A statistic
the stores keep is therefore summed over its values sorted (`sorted_sum`, `sorted_mean`: the same values
give the same sum, whatever the order or the chunking), and a handful of per-seed values go through
`ordered` before numpy's mean and standard deviation.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl


def sorted_sum(e: pl.Expr) -> pl.Expr:
    """The sum of `e`'s values in ascending order (nulls skipped): the same for any order of the rows."""
    return e.sort().sum()


def sorted_mean(e: pl.Expr) -> pl.Expr:
    """The mean of `e`'s values summed in ascending order (nulls skipped)."""
    return e.sort().mean()


def ordered(xs: Iterable[float]) -> np.ndarray:
    """`xs` (finite floats) as an ascending array, so that numpy's sums over it (mean, std) do not depend on
    the order the values came in."""
    return np.sort(np.asarray(list(xs), dtype=float))
