"""Ratings of players from finished games: OpenSkill and a batch Bradley–Terry fit.

Everything here takes a sequence of *games*; a game is a pair ``(players, scores)``:

* ``players`` - a tuple of player names, one per seat. The same name may sit in several seats of
  one game (four copies of a ``"softmax"`` listener, say). Each seat is then a separate
  competitor *instance* of that name, but every instance shares the name's single rating.
* ``scores`` - the final scores, one per seat. A higher score is a better finish; equal scores
  are a tie in rank.

:func:`games_from_records` builds games from :class:`~dixit_lab.records.format.GameRecord` objects.

Two ratings are provided, because they answer different questions:

:func:`openskill_ratings`
    The OpenSkill (Weng–Lin) online Bayesian rating: each game updates a Gaussian belief
    ``N(mu, sigma²)`` per name, in the order the games are given. Cheap, incremental, and the
    usual choice for a leaderboard - but the result depends on the order of the games.

:func:`plackett_luce`
    A batch maximum-a-posteriori fit of one log-strength per name from *all* games at once,
    which does not depend on game order, with bootstrap confidence intervals. Strengths are on
    the Plackett–Luce / Bradley–Terry log scale: ``win_probability`` turns a difference of
    strengths into the probability that one name finishes above another.

:func:`ratings_table` joins both into the table that is written to ``ratings.csv``.

Randomness: the only random draws (the bootstrap) come from a ``numpy.random.Generator`` built
from an explicit ``seed`` argument, so the same input and seed give an identical result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit, ndtri

from dixit_lab.ratings import BOOTSTRAP
from dixit_lab.ratings.data import RatingData, rating_data
from dixit_lab.ratings.games import Game, check_games, games_from_records
from dixit_lab.ratings.openskill import (  # noqa: F401 (re-exported)
    OPENSKILL_MODELS,
    openskill_data,
    openskill_ratings,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "Game",
    "bootstrap_interval",
    "games_from_records",
    "openskill_ratings",
    "plackett_luce",
    "ratings_table",
    "strength_replicates",
    "win_probability",
]

# --------------------------------------------------------------------------------------------
# Batch Bradley–Terry (pairwise Plackett–Luce) fit
# --------------------------------------------------------------------------------------------




def _objective(strengths: np.ndarray, wins: np.ndarray, penalty: float) -> np.ndarray:
    """Penalised negative log-likelihood, one value per row of a batch.

    ``strengths`` is ``(batch, n)``; ``wins`` is ``(batch, n, n)``.
    """
    diff = strengths[:, :, None] - strengths[:, None, :]
    nll = -(wins * log_expit(diff)).sum(axis=(1, 2))
    return nll + 0.5 * penalty * (strengths**2).sum(axis=1)


def _fit_batch(
    wins: np.ndarray,
    penalty: float,
    start: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> np.ndarray:
    """Minimise the penalised Bradley–Terry objective for a batch of win matrices at once.

    Damped Newton's method with a backtracking (Armijo) line search, vectorised over the batch.
    The objective is strictly convex (log-likelihood concave, plus a ridge), so this converges
    to the unique minimum from any start; the line search guards against overshooting when a
    name wins (or loses) almost every comparison.

    Args:
        wins: ``(batch, n, n)``, ``wins[b, i, j]`` = wins of ``i`` over ``j`` (zero diagonal).
        penalty: ridge strength ``1 / prior_sd**2``.
        start: ``(batch, n)`` or ``(n,)`` starting strengths (warm start).
    """
    batch, n, _ = wins.shape
    s = np.broadcast_to(start, (batch, n)).astype(float, copy=True)
    total = wins + wins.transpose(0, 2, 1)  # comparisons per pair
    won = wins.sum(axis=2)
    eye = np.eye(n)
    active = np.ones(batch, dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        sa, ta, wa = s[active], total[active], wins[active]
        p = expit(sa[:, :, None] - sa[:, None, :])
        grad = (ta * p).sum(axis=2) - won[active] + penalty * sa
        curv = ta * p * (1.0 - p)
        hess = -curv + eye * (curv.sum(axis=2) + penalty)[:, :, None]
        step = -np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        slope = (grad * step).sum(axis=1)  # negative: a descent direction
        f0 = _objective(sa, wa, penalty)
        t = np.ones(len(sa))
        for _ in range(50):
            f1 = _objective(sa + t[:, None] * step, wa, penalty)
            bad = f1 > f0 + 1e-4 * t * slope
            if not bad.any():
                break
            t = np.where(bad, 0.5 * t, t)
        s[active] = sa + t[:, None] * step
        done = np.abs(t[:, None] * step).max(axis=1) < tol
        active_idx = np.flatnonzero(active)
        active[active_idx[done]] = False
    return s


def plackett_luce(
    games: Iterable[tuple[Sequence[str], Sequence[float]]],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
    prior_sd: float = 3.0,
) -> pd.DataFrame:
    """Fit one log-strength per name from all games at once, with bootstrap intervals.

    **Model.** Every pair of seats in a game that belong to *different* names is a comparison:
    the seat with the higher final score wins it, and a tie counts as half a win for each. The
    log-strengths ``s`` maximise the Bradley–Terry likelihood of all comparisons,
    ``P(i beats j) = 1 / (1 + exp(-(s_i - s_j)))``.

    Why pairwise Bradley–Terry rather than the full Plackett–Luce ranking likelihood:

    * Under Plackett–Luce, the chance that ``i`` finishes above ``j`` is *exactly* the
      Bradley–Terry formula above, so these strengths estimate the Plackett–Luce log-worths
      (a consistent "composite likelihood" estimate) and live on the same scale.
    * Dixit final scores tie often; "tie = half a win" handles ties of any size simply, while
      the Plackett–Luce likelihood needs an extra tie model.
    * The likelihood only depends on the summed win counts, so each bootstrap replicate is one
      sparse matrix product and a small convex fit - fast.

    The comparisons within one game are not independent, so textbook standard errors would be
    too narrow; the intervals here come from resampling whole **games** instead.

    **Identifiability and prior.** Only differences of strengths matter, so we add a Gaussian
    prior ``s_i ~ N(0, prior_sd²)`` (a ridge penalty ``sum(s²) / (2 prior_sd²)``). It makes the
    fit unique even when a name always wins or always loses (its strength stays finite) or the
    names split into groups that never meet, and it forces the mean log-strength to 0 (at the
    optimum the likelihood's gradient sums to zero, so the penalty's gradient must too). With
    the default ``prior_sd = 3`` - a strength gap of 3 already means a 95 % win chance - the
    prior is negligible whenever a name has more than a handful of games.

    **Fit.** Newton's method with a line search on the convex penalised negative
    log-likelihood (see ``_fit_batch``); bootstrap replicates are fitted together, vectorised,
    warm-started from the full-data fit.

    **Bootstrap.** ``bootstrap`` times, draw as many games as there are, with replacement, from
    ``np.random.default_rng(seed)``, refit, and report the strength plus or minus the normal
    quantile times the replicates' standard deviation (:func:`bootstrap_interval`; games that
    hold few distinct patterns of names and ranks draw each replicate's pattern counts from their
    multinomial law instead, the same resample in law: ``_bootstrap``). A name that is
    missing from a resample has no strength in that replicate (it is left out of its interval).

    Args:
        games: ``(players, scores)`` pairs, see the module docstring.
        bootstrap: number of bootstrap replicates; 0 gives ``NaN`` intervals.
        seed: seed of the bootstrap's random generator.
        confidence: coverage of the interval, e.g. 0.95 (1.96 standard deviations).
        prior_sd: standard deviation of the Gaussian prior on each log-strength.

    Returns:
        A DataFrame with columns ``player, strength, ci_low, ci_high, games`` sorted by
        ``strength`` descending (ties broken by name).

    Raises:
        ValueError: on empty or malformed games, on fewer than two distinct names, if no game
            has two different names (nothing to compare), or on bad arguments.
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if not prior_sd > 0.0:
        raise ValueError(f"prior_sd must be positive, got {prior_sd}")
    return plackett_luce_data(rating_data(check_games(games)), bootstrap=bootstrap, seed=seed,
                              confidence=confidence, prior_sd=prior_sd)


def bootstrap_interval(estimate: np.ndarray | float, replicates: np.ndarray,
                       confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The interval of every rating table: ``estimate`` plus or minus the normal quantile
    times the standard deviation of its bootstrap ``replicates`` (over axis 0, NaN left out;
    NaN bounds where fewer than two replicates are finite). Over 400 tournaments of
    identical twins at rotation and sampled schedules of 30 and 200 games its 95% interval
    held the truth 94.8-96.5% of the time (the wider end at 30 games), where the percentile
    interval of the same replicates held it 93.4-94.6% (``benchmarks/coverage_pairs.py``,
    docs/statistics.md)."""
    replicates = np.asarray(replicates, dtype=float)
    finite = np.isfinite(replicates).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(finite >= 2, np.nanstd(np.where(finite >= 2, replicates, 0.0),
                                                  axis=0, ddof=1), np.nan)
    half = float(ndtri(0.5 + confidence / 2.0)) * spread
    return np.asarray(estimate - half, dtype=float), np.asarray(estimate + half, dtype=float)


def _fit_all(data: RatingData, penalty: float) -> np.ndarray:
    n_names = len(data.names)
    total = np.asarray(data.wins.T @ data.counts()).reshape(1, n_names, n_names)
    strength = _fit_batch(total, penalty, np.zeros(n_names))[0]
    return strength - strength.mean()  # already ~0 at the optimum; removes rounding drift


def plackett_luce_data(data: RatingData, *, bootstrap: int = BOOTSTRAP, seed: int = 0,
                       confidence: float = 0.95, prior_sd: float = 3.0,
                       replicates: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> pd.DataFrame:
    """:func:`plackett_luce` of games already reduced to :class:`RatingData`; ``replicates``
    are the ``(strength, bootstrap replicates)`` of :func:`strength_replicates_data` with
    the same arguments, when already computed (they are not computed again)."""
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    n_names = len(data.names)
    if n_names < 2:
        raise ValueError(
            f"only one player name ({data.names[0]!r}): strengths compare names, so at least "
            "two distinct names are needed"
        )
    if data.wins.nnz == 0:
        raise ValueError("no game has seats of two different names: nothing to compare")
    penalty = 1.0 / prior_sd**2
    strength = _fit_all(data, penalty) if replicates is None else replicates[0]

    ci_low = np.full(n_names, np.nan)
    ci_high = np.full(n_names, np.nan)
    if bootstrap > 0:
        boot = _bootstrap(data, strength, penalty, bootstrap, seed) if replicates is None \
            else replicates[1]
        ci_low, ci_high = bootstrap_interval(strength, boot, confidence)

    played = data.games_played()
    frame = pd.DataFrame(
        {
            "player": list(data.names),
            "strength": strength,
            "ci_low": ci_low,
            "ci_high": ci_high,
            "games": [played[name] for name in data.names],
        }
    )
    return frame.sort_values(["strength", "player"], ascending=[False, True], ignore_index=True)


#: the bootstrap draws a replicate's pattern counts from their multinomial law when the games
#: hold at most one distinct pattern per this many games (a fixed table: a few hundred
#: patterns for a million games), else it draws the games themselves
_MULTINOMIAL_FROM = 16


def _bootstrap(data: RatingData, strength: np.ndarray, penalty: float, bootstrap: int,
               seed: int) -> np.ndarray:
    """(bootstrap, names) strengths refitted on games resampled with replacement from
    ``np.random.default_rng(seed)``; NaN for a name missing from a resample.

    A resample of ``G`` games drawn with replacement holds each pattern a number of times that
    follows the multinomial law of ``G`` draws over the patterns' shares, and the fit reads
    nothing else of it. So when the patterns are few (at most one per
    ``_MULTINOMIAL_FROM`` games) a replicate's counts are drawn from that law directly,
    ``rng.multinomial(G, counts / G)``: microseconds, where drawing a million games is
    milliseconds a replicate. With many patterns (mixed tables of many names) replicate ``b``
    draws ``G`` games, the ``b``-th ``G`` integers of the generator. Either way memory stays
    that of one resample however many replicates."""
    n_names = len(data.names)
    rng = np.random.default_rng(seed)
    boot_wins = np.empty((bootstrap, n_names * n_names))
    seen = np.empty((bootstrap, n_names), dtype=bool)
    counts = data.counts()
    shares = counts / counts.sum() if data.games else counts
    by_pattern = data.games > 0 and len(counts) * _MULTINOMIAL_FROM <= data.games
    for b in range(bootstrap):
        drawn = (rng.multinomial(data.games, shares).astype(np.float64) if by_pattern
                 else data.counts(rng.integers(0, data.games, size=data.games)))
        boot_wins[b] = data.wins.T @ drawn
        seen[b] = (data.present.T @ drawn) > 0
    boot = _fit_batch(boot_wins.reshape(bootstrap, n_names, n_names), penalty, strength)
    return np.where(seen, boot, np.nan)


def strength_replicates(games: Iterable[tuple[Sequence[str], Sequence[float]]], *,
                        bootstrap: int = BOOTSTRAP, seed: int = 0, prior_sd: float = 3.0
                        ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The names, their fitted strengths (as :func:`plackett_luce`) and the (bootstrap,
    names) bootstrap replicates of the same resamples (same ``seed``) that give
    :func:`plackett_luce` its intervals: for intervals on functions of several strengths."""
    return strength_replicates_data(rating_data(check_games(games)), bootstrap=bootstrap,
                                    seed=seed, prior_sd=prior_sd)


def strength_replicates_data(data: RatingData, *, bootstrap: int = BOOTSTRAP, seed: int = 0,
                             prior_sd: float = 3.0
                             ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """:func:`strength_replicates` of :class:`RatingData`."""
    if len(data.names) < 2 or data.wins.nnz == 0:
        raise ValueError("need games with seats of two different names to compare")
    penalty = 1.0 / prior_sd**2
    strength = _fit_all(data, penalty)
    return data.names, strength, _bootstrap(data, strength, penalty, bootstrap, seed)


def win_probability(strengths: pd.DataFrame | Mapping[str, float], a: str, b: str) -> float:
    """Probability that a seat of ``a`` finishes above a seat of ``b`` in the same game.

    Uses the Bradley–Terry formula ``1 / (1 + exp(-(s_a - s_b)))`` on strengths from
    :func:`plackett_luce`; under the Plackett–Luce model this is exact, whatever the other seats.
    A tie counts as half, as in the fit.

    Args:
        strengths: the DataFrame returned by :func:`plackett_luce` (or :func:`ratings_table`),
            or a mapping from name to log-strength.
        a, b: player names.

    Raises:
        KeyError: if a name has no strength.
    """
    if isinstance(strengths, pd.DataFrame):
        table = dict(zip(strengths["player"], strengths["strength"], strict=True))
    else:
        table = dict(strengths)
    for name in (a, b):
        if name not in table:
            raise KeyError(f"no strength for player {name!r}")
    return float(expit(table[a] - table[b]))


# --------------------------------------------------------------------------------------------
# Both together
# --------------------------------------------------------------------------------------------


def ratings_table(
    games: Iterable[tuple[Sequence[str], Sequence[float]]],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
    model: str = "PlackettLuce",
) -> pd.DataFrame:
    """OpenSkill and batch strengths side by side: the table written to ``ratings.csv``.

    Args:
        games: ``(players, scores)`` pairs, see the module docstring.
        bootstrap, seed, confidence: passed to :func:`plackett_luce`.
        model: passed to :func:`openskill_ratings`.

    Returns:
        One row per name with columns
        ``player, games, mu, sigma, ordinal, strength, ci_low, ci_high``, sorted by ``strength``
        descending (ties broken by name).
    """
    checked = check_games(games)
    return ratings_table_data(rating_data(checked), bootstrap=bootstrap, seed=seed,
                              confidence=confidence, model=model)


def ratings_table_data(data: RatingData, *, bootstrap: int = BOOTSTRAP, seed: int = 0,
                       confidence: float = 0.95, model: str = "PlackettLuce",
                       replicates: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> pd.DataFrame:
    """:func:`ratings_table` of :class:`RatingData` (``replicates``: see
    :func:`plackett_luce_data`)."""
    skill = openskill_data(data, model=model)
    batch = plackett_luce_data(data, bootstrap=bootstrap, seed=seed, confidence=confidence,
                               replicates=replicates)
    table = batch.drop(columns="games").merge(skill, on="player", how="outer", validate="1:1")
    table = table[["player", "games", "mu", "sigma", "ordinal", "strength", "ci_low", "ci_high"]]
    return table.sort_values(["strength", "player"], ascending=[False, True], ignore_index=True)
