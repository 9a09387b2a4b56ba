"""The analytic listener model against Monte Carlo simulations of the same model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dixit_lab.listener_model import (
    ListenerModel,
    decoy_rank_probability,
    decoy_weights,
    expected_storyteller_points,
    outcome_probabilities,
)
from dixit_lab.rules import get_rules


@pytest.mark.parametrize(("pool", "hand", "slot"), [(10, 3, 1), (10, 3, 2), (83, 6, 1),
                                                     (83, 7, 2)])
def test_order_statistic_weights_are_distributions(pool, hand, slot):
    weights = decoy_weights(pool, hand, slot)
    assert weights.min() >= 0 and math.isclose(weights.sum(), 1.0, rel_tol=1e-9)


def test_decoy_rank_probability_by_counting():
    # deck of 5, hand of 2: the card of rank r is the best of its hand iff the other card
    # ranks below it: (r - 1) of the 4 others
    assert np.allclose(decoy_rank_probability(5, 2, 1), [0, 1 / 4, 2 / 4, 3 / 4, 1])


def _monte_carlo(sims, temperature, hand, slots, others, clue, card, rng, trials=3000):
    pool = [x for x in range(sims.shape[1]) if x != card]
    a = math.exp(sims[clue, card] / temperature)
    total = 0.0
    for _ in range(trials):
        x = 0.0
        for _ in range(others):
            cards = rng.choice(pool, hand, replace=False)
            best = cards[np.argsort(-sims[clue, cards], kind="stable")[:slots]]
            x += float(np.exp(sims[clue, best] / temperature).sum())
        total += a / (a + x)
    return total / trials


@pytest.mark.parametrize(("hand", "slots", "others", "tolerance"),
                         [(6, 1, 3, 0.01), (6, 1, 2, 0.015), (7, 2, 1, 0.035)])
def test_find_probability_matches_simulation(hand, slots, others, tolerance):
    rng = np.random.default_rng(0)
    sims = rng.normal(0.3, 0.08, (4, 30))
    model = ListenerModel.build(sims, 0.05, hand, slots, others)
    for clue in range(4):
        for card in (0, 11, 29):
            simulated = _monte_carlo(sims, 0.05, hand, slots, others, clue, card, rng)
            assert abs(simulated - model.find[card, clue]) < tolerance


def test_find_probability_rises_with_similarity():
    sims = np.tile(np.linspace(0, 0.5, 20), (1, 1))
    model = ListenerModel.build(sims, 0.05, 6, 1, 3)
    assert np.all(np.diff(model.find[:, 0]) > 0)
    assert model.find.min() >= 0 and model.find.max() <= 1


def test_outcome_probabilities_sum_to_one():
    for p in (0.0, 0.2, 0.5, 0.93, 1.0):
        for voters in (2, 3, 5, 7):
            out = outcome_probabilities(p, voters)
            assert math.isclose(out["none_found"] + out["some_found"] + out["all_found"], 1.0)
            assert out["exactly_one"] <= out["some_found"] + 1e-12 or voters == 1


def test_vote_probabilities_of_the_model_sum_to_one():
    """For a fixed table the model's listener votes by a softmax over the cards it may vote
    for: the storyteller's card and the decoys; those probabilities sum to one and the
    storyteller's share is the model's find probability when there is no decoy uncertainty."""
    sims = np.array([[0.1, 0.2, 0.3, 0.4]])
    model = ListenerModel.build(sims, 0.1, 3, 1, 1)  # one other listener: hand of 3 from 3
    # the only hand without card 0 is {1, 2, 3}; its best match is card 3 (0.4)
    a, d = math.exp(0.1 / 0.1), math.exp(0.4 / 0.1)
    assert math.isclose(model.find[0, 0], a / (a + d), rel_tol=1e-5)
    assert math.isclose(a / (a + d) + d / (a + d), 1.0)


def test_expected_points_peak_where_some_but_not_all_find():
    rules = get_rules("classic")
    p = np.linspace(0, 1, 101)
    points = expected_storyteller_points(p, 4, rules)
    assert points[0] == 0 and points[-1] == 0
    assert abs(p[int(np.argmax(points))] - 0.5) < 0.011
    lone = expected_storyteller_points(p, 4, get_rules("classic", lone_finder_points=4))
    assert p[int(np.argmax(lone))] < 0.5  # the lone-finder bonus rewards harder clues
    uncertain = expected_storyteller_points(p, 4, rules, variance=0.02)
    assert np.all(uncertain <= points + 1e-12)
