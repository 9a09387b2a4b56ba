"""Round and agent metrics: tidy tables and per-player statistics with intervals.

Statistical choices (see :func:`agent_table` for the columns):

- **Rates** (storyteller outcomes, listener accuracy) get **Wilson score intervals at the
  effective sample size of their clusters**
  (:func:`dixit_lab.stats.intervals.clustered_rate_interval`): they stay inside [0, 1], keep close
  to their nominal coverage at small counts and at rates near 0 or 1, where the normal (Wald)
  interval fails, and widen by the design effect of correlated trials: a name's votes in one round
  share the clue and the display (clustered by round), a storyteller's turns in one game share the
  hands (clustered by game). The **win share** (per game, in [0, 1]) gets the same construction over
  games, so it never leaves [0, 1] (:func:`dixit_lab.stats.intervals.bounded_mean_interval`).
- **Means** (points per game, storyteller points per turn, decoy votes per listener turn) get
  a **cluster-robust t interval, clustered by game**: turns of one game (and seats
  that one player fills in one game) are not independent, so the standard error is computed
  from per-game sums of residuals (the "sandwich" estimator with the G/(G-1) small-sample
  factor) and the quantile from a t distribution with G-1 degrees of freedom, G being the number
  of games. When every game contributes a single sample this is exactly the textbook
  ``mean ± t * s / sqrt(n)`` interval. The point estimate is the plain mean over samples
  (turns or seat-games), so it matches what a reader recomputes by hand.

An interval that cannot be estimated (no sample, or a mean from a single game) is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dixit_lab.records.batches import OUTCOME_NAMES
from dixit_lab.records.format import GameRecord, player_names
from dixit_lab.stats.intervals import student_quantile, wilson_from_effective
from dixit_lab.stats.tables import AGENT_COLUMNS

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dixit_lab.stats.game_stats import GameStats

__all__ = [
    "AGENT_COLUMNS",
    "OUTCOMES",
    "agent_table",
    "games_to_frame",
    "mean_interval",
    "player_names",
    "records_stats",
    "rounds_frame",
    "seat_games_frame",
    "summary_stats",
    "t_quantile",
    "wilson_interval",
]

#: Storyteller outcomes in the order used by tables and plots.
OUTCOMES: tuple[str, ...] = OUTCOME_NAMES


# -- names ---------------------------------------------------------------------------------


# -- tidy frames ---------------------------------------------------------------------------


def rounds_frame(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per seat per round: the rows of ``rounds.parquet``
    (:mod:`dixit_lab.stats.round_table`; every column and its type: docs/results.md), for records in
    memory. ``record_index`` is the position of the game in ``records`` (the clustering key,
    unique even if ``meta["game"]`` is not)."""
    from dixit_lab.records.batches import record_batches
    from dixit_lab.stats.round_table import rounds_dataframe

    return rounds_dataframe(record_batches(records))


def games_to_frame(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per seat per round: the tidy table for pandas, the first columns of
    :func:`dixit_lab.stats.metrics.rounds_frame` (columns: docs/results.md).

    ``vote`` is the display position voted for (0-based; nullable ``Int64``, <NA> for the
    storyteller), ``found`` whether that vote found the storyteller's card (nullable
    ``boolean``, <NA> for the storyteller), ``faults`` how many faults of this seat the
    engine recorded this round (an illegal or failed decision replaced by a legal one).
    """
    frame = rounds_frame(records)
    return frame[list(frame.columns[:frame.columns.get_loc("faults") + 1])]


def records_stats(records: Iterable[GameRecord]) -> GameStats:
    """The sums of records in memory (what a results folder's tables are computed from)."""
    from dixit_lab.records.batches import record_batches
    from dixit_lab.stats.game_stats import GameStats, batch_stats

    stats = GameStats()
    for batch in record_batches(records):
        stats.add(batch_stats(batch))
    return stats


def seat_games_frame(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per seat per game: ``record_index, game, seat, player, agent, final_score,
    won, win_share`` (1/k for each of k tied winners, else 0:
    :func:`dixit_lab.stats.kernels.seat_win_share`), ``rounds``, ``end_reason``."""
    from dixit_lab.records.batches import record_batches
    from dixit_lab.stats.kernels import seat_win_share

    columns = ["record_index", "game", "seat", "player", "agent", "final_score", "won",
               "win_share", "rounds", "end_reason"]
    frames = []
    for batch in record_batches(records):
        n = batch.n
        won, share = seat_win_share(batch)
        frames.append(pd.DataFrame({
            "record_index": np.repeat(batch.record_index, n),
            "game": np.repeat(batch.game, n),
            "seat": np.tile(np.arange(n, dtype=np.int64), batch.games),
            "player": np.asarray(batch.players.to_pylist(), dtype=object),
            "agent": np.asarray(batch.agents.to_pylist(), dtype=object),
            "final_score": batch.final_scores.ravel(),
            "won": won.ravel(), "win_share": share.ravel(),
            "rounds": np.repeat(np.diff(batch.round_start), n),
            "end_reason": np.repeat(np.asarray(batch.end_reason.to_pylist(), dtype=object), n),
        }, columns=columns))
    if not frames:
        return pd.DataFrame([], columns=columns)
    frame = pd.concat(frames, ignore_index=True)  # batches of one table size each: in order
    return frame.sort_values(["record_index", "seat"], kind="stable", ignore_index=True)


# -- intervals -----------------------------------------------------------------------------


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion; ``(nan, nan)`` with no trials
    (:func:`dixit_lab.stats.intervals.wilson_from_effective` at ``trials`` independent trials)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..{trials}, got {successes}")
    return wilson_from_effective(successes / trials, trials, confidence)


def t_quantile(probability: float, df: float) -> float:
    """Quantile of Student's t distribution (``scipy.stats.t.ppf``)."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    return student_quantile(probability, df)


def mean_interval(
    values: ArrayLike, clusters: ArrayLike | None = None, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the sample mean with a cluster-robust t interval.

    ``clusters`` labels the group of each value (the game); ``None`` makes every value its own
    cluster, which gives the usual ``mean ± t(n-1) * s / sqrt(n)``. The variance is
    ``G/(G-1) * sum_g (sum_{i in g} (x_i - mean))^2 / n^2`` over the G clusters, with G-1
    degrees of freedom. Fewer than two clusters give a NaN interval; no values, all NaN.
    """
    from dixit_lab.stats.intervals import cluster_sums, mean_interval_from_sums

    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    return mean_interval_from_sums(cluster_sums(x, clusters), confidence)


# -- the agent table -----------------------------------------------------------------------


def agent_table(records: Iterable[GameRecord], confidence: float = 0.95) -> pd.DataFrame:
    """One row per player name (in order of first appearance), columns :data:`AGENT_COLUMNS`.

    - ``agent``: the spec(s) the name played with (joined by ``" | "`` if it changed);
      ``seats``: seat-games; ``games``: games with at least one seat of this name.
    - ``win_share``: per game, each of k tied winners' seats gets 1/k, a name sums the shares of
      all its seats in that game, and ``win_share`` is the mean of that sum over the name's
      games (so the names of one game add up to 1; a name filling four seats of five has a
      high share). ``win_share_per_seat`` divides the same total by ``seats`` instead: the
      number to compare with 1/n players. Interval: Wilson at the effective size over games.
    - ``points_per_game``: mean final score over seat-games (each seat one sample), interval
      clustered by game.
    - ``storyteller_turns`` and the ``all_found`` / ``some_found`` / ``none_found`` rates of
      those turns, Wilson intervals clustered by game; ``storyteller_points_per_turn``: mean
      points of those turns, interval clustered by game.
    - ``listener_turns``; ``listener_accuracy``: share of its votes on the storyteller's card
      (Wilson clustered by round); ``decoy_votes_per_turn``: votes drawn by its own cards per
      listener turn (clustered by game); ``faults``: the seat's faults (failed decisions, which
    the engine replaced by seeded legal ones, and failed hooks).
    """
    from dixit_lab.stats.tables import agent_frame

    return agent_frame(records_stats(records), confidence)


def summary_stats(records: Iterable[GameRecord]) -> dict[str, Any]:
    """A JSON-serialisable summary: games, rounds (mean, min, max), end reasons, faults, and
    per player name its win share (as in :func:`agent_table`) and games."""
    from dixit_lab.stats.tables import summary_dict

    summary = summary_dict(records_stats(records))
    for key in ("table_sizes", "rule_presets", "decks"):
        summary.pop(key)
    return summary
