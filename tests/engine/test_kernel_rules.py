"""The kernel's softmax draws (:mod:`dixit_lab.engine.kernel_rules`): the exact one is
``categorical_small``; the fast one, from weights made once per table, is the same draw or
declines (-1). Whole games: ``tests/engine/test_compiled.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dixit_lab.engine.compiled import MARGIN, kernel_problem, softmax_weights
from dixit_lab.policy.backends import categorical_small

pytestmark = pytest.mark.skipif(kernel_problem() is not None, reason=kernel_problem() or "")


def _rows(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [*(rng.normal(size=rng.integers(1, 9)).round(rng.integers(0, 3))
              for _ in range(count)),
            np.array([0.1, 0.5, 0.5, np.inf]), np.array([np.inf, 0.2]),
            np.array([-np.inf, -np.inf]), np.array([0.3, 0.3, 0.3]),
            np.array([0.2, np.nan, 0.4]), np.array([0.0, -1e4, 3.0])]


def _reference(row: np.ndarray, allowed: np.ndarray, temperature: float, u: float) -> int:
    """categorical_small over the allowed entries, as an index of the whole row."""
    kept = [i for i in range(len(row)) if allowed[i]]
    return kept[categorical_small([float(row[i]) for i in kept], temperature, u)]


def _masks(n: int) -> list[np.ndarray]:
    masks = [np.ones(n, dtype=np.bool_)]
    if n > 1:  # a listener's own card, not allowed
        masks.append(np.arange(n) != 1)
    return masks


def test_the_exact_draw_is_categorical_small() -> None:
    """Ties at the top, disallowed entries, infinite and NaN values (NaN weights, as in
    Python)."""
    from dixit_lab.engine.kernel_rules import categorical

    for row in _rows(4, 400):
        for allowed in _masks(len(row)):
            for u in (0.0, 0.2, 0.5, 0.77, 0.999999):
                for temperature in (0.05, 1.0):
                    values = np.zeros(16)
                    values[:len(row)] = row
                    assert categorical(values, len(row), temperature, u, allowed) == \
                        _reference(row, allowed, temperature, u)


def _boundaries(row: np.ndarray, allowed: np.ndarray, temperature: float) -> list[float]:
    """The uniforms at which the reference's draw changes (each cumulative weight over the
    total), and the floats next to them: where rounding decides."""
    top = max(float(row[i]) for i in range(len(row)) if allowed[i])
    sums, total = [], 0.0
    for i in range(len(row)):
        if allowed[i]:
            total += math.exp((float(row[i]) - top) / temperature)
            sums.append(total)
    out = []
    for bound in sums[:-1]:
        u = bound / total
        out += [math.nextafter(u, 0.0), u, math.nextafter(u, 1.0)]
    return [u for u in out if 0.0 <= u < 1.0]


#: the kernel's weights are the reference's times one constant, up to rounding; numpy's exp may
#: round as math.exp does on one CPU and not on another, so the tests scale the weights by a
#: constant that is not a power of two: rounding that the margin must absorb on every machine
SCALE = 1 / 3


def _fast(row: np.ndarray, allowed: np.ndarray, temperature: float, u: float,
          margin: float, scale: float = 1.0) -> int:
    from dixit_lab.engine.kernel_rules import weighted

    weights = np.zeros(16)
    weights[:len(row)] = softmax_weights(row, temperature) * scale
    return int(weighted(weights, len(row), u, allowed, margin))


def test_the_fast_draw_is_the_exact_one_or_declines() -> None:
    """Over random rows and uniforms, and uniforms on the reference's boundaries, the fast
    draw is the reference's whenever it draws; it declines at every boundary it cannot
    vouch for and at rows with NaN or infinite values, and draws nearly everywhere else."""
    rng = np.random.default_rng(8)
    random_declined = random_drawn = 0
    for row in _rows(5, 600):
        finite = bool(np.all(np.isfinite(row)))
        for allowed in _masks(len(row)):
            for temperature in (0.05, 0.5, 3.0, -0.7):
                if finite and temperature < 0 and np.ptp(row) > 100:
                    continue  # the reference's exp overflows (Python raises)
                uniforms = [float(x) for x in rng.random(8)]
                edges = _boundaries(row, allowed, temperature) if finite else []
                for u, scale in [(u, scale) for u in uniforms + edges
                                 for scale in (1.0, SCALE)]:
                    got = _fast(row, allowed, temperature, u, MARGIN, scale)
                    if u in uniforms and finite and scale == 1.0:
                        random_drawn += got >= 0
                        random_declined += got < 0
                    if got >= 0:
                        assert finite, f"drew from {row}"
                        assert got == _reference(row, allowed, temperature, u), (row, u)
    assert random_declined < random_drawn / 1000  # the fast draw is the usual one


def test_without_its_margin_the_fast_draw_would_differ() -> None:
    """The margin is what makes it exact: with none, some draws on the boundaries differ
    from the reference's (so the test above can fail): weights rounded apart from the
    reference's, as the kernel's may be, draw another card at some boundaries."""
    wrong = 0
    for row in _rows(6, 600):
        if not np.all(np.isfinite(row)):
            continue
        allowed = np.ones(len(row), dtype=np.bool_)
        for temperature in (0.05, 0.5, 3.0):
            for u in _boundaries(row, allowed, temperature):
                got = _fast(row, allowed, temperature, u, -math.inf, SCALE)
                wrong += got >= 0 and got != _reference(row, allowed, temperature, u)
    assert wrong > 0


def test_weights_the_fast_draw_refuses() -> None:
    """A NaN, an infinite value, a temperature of 0, an overflow; and allowed cards whose
    weights underflow next to the row's maximum (a listener's own card, not allowed), whose
    rounded ratio (1 : 2 for e^0.5) would draw another card."""
    for row, temperature in [(np.array([0.2, np.nan]), 1.0), (np.array([np.inf, 0.1]), 1.0),
                             (np.array([-np.inf, -np.inf]), 1.0), (np.array([0.1, 0.2]), 0.0),
                             (np.array([0.0, 900.0]), -1.0)]:
        assert _fast(row, np.ones(2, dtype=np.bool_), temperature, 0.4, MARGIN) == -1
    row, own_card_out = np.array([745.0, 0.0, 0.5]), np.array([False, True, True])
    assert _reference(row, own_card_out, 1.0, 0.3) == 1
    assert _fast(row, own_card_out, 1.0, 0.3, MARGIN) == -1
