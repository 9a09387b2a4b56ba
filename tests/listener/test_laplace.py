"""The Laplace-transform quadrature of E[a/(a+X)] against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dixit_lab.listener.laplace import RatioIntegral, log_grid


def _integrate(log_a, values, probabilities, moments=2):
    """X takes ``values`` (each <= 1) with ``probabilities``: φ(t) = sum p_i exp(-t v_i)."""
    nodes = log_grid(float(np.min(log_a)))
    integral = RatioIntegral(log_a, nodes, moments)
    for tau in nodes:
        integral.add(np.full(np.shape(log_a),
                             sum(p * math.exp(-math.exp(tau) * v)
                                 for p, v in zip(probabilities, values, strict=True))))
    return integral.result()


@pytest.mark.parametrize("log_a", [0.0, -3.0, -12.0, -40.0])
def test_a_fixed_sum_gives_the_ratio(log_a):
    a = math.exp(log_a)
    for b in (1.0, 1e-3, 1e-9):
        first, second = _integrate(np.array([log_a]), [b], [1.0])
        assert math.isclose(first[0], a / (a + b), rel_tol=1e-6, abs_tol=1e-12)
        assert math.isclose(second[0], (a / (a + b)) ** 2, rel_tol=1e-6, abs_tol=1e-12)


def test_a_skewed_two_point_sum():
    """X is 1 with probability 0.9 and 1e-6 otherwise: the case a second-order expansion
    gets wrong (for a = 0.01 it predicts far below the true 0.099)."""
    a = 0.01
    truth = 0.9 * a / (a + 1.0) + 0.1 * a / (a + 1e-6)
    first, second = _integrate(np.array([math.log(a)]), [1.0, 1e-6], [0.9, 0.1])
    assert math.isclose(first[0], truth, rel_tol=1e-6)
    truth2 = 0.9 * (a / (a + 1.0)) ** 2 + 0.1 * (a / (a + 1e-6)) ** 2
    assert math.isclose(second[0], truth2, rel_tol=1e-6)


def test_a_pair_below_the_floor_is_never_found():
    first, _ = _integrate(np.array([-800.0, 0.0]), [1.0], [1.0], moments=1)
    assert first[0] == 0.0 and math.isclose(first[1], 0.5, rel_tol=1e-6)


def test_result_needs_every_node():
    integral = RatioIntegral(np.zeros(2), log_grid(0.0))
    with pytest.raises(RuntimeError, match="nodes added"):
        integral.result()
