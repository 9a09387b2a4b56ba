"""An entrant's strength anchored to fixed ones: it recovers a known strength from games drawn
from the Bradley-Terry law, counts ties as half, and resamples whole clusters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from dixit_lab.ratings.anchored import anchored_rating, comparisons

ANCHORS = {"a": -1.0, "b": 0.0, "c": 0.8}


def _games(rng, name, strength, anchors, n):
    """n games of ``name`` and every anchored name, each pair's order drawn from the BT law
    (a game of one comparison a pair: a two-seat game each)."""
    games = []
    for _ in range(n):
        for other, value in anchors.items():
            won = rng.random() < expit(strength - value)
            games.append(((name, other), (1.0, 0.0) if won else (0.0, 1.0)))
    return games


def test_it_recovers_a_known_strength_within_its_interval():
    rng = np.random.default_rng(5)
    games = _games(rng, "e", 0.4, ANCHORS, 1500)
    rating = anchored_rating(games, "e", ANCHORS, seed=1)
    assert rating.ci_low < 0.4 < rating.ci_high
    assert abs(rating.strength - 0.4) < 0.15
    assert 0.05 < rating.width < 0.4
    assert rating.games == len(games)


def test_ties_are_half_a_win_and_unknown_names_are_refused():
    wins, counts = comparisons([(("e", "a", "b"), (3.0, 3.0, 1.0))], "e", ["a", "b"])
    assert wins.tolist() == [[0.5, 1.0]] and counts.tolist() == [[1.0, 1.0]]
    with pytest.raises(ValueError, match="'z'"):
        comparisons([(("e", "z"), (1.0, 0.0))], "e", ["a"])
    with pytest.raises(ValueError, match="is one of the anchored names"):
        anchored_rating([(("a", "b"), (1.0, 0.0))], "a", ANCHORS)


def test_a_cluster_is_resampled_whole():
    """Games in clusters of identical outcomes: as many independent facts as clusters, so the
    interval is wider than the games counted one by one say."""
    rng = np.random.default_rng(2)
    base = _games(rng, "e", 0.0, ANCHORS, 60)
    games = [game for game in base for _ in range(10)]  # each game ten times over
    clusters = [i for i in range(len(base)) for _ in range(10)]
    alone = anchored_rating(games, "e", ANCHORS)
    together = anchored_rating(games, "e", ANCHORS, clusters=clusters)
    assert together.strength == alone.strength
    assert together.width > 2.5 * alone.width
