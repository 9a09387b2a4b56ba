"""The quantiles the intervals use are scipy.stats' own, without importing scipy.stats."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dixit_lab.stats.intervals import normal_quantile, paired_difference, student_quantile


@pytest.mark.parametrize("probability", [0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9999])
def test_the_normal_quantile_is_scipy_stats(probability: float) -> None:
    assert normal_quantile(probability) == float(stats.norm.ppf(probability))


@pytest.mark.parametrize("df", [0.5, 1, 2, 3, 7.5, 29, 1_000, 1e9, math.inf])
def test_the_student_quantile_is_scipy_stats(df: float) -> None:
    for probability in (0.6, 0.95, 0.975, 0.995):
        assert student_quantile(probability, df) == float(stats.t.ppf(probability, df))


@pytest.mark.parametrize("df", [0, -1, math.nan])
def test_no_degrees_of_freedom_give_nan(df: float) -> None:
    assert math.isnan(student_quantile(0.975, df))


def test_the_paired_p_value_is_scipy_stats() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.1, 1, 40), rng.normal(0, 1, 40)
    found = paired_difference(a, b)
    expected = stats.ttest_rel(a, b)
    assert found.p_value == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert found.pairs == 40
