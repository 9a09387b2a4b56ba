"""The batched engine's games as a :class:`~dixit_lab.record_batches.GameBatch` straight from
its arrays, besides their JSON lines: summarising a chunk (:mod:`dixit_lab.run_parts`) then
costs no parsing of what was just written. ``tests/test_batch_columns.py`` checks that the
batch equals the one parsed from the lines, field by field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.record_batches import GameBatch

if TYPE_CHECKING:
    from dixit_lab.cards import Deck
    from dixit_lab.rules import RuleSet

__all__ = ["play_batch_columns"]


def play_batch_columns(tables: Sequence[Sequence[Any]], rules: RuleSet, deck: Deck,
                       seeds: Sequence[Any], metas: Sequence[dict[str, Any]],
                       indices: Sequence[int]) -> tuple[list[str], GameBatch]:
    """:func:`dixit_lab.batched.play_batch`'s JSON lines and the same games as a batch
    (``indices``: their record indices, the games' numbers in the experiment)."""
    from dixit_lab.batched import run_batch

    games, rounds, names, clue_texts = run_batch(tables, rules, deck, seeds)
    lines = games.json_lines(rounds, rules, deck, names, clue_texts, metas)
    return lines, _columns(games, rounds, rules, deck, names, clue_texts, metas, indices)


def _columns(games: Any, rounds: list[dict[str, np.ndarray]], rules: RuleSet, deck: Deck,
             names: Sequence[str], clue_texts: Sequence[str],
             metas: Sequence[dict[str, Any]], indices: Sequence[int]) -> GameBatch:
    import pyarrow as pa

    from dixit_lab.game import _options

    b, n = len(games.seeds), games.shape.n
    game_of = np.concatenate([rnd["rows"] for rnd in rounds]) if rounds else \
        np.zeros(0, np.int64)
    round_of = np.concatenate([np.full(len(rnd["rows"]), r) for r, rnd in enumerate(rounds)]) \
        if rounds else np.zeros(0, np.int64)
    keep = round_of <= games.end_round[game_of]
    order = np.lexsort((round_of[keep], game_of[keep]))  # game by game, rounds in order

    def stacked(key: str) -> np.ndarray:
        return np.concatenate([rnd[key] for rnd in rounds])[keep][order]

    round_game = game_of[keep][order].astype(np.int64)
    r = len(round_game)
    round_start = np.searchsorted(round_game, np.arange(b + 1)).astype(np.int64)
    hand = stacked("hand").astype(np.int64)
    best = games.scores.max(axis=1, keepdims=True)
    winner_game, winner_seat = np.nonzero(games.scores == best)
    seat_names = np.asarray(list(names), dtype=object)[games.seating].ravel()
    players = [name for meta in metas for name in meta["players"]]
    clue_index = stacked("clue")
    rule_text = json.dumps(_options(rules), separators=(",", ":"), ensure_ascii=False)
    return GameBatch(
        n=n, record_index=np.asarray(indices, dtype=np.int64),
        game=np.array([meta["game"] for meta in metas], dtype=np.int64),
        rules=pa.array([rules.name] * b, pa.string()), deck=pa.array([deck.name] * b,
                                                                     pa.string()),
        end_reason=pa.array(games.end_reason.tolist(), pa.string()),
        agents=pa.array(seat_names.tolist(), pa.string()),
        players=pa.array([str(p) for p in players], pa.string()),
        final_scores=games.scores.astype(np.int64),
        winner_game=winner_game.astype(np.int64), winner_seat=winner_seat.astype(np.int64),
        rule_options=[rule_text] * b, round_game=round_game, round_start=round_start,
        round_number=np.arange(r, dtype=np.int64) - round_start[round_game],
        storyteller=stacked("storyteller").astype(np.int64),
        storyteller_card=stacked("card").astype(np.int64),
        clue=pa.array(np.asarray(list(clue_texts), dtype=object)[clue_index].tolist(),
                      pa.string()),
        display=stacked("display").astype(np.int64),
        card_owner=stacked("card_owner").astype(np.int64),
        votes=stacked("votes").astype(np.int64), points=stacked("points").astype(np.int64),
        scores=stacked("scores").astype(np.int64), faults=np.zeros((r, n), dtype=np.int64),
        fault_round=np.zeros(0, np.int64), fault_seat=np.zeros(0, np.int64),
        fault_kinds=pa.array([], pa.string()),
        hands=pa.ListArray.from_arrays(
            pa.array(np.arange(0, r * hand.shape[1] + 1, hand.shape[1], dtype=np.int32)
                     if r else np.zeros(1, np.int32)),
            pa.array(hand.ravel())))
