"""Pairwise rating differences with bootstrap intervals: ``rating_pairs.csv``.

Readers compare players two at a time, and two overlapping per-player intervals do not mean
the difference is uncertain (the strengths of one fit are correlated). For every pair of
names this table gives the difference of Bradley–Terry strengths ``a - b`` with an interval
from the same game-resampling bootstrap as ``ratings.csv`` (the difference computed within
each replicate; the difference plus or minus the normal quantile times the replicates'
standard deviation, :func:`~dixit_lab.ratings.plackett_luce.bootstrap_interval`), the
probability that a seat of ``a`` finishes above a seat of ``b``
(with the same interval), and the bootstrap share of replicates in which ``a`` is stronger.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.special import expit

from dixit_lab.ratings import BOOTSTRAP
from dixit_lab.ratings.plackett_luce import bootstrap_interval, strength_replicates_data

if TYPE_CHECKING:
    from dixit_lab.ratings.data import RatingData

__all__ = ["PAIR_COLUMNS", "rating_pairs", "rating_pairs_data"]

PAIR_COLUMNS = ("player_a", "player_b", "difference", "ci_low", "ci_high",
                "a_above_b", "a_above_b_ci_low", "a_above_b_ci_high", "a_stronger_share")


def rating_pairs(games: Iterable[tuple[Sequence[str], Sequence[float]]], *,
                 bootstrap: int = BOOTSTRAP, seed: int = 0, confidence: float = 0.95
                 ) -> pd.DataFrame:
    """One row per pair of names, the stronger first (by fitted strength), columns
    :data:`PAIR_COLUMNS`. ``bootstrap`` 0 gives NaN intervals."""
    from dixit_lab.ratings.data import rating_data
    from dixit_lab.ratings.games import check_games

    return rating_pairs_data(rating_data(check_games(games)), bootstrap=bootstrap, seed=seed,
                             confidence=confidence)


def rating_pairs_data(data: RatingData, *, bootstrap: int = BOOTSTRAP, seed: int = 0,
                      confidence: float = 0.95,
                      replicates: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> pd.DataFrame:
    """:func:`rating_pairs` of :class:`~dixit_lab.ratings.data.RatingData` (``replicates``:
    the ``(strength, replicates)`` of
    :func:`~dixit_lab.ratings.plackett_luce.strength_replicates_data` with the same arguments,
    when already computed)."""
    if replicates is None:
        _, strength, boot = strength_replicates_data(data, bootstrap=max(bootstrap, 1),
                                                     seed=seed)
    else:
        strength, boot = replicates
    names = data.names
    order = sorted(range(len(names)), key=lambda i: (-strength[i], names[i]))
    rows = []
    for i, j in combinations(order, 2):
        difference = float(strength[i] - strength[j])
        if bootstrap > 0:
            both = boot[:, i] - boot[:, j]
            both = both[np.isfinite(both)]
            low, high = (float(x) for x in bootstrap_interval(difference, both, confidence))
            share = float((both > 0).mean()) if both.size else np.nan
        else:
            low = high = share = np.nan
        rows.append({"player_a": names[i], "player_b": names[j], "difference": difference,
                     "ci_low": float(low), "ci_high": float(high),
                     "a_above_b": float(expit(difference)),
                     "a_above_b_ci_low": float(expit(low)),
                     "a_above_b_ci_high": float(expit(high)),
                     "a_stronger_share": share})
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
