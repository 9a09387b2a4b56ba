"""Intervals: clustered Wilson, bounded means, paired differences and Holm's procedure."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dixit_lab.stats.intervals import (
    bounded_mean_interval,
    clustered_rate_interval,
    holm,
    paired_difference,
)
from dixit_lab.stats.metrics import wilson_interval


def test_independent_trials_give_the_wilson_interval():
    outcomes = np.array([1] * 37 + [0] * 63)
    rate, low, high = clustered_rate_interval(outcomes)
    assert rate == 0.37
    assert np.allclose((low, high), wilson_interval(37, 100))
    # one trial per cluster: the design effect is (n - 1) / n away from 1 at most
    _, low2, high2 = clustered_rate_interval(outcomes, np.arange(100))
    assert abs(low2 - low) < 0.002 and abs(high2 - high) < 0.002


def test_perfectly_correlated_clusters_count_once():
    """Four votes per round that always agree carry the information of one vote per round."""
    rng = np.random.default_rng(0)
    per_round = rng.random(200) < 0.3
    outcomes = np.repeat(per_round, 4).astype(float)
    clusters = np.repeat(np.arange(200), 4)
    _, low, high = clustered_rate_interval(outcomes, clusters)
    wide = wilson_interval(int(per_round.sum()), 200)
    narrow = wilson_interval(int(outcomes.sum()), 800)
    assert high - low > 1.9 * (narrow[1] - narrow[0])
    assert np.allclose((low, high), wide, atol=0.003)


def test_a_tiny_win_share_interval_stays_in_range():
    shares = np.array([0.0, 0.0, 1.0, 0.5, 0.0])
    mean, low, high = bounded_mean_interval(shares)
    assert mean == 0.3 and 0.0 <= low < mean < high <= 1.0
    assert bounded_mean_interval(np.zeros(6))[1:] == (0.0, pytest.approx(0.39, abs=0.01))
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        bounded_mean_interval([0.2, 1.5])
    assert all(math.isnan(x) for x in bounded_mean_interval([0.5, 0.5], [1, 1])[1:])


def test_paired_difference_is_the_paired_t_test():
    rng = np.random.default_rng(1)
    deal = rng.normal(0, 2, 60)  # luck of the deal, shared by both treatments
    a, b = deal + 0.5 + rng.normal(0, 0.3, 60), deal + rng.normal(0, 0.3, 60)
    result = paired_difference(a, b)
    reference = stats.ttest_rel(a, b)
    assert math.isclose(result.p_value, reference.pvalue, rel_tol=1e-9)
    assert result.low < 0.5 < result.high and result.pairs == 60
    # unpaired, the deal's luck would hide the difference
    assert stats.ttest_ind(a, b).pvalue > result.p_value
    a[3] = np.nan
    assert paired_difference(a, b).pairs == 59


def test_holm_steps_down():
    p = [0.01, 0.04, 0.03, 0.005, np.nan]
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop
    assert holm(p, 0.05).tolist() == [True, False, False, True, False]
    assert not holm([0.2, 0.3], 0.05).any()


def test_wilson_interval_holds_a_rate_of_zero_or_one():
    from dixit_lab.stats.intervals import wilson_from_effective

    for n in (3.0, 12.0, 41.7, 1000.0):
        low, high = wilson_from_effective(0.0, n)
        assert low == 0.0 <= high
        low, high = wilson_from_effective(1.0, n)
        assert low <= 1.0 == high
