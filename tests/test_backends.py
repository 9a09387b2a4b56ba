"""The two backends of the agents' decision kernels agree: each primitive of ``ONE`` gives, for
one row, what the primitive of ``MANY`` gives for every row (ties and draws included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dixit_lab_agents.backends import MANY, ONE
from dixit_lab_agents.batch_tools import searchsorted_rows


def case(seed: int, rows: int = 7, cards: int = 30, hand: int = 6, shown: int = 5):
    """Random hands, display, own masks, a table with many ties, draws."""
    rng = np.random.default_rng(seed)
    table = (rng.integers(0, 4, size=(9, cards)) / 4).astype(np.float32)  # ties
    hands = np.stack([rng.permutation(cards)[:hand] for _ in range(rows)])
    display = np.stack([rng.permutation(cards)[:shown] for _ in range(rows)])
    own = np.zeros((rows, shown), dtype=bool)
    own[np.arange(rows), rng.integers(0, shown, rows)] = True
    own[:, 0] |= rng.random(rows) < 0.3  # sometimes two own cards
    own[own.all(axis=1), -1] = False
    clues = rng.integers(0, table.shape[0], rows)
    uniforms = rng.random(rows)
    uniforms[0] = np.nextafter(1.0, 0.0)  # the largest draw
    return table, hands, display, own, clues, uniforms


def one_rows(hands, display, own):
    return ([tuple(h) for h in hands.tolist()], [tuple(d) for d in display.tolist()],
            [tuple(np.flatnonzero(o).tolist()) for o in own])


@given(st.integers(0, 2**32 - 1), st.sampled_from([0.05, 1.0, 30.0]))
@settings(max_examples=60, deadline=None)
def test_choices_agree_row_by_row(seed, temperature):
    table, hands, display, own, clues, u = case(seed)
    one_hands, one_display, one_own = one_rows(hands, display, own)
    many_values = MANY.lookup(table, clues, hands)
    many_display_values = MANY.lookup(table, clues, display).astype(np.float64)
    allowed = MANY.others(own, display)
    many = {
        "first_max": MANY.first_max(many_values),
        "first_max_among": MANY.first_max(many_display_values, allowed),
        "top1": MANY.pick_all(hands, MANY.top(many_values, 1)),
        "top3": MANY.pick_all(hands, MANY.top(many_values, 3)),
        "categorical": MANY.categorical(many_values, temperature, u),
        "categorical_among": MANY.categorical(many_display_values, temperature, u, allowed),
        "nth": MANY.nth(allowed, MANY.below(u, MANY.count(allowed))),
        "uniform": MANY.uniform(allowed, u),
        "pick": MANY.pick(hands, MANY.below(u, MANY.length(hands))),
        "without": MANY.categorical(many_values, temperature, u,
                                    MANY.without(MANY.everything(hands), MANY.first_max(
                                        many_values))),
        "gather": MANY.first_max(MANY.gather(MANY.vector(table[0]), hands)),
        "table": MANY.lookup(MANY.table(table), clues, display),
    }
    rows = [ONE.vector(row) for row in table]
    one_table = ONE.table(table)
    for r in range(len(hands)):
        hand, shown, mine = one_hands[r], one_display[r], one_own[r]
        values = ONE.lookup(rows, int(clues[r]), hand)
        display_values = ONE.lookup(rows, int(clues[r]), shown)
        among = ONE.others(mine, shown)
        one = {
            "first_max": ONE.first_max(values),
            "first_max_among": ONE.first_max(display_values, among),
            "top1": ONE.pick_all(hand, ONE.top(values, 1)),
            "top3": ONE.pick_all(hand, ONE.top(values, 3)),
            "categorical": ONE.categorical(values, temperature, float(u[r])),
            "categorical_among": ONE.categorical(display_values, temperature, float(u[r]),
                                                 among),
            "nth": ONE.nth(among, ONE.below(float(u[r]), ONE.count(among))),
            "uniform": ONE.uniform(among, float(u[r])),
            "pick": ONE.pick(hand, ONE.below(float(u[r]), ONE.length(hand))),
            "without": ONE.categorical(values, temperature, float(u[r]),
                                       ONE.without(ONE.everything(hand),
                                                   ONE.first_max(values))),
            "gather": ONE.first_max(ONE.gather(rows[0], hand)),
            "table": ONE.lookup(one_table, int(clues[r]), shown),
        }
        for name, value in one.items():
            assert np.array_equal(value, many[name][r]), (name, seed, r)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_agrees_with_numpy_for_few_and_many_pairs(side):
    rng = np.random.default_rng(3)
    sorted_rows = np.sort(rng.integers(0, 20, size=(12, 40)).astype(np.float32), axis=1)
    for size in (1, 6, 300):  # a loop below 16 pairs, the vectorised search above
        rows = rng.integers(0, 12, size)
        targets = rng.integers(-1, 22, size).astype(np.float32)
        found = searchsorted_rows(sorted_rows, rows, targets, side=side)
        expected = [np.searchsorted(sorted_rows[r], t, side=side) for r, t in
                    zip(rows, targets, strict=True)]
        assert found.tolist() == expected
    cdf = np.cumsum(rng.random((5, 10)), axis=1)
    assert ONE.searchsorted(cdf, 2, 0.5 * cdf[2, -1]) == \
        MANY.searchsorted(cdf, np.array([2]), np.array([0.5 * cdf[2, -1]]))[0]


def test_one_row_kernels_round_trip():
    rows = ONE.as_rows((4, 1, 7))
    assert rows.shape == (1, 3) and ONE.from_rows(rows[:, 1]) == 1
    assert MANY.as_rows(rows) is rows and MANY.from_rows(rows) is rows
