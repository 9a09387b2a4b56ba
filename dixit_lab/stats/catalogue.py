"""The metric catalogue: every per-player metric of a results folder, named once.

Each :class:`Metric` names a column of ``agents.csv`` (with ``_ci_low`` / ``_ci_high`` when it
has an interval; ``column=False``: an ingredient of another metric, not a column of its own),
says what it measures, how a plot labels it, and points at its **kernel**
(:mod:`dixit_lab.stats.kernels`: its samples over a batch of games, the one computation of
it), or, for a metric derived from two others (kappa), at them. The metrics that ``dixit-lab
tune`` can maximise and that sweeps compare game by game (``per_game``) give a player's
sample in a game as the mean of its kernel's samples there (:func:`per_game_samples`).
:func:`dixit_lab.stats.tables.agent_frame` writes the columns from the kernels' sums
(:mod:`dixit_lab.stats.game_stats`), the reports and sweep reports label them from here, and
``tune`` takes its choices from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dixit_lab.records.batches import OUTCOME_NAMES, GameBatch
from dixit_lab.records.format import GameRecord
from dixit_lab.stats import kernels
from dixit_lab.stats.kernels import Samples, Seats, player_per_game

__all__ = ["CATALOGUE", "Metric", "agent_columns", "per_game_metrics", "per_game_samples",
           "sample", "summed_metrics"]


@dataclass(frozen=True)
class Metric:
    """One per-player metric. ``interval``: ``rate`` (Wilson at the clusters' effective size),
    ``mean`` (t, clustered by game) or ``none``. ``kernel``: its samples in a batch (None for
    a metric ``derived_from`` two others: (accuracy, chance), corrected for chance)."""

    name: str
    description: str
    title: str
    axis: str
    interval: str = "mean"
    kernel: Callable[[Seats], Samples] | None = None
    per_game: bool = False
    column: bool = True
    derived_from: tuple[str, str] | None = None


def _outcome(outcome: str, words: str) -> Metric:
    return Metric(f"{outcome}_rate", f"share of the player's storyteller turns where {words}",
                  f"Storyteller turns where {words}", f"'{words}' rate (share of storyteller "
                  f"turns)", "rate", kernels.outcome(OUTCOME_NAMES.index(outcome)),
                  per_game=True)


CATALOGUE: dict[str, Metric] = {metric.name: metric for metric in (
    Metric("win_share", "games won, 1/k of a game to each of k tied winners, summed over the "
           "name's seats in a game", "Win share", "win share (games won, ties shared)", "rate",
           kernels.win_share, per_game=True),
    Metric("points_per_game", "final score, averaged over the name's seats", "Points per game",
           "points per game (final score)", "mean", kernels.points_per_game,
           per_game=True),
    _outcome("all_found", "all found the card"),
    _outcome("some_found", "some but not all found the card"),
    _outcome("none_found", "none found the card"),
    Metric("storyteller_points_per_turn", "points scored as storyteller, per storyteller turn",
           "Storyteller points per turn", "storyteller points per turn (points)", "mean",
           kernels.storyteller_points, per_game=True),
    Metric("listener_accuracy", "share of the player's votes that found the storyteller's card",
           "Listener accuracy", "share of votes on the storyteller's card", "rate",
           kernels.listener_accuracy),
    Metric("decoy_votes_per_turn", "votes drawn by the player's own cards, per listener turn",
           "Decoy votes per turn", "votes on the player's cards per turn", "mean",
           kernels.decoy_votes),
    Metric("observed_find_rate", "share of listeners who found the player's card, on the turns "
           "of storytellers that predict it", "Find rate (observed; predicted dotted where "
           "modelled)", "share of listeners who found the storyteller's card", "rate",
           kernels.observed_find_rate),
    Metric("listener_chance", "the accuracy of a listener voting at random: the mean over its "
           "votes of 1 / (the cards it may vote for, the shown cards not its own)",
           "Listener accuracy by chance", "chance accuracy", "none", kernels.listener_chance),
    Metric("listener_kappa", "listener accuracy corrected for chance, (accuracy - chance) / "
           "(1 - chance): 0 is voting at random, 1 always finding the card",
           "Listener accuracy over chance (kappa)", "kappa (0 = chance, 1 = always)", "none",
           derived_from=("listener_accuracy", "listener_chance")),
    Metric("listener_accuracy_own", "listener accuracy over the votes the player made itself "
           "(a vote a fault replaced by the seeded fallback left out)",
           "Listener accuracy, own votes", "share of own votes on the storyteller's card",
           "rate", kernels.listener_accuracy_own),
    Metric("listener_chance_own", "listener_chance over the votes the player made itself",
           "Listener accuracy by chance, own votes", "chance accuracy of own votes", "none",
           kernels.listener_chance_own, column=False),
    Metric("listener_kappa_own", "listener_kappa over the votes the player made itself",
           "Listener kappa, own votes", "kappa of own votes", "none",
           derived_from=("listener_accuracy_own", "listener_chance_own")),
    Metric("some_found_rate_own", "some_found_rate over the storyteller turns whose clue the "
           "player gave itself (a tell a fault replaced left out)",
           "Storyteller turns where some but not all found the card, own clues",
           "'some but not all found' rate of own clues", "rate", kernels.some_found_rate_own),
)}


def summed_metrics() -> tuple[str, ...]:
    """The metrics with a kernel, whose sums a batch gives (in catalogue order)."""
    return tuple(name for name, m in CATALOGUE.items() if m.kernel is not None)


def per_game_metrics() -> tuple[str, ...]:
    """The metrics with a per-game sample (what ``tune`` maximises), in catalogue order."""
    return tuple(name for name, m in CATALOGUE.items() if m.per_game)


def _per_game_kernel(name: str) -> Callable[[Seats], Samples]:
    metric = CATALOGUE[name]
    if not metric.per_game or metric.kernel is None:
        raise KeyError(f"metric {name!r} has no per-game sample")
    return metric.kernel


def per_game_samples(name: str, batch: GameBatch, player: str) -> dict[int, float]:
    """Player ``player``'s sample of metric ``name`` in each game of ``batch`` where it
    applies (the mean of the kernel's samples of its seats there), by ``record_index``."""
    return player_per_game(_per_game_kernel(name), batch, player)


def sample(name: str, record: GameRecord, player: str) -> float | None:
    """Player ``player``'s sample of metric ``name`` in one game (None: it did not apply),
    computed from a batch of that one record."""
    from dixit_lab.records.batches import record_batches

    kernel = _per_game_kernel(name)
    for batch in record_batches([record]):
        return player_per_game(kernel, batch, player).get(0)
    return None


def agent_columns(names: tuple[str, ...]) -> tuple[str, ...]:
    """Each metric's column and, for those with an interval, its two bounds."""
    columns: list[str] = []
    for name in names:
        columns.append(name)
        if CATALOGUE[name].interval != "none":
            columns += [f"{name}_ci_low", f"{name}_ci_high"]
    return tuple(columns)
