"""The exact listener model against enumeration and Monte Carlo simulations of the same model,
on hand-made and on the shipped similarity matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dixit_lab.core.rules import get_rules
from dixit_lab.listener.model import (
    ListenerModel,
    decoy_rank_probability,
    decoy_weights,
    expected_storyteller_points,
    outcome_probabilities,
    softmax_submission,
)


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
                         [(6, 1, 3, 0.01), (6, 1, 2, 0.01), (7, 2, 1, 0.01)])
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


def _simulate(row, temperature, hand, slots, others, card, rng, decoy_temperature=None,
              trials=12000):
    """Monte Carlo of the model for one (clue row, card): mean and standard error of a/(a+X)."""
    pool = np.array([x for x in range(len(row)) if x != card])
    row = np.asarray(row, dtype=np.float64) - max(row)
    weight = np.exp(row / temperature)
    a = weight[card]
    x = np.zeros(trials)
    for _ in range(others):
        hands = pool[np.argsort(rng.random((trials, len(pool))), axis=1)[:, :hand]]
        if decoy_temperature is None:
            x += np.sort(weight[hands], axis=1)[:, -slots:].sum(axis=1)
            continue
        draw = np.exp(row[hands] / decoy_temperature)
        for _ in range(slots):
            cumulative = np.cumsum(draw, axis=1)
            u = rng.random(trials)[:, None] * cumulative[:, -1:]
            index = np.minimum((cumulative <= u).sum(axis=1), hand - 1)
            x += weight[hands[np.arange(trials), index]]
            draw[np.arange(trials), index] = 0.0
    ratio = a / (a + x)
    return ratio.mean(), ratio.std() / math.sqrt(trials), ratio.var()


@pytest.fixture(scope="module")
def shipped_similarity():
    from dixit_lab.embeddings import get_space
    return np.asarray(get_space("conse", "dreams", "default").similarity, dtype=np.float64)


@pytest.mark.parametrize(("hand", "slots", "others", "decoy_temperature", "tolerance"),
                         [(6, 1, 3, None, 0.004), (6, 1, 3, 0.05, 0.006),
                          (7, 2, 1, None, 0.004)])
def test_exact_model_matches_simulation_on_the_shipped_space(
        shipped_similarity, hand, slots, others, decoy_temperature, tolerance):
    """On the real conse/dreams matrix, at the pairs an ambiguity storyteller aims at (the
    model's find probability near 0.1 ... 0.9), the model is Monte Carlo within sampling
    error; its variance too."""
    rng = np.random.default_rng(5)
    model = ListenerModel.build(shipped_similarity, 0.05, hand, slots, others,
                                decoy_temperature)
    find, variance = model.find, model.find_variance
    for target in (0.1, 0.5, 0.9):
        candidates = np.argwhere(np.abs(find - target) < 0.02)
        for card, clue in candidates[rng.choice(len(candidates), 2, replace=False)]:
            mean, error, var = _simulate(shipped_similarity[clue], 0.05, hand, slots, others,
                                         card, rng, decoy_temperature)
            assert abs(mean - find[card, clue]) < tolerance + 3 * error
            assert abs(var - variance[card, clue]) < 0.003


def test_best_two_decoys_by_enumeration():
    """The joint law of a hand's two best cards, checked by listing every hand."""
    from itertools import combinations
    rng = np.random.default_rng(2)
    sims = rng.normal(0.3, 0.1, (2, 8))
    model = ListenerModel.build(sims, 0.1, 3, 2, 1)
    for clue in range(2):
        weight = np.exp(sims[clue] / 0.1)
        for card in range(8):
            pool = [x for x in range(8) if x != card]
            ratios = [weight[card] / (weight[card] + sum(sorted(weight[list(h)])[-2:]))
                      for h in combinations(pool, 3)]
            assert math.isclose(model.find[card, clue], np.mean(ratios), rel_tol=1e-5)


def test_softmax_submission_is_a_distribution_that_favours_similar_cards():
    rng = np.random.default_rng(4)
    sims = rng.normal(0.3, 0.08, (3, 40))
    q = softmax_submission(sims, 0.05, 6)
    assert np.allclose(q.sum(axis=1), 1.0)
    order = np.argsort(sims, axis=1)
    assert np.all(np.diff(np.take_along_axis(q, order, axis=1), axis=1) > 0)
    # a cold softmax submits the best match of its hand, whose other cards the model draws
    # with replacement: the card of rank r is submitted with chance ∝ ((r - 1) / 39) ** 5
    sims = np.stack([rng.permutation(np.linspace(0.0, 0.39, 40)) for _ in range(3)])
    order = np.argsort(sims, axis=1)
    cold = softmax_submission(sims, 0.001, 6)
    best = (np.arange(40) / 39.0) ** 5
    assert np.allclose(np.take_along_axis(cold, order, axis=1), best / best.sum(), atol=1e-3)
    # ... which is within 0.01 of drawing the hand without replacement
    exact = decoy_rank_probability(40, 6, 1) * 6 / 40
    assert np.abs(np.take_along_axis(cold, order, axis=1) - exact).max() < 0.01
