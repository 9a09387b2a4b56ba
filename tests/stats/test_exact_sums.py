"""Exact sums: the same integer whatever the grouping, equal to the sum of the values as
fractions, and correctly rounded back to a float."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dixit_lab.stats.exact_sums import (
    SHIFT,
    from_json,
    group_counts,
    group_sums,
    to_float,
    to_json,
)


@pytest.mark.parametrize("kind", ["fractions", "integers", "any magnitude", "subnormal",
                                  "quarters", "fine dyadic", "large dyadic"])
def test_group_sums_are_the_exact_sums(kind):
    rng = np.random.default_rng(7)
    n = 500
    values = {"fractions": rng.integers(0, 5, n) / rng.integers(1, 13, n),
              "integers": rng.integers(-50, 50, n).astype(float),
              "any magnitude": rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n),
              "subnormal": np.r_[5e-324, -1e-310, 2.5e-320, rng.standard_normal(n - 3)],
              # the scaled-integer path, and (too large to scale) the general one
              "quarters": rng.integers(-40, 40, n) / 4.0,
              "fine dyadic": rng.integers(-2**20, 2**20, n) / 2.0**24,
              "large dyadic": rng.integers(-2**40, 2**40, n) / 4.0}[kind]
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


@pytest.mark.parametrize("largest", [50, 2**60])
def test_group_counts_are_the_group_sums_of_integers(largest):
    """The integer path gives what the float path gives (and stays exact where a float sum
    of the integers would round)."""
    rng = np.random.default_rng(11)
    groups = rng.integers(0, 6, 3_000)
    weights = rng.integers(-largest, largest, 3_000, dtype=np.int64)
    assert group_counts(groups, 6) == group_sums(groups, np.ones(3_000), 6)
    exact = [sum(int(w) for w in weights[groups == g]) << SHIFT for g in range(6)]
    assert group_counts(groups, 6, weights) == exact
    if largest < 2**53:
        assert exact == group_sums(groups, weights.astype(float), 6)


def test_group_counts_refuse_float_weights():
    with pytest.raises(TypeError, match="group_sums"):
        group_counts(np.zeros(2, np.int64), 1, np.array([0.5, 1.0]))
