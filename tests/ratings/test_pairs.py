"""Pairwise rating differences: the same fit and bootstrap as ratings.csv, per pair."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dixit_lab.ratings.pairs import PAIR_COLUMNS, rating_pairs
from dixit_lab.ratings.plackett_luce import plackett_luce, strength_replicates, win_probability


def _games(n=120, seed=0):
    rng = np.random.default_rng(seed)
    skill = {"strong": 1.0, "middle": 0.5, "weak": 0.0}
    games = []
    for _ in range(n):
        names = ("strong", "middle", "weak")
        scores = tuple(float(skill[x] + rng.normal(0, 1)) for x in names)
        games.append((names, scores))
    return games


def test_pairs_match_the_fit_and_its_bootstrap():
    games = _games()
    pairs = rating_pairs(games, bootstrap=100, seed=3)
    assert list(pairs.columns) == list(PAIR_COLUMNS) and len(pairs) == 3
    fit = plackett_luce(games, bootstrap=0)
    first = pairs.iloc[0]
    assert (first["player_a"], first["player_b"]) == ("strong", "middle")
    strength = dict(zip(fit["player"], fit["strength"], strict=True))
    assert math.isclose(first["difference"], strength["strong"] - strength["middle"],
                        rel_tol=1e-9)
    assert math.isclose(first["a_above_b"], win_probability(fit, "strong", "middle"))
    names, _, boot = strength_replicates(games, bootstrap=100, seed=3)
    i, j = names.index("strong"), names.index("weak")
    low, high = np.quantile(boot[:, i] - boot[:, j], [0.025, 0.975])
    row = pairs[(pairs.player_a == "strong") & (pairs.player_b == "weak")].iloc[0]
    assert math.isclose(row["ci_low"], low) and math.isclose(row["ci_high"], high)
    assert row["ci_low"] > 0 and row["a_stronger_share"] == 1.0
    assert (pairs["difference"] >= 0).all()
    assert (pairs["ci_low"] <= pairs["difference"]).all()


def test_no_bootstrap_gives_nan_intervals():
    pairs = rating_pairs(_games(30), bootstrap=0)
    assert pairs["ci_low"].isna().all() and pd.notna(pairs["difference"]).all()
