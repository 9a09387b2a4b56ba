"""The listener model against enumeration, against Monte Carlo simulations of real hands on
the shipped similarity matrix, and against the votes of engine games at 3 to 6 players."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dixit_lab.core.rules import get_rules
from dixit_lab.listener.hand_survival import HandDynamics
from dixit_lab.listener.model import (
    ListenerModel,
    decoy_rank_probability,
    decoy_weights,
    expected_storyteller_points,
    listener_model,
    outcome_probabilities,
    softmax_submission,
)
from dixit_lab.listener.tables import softmax_tables


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
    find = ListenerModel.build(sims, 0.05, hand, slots, others).find_at(0)
    for clue in range(4):
        for card in (0, 11, 29):
            simulated = _monte_carlo(sims, 0.05, hand, slots, others, clue, card, rng)
            assert abs(simulated - find[card, clue]) < tolerance


def test_find_probability_rises_with_similarity():
    sims = np.tile(np.linspace(0, 0.5, 20), (1, 1))
    for decoys in (None, 0.05):
        find = ListenerModel.build(sims, 0.05, 6, 1, 3, decoys).find_at(0)
        assert np.all(np.diff(find[:, 0]) > 0)
        assert find.min() >= 0 and find.max() <= 1


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
    assert math.isclose(model.find_at(0)[0, 0], a / (a + d), rel_tol=1e-5)
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


def _hands(rng, pool, weights, trials, hand):
    """(trials, hand) hands drawn without replacement from ``pool``, each next card ∝
    ``weights`` among those left (uniform weights: a uniformly random hand)."""
    keys = np.log(rng.random((trials, len(pool)))) / weights[None, :]  # Efraimidis-Spirakis
    return pool[np.argsort(-keys, axis=1)[:, :hand]]


def _simulate(row, temperature, hand, slots, others, card, rng, decoy_temperature=None,
              trials=12000, law=None):
    """Monte Carlo of real hands for one (clue row, card): each other listener's hand is
    drawn without replacement from the deck without ``card`` (by ``law``, default
    uniform), its decoys are its best cards or softmax draws without replacement; mean,
    standard error and variance of a/(a+X)."""
    pool = np.array([x for x in range(len(row)) if x != card])
    weights = np.ones(len(pool)) if law is None else np.asarray(law)[pool]
    row = np.asarray(row, dtype=np.float64) - max(row)
    weight = np.exp(row / temperature)
    a = weight[card]
    x = np.zeros(trials)
    for _ in range(others):
        hands = _hands(rng, pool, weights, trials, hand)
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
                         [(6, 1, 3, None, 0.004), (7, 2, 1, None, 0.004),
                          (6, 1, 3, 0.05, 0.004), (6, 1, 4, 0.05, 0.004),
                          (7, 2, 1, 0.05, 0.004)])
def test_model_matches_simulated_hands_on_the_shipped_space(
        shipped_similarity, hand, slots, others, decoy_temperature, tolerance):
    """On the real conse/dreams matrix, at the pairs an ambiguity storyteller aims at (the
    model's find probability near 0.1 ... 0.9): best-match decoys are exact (Monte Carlo
    within sampling error), softmax decoys within ``tolerance`` of hands drawn without
    replacement (two decoys at three players included); the variance too."""
    rng = np.random.default_rng(5)
    model = ListenerModel.build(shipped_similarity, 0.05, hand, slots, others,
                                decoy_temperature)
    find, variance = model.find_at(0), model.variance_at(0)
    for target in (0.1, 0.5, 0.9):
        candidates = np.argwhere(np.abs(find - target) < 0.02)
        for card, clue in candidates[rng.choice(len(candidates), 2, replace=False)]:
            mean, error, var = _simulate(shipped_similarity[clue], 0.05, hand, slots, others,
                                         card, rng, decoy_temperature)
            assert abs(mean - find[card, clue]) < tolerance + 3 * error
            assert abs(var - variance[card, clue]) < 0.003


@pytest.mark.parametrize(("hand", "slots", "others"), [(6, 1, 3), (7, 2, 1)])
def test_a_pool_law_other_than_uniform_matches_simulated_hands(shipped_similarity, hand,
                                                               slots, others):
    """Hands whose slots favour some cards (as late in a game): the tables at that pool law
    against hands drawn card by card in proportion to it, without replacement."""
    rng = np.random.default_rng(8)
    law = rng.uniform(0.3, 1.7, shipped_similarity.shape[1])
    law /= law.sum()
    clues = rng.choice(len(shipped_similarity), 6, replace=False)
    sims = shipped_similarity[clues]
    [(find, _)], _ = softmax_tables(sims, 0.05, 0.05, hand, slots, others, law[None])
    for row, clue in enumerate(clues):
        for card in rng.choice(sims.shape[1], 3, replace=False):
            mean, error, _ = _simulate(shipped_similarity[clue], 0.05, hand, slots, others,
                                       card, rng, 0.05, law=law)
            assert abs(mean - find[row, card]) < 0.006 + 3 * error


def test_best_two_decoys_by_enumeration():
    """The joint law of a hand's two best cards, checked by listing every hand."""
    from itertools import combinations
    rng = np.random.default_rng(2)
    sims = rng.normal(0.3, 0.1, (2, 8))
    find = ListenerModel.build(sims, 0.1, 3, 2, 1).find_at(0)
    for clue in range(2):
        weight = np.exp(sims[clue] / 0.1)
        for card in range(8):
            pool = [x for x in range(8) if x != card]
            ratios = [weight[card] / (weight[card] + sum(sorted(weight[list(h)])[-2:]))
                      for h in combinations(pool, 3)]
            assert math.isclose(find[card, clue], np.mean(ratios), rel_tol=1e-5)


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


def _engine_turns(n_players, games, seed=21):
    """(predicted, expected) find rate and game of every turn of an ``ambiguity`` storyteller
    among ``softmax`` listeners, in batched-engine games (its seat rotating): ``predicted``
    is its model's prediction for the round, ``expected`` the chance that a listener votes
    for the card given the cards actually displayed (the listeners' softmax over the cards
    each may vote for; the same mean as the observed votes, without their noise)."""
    from dixit_lab.core.agent import make_agent
    from dixit_lab.core.cards import load_deck
    from dixit_lab.core.seeding import game_seed
    from dixit_lab.engine.batched import play_batch
    from dixit_lab.records.format import GameRecord

    rules, deck = get_rules("classic"), load_deck("dreams")
    teller = make_agent("ambiguity(target=0.5)")
    listener = make_agent("softmax(temperature=0.05)")
    tables = [[listener] * n_players for _ in range(games)]
    for g, table in enumerate(tables):
        table[g % n_players] = teller
    lines = play_batch(tables, rules, deck, [game_seed(seed, g) for g in range(games)])
    space = teller.space
    sims = np.asarray(space.similarity, dtype=np.float64)
    rows = []
    for g, line in enumerate(lines):
        record = GameRecord.from_json(line)
        for index, rnd in enumerate(record.rounds):
            if rnd.storyteller != g % n_players:
                continue
            clue = space.clue_index(rnd.clue)
            weight = np.exp((sims[clue] - sims[clue].max()) / 0.05)
            shown = np.array(rnd.display)
            owners = np.array(rnd.card_owner)
            chances = [weight[rnd.storyteller_card] / weight[shown[owners != seat]].sum()
                       for seat in range(n_players) if seat != rnd.storyteller]
            rows.append((teller.predicted_find(list(rnd.storyteller_hand),
                                               rnd.storyteller_card, rnd.clue, index),
                         float(np.mean(chances)), g, index))
    return np.array(rows)


@pytest.mark.parametrize(("n_players", "games"), [(3, 200), (4, 220), (5, 370), (6, 600)])
def test_model_predicts_the_votes_of_engine_games(n_players, games):
    """At every table size of the classic rules (three players: hands of 7, two decoys), over
    about 800 turns of an ambiguity storyteller aiming at 0.5 among softmax listeners: the
    mean predicted find rate is the mean chance of a find within sampling error (clustered
    by game) plus 0.01, in the first three rounds and after them too."""
    from dixit_lab.stats.intervals import cluster_sums

    turns = _engine_turns(n_players, games)
    for part in (turns, turns[turns[:, 3] < 3], turns[turns[:, 3] >= 3]):
        sums = cluster_sums(part[:, 1] - part[:, 0], part[:, 2])
        error = math.sqrt(sums.robust_variance())
        assert abs(sums.mean) < 0.01 + 3 * error, (n_players, sums.mean, error, len(part))


@pytest.mark.parametrize("n_players", [3, 6])
def test_a_rounds_table_is_the_table_of_its_pool_law(shipped_similarity, n_players):
    """A round's table is interpolated between three anchor rounds along the pool law's path;
    at every round it is within 0.004 of the table computed directly at that round's law (on
    150 clues)."""
    from dixit_lab.embeddings import get_space

    rules = get_rules("classic")
    model = listener_model(get_space("conse", "dreams", "default"), 0.05, rules, n_players,
                           0.05)
    clues = np.arange(0, len(shipped_similarity), len(shipped_similarity) // 150)
    direct, _ = softmax_tables(shipped_similarity[clues], 0.05, 0.05,
                               rules.hand_size_for(n_players), rules.cards_per_player(n_players),
                               n_players - 2, model.pool_law)
    for round_index, (find, _) in enumerate(direct):
        table = model.find_at(round_index)[:, clues].T
        assert np.abs(table - find).max() < 0.004, round_index
    # the hands lose the cards that match clues well: later rounds are found more often
    assert model.find_at(model.rounds - 1).mean() > model.find_at(0).mean() + 0.01


def test_a_hands_rows_are_the_rows_of_the_rounds_tables_without_building_them():
    """``rows_at`` gives exactly the rows of ``find_at`` / ``variance_at`` (interpolated from
    the anchors for those rows only), and keeps no table of its own."""
    from dixit_lab.embeddings import get_space

    rules = get_rules("classic")
    space = get_space("conse", "dreams", "default")
    fresh = ListenerModel.build(space.similarity, 0.05, rules.hand_size_for(6),
                                rules.cards_per_player(6), 4, 0.05,
                                HandDynamics.of(rules, 6, space.similarity.shape[1]))
    rng = np.random.default_rng(3)
    hands = [rng.choice(space.similarity.shape[1], 6, replace=False).tolist() for _ in range(40)]
    rounds = range(fresh.rounds + 2)
    rows = [fresh.rows_at(r, hand) for r in rounds for hand in hands]
    assert len(fresh.anchor_find) > 1 and fresh._tables == {}  # none built
    expected = [(fresh.find_at(r)[hand], fresh.variance_at(r)[hand]) for r in rounds
                for hand in hands]
    for (find, variance), (want_find, want_variance) in zip(rows, expected, strict=True):
        assert find.dtype == np.float32 and np.array_equal(find, want_find)
        assert np.array_equal(variance, want_variance)
    hand = hands[0]  # with the round's tables built, the rows come from them
    assert all(np.array_equal(a, b) for a, b in zip(fresh.rows_at(0, hand),
                                                     (fresh.find_at(0)[hand],
                                                      fresh.variance_at(0)[hand]), strict=True))
