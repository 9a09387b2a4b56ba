"""Exact sums: the same integer whatever the grouping, equal to the sum of the values as
fractions, and correctly rounded back to a float."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dixit_lab.stats.exact_sums import SHIFT, from_json, group_sums, to_float, to_json


@pytest.mark.parametrize("kind", ["fractions", "integers", "any magnitude", "subnormal"])
def test_group_sums_are_the_exact_sums(kind):
    rng = np.random.default_rng(7)
    n = 500
    values = {"fractions": rng.integers(0, 5, n) / rng.integers(1, 13, n),
              "integers": rng.integers(-50, 50, n).astype(float),
              "any magnitude": rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n),
              "subnormal": np.r_[5e-324, -1e-310, 2.5e-320, rng.standard_normal(n - 3)]}[kind]
    groups = rng.integers(0, 4, n)
    sums = group_sums(groups, values, 4)
    for group in range(4):
        exact = sum((Fraction(float(v)) for v in values[groups == group]), Fraction(0))
        assert Fraction(sums[group], 2 ** SHIFT) == exact
        assert to_float(sums[group]) == float(exact)  # correctly rounded
        assert from_json(to_json(sums[group])) == sums[group]


def test_the_grouping_does_not_change_the_sum():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 5, 20_000) / rng.integers(1, 13, 20_000)
    groups = rng.integers(0, 5, 20_000)
    whole = group_sums(groups, values, 5)
    for size in (7, 333, 10_000):
        parts = [group_sums(groups[i:i + size], values[i:i + size], 5)
                 for i in range(0, len(values), size)]
        assert [sum(column) for column in zip(*parts, strict=True)] == whole


def test_non_finite_values_are_refused():
    with pytest.raises(ValueError, match="finite"):
        group_sums(np.zeros(2, np.int64), np.array([1.0, np.nan]), 1)
