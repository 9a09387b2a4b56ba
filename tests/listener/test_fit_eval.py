"""Held-out evaluation of fitted listener models."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.listener.fit_eval import holdout_mask, reliability_table, scores


def test_whole_games_are_held_out():
    games = np.repeat(np.arange(20), 7)
    held = holdout_mask(games, 0.2)
    held_games = set(games[held])
    assert len(held_games) == 4
    assert not held_games & set(games[~held])  # no game straddles the split
    with pytest.raises(ValueError, match="holdout share"):
        holdout_mask(games, 1.5)


def test_reliability_bins_are_equal_width_with_intervals_in_range():
    rng = np.random.default_rng(0)
    p = rng.random(4000)
    y = (rng.random(4000) < p).astype(float)
    rounds = np.repeat(np.arange(1000), 4)
    table = reliability_table(p, y, rounds, bins=10)
    assert len(table) == 10
    for row in table:
        assert row["low"] <= row["predicted"] <= row["high"]
        assert 0.0 <= row["ci_low"] <= row["observed"] <= row["ci_high"] <= 1.0
        assert row["ci_low"] - 0.02 <= row["predicted"] <= row["ci_high"] + 0.02
    assert sum(row["count"] for row in table) == 4000


def test_scores_of_a_perfect_and_a_flat_forecast():
    y = np.array([0.0, 1.0, 1.0, 0.0])
    assert scores(y, y)["brier"] == 0.0
    flat = scores(np.full(4, 0.5), y)
    assert np.isclose(flat["log_loss"], np.log(2)) and flat["votes"] == 4


def test_reliability_diagram_is_a_png(tmp_path):
    from PIL import Image

    from dixit_lab.listener.fit_eval import plot_reliability

    rng = np.random.default_rng(1)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(float)
    table = reliability_table(p, y, np.arange(500))
    info = {"reliability_fitted": table, "reliability_analytic": table,
            "holdout": {"games": 10, "votes": 500}}
    path = plot_reliability(info, str(tmp_path / "r.png"))
    Image.open(path).verify()
