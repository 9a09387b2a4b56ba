"""The input of every rating model: games as (player names by seat, final scores by seat),
from records, checked, and who played how many."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from dixit_lab.records.format import player_names

if TYPE_CHECKING:
    from dixit_lab.records.format import GameRecord

__all__ = ["Game", "check_games", "games_from_records", "games_played"]

# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------


Game = tuple[tuple[str, ...], tuple[float, ...]]
"""One game: player names by seat and final scores by seat."""


def games_from_records(
    records: Iterable[GameRecord],
    names_by_seat: Callable[[GameRecord], Sequence[str]] | Sequence[Sequence[str]] | None = None,
) -> list[Game]:
    """Turn game records into ``(players, scores)`` games.

    Args:
        records: the games, e.g. from :func:`dixit_lab.records.format.read_jsonl`.
        names_by_seat: how to name the player in each seat. ``None`` (the default) uses
            ``record.meta["players"]`` when the record has it, else ``record.agents`` (the agent
            spec of each seat). A callable is called with each record and returns its names by
            seat; a sequence gives the names by seat of each record, in the same order as
            ``records``.

    Returns:
        One ``(players, scores)`` pair per record, with ``scores = record.final_scores``.

    Raises:
        ValueError: if a record's names do not have one entry per seat, or a sequence of names
            does not have one entry per record.
    """
    records = list(records)
    if names_by_seat is not None and not callable(names_by_seat) and len(names_by_seat) != len(
        records
    ):
        raise ValueError(
            f"names_by_seat has {len(names_by_seat)} entries but there are {len(records)} records"
        )
    games: list[Game] = []
    for index, record in enumerate(records):
        names: Sequence[str]
        if names_by_seat is None:
            names = player_names(record)
        elif callable(names_by_seat):
            names = names_by_seat(record)
        else:
            names = names_by_seat[index]
        players = tuple(str(name) for name in names)
        if len(players) != len(record.final_scores):
            raise ValueError(
                f"record {index}: {len(players)} player names for {len(record.final_scores)} "
                "seats"
            )
        games.append((players, tuple(float(score) for score in record.final_scores)))
    return games


def check_games(games: Iterable[tuple[Sequence[str], Sequence[float]]]) -> list[Game]:
    """Validate games and return them as tuples; raise ``ValueError`` on bad input."""
    checked: list[Game] = []
    for index, game in enumerate(games):
        players, scores = game
        players = tuple(str(name) for name in players)
        scores = tuple(float(score) for score in scores)
        if len(players) != len(scores):
            raise ValueError(f"game {index}: {len(players)} players but {len(scores)} scores")
        if len(players) < 2:
            raise ValueError(f"game {index}: a game needs at least two seats")
        if not all(np.isfinite(scores)):
            raise ValueError(f"game {index}: scores must be finite numbers")
        checked.append((players, scores))
    if not checked:
        raise ValueError("no games given: ratings need at least one game")
    return checked


def games_played(games: Sequence[Game]) -> dict[str, int]:
    """Number of games each name sat in (a game counts once however many seats it took)."""
    counts: dict[str, int] = {}
    for players, _ in games:
        for name in set(players):
            counts[name] = counts.get(name, 0) + 1
    return counts


