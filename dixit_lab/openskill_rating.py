"""OpenSkill (Weng–Lin) online ratings of player names (see :mod:`dixit_lab.ratings`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.rating_games import check_games, games_played

__all__ = ["OPENSKILL_MODELS", "openskill_ratings"]

OPENSKILL_MODELS: tuple[str, ...] = (
    "PlackettLuce",
    "BradleyTerryFull",
    "BradleyTerryPart",
    "ThurstoneMostellerFull",
    "ThurstoneMostellerPart",
)


def _competition_ranks(scores: Sequence[float]) -> list[int]:
    """1-based ranks, best first, ties sharing a rank: scores (5, 7, 5, 2) -> (2, 1, 2, 4)."""
    return [1 + sum(other > score for other in scores) for score in scores]


# --------------------------------------------------------------------------------------------
# OpenSkill
# --------------------------------------------------------------------------------------------


def openskill_ratings(
    games: Iterable[tuple[Sequence[str], Sequence[float]]],
    *,
    model: str = "PlackettLuce",
    **model_options: Any,
) -> pd.DataFrame:
    """Rate names with OpenSkill, one game after another in the order given.

    Each name starts at the model's prior, ``N(mu=25, sigma=25/3)`` by default. For every game,
    each seat is a "team of one"; seats are ranked by their final score (equal scores are a
    tie). OpenSkill then gives a posterior ``(mu, sigma)`` per seat.

    **A name in several seats.** Its seats enter the update as separate teams, each starting
    from the name's current rating, and the name's new rating is the *average* of its seats'
    posteriors (``mu`` and ``sigma`` averaged separately). Averaging - rather than applying
    every seat's change in turn - keeps one game from moving a name further just because it
    held more seats. A game whose seats all belong to one name carries no information about
    ratings and leaves them unchanged (it still counts in ``games``).

    **Order matters.** OpenSkill is an online filter: each update uses the ratings as they stand
    after all earlier games, and ``sigma`` is inflated by ``tau`` at each game, so recent games
    weigh more. Shuffling the same games gives (slightly) different ratings. The order given is
    processed deterministically; use :func:`plackett_luce` for an order-free estimate.

    Args:
        games: ``(players, scores)`` pairs, see the module docstring.
        model: name of an ``openskill.models`` class: ``"PlackettLuce"`` (default),
            ``"BradleyTerryFull"``, ``"BradleyTerryPart"``, ``"ThurstoneMostellerFull"`` or
            ``"ThurstoneMostellerPart"``.
        **model_options: passed to the model's constructor (``mu``, ``sigma``, ``beta``,
            ``tau``, ...).

    Returns:
        A DataFrame with columns ``player, mu, sigma, ordinal, games``, one row per name, sorted
        by ``ordinal`` (``mu - 3 * sigma``, a conservative skill estimate) descending.

    Raises:
        ValueError: on empty or malformed games, or an unknown ``model``.
    """
    from openskill import models as openskill_models

    if model not in OPENSKILL_MODELS:
        raise ValueError(f"unknown OpenSkill model {model!r}; choose one of {OPENSKILL_MODELS}")
    checked = check_games(games)
    rater = getattr(openskill_models, model)(**model_options)

    ratings: dict[str, tuple[float, float]] = {}
    prior = rater.rating()
    for players, scores in checked:
        for name in players:
            ratings.setdefault(name, (prior.mu, prior.sigma))
        if len(set(players)) < 2:
            continue
        teams = [[rater.rating(mu=ratings[name][0], sigma=ratings[name][1])] for name in players]
        posterior = rater.rate(teams, ranks=_competition_ranks(scores))
        by_name: dict[str, list[tuple[float, float]]] = {}
        for name, (seat,) in zip(players, posterior, strict=True):
            by_name.setdefault(name, []).append((seat.mu, seat.sigma))
        for name, seats in by_name.items():
            ratings[name] = (
                float(np.mean([mu for mu, _ in seats])),
                float(np.mean([sigma for _, sigma in seats])),
            )

    played = games_played(checked)
    rows = [
        {"player": name, "mu": mu, "sigma": sigma, "ordinal": mu - 3.0 * sigma,
         "games": played[name]}
        for name, (mu, sigma) in ratings.items()
    ]
    frame = pd.DataFrame(rows, columns=["player", "mu", "sigma", "ordinal", "games"])
    return frame.sort_values(["ordinal", "player"], ascending=[False, True], ignore_index=True)
