"""The batched engine's games as records: their JSON lines, written from templates (one
``json.dumps`` per game would cost more than the games), and the same games as a
:class:`~dixit_lab.records.batches.GameBatch` straight from the engine's arrays, so that
summarising a chunk (:mod:`dixit_lab.run.parts`) costs no parsing of what was just written.
``tests/engine/test_batched.py`` checks the lines against ``GameRecord.to_json`` and
``tests/engine/test_batch_columns.py`` the batch against the lines parsed, field by field."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.core.rules import record_options
from dixit_lab.core.seeding import DealSeeds, seed_fields
from dixit_lab.records.batches import GameBatch
from dixit_lab.records.format import (
    GAME_FIELDS,
    ROUND_FIELDS,
    game_json_keys,
    json_text,
    round_json_keys,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from dixit_lab.core.cards import Deck
    from dixit_lab.core.rules import RuleSet

__all__ = ["columns", "json_lines", "json_records", "lines_of"]


def json_lines(games: Any, rounds: list[dict[str, np.ndarray]], rules: RuleSet, deck: Deck,
               names: Sequence[str], clue_texts: Sequence[str],
               metas: Sequence[dict[str, Any]] | None) -> list[str]:
    """The records of the games of ``games`` (a ``batched._Batch`` that played ``rounds``) as
    JSON lines, byte for byte as ``GameRecord.to_json`` writes them
    (written from templates: ``json.dumps`` per game would cost more than the games)."""
    return lines_of(json_records(games, rounds, rules, deck, names, clue_texts, metas))


def lines_of(records: str) -> list[str]:
    """The lines of a records text of :func:`json_records` (JSON text holds no raw newline:
    a line is a game)."""
    lines = records.split("\n")
    lines.pop()  # after the last newline
    return lines


#: integers up to this have their JSON text looked up in a table (a run's cards and scores);
#: larger ones (the scores of rules with huge points) are converted one by one
_NUMBERS = 1 << 16


def json_records(games: Any, rounds: list[dict[str, np.ndarray]], rules: RuleSet, deck: Deck,
                 names: Sequence[str], clue_texts: Sequence[str],
                 metas: Sequence[dict[str, Any]] | None) -> str:
    """:func:`json_lines` as the text of a games file: each line and its newline (what a
    chunk's part saves, made at once instead of joined from the lines)."""
    dumps = json_text

    top = max([1, *(int(r[key].max()) for r in rounds
                    for key in ("display", "hand", "scores", "points", "card"))])
    limit = min(top, _NUMBERS)  # the texts of small integers, looked up
    numbers = np.array([str(i) for i in range(-1, limit + 1)], dtype=object)
    numbers[0] = "null"  # -1 marks the storyteller's vote
    ended = np.array([v + "\x00" for v in numbers.tolist()], dtype=object)

    def texts(values: np.ndarray) -> np.ndarray:
        """The JSON texts of integers (-1: null), an object array of their shape."""
        if not values.size or int(values.max()) <= limit:
            return numbers[values + 1]
        out = values.astype(str).astype(object)  # scores of rules with huge points
        out[values == -1] = "null"
        return out

    def rows(matrix: np.ndarray) -> np.ndarray:
        """The rows of a small-integer matrix as JSON arrays without brackets (object
        array of str), built by C-level joins rather than one f-string per row."""
        cells = texts(matrix)
        last = matrix[:, -1]
        cells[:, -1] = ended[last + 1] if not last.size or int(last.max()) <= limit else \
            np.array([text + "\x00" for text in cells[:, -1].tolist()], dtype=object)
        parts = ",".join(cells.ravel().tolist()).split("\x00,")
        parts[-1] = parts[-1][:-1]
        return np.array(parts, dtype=object)

    def hand_rows(matrix: np.ndarray) -> np.ndarray:
        """:func:`rows` of the storytellers' hands, whose -1 cells (under play_out_hands,
        the slots of a hand that has shrunk) are left out."""
        if bool((matrix >= 0).all()):
            return rows(matrix)
        return np.array([",".join([str(card) for card in row if card >= 0])
                         for row in matrix.tolist()], dtype=object)

    b = len(games.seeds)
    keys = round_json_keys()
    clue_json = _clue_json(tuple(clue_texts))
    by_round = np.full((len(rounds), b), "", dtype=object)
    for index, rnd in enumerate(rounds):
        values = {"storyteller": texts(rnd["storyteller"]),
                  "clue": clue_json[rnd["clue"]],
                  "storyteller_card": texts(rnd["card"]),
                  "display": rows(rnd["display"]), "card_owner": rows(rnd["card_owner"]),
                  "votes": rows(rnd["votes"]), "points": rows(rnd["points"]),
                  "scores": rows(rnd["scores"]), "storyteller_hand": hand_rows(rnd["hand"])}
        pieces: list[Any] = []
        for (name, _), (opening, closing) in zip(ROUND_FIELDS, keys, strict=True):
            pieces += [opening, values[name], closing]
        by_round[index, rnd["rows"]] = _concat([*pieces, "}"], rnd["rows"].size)
    played = (games.end_round + 1).tolist()  # a game plays rounds 0..end_round
    game_rounds = np.array([",".join(fragments[:count]) for fragments, count
                            in zip(by_round.T.tolist(), played, strict=True)], dtype=object)

    seatings, seating_rows = np.unique(games.seating, axis=0, return_inverse=True)
    agents = np.array([dumps([names[i] for i in seating]) for seating in seatings.tolist()],
                      dtype=object)[seating_rows.ravel()]
    seeds = games.seeds.fields() if isinstance(games.seeds, DealSeeds) else \
        [seed_fields(seed) for seed in games.seeds]
    best = games.scores.max(axis=1, keepdims=True)
    bits = ((games.scores == best) * (1 << np.arange(games.shape.n))).sum(axis=1)
    winner_lists = np.array([",".join(str(s) for s in range(games.shape.n) if mask >> s & 1)
                             for mask in range(1 << games.shape.n)], dtype=object)
    values = {"seed": np.array([str(e) for e, _ in seeds], dtype=object),
              "spawn_key": np.array([",".join(map(str, k)) for _, k in seeds], dtype=object),
              "rules": dumps(rules.name), "rule_options": dumps(record_options(rules)),
              "agents": agents, "deck": dumps(deck.name), "rounds": game_rounds,
              "final_scores": rows(games.scores), "winners": winner_lists[bits],
              "end_reason": _json_strings(games.end_reason, dumps)}
    fields: list[Any] = [""]
    for (name, _), (opening, closing) in zip(GAME_FIELDS, game_json_keys(), strict=True):
        for piece in (opening, values[name], closing):  # constants joined: fewer columns
            if isinstance(piece, str) and isinstance(fields[-1], str):
                fields[-1] += piece
            else:
                fields.append(piece)
    tails = np.array([f',"meta":{_meta_json(meta, dumps)}' if meta else ""
                      for meta in (metas if metas is not None else [None] * b)],
                     dtype=object)
    return _concat_text([*fields, tails, "}"], b, "\n")


def columns(games: Any, rounds: list[dict[str, np.ndarray]], rules: RuleSet, deck: Deck,
             names: Sequence[str], clue_texts: Sequence[str],
             metas: Sequence[dict[str, Any]], indices: Sequence[int]) -> GameBatch:
    """The games of ``games`` (as for :func:`json_lines`) as a
    :class:`~dixit_lab.records.batches.GameBatch` (``indices``: their record indices)."""
    import pyarrow as pa

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
    clue_index = stacked("clue")
    rule_text = json_text(record_options(rules))
    return GameBatch(
        n=n, record_index=np.asarray(indices, dtype=np.int64),
        game=np.array([meta["game"] for meta in metas], dtype=np.int64),
        rules=pa.array([rules.name] * b, pa.string()), deck=pa.array([deck.name] * b,
                                                                     pa.string()),
        end_reason=pa.array(games.end_reason.tolist(), pa.string()),
        agents=_dictionary(games.seating.ravel(), names),
        players=_players(metas),
        final_scores=games.scores.astype(np.int64),
        winner_game=winner_game.astype(np.int64), winner_seat=winner_seat.astype(np.int64),
        rule_options=[rule_text] * b, round_game=round_game, round_start=round_start,
        round_number=np.arange(r, dtype=np.int64) - round_start[round_game],
        storyteller=stacked("storyteller").astype(np.int64),
        storyteller_card=stacked("card").astype(np.int64),
        clue=_dictionary(clue_index, clue_texts),
        display=stacked("display").astype(np.int64),
        card_owner=stacked("card_owner").astype(np.int64),
        votes=stacked("votes").astype(np.int64), points=stacked("points").astype(np.int64),
        scores=stacked("scores").astype(np.int64), faults=np.zeros((r, n), dtype=np.int64),
        fault_round=np.zeros(0, np.int64), fault_seat=np.zeros(0, np.int64),
        fault_kinds=pa.array([], pa.string()), fault_actions=pa.array([], pa.string()),
        fault_messages=pa.array([], pa.string()),
        hands=_hand_lists(hand),
        unperceived=np.zeros((r, n), dtype=np.int64))  # every clue is of the table's bank


def _hand_lists(hand: np.ndarray) -> pa.ListArray:
    """The storytellers' hands ((R, h), -1 in the slots of a hand that has shrunk under
    play_out_hands) as one list a round."""
    import pyarrow as pa

    r = len(hand)
    if not r:
        return pa.ListArray.from_arrays(pa.array(np.zeros(1, np.int32)),
                                        pa.array(hand.ravel()))
    if bool((hand >= 0).all()):
        return pa.ListArray.from_arrays(
            pa.array(np.arange(0, r * hand.shape[1] + 1, hand.shape[1], dtype=np.int32)),
            pa.array(hand.ravel()))
    held = hand >= 0
    offsets = np.concatenate([[0], np.cumsum(held.sum(axis=1))]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(hand[held]))


def _dictionary(codes: np.ndarray, values: Sequence[str]) -> pa.DictionaryArray:
    """The texts ``values[codes]`` as ``pyarrow.compute.dictionary_encode`` gives them (the
    distinct texts, first seen first, and an index each) without a Python string per
    element: equal texts share one code, the codes are encoded, their texts looked up."""
    import pyarrow as pa
    import pyarrow.compute as pc

    first: dict[str, int] = {}
    same = np.array([first.setdefault(text, code) for code, text in enumerate(values)],
                    dtype=np.int64)
    encoded = pc.dictionary_encode(pa.array(same[np.asarray(codes, dtype=np.int64)]))
    texts = [values[code] for code in encoded.dictionary.to_pylist()]
    return pa.DictionaryArray.from_arrays(encoded.indices, pa.array(texts, pa.string()))


def _players(metas: Sequence[dict[str, Any]]) -> pa.DictionaryArray:
    """The games' player names by seat (``meta["players"]``), game after game, as
    :func:`_dictionary` gives them: a game's names looked up once per distinct seating."""
    seatings: dict[tuple[str, ...], int] = {}
    which = np.fromiter((seatings.setdefault(tuple(meta["players"]), len(seatings))
                         for meta in metas), dtype=np.int64, count=len(metas))
    names: dict[str, int] = {}
    rows = np.array([[names.setdefault(str(name), len(names)) for name in seating]
                     for seating in seatings], dtype=np.int64)
    return _dictionary(rows[which].ravel() if len(metas) else np.zeros(0, np.int64),
                       list(names))


@functools.lru_cache(maxsize=4)
def _clue_json(clue_texts: tuple[str, ...]) -> np.ndarray:
    """A table's clue texts as JSON strings (object array), made once per bank, not per
    chunk (4,006 texts: 3 µs a game of a 5,000-game chunk)."""
    return np.array([json_text(text) for text in clue_texts], dtype=object)


def _json_strings(texts: np.ndarray, dumps: Any) -> np.ndarray:
    """Each of ``texts`` (a few distinct ones) as a JSON string."""
    known: dict[str, str] = {}
    return np.array([known.get(text) or known.setdefault(text, dumps(text))
                     for text in texts.tolist()], dtype=object)


def _concat(columns: list[Any], size: int) -> np.ndarray:
    """Row-wise concatenation of string columns (object arrays or constants) into ``size``
    strings, with one C-level join and one split instead of an operation per cell."""
    parts = _concat_text(columns, size, "\x01").split("\x01")
    return np.array(parts[:-1], dtype=object)


def _concat_text(columns: list[Any], size: int, end: str) -> str:
    """The ``size`` rows of :func:`_concat` in one text, each ended by ``end`` (a character
    JSON text never holds raw: a control character)."""
    table = np.empty((size, len(columns) + 1), dtype=object)
    for index, column in enumerate(columns):
        table[:, index] = column
    table[:, -1] = end
    return "".join(table.ravel().tolist())


_PLAYERS_JSON: dict[tuple[str, ...], str] = {}


def _meta_json(meta: dict[str, Any], dumps: Any) -> str:
    """``dumps(meta)``, with a fast path for the runner's {game, deal, players} (same bytes)."""
    if (len(meta) == 3 and list(meta) == ["game", "deal", "players"]
            and type(meta["game"]) is int and type(meta["deal"]) is int):
        players = tuple(meta["players"])
        text = _PLAYERS_JSON.get(players)
        if text is None:
            text = _PLAYERS_JSON[players] = dumps(list(players))
        return f'{{"game":{meta["game"]},"deal":{meta["deal"]},"players":{text}}}'
    return dumps(meta)
