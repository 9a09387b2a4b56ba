"""The two backends of the agents' decision kernels agree: each primitive of ``ONE`` gives, for
one row, what the primitive of ``MANY`` gives for every row (ties and draws included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dixit_lab.policy.backends import MANY, ONE
from dixit_lab.policy.batch_tools import searchsorted_rows


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


def decisions(on, table, hands, display, own, clues, u, temperature):
    """Every primitive's answer, on backend ``on`` (one row for ONE, all rows for MANY)."""
    values = on.lookup(on.table(table), clues, hands)
    shown = on.lookup(on.table(table), clues, display)
    allowed = on.others(own, display)
    return {
        "categorical": on.categorical(values, temperature, u),
        "categorical_among": on.categorical(shown, temperature, u, allowed),
        "nth": on.nth(allowed, on.below(u, on.count(allowed))),
        "uniform": on.uniform(allowed, u),
        "pick": on.pick(hands, on.below(u, on.length(hands))),
        "without": on.categorical(values, temperature, u, on.without(
            on.everything(hands), on.below(u, on.length(hands)))),
        "gather": on.categorical(on.gather(on.vector(table[0]), hands), temperature, u),
        "best_card": on.best_card(on.vector(table[1]), hands),
        "best_cards": on.best_cards(on.table(table), clues, hands, 3),
        "best_card_1": on.best_cards(on.table(table), clues, hands, 1),
        "best_other": on.best_other(on.table(table), clues, display, own),
        "table": shown,
    }


@given(st.integers(0, 2**32 - 1), st.sampled_from([0.05, 1.0, 30.0]))
@settings(max_examples=60, deadline=None)
def test_choices_agree_row_by_row(seed, temperature):
    table, hands, display, own, clues, u = case(seed)
    many = decisions(MANY, table, hands, display, own, clues, u, temperature)
    for r, (hand, shown, mine) in enumerate(zip(*one_rows(hands, display, own), strict=True)):
        one = decisions(ONE, table, hand, shown, mine, int(clues[r]), float(u[r]),
                        temperature)
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
