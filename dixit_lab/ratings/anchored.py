"""A rating anchored to fixed strengths: one entrant's Bradley–Terry strength when every other
name's strength is held at a published value (a league's reference pool,
:mod:`dixit_lab.league.pool`), so that its number means the same in every run that uses them.

The model is :func:`~dixit_lab.ratings.plackett_luce.plackett_luce`'s: every pair of seats of
the entrant and an anchored name in a game is a comparison, the higher final score wins it, a
tie is half a win each, ``P(entrant beats j) = 1 / (1 + exp(-(s - s_j)))``, with the same ridge
prior (standard deviation 3 around 0: a pool's strengths are published with their median at
0). Only ``s`` is free, so the fit is one-dimensional; comparisons between two anchored names
say nothing of ``s`` and are left out.

The interval is the one of every rating table here
(:func:`~dixit_lab.ratings.plackett_luce.bootstrap_interval`: the estimate plus or minus 1.96
bootstrap standard deviations), over **clusters** of games resampled together: a league plays
its games in groups that share one deal (a duplicate schedule), whose outcomes are not
independent, so a group is resampled whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dixit_lab.ratings import BOOTSTRAP
from dixit_lab.ratings.plackett_luce import bootstrap_interval

__all__ = ["AnchoredRating", "anchored_rating", "comparisons"]

#: the ridge prior of :func:`~dixit_lab.ratings.plackett_luce.plackett_luce` (``prior_sd``)
PRIOR_SD = 3.0


@dataclass(frozen=True)
class AnchoredRating:
    """An entrant's anchored strength, its interval and the games it rests on."""

    strength: float
    ci_low: float
    ci_high: float
    games: int

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low


def comparisons(games: Sequence[tuple[Sequence[str], Sequence[float]]], entrant: str,
                anchors: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per game, per anchored name (in ``anchors``' order): the entrant's wins over it (ties
    half) and the comparisons, two ``(games, anchors)`` arrays. A seat of a name that is
    neither the entrant nor anchored is a :class:`ValueError`."""
    column = {name: j for j, name in enumerate(anchors)}
    wins = np.zeros((len(games), len(anchors)))
    counts = np.zeros((len(games), len(anchors)))
    for g, (players, scores) in enumerate(games):
        unknown = sorted({p for p in players if p != entrant and p not in column})
        if unknown:
            raise ValueError(f"game {g} seats {', '.join(map(repr, unknown))}, neither the "
                             f"entrant {entrant!r} nor an anchored name")
        mine = [scores[i] for i, p in enumerate(players) if p == entrant]
        for i, p in enumerate(players):
            if p == entrant:
                continue
            for score in mine:
                wins[g, column[p]] += 1.0 if score > scores[i] else 0.5 if score == scores[i] \
                    else 0.0
                counts[g, column[p]] += 1.0
    return wins, counts


def _resampled(rng: np.random.Generator, bootstrap: int, clusters: int) -> np.ndarray:
    """``(bootstrap, clusters)``: how often each cluster is drawn in each of ``bootstrap``
    resamples of ``clusters`` clusters with replacement."""
    drawn = rng.integers(0, clusters, size=(bootstrap, clusters))
    times = np.zeros((bootstrap, clusters))
    np.add.at(times, (np.repeat(np.arange(bootstrap), clusters), drawn.ravel()), 1.0)
    return times


def _fit(wins: np.ndarray, counts: np.ndarray, anchored: np.ndarray, penalty: float
         ) -> np.ndarray:
    """The maximum of the penalised likelihood for each row of ``(batch, anchors)`` totals
    (``anchored``: the anchors' strengths, ``(anchors,)`` or a row each): Newton's method on
    a strictly concave function of one variable, each step at most 1."""
    s = np.zeros(len(wins))
    won = wins.sum(axis=1)
    anchored = np.broadcast_to(anchored, wins.shape)
    for _ in range(200):
        p = expit(s[:, None] - anchored)
        grad = won - (counts * p).sum(axis=1) - penalty * s
        curv = (counts * p * (1.0 - p)).sum(axis=1) + penalty
        step = np.clip(grad / curv, -1.0, 1.0)
        s = s + step
        if np.abs(step).max(initial=0.0) < 1e-12:
            break
    return s


def anchored_rating(games: Sequence[tuple[Sequence[str], Sequence[float]]], entrant: str,
                    anchors: Mapping[str, float], *, clusters: Sequence[int] | None = None,
                    bootstrap: int = BOOTSTRAP, seed: int = 0, confidence: float = 0.95
                    ) -> AnchoredRating:
    """``entrant``'s strength on the scale of ``anchors`` (name -> fixed strength) from
    ``games`` (``(players, scores)`` pairs), with its interval over ``bootstrap`` replicates
    of the games' ``clusters`` (a cluster id per game, e.g. its deal; None: each game its
    own), drawn from a generator seeded with ``seed``."""
    if entrant in anchors:
        raise ValueError(f"the entrant {entrant!r} is one of the anchored names")
    names = list(anchors)
    wins, counts = comparisons(games, entrant, names)
    if not counts.any():
        raise ValueError(f"no game compares {entrant!r} with an anchored name")
    anchored = np.array([float(anchors[name]) for name in names])
    penalty = 1.0 / PRIOR_SD**2
    strength = float(_fit(wins.sum(axis=0)[None], counts.sum(axis=0)[None], anchored,
                          penalty)[0])
    ids = np.arange(len(games)) if clusters is None else np.unique(
        np.asarray(clusters), return_inverse=True)[1]
    if len(ids) != len(games):
        raise ValueError(f"{len(ids)} cluster ids for {len(games)} games")
    n_clusters = int(ids.max()) + 1
    cluster_wins = np.zeros((n_clusters, len(names)))
    cluster_counts = np.zeros((n_clusters, len(names)))
    np.add.at(cluster_wins, ids, wins)
    np.add.at(cluster_counts, ids, counts)
    low = high = float("nan")
    if bootstrap > 0:
        rng = np.random.Generator(np.random.PCG64(seed))
        times = _resampled(rng, bootstrap, n_clusters)
        replicates = _fit(times @ cluster_wins, times @ cluster_counts, anchored, penalty)
        lows, highs = bootstrap_interval(strength, replicates[:, None], confidence)
        low, high = float(lows[0]), float(highs[0])
    return AnchoredRating(strength, low, high, len(games))
