"""Round and agent metrics: tidy tables and per-player statistics with intervals.

Statistical choices (see :func:`agent_table` for the columns):

- **Rates** (storyteller outcomes, listener accuracy) get **Wilson score intervals at the
  effective sample size of their clusters** (:func:`dixit_lab.intervals.clustered_rate_interval`):
  they stay inside [0, 1], keep close to their nominal coverage at small counts and at rates
  near 0 or 1, where the normal (Wald) interval fails, and widen by the design effect of
  correlated trials: a name's votes in one round share the clue and the display (clustered
  by round), a storyteller's turns in one game share the hands (clustered by game). The
  **win share** (per game, in [0, 1]) gets the same construction over games, so it never
  leaves [0, 1] (:func:`dixit_lab.intervals.bounded_mean_interval`).
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
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dixit_lab.intervals import bounded_mean_interval, wilson_from_effective
from dixit_lab.metric_catalogue import agent_columns
from dixit_lab.records import GameRecord, games_to_frame, player_names

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "AGENT_COLUMNS",
    "OUTCOMES",
    "agent_table",
    "mean_interval",
    "player_names",
    "rounds_frame",
    "seat_games_frame",
    "summary_stats",
    "t_quantile",
    "wilson_interval",
]

#: Storyteller outcomes in the order used by tables and plots.
OUTCOMES: tuple[str, ...] = ("all_found", "some_found", "none_found")

#: The columns of :func:`agent_table`, in order: counts, and the catalogue's metrics with
#: their intervals (:mod:`dixit_lab.metric_catalogue`).
AGENT_COLUMNS: tuple[str, ...] = (
    "player", "agent", "seats", "games",
    *agent_columns(("win_share",)), "win_share_per_seat",
    *agent_columns(("points_per_game",)),
    "storyteller_turns",
    *agent_columns(tuple(f"{outcome}_rate" for outcome in OUTCOMES)),
    *agent_columns(("storyteller_points_per_turn",)),
    "listener_turns",
    *agent_columns(("listener_accuracy", "decoy_votes_per_turn")),
    "faults",
)


# -- names ---------------------------------------------------------------------------------


# -- tidy frames ---------------------------------------------------------------------------


def rounds_frame(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per seat per round: :func:`~dixit_lab.records.games_to_frame` plus

    ``record_index`` (position of the game in ``records``: the clustering key, unique even if
    ``meta["game"]`` is not), ``player`` (the name of the seat), ``storyteller_seat``,
    ``storyteller_card`` and ``voted_card`` (card ids such as ``dreams-042``, as in the deck's
    ``cards.csv``; <NA> for the storyteller's own vote), ``n_finders`` (voters who found the
    storyteller's card this round), ``n_voters`` and ``decoy_votes`` (votes received on the
    seat's own cards as a listener; 0 for the storyteller, whose received votes are finds).
    Every column and its type: docs/results.md.
    """
    records = list(records)
    frame = games_to_frame(records)
    extra: dict[str, list[Any]] = {key: [] for key in (
        "record_index", "player", "storyteller_seat", "storyteller_card", "voted_card",
        "n_finders", "n_voters")}
    for index, record in enumerate(records):
        names = player_names(record)
        ids = _card_namer(record.deck)
        for rnd in record.rounds:
            n_finders = len(rnd.finders)
            for seat in range(record.n_players):
                vote = rnd.votes[seat]
                extra["record_index"].append(index)
                extra["player"].append(names[seat])
                extra["storyteller_seat"].append(rnd.storyteller)
                extra["storyteller_card"].append(ids(rnd.storyteller_card))
                extra["voted_card"].append(None if vote is None else ids(rnd.display[vote]))
                extra["n_finders"].append(n_finders)
                extra["n_voters"].append(record.n_players - 1)
    if frame.empty:
        columns = [*frame.columns, *extra, "decoy_votes"]
        return pd.DataFrame(columns=columns)
    for key, values in extra.items():
        frame[key] = values
    for key in ("storyteller_card", "voted_card"):
        frame[key] = frame[key].astype("string")
    listener = frame["role"] == "listener"
    frame["decoy_votes"] = frame["votes_received"].where(listener, 0).astype(int)
    return frame


def _card_namer(deck: str) -> Any:
    """Deck index -> card id (``dreams-042``); ``#41`` when the deck cannot be loaded here."""
    from dixit_lab.cards import DeckError, load_deck

    try:
        cards = load_deck(deck).cards
    except (DeckError, OSError, ValueError):
        return lambda index: f"#{index}"
    return lambda index: cards[index].id if 0 <= index < len(cards) else f"#{index}"


def seat_games_frame(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per seat per game: ``record_index, game, seat, player, agent, final_score,
    won, win_share`` (1/k for each of k tied winners, else 0), ``rounds``, ``end_reason``."""
    rows: list[dict[str, Any]] = []
    for index, record in enumerate(records):
        names = player_names(record)
        share = 1.0 / len(record.winners) if record.winners else 0.0
        for seat in range(record.n_players):
            won = seat in record.winners
            rows.append({
                "record_index": index,
                "game": record.meta.get("game", index),
                "seat": seat,
                "player": names[seat],
                "agent": record.agents[seat],
                "final_score": record.final_scores[seat],
                "won": won,
                "win_share": share if won else 0.0,
                "rounds": len(record.rounds),
                "end_reason": record.end_reason,
            })
    columns = ["record_index", "game", "seat", "player", "agent", "final_score", "won",
               "win_share", "rounds", "end_reason"]
    return pd.DataFrame(rows, columns=columns)


# -- intervals -----------------------------------------------------------------------------


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion; ``(nan, nan)`` with no trials
    (:func:`dixit_lab.intervals.wilson_from_effective` at ``trials`` independent trials)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..{trials}, got {successes}")
    return wilson_from_effective(successes / trials, trials, confidence)


def t_quantile(probability: float, df: float) -> float:
    """Quantile of Student's t distribution (``scipy.stats.t.ppf``)."""
    from scipy.stats import t

    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    return float(t.ppf(probability, df))


def mean_interval(
    values: ArrayLike, clusters: ArrayLike | None = None, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the sample mean with a cluster-robust t interval.

    ``clusters`` labels the group of each value (the game); ``None`` makes every value its own
    cluster, which gives the usual ``mean ± t(n-1) * s / sqrt(n)``. The variance is
    ``G/(G-1) * sum_g (sum_{i in g} (x_i - mean))^2 / n^2`` over the G clusters, with G-1
    degrees of freedom. Fewer than two clusters give a NaN interval; no values, all NaN.
    """
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(x.mean())
    labels = np.arange(n) if clusters is None else np.asarray(clusters)
    if labels.shape != x.shape:
        raise ValueError(f"{labels.size} cluster labels for {n} values")
    _, group = np.unique(labels, return_inverse=True)
    n_clusters = int(group.max()) + 1
    if n_clusters < 2:
        return (mean, math.nan, math.nan)
    sums = np.bincount(group, weights=x - mean, minlength=n_clusters)
    variance = n_clusters / (n_clusters - 1) * float(np.sum(sums**2)) / (n * n)
    half = t_quantile(0.5 + confidence / 2.0, n_clusters - 1) * math.sqrt(variance)
    return (mean, mean - half, mean + half)


# -- the agent table -----------------------------------------------------------------------


def _rate(outcomes: np.ndarray, clusters: np.ndarray,
          confidence: float) -> tuple[float, float, float]:
    from dixit_lab.intervals import clustered_rate_interval

    return clustered_rate_interval(outcomes, clusters, confidence)


def _with_ci(row: dict[str, Any], name: str, triple: tuple[float, float, float]) -> None:
    row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = triple


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
      listener turn (clustered by game); ``faults``: illegal actions the engine replaced.
    """
    records = list(records)
    seats = seat_games_frame(records)
    rounds = rounds_frame(records)
    rows: list[dict[str, Any]] = []
    for player in pd.unique(seats["player"]):
        mine = seats[seats["player"] == player]
        turns = rounds[rounds["player"] == player]
        told = turns[turns["role"] == "storyteller"]
        listened = turns[turns["role"] == "listener"]
        per_game_share = mine.groupby("record_index")["win_share"].sum()
        specs = list(dict.fromkeys(mine["agent"]))
        row: dict[str, Any] = {
            "player": player,
            "agent": " | ".join(specs),
            "seats": len(mine),
            "games": int(mine["record_index"].nunique()),
        }
        _with_ci(row, "win_share", bounded_mean_interval(
            np.clip(per_game_share.to_numpy(), 0.0, 1.0), confidence=confidence))
        row["win_share_per_seat"] = float(mine["win_share"].sum()) / len(mine)
        _with_ci(row, "points_per_game", mean_interval(
            mine["final_score"].to_numpy(), mine["record_index"].to_numpy(), confidence))
        row["storyteller_turns"] = len(told)
        games_told = told["record_index"].to_numpy()
        for outcome in OUTCOMES:
            _with_ci(row, f"{outcome}_rate", _rate(
                (told["outcome"] == outcome).to_numpy(float), games_told, confidence))
        _with_ci(row, "storyteller_points_per_turn", mean_interval(
            told["points"].to_numpy(), told["record_index"].to_numpy(), confidence))
        row["listener_turns"] = len(listened)
        round_ids = (listened["record_index"].to_numpy(np.int64) * 10_000
                     + listened["round"].to_numpy(np.int64))
        _with_ci(row, "listener_accuracy", _rate(
            listened["found"].fillna(False).astype(bool).to_numpy(float), round_ids, confidence))
        _with_ci(row, "decoy_votes_per_turn", mean_interval(
            listened["decoy_votes"].to_numpy(), listened["record_index"].to_numpy(),
            confidence))
        row["faults"] = int(turns["faults"].sum()) if len(turns) else 0
        rows.append(row)
    return pd.DataFrame(rows, columns=list(AGENT_COLUMNS))


def summary_stats(records: Iterable[GameRecord]) -> dict[str, Any]:
    """A JSON-serialisable summary: games, rounds (mean, min, max), end reasons, faults, and
    per player name its win share (as in :func:`agent_table`) and games."""
    records = list(records)
    lengths = [len(record.rounds) for record in records]
    shares: dict[str, float] = {}
    games: dict[str, int] = {}
    for record in records:
        names = player_names(record)
        share = 1.0 / len(record.winners) if record.winners else 0.0
        for name in dict.fromkeys(names):
            games[name] = games.get(name, 0) + 1
            shares.setdefault(name, 0.0)
        for seat in record.winners:
            shares[names[seat]] += share
    return {
        "games": len(records),
        "rounds_mean": float(np.mean(lengths)) if lengths else None,
        "rounds_min": min(lengths) if lengths else None,
        "rounds_max": max(lengths) if lengths else None,
        "end_reasons": dict(Counter(record.end_reason for record in records)),
        "faults": sum(len(rnd.faults) for record in records for rnd in record.rounds),
        "players": {name: {"games": games[name], "win_share": shares[name] / games[name]}
                    for name in games},
        "win_share": {name: shares[name] / games[name] for name in games},
    }
