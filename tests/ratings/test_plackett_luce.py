"""Ratings: OpenSkill and the batch Bradley–Terry fit recover a known ordering, handle ties,
repeated names, degenerate input, and are deterministic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from dixit_lab.ratings.plackett_luce import (
    games_from_records,
    openskill_ratings,
    plackett_luce,
    ratings_table,
    win_probability,
)
from dixit_lab.records.format import GameRecord

TRUE = {"p0": 1.5, "p1": 0.8, "p2": 0.0, "p3": -0.7, "p4": -1.6}
TRUE_ORDER = ["p0", "p1", "p2", "p3", "p4"]


def simulate(n_games, seed, strengths=TRUE, seats=5):
    """Games from the Plackett–Luce model: the finishing order is drawn best-first, each time
    choosing among the remaining seats with probability proportional to exp(strength).
    Score = seats - position, so the winner scores ``seats`` and the last scores 1."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    worth = np.exp(np.array([strengths[name] for name in names]))
    games = []
    for _ in range(n_games):
        pick = rng.permutation(len(names))[:seats]
        remaining = list(range(seats))
        scores = [0] * seats
        for position in range(seats):
            w = worth[pick[remaining]]
            seat = remaining.pop(rng.choice(len(remaining), p=w / w.sum()))
            scores[seat] = seats - position
        games.append((tuple(names[i] for i in pick), tuple(scores)))
    return games


@pytest.fixture(scope="module")
def games_2000():
    return simulate(2000, seed=11)


@pytest.fixture(scope="module")
def fit_2000(games_2000):
    return plackett_luce(games_2000, bootstrap=200, seed=0)


# -- recovery of a known ordering ---------------------------------------------------------------


def test_openskill_recovers_true_order(games_2000):
    frame = openskill_ratings(games_2000)
    assert list(frame.columns) == ["player", "mu", "sigma", "ordinal", "games"]
    assert list(frame["player"]) == TRUE_ORDER
    assert frame["ordinal"].is_monotonic_decreasing
    assert (frame["games"] == 2000).all()
    assert (frame["sigma"] < 25 / 3).all()


def test_batch_fit_recovers_true_strengths(fit_2000):
    frame = fit_2000
    assert list(frame.columns) == ["player", "strength", "ci_low", "ci_high", "games"]
    assert list(frame["player"]) == TRUE_ORDER
    assert frame["strength"].mean() == pytest.approx(0.0, abs=1e-9)
    truth = np.array([TRUE[name] for name in frame["player"]])
    truth -= truth.mean()
    assert np.abs(frame["strength"].to_numpy() - truth).max() < 0.15


def test_bootstrap_intervals_cover_truth_and_shrink(fit_2000):
    small = plackett_luce(simulate(200, seed=12), bootstrap=200, seed=0).set_index("player")
    large = fit_2000.set_index("player")
    truth = pd.Series(TRUE) - np.mean(list(TRUE.values()))
    for frame in (small, large):
        assert (frame["ci_low"] <= frame["strength"]).all()
        assert (frame["strength"] <= frame["ci_high"]).all()
        covered = (frame["ci_low"] <= truth[frame.index]) & (truth[frame.index] <= frame["ci_high"])
        assert covered.sum() >= 4
    width_small = small["ci_high"] - small["ci_low"]
    width_large = (large["ci_high"] - large["ci_low"])[width_small.index]
    # Ten times the games: widths should shrink by about sqrt(10) ~ 3.2.
    assert (width_large < 0.6 * width_small).all()
    assert width_large.mean() < 0.45 * width_small.mean()


def test_fit_matches_scipy_minimize():
    games = simulate(300, seed=3)
    prior_sd = 3.0
    frame = plackett_luce(games, bootstrap=0, prior_sd=prior_sd).set_index("player")
    names = sorted(TRUE)
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((5, 5))
    for players, scores in games:
        for a in range(len(players)):
            for b in range(len(players)):
                if a != b and scores[a] > scores[b]:
                    wins[index[players[a]], index[players[b]]] += 1

    def objective(s):
        diff = s[:, None] - s[None, :]
        value = -(wins * log_expit(diff)).sum() + 0.5 * (s**2).sum() / prior_sd**2
        p_win = np.exp(log_expit(diff))
        grad = ((wins + wins.T) * p_win).sum(axis=1) - wins.sum(axis=1) + s / prior_sd**2
        return value, grad

    result = minimize(objective, np.zeros(5), jac=True, method="BFGS", options={"gtol": 1e-6})
    assert np.abs(result.jac).max() < 1e-5
    np.testing.assert_allclose(frame.loc[names, "strength"], result.x, atol=1e-4)
    assert frame["ci_low"].isna().all() and frame["ci_high"].isna().all()


# -- ties and repeated names --------------------------------------------------------------------


def test_tie_counts_half_a_win():
    # a beats b 3 times, they tie twice: 4 wins out of 5 comparisons for a.
    games = [(("a", "b"), (5, 2))] * 3 + [(("b", "a"), (4, 4))] * 2
    frame = plackett_luce(games, bootstrap=0, prior_sd=1e4)
    assert win_probability(frame, "a", "b") == pytest.approx(0.8, abs=1e-6)
    assert win_probability(frame, "b", "a") == pytest.approx(0.2, abs=1e-6)


def test_all_ties_give_equal_ratings():
    games = [(("a", "b", "c"), (7, 7, 7))] * 20
    frame = plackett_luce(games, bootstrap=50)
    np.testing.assert_allclose(frame["strength"], 0.0, atol=1e-9)
    skill = openskill_ratings(games)
    assert skill["mu"].nunique() == 1 and skill["sigma"].nunique() == 1


def test_openskill_tie_is_not_a_win():
    skill = openskill_ratings([(("a", "b", "c"), (5, 5, 1))]).set_index("player")
    assert skill.loc["a", "mu"] == pytest.approx(skill.loc["b", "mu"])
    assert skill.loc["a", "mu"] > 25 > skill.loc["c", "mu"]


def test_name_in_several_seats():
    # t always finishes second of four behind one "s" seat and ahead of two: per game t wins 2
    # of its 3 comparisons with s; comparisons among the s seats carry no information.
    games = [(("s", "s", "t", "s"), (9, 3, 6, 1))] * 30
    frame = plackett_luce(games, bootstrap=20, prior_sd=1e4)
    assert win_probability(frame, "t", "s") == pytest.approx(2 / 3, abs=1e-6)
    assert dict(zip(frame["player"], frame["games"], strict=True)) == {"s": 30, "t": 30}
    skill = openskill_ratings(games).set_index("player")
    assert sorted(skill.index) == ["s", "t"]
    assert skill.loc["t", "mu"] > skill.loc["s", "mu"]
    assert (skill["games"] == 30).all()


def test_self_play_game_changes_nothing():
    base = [(("a", "b"), (3, 1))] * 5
    with_self = [*base, (("a", "a", "a"), (4, 2, 1))]
    pd.testing.assert_frame_equal(
        openskill_ratings(base).drop(columns="games"),
        openskill_ratings(with_self).drop(columns="games"),
    )
    pd.testing.assert_frame_equal(
        plackett_luce(base, bootstrap=0).drop(columns="games"),
        plackett_luce(with_self, bootstrap=0).drop(columns="games"),
    )


# -- degenerate input ---------------------------------------------------------------------------


def test_player_who_always_wins_stays_finite():
    rng = np.random.default_rng(5)
    others = ["b", "c", "d"]
    games = []
    for _ in range(50):
        loser_scores = rng.integers(0, 20, size=3)
        games.append((("champ", *others), (30, *loser_scores.tolist())))
    frame = plackett_luce(games, bootstrap=100, seed=1).set_index("player")
    assert np.isfinite(frame.to_numpy(dtype=float)).all()
    assert frame["strength"].idxmax() == "champ"
    assert frame.loc["champ", "strength"] < 20
    skill = openskill_ratings(games)
    assert skill["player"].iloc[0] == "champ"
    assert np.isfinite(skill[["mu", "sigma", "ordinal"]].to_numpy()).all()


def test_player_who_always_loses_stays_finite():
    games = [(("a", "b", "loser"), (5, 3, 0)), (("b", "a", "loser"), (4, 6, 1))] * 10
    frame = plackett_luce(games, bootstrap=30).set_index("player")
    assert np.isfinite(frame.to_numpy(dtype=float)).all()
    assert frame["strength"].idxmin() == "loser"


def test_disconnected_groups_are_finite_and_centred():
    games = [(("a", "b"), (2, 1))] * 10 + [(("c", "d"), (1, 2))] * 10
    frame = plackett_luce(games, bootstrap=0).set_index("player")
    assert frame["strength"].sum() == pytest.approx(0.0, abs=1e-9)
    assert frame.loc["a", "strength"] == pytest.approx(frame.loc["d", "strength"])


@pytest.mark.parametrize("rate", [openskill_ratings, plackett_luce, ratings_table])
def test_empty_input_raises(rate):
    with pytest.raises(ValueError, match="no games"):
        rate([])


@pytest.mark.parametrize("rate", [openskill_ratings, plackett_luce])
def test_malformed_games_raise(rate):
    with pytest.raises(ValueError, match="2 players but 3 scores"):
        rate([(("a", "b"), (1, 2, 3))])
    with pytest.raises(ValueError, match="at least two seats"):
        rate([(("a",), (1,))])


def test_single_player_name_raises():
    with pytest.raises(ValueError, match="two distinct names"):
        plackett_luce([(("x", "x", "x"), (3, 2, 1))] * 4)


def test_no_comparison_between_different_names_raises():
    with pytest.raises(ValueError, match="nothing to compare"):
        plackett_luce([(("a", "a"), (3, 1)), (("b", "b", "b"), (1, 2, 2))])


def test_bad_arguments_raise():
    games = [(("a", "b"), (2, 1))]
    with pytest.raises(ValueError, match="confidence"):
        plackett_luce(games, confidence=1.5)
    with pytest.raises(ValueError, match="bootstrap"):
        plackett_luce(games, bootstrap=-1)
    with pytest.raises(ValueError, match="unknown OpenSkill model"):
        openskill_ratings(games, model="Elo")
    with pytest.raises(KeyError, match="zed"):
        win_probability(plackett_luce(games, bootstrap=0), "a", "zed")


# -- determinism and order ----------------------------------------------------------------------


def test_same_seed_same_frame_and_seed_matters():
    games = simulate(150, seed=8)
    first = ratings_table(games, bootstrap=60, seed=4)
    pd.testing.assert_frame_equal(first, ratings_table(games, bootstrap=60, seed=4))
    other = ratings_table(games, bootstrap=60, seed=5)
    pd.testing.assert_series_equal(first["strength"], other["strength"])
    assert not np.allclose(first["ci_low"], other["ci_low"])


def test_batch_fit_ignores_game_order_but_openskill_does_not():
    games = simulate(200, seed=9)
    forward = plackett_luce(games, bootstrap=0)
    backward = plackett_luce(games[::-1], bootstrap=0)
    pd.testing.assert_frame_equal(forward, backward, atol=1e-9)
    os_forward = openskill_ratings(games).set_index("player")
    os_backward = openskill_ratings(games[::-1]).set_index("player")
    assert not np.allclose(os_forward["mu"], os_backward.loc[os_forward.index, "mu"])


# -- the joined table and records ---------------------------------------------------------------


def test_ratings_table_joins_both(games_2000):
    table = ratings_table(games_2000[:300], bootstrap=20)
    assert list(table.columns) == [
        "player", "games", "mu", "sigma", "ordinal", "strength", "ci_low", "ci_high",
    ]
    assert table["strength"].is_monotonic_decreasing
    assert list(table["player"]) == TRUE_ORDER
    assert table.notna().all().all()
    assert (table["games"] == 300).all()


def test_win_probability():
    strengths = {"a": 1.0, "b": 0.0}
    assert win_probability(strengths, "a", "b") == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert win_probability(strengths, "a", "a") == 0.5


def _record(agents, scores, meta=None):
    best = max(scores)
    return GameRecord(
        seed=0, spawn_key=(0,), rules="classic", rule_options={}, agents=tuple(agents),
        deck="numbered", rounds=(), final_scores=tuple(scores),
        winners=tuple(i for i, s in enumerate(scores) if s == best), end_reason="target_score",
        meta=meta or {},
    )


def test_games_from_records():
    records = [
        _record(["random", "softmax(beta=2)"], [30, 12]),
        _record(["random", "softmax(beta=2)"], [10, 31], meta={"players": ["rnd", "soft"]}),
    ]
    assert games_from_records(records) == [
        (("random", "softmax(beta=2)"), (30.0, 12.0)),
        (("rnd", "soft"), (10.0, 31.0)),
    ]
    renamed = games_from_records(records, lambda r: [a.split("(")[0] for a in r.agents])
    assert renamed[0][0] == ("random", "softmax")
    given = games_from_records(records, [["x", "y"], ["y", "x"]])
    assert [players for players, _ in given] == [("x", "y"), ("y", "x")]
    with pytest.raises(ValueError, match="one entry per|entries"):
        games_from_records(records, [["x", "y"]])
    with pytest.raises(ValueError, match="3 player names for 2 seats"):
        games_from_records(records[:1], [["x", "y", "z"]])
