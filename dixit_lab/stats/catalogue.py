"""The metric catalogue: every per-player metric of a results folder, defined once.

Each :class:`Metric` names a column of ``agents.csv`` (with ``_ci_low`` / ``_ci_high`` when it
has an interval), says what it measures, how a plot labels it, and — for the metrics that
``dixit-lab tune`` can maximise and that sweeps compare game by game — how one game gives a
player's sample of it. :func:`dixit_lab.stats.metrics.agent_table` writes these columns, the reports
and sweep reports label them from here, and ``tune`` takes its choices from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dixit_lab.records.format import GameRecord, player_names

__all__ = ["CATALOGUE", "Metric", "agent_columns", "per_game_metrics", "sample"]


@dataclass(frozen=True)
class Metric:
    """One per-player metric. ``interval``: ``rate`` (Wilson at the clusters' effective size),
    ``mean`` (t, clustered by game) or ``none``."""

    name: str
    description: str
    title: str
    axis: str
    interval: str = "mean"
    per_game: Callable[[GameRecord, str], float | None] | None = None


def _seats(record: GameRecord, player: str) -> list[int]:
    return [seat for seat, name in enumerate(player_names(record)) if name == player]


def _storyteller_points(record: GameRecord, player: str) -> float | None:
    seats = set(_seats(record, player))
    points = [r.points[r.storyteller] for r in record.rounds if r.storyteller in seats]
    return sum(points) / len(points) if points else None


def _points(record: GameRecord, player: str) -> float | None:
    seats = _seats(record, player)
    return sum(record.final_scores[s] for s in seats) / len(seats) if seats else None


def _win_share(record: GameRecord, player: str) -> float | None:
    seats = _seats(record, player)
    if not seats:
        return None
    return sum(1 / len(record.winners) for s in seats if s in record.winners)


def _outcome_rate(outcome: str) -> Callable[[GameRecord, str], float | None]:
    def rate(record: GameRecord, player: str) -> float | None:
        seats = set(_seats(record, player))
        turns = [r.outcome == outcome for r in record.rounds if r.storyteller in seats]
        return sum(turns) / len(turns) if turns else None

    return rate


def _outcome(outcome: str, words: str) -> Metric:
    return Metric(f"{outcome}_rate", f"share of the player's storyteller turns where {words}",
                  f"Storyteller turns where {words}", f"'{words}' rate (share of storyteller "
                  f"turns)", "rate", _outcome_rate(outcome))


CATALOGUE: dict[str, Metric] = {metric.name: metric for metric in (
    Metric("win_share", "games won, 1/k of a game to each of k tied winners, summed over the "
           "name's seats in a game", "Win share", "win share (games won, ties shared)", "rate",
           _win_share),
    Metric("points_per_game", "final score, averaged over the name's seats", "Points per game",
           "points per game (final score)", "mean", _points),
    _outcome("all_found", "all found the card"),
    _outcome("some_found", "some but not all found the card"),
    _outcome("none_found", "none found the card"),
    Metric("storyteller_points_per_turn", "points scored as storyteller, per storyteller turn",
           "Storyteller points per turn", "storyteller points per turn (points)", "mean",
           _storyteller_points),
    Metric("listener_accuracy", "share of the player's votes that found the storyteller's card",
           "Listener accuracy", "share of votes on the storyteller's card", "rate"),
    Metric("decoy_votes_per_turn", "votes drawn by the player's own cards, per listener turn",
           "Decoy votes per turn", "votes on the player's cards per turn", "mean"),
    Metric("observed_find_rate", "share of listeners who found the player's card, on the turns "
           "of storytellers that predict it", "Find rate (observed; predicted dotted where "
           "modelled)", "share of listeners who found the storyteller's card", "rate"),
    Metric("listener_chance", "the accuracy of a listener voting at random: the mean over its "
           "votes of 1 / (the cards it may vote for, the shown cards not its own)",
           "Listener accuracy by chance", "chance accuracy", "none"),
    Metric("listener_kappa", "listener accuracy corrected for chance, (accuracy - chance) / "
           "(1 - chance): 0 is voting at random, 1 always finding the card",
           "Listener accuracy over chance (kappa)", "kappa (0 = chance, 1 = always)", "none"),
    Metric("listener_accuracy_own", "listener accuracy over the votes the player made itself "
           "(a vote a fault replaced by the seeded fallback left out)",
           "Listener accuracy, own votes", "share of own votes on the storyteller's card",
           "rate"),
    Metric("listener_kappa_own", "listener_kappa over the votes the player made itself",
           "Listener kappa, own votes", "kappa of own votes", "none"),
    Metric("some_found_rate_own", "some_found_rate over the storyteller turns whose clue the "
           "player gave itself (a tell a fault replaced left out)",
           "Storyteller turns where some but not all found the card, own clues",
           "'some but not all found' rate of own clues", "rate"),
)}


def per_game_metrics() -> dict[str, Callable[[GameRecord, str], float | None]]:
    """The metrics with a per-game sample (what ``tune`` maximises), by name."""
    return {name: m.per_game for name, m in CATALOGUE.items() if m.per_game is not None}


def sample(name: str, record: GameRecord, player: str) -> float | None:
    """Player ``player``'s sample of metric ``name`` in one game (None: it did not apply)."""
    per_game = CATALOGUE[name].per_game
    if per_game is None:
        raise KeyError(f"metric {name!r} has no per-game sample")
    return per_game(record, player)


def agent_columns(names: tuple[str, ...]) -> tuple[str, ...]:
    """Each metric's column and, for those with an interval, its two bounds."""
    columns: list[str] = []
    for name in names:
        columns.append(name)
        if CATALOGUE[name].interval != "none":
            columns += [f"{name}_ci_low", f"{name}_ci_high"]
    return tuple(columns)
