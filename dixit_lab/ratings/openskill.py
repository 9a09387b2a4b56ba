"""OpenSkill (Weng–Lin) online ratings of player names (see
:mod:`dixit_lab.ratings.plackett_luce`)."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dixit_lab.ratings.games import check_games

if TYPE_CHECKING:
    from dixit_lab.ratings.data import RatingData

__all__ = ["OPENSKILL_MODELS", "openskill_data", "openskill_ratings"]

OPENSKILL_MODELS: tuple[str, ...] = (
    "PlackettLuce",
    "BradleyTerryFull",
    "BradleyTerryPart",
    "ThurstoneMostellerFull",
    "ThurstoneMostellerPart",
)


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
    from dixit_lab.ratings.data import rating_data

    return openskill_data(rating_data(check_games(games)), model=model, **model_options)


def openskill_data(data: RatingData, *, model: str = "PlackettLuce", **model_options: Any
                   ) -> pd.DataFrame:
    """:func:`openskill_ratings` of games reduced to :class:`~dixit_lab.ratings.data.RatingData`
    (in the same game order)."""
    from openskill import models as openskill_models

    if model not in OPENSKILL_MODELS:
        raise ValueError(f"unknown OpenSkill model {model!r}; choose one of {OPENSKILL_MODELS}")
    if model == "PlackettLuce" and not model_options:
        return _frame(_plackett_luce_defaults(data), data.games_played())
    rater = getattr(openskill_models, model)(**model_options)
    patterns = [(tuple(data.names[i] for i in seats), [int(r) for r in ranks])
                for seats, ranks in zip(data.seats, data.ranks, strict=True)]
    ratings: dict[str, tuple[float, float]] = {}
    prior = rater.rating()
    for u in data.pattern.tolist():
        players, ranks = patterns[u]
        for name in players:
            if name not in ratings:
                ratings[name] = (prior.mu, prior.sigma)
        if len(set(players)) < 2:
            continue
        teams = [[rater.rating(mu=ratings[name][0], sigma=ratings[name][1])] for name in players]
        posterior = rater.rate(teams, ranks=ranks)
        by_name: dict[str, list[tuple[float, float]]] = {}
        for name, (seat,) in zip(players, posterior, strict=True):
            by_name.setdefault(name, []).append((seat.mu, seat.sigma))
        for name, seats in by_name.items():
            ratings[name] = (
                float(np.mean([mu for mu, _ in seats])),
                float(np.mean([sigma for _, sigma in seats])),
            )

    return _frame(ratings, data.games_played())


def _frame(ratings: dict[str, tuple[float, float]], played: dict[str, int]) -> pd.DataFrame:
    rows = [
        {"player": name, "mu": mu, "sigma": sigma, "ordinal": mu - 3.0 * sigma,
         "games": played[name]}
        for name, (mu, sigma) in ratings.items()
    ]
    frame = pd.DataFrame(rows, columns=["player", "mu", "sigma", "ordinal", "games"])
    return frame.sort_values(["ordinal", "player"], ascending=[False, True], ignore_index=True)


#: games from which the walk is compiled, when Numba is installed (below, loading Numba's
#: cache costs more than it saves)
_COMPILED_FROM_GAMES = 50_000
#: ``openskill.models.PlackettLuce()``'s mu, sigma, beta, tau and kappa
_DEFAULTS = (25.0, 25.0 / 3.0, 25.0 / 6.0, 25.0 / 300.0, 0.0001)
_Plan = tuple[list[str], list[int], list[tuple[int, int]], list[list[int]], bool]


def _plackett_luce_defaults(data: RatingData, compiled: bool = False
                            ) -> dict[str, tuple[float, float]]:
    """``openskill.models.PlackettLuce()``'s ratings of every game in order, computed as the
    library computes them (same operations in the same order: the same floats; teams of one
    seat, no weights, margins or balance), without its per-game objects: 20 times faster in
    Python (``tests/test_openskill_rating.py`` compares the two), about 50 times more with the
    ``fast`` extra from ``_COMPILED_FROM_GAMES`` games
    (the same floats: ``tests/ratings/test_openskill_kernel.py``)."""
    plans = _plans(data)
    walk = _compiled_walk() if compiled or data.games >= _COMPILED_FROM_GAMES else None
    if walk is not None:
        index = {name: i for i, name in enumerate(data.names)}
        mu, sigma, first_seen = walk([([index[n] for n in names], a, below, ahead, rated)
                                      for names, a, below, ahead, rated in plans],
                                     data.pattern, len(data.names), _DEFAULTS)
        order = sorted((int(first_seen[i]), i) for i in range(len(data.names))
                       if first_seen[i] >= 0)
        return {data.names[i]: (float(mu[i]), float(sigma[i])) for _, i in order}
    return _plackett_luce_python(plans, data.pattern)


def prepare_walk(games: int) -> None:
    """Load what :func:`openskill_data` will use for ``games`` games: the compiled walk (Numba
    and its cached machine code, a fraction of a second) when a run this long uses it, by
    walking two games; nothing otherwise."""
    if games < _COMPILED_FROM_GAMES or _compiled_walk() is None:
        return
    from dixit_lab.ratings.data import rating_data

    _plackett_luce_defaults(rating_data([(("a", "b"), (1.0, 0.0)), (("b", "a"), (2.0, 2.0))]),
                            compiled=True)


def _compiled_walk() -> Any:
    """The compiled walk, or None where Numba is missing or does not import (a broken
    install must not cost a long run its tables: the Python walk gives the same floats)."""
    if importlib.util.find_spec("numba") is None:
        return None
    try:
        from dixit_lab.ratings.openskill_kernel import walk
    except Exception:  # any failure to import Numba: the Python walk
        return None
    return walk


def _plans(data: RatingData) -> list[_Plan]:
    """Per pattern: the seats' names in rank order, how many seats share each rank, the (i,
    q) pairs with rank i >= rank q (i-major), the seats ranked at or above each seat, and
    whether the game is rated (two names or more)."""
    plans = []
    for seats, ranks in zip(data.seats, data.ranks, strict=True):
        order = sorted(range(len(ranks)), key=lambda i: int(ranks[i]))  # stable, as _unwind
        rank = [int(ranks[i]) for i in order]
        # openskill re-ranks the sorted ranks 0.. by first position (ties share)
        first = {value: position for position, value in reversed(list(enumerate(rank)))}
        rank = [first[value] for value in rank]
        a = [rank.count(value) for value in rank]
        names = [data.names[int(seats[i])] for i in order]
        below = [(i, q) for i in range(len(rank)) for q in range(len(rank))
                 if rank[i] >= rank[q]]
        ahead = [[q for q in range(len(rank)) if rank[q] <= rank[i]] for i in range(len(rank))]
        plans.append((names, a, below, ahead, len(set(names)) > 1))
    return plans


def _plackett_luce_python(plans: list[_Plan], pattern: np.ndarray
                          ) -> dict[str, tuple[float, float]]:
    """The walk over the games (``pattern``: each game's plan), in Python."""
    mu0, sigma0, beta, tau, kappa = _DEFAULTS
    tau_squared, beta_squared = tau * tau, beta**2
    ratings: dict[str, tuple[float, float]] = {}
    for u in pattern.tolist():
        names, a, below, ahead, rated = plans[u]
        for name in names:
            if name not in ratings:
                ratings[name] = (mu0, sigma0)
        if not rated:
            continue
        k = len(names)
        mus = [ratings[name][0] for name in names]
        sigmas = [math.sqrt(ratings[name][1] * ratings[name][1] + tau_squared)
                  for name in names]
        squares = [(sigma * 1.0) ** 2 for sigma in sigmas]
        collective = 0.0
        for square in squares:
            collective += square + beta_squared
        c = math.sqrt(collective)
        exps = [math.exp(mu / c) for mu in mus]
        sum_q = [0.0] * k
        for i, q in below:  # every (i, q) with rank[i] >= rank[q], i-major
            sum_q[q] += exps[i]
        by_name: dict[str, list[tuple[float, float]]] = {}
        for i in range(k):
            omega = 0.0
            delta = 0.0
            e = exps[i]
            for q in ahead[i]:  # rank[q] <= rank[i], in order
                share = e / sum_q[q]
                delta += share * (1 - share) / a[q]
                if q == i:
                    omega += (1 - share) / a[q]
                else:
                    omega -= share / a[q]
            square = squares[i]
            omega *= square / c
            delta *= square / c**2
            delta *= math.sqrt(square) / c
            sigma = sigmas[i]
            ratio = sigma**2 / square
            mu = mus[i] + ratio * omega * 1.0 if omega >= 0 else mus[i] + ratio * omega / 1.0
            sigma *= math.sqrt(max(1 - ratio * delta * 1.0, kappa))
            by_name.setdefault(names[i], []).append((mu, sigma))
        for name, seats_of in by_name.items():
            if len(seats_of) == 1:
                ratings[name] = seats_of[0]
            else:
                ratings[name] = (float(np.mean([m for m, _ in seats_of])),
                                 float(np.mean([s for _, s in seats_of])))
    return ratings
