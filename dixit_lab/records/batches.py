"""Game records in columnar batches: many games parsed at once by pyarrow, no Python object
per game or round, so that tables of millions of games are computed in bounded memory.

:func:`file_batches` reads a games file (``games.jsonl`` or ``games.jsonl.zst``) a batch of
lines at a time and, with ``check=True``, refuses what :func:`~dixit_lab.records.integrity.
read_checked_records` refuses (game indices not 0..N-1 once each in order, a line that is not
a whole record, scores that are not the running sum of points), naming the file and line.
:func:`record_batches` gives the same batches for records already in memory. Each
:class:`GameBatch` holds one table size (a file mixing sizes gives one batch per size).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.core.rules import round_outcome
from dixit_lab.errors import ConfigError
from dixit_lab.records.decks import DeckLookup, by_name
from dixit_lab.records.files import open_records
from dixit_lab.records.format import (
    GAME_FIELDS,
    GAME_OPTIONAL_FIELDS,
    ROUND_FIELDS,
    ROUND_OPTIONAL_FIELDS,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from dixit_lab.records.format import GameRecord

__all__ = ["BATCH_GAMES", "OUTCOME_NAMES", "UNPARSED_GAME_FIELDS", "GameBatch",
           "batches_of_lines", "file_batches", "record_batches", "rule_sets"]

#: games parsed at once: 30 MB of JSON, a few hundred MB while parsed (what `report` peaks at)
BATCH_GAMES = 10_000


#: the game fields the columnar reader leaves unparsed: the seeds (a replay's, not a
#: table's) and the rule options (read as their JSON text, :func:`_rule_text`)
UNPARSED_GAME_FIELDS: tuple[str, ...] = ("seed", "spawn_key", "rule_options")


def _schema() -> pa.Schema:
    """What the reader parses of a record: :data:`GAME_FIELDS` (but
    :data:`UNPARSED_GAME_FIELDS`), the rounds' :data:`ROUND_FIELDS`, and of ``meta`` the
    game index and the player names."""
    import pyarrow as pa

    ints = pa.list_(pa.int64())
    fault = pa.struct([("seat", pa.int64()), ("action", pa.string()), ("kind", pa.string()),
                       ("message", pa.string())])
    kinds = {"int": pa.int64(), "str": pa.string(), "ints": ints, "strs": pa.list_(pa.string()),
             "faults": pa.list_(fault)}
    kinds["rounds"] = pa.list_(pa.struct([(name, kinds[kind])
                                          for name, kind in ROUND_FIELDS + ROUND_OPTIONAL_FIELDS]))
    kinds["meta"] = pa.struct([("game", pa.int64()), ("players", pa.list_(pa.string()))])
    return pa.schema([(name, kinds[kind]) for name, kind in GAME_FIELDS + GAME_OPTIONAL_FIELDS
                      if name not in UNPARSED_GAME_FIELDS])


def _ints(array: Any, fill: int = -1) -> np.ndarray:
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(array, fill).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass
class GameBatch:
    """Games of one table size ``n``: per game (``G``), per round (``R``) and per seat-round
    (``R * n``, rounds in play order, seats in seat order) arrays."""

    n: int
    record_index: np.ndarray  # (G,) line of the game in its file, 0-based
    game: np.ndarray          # (G,) meta.game (the record index when absent)
    rules: Any                # (G,) pyarrow strings
    deck: Any                 # (G,)
    end_reason: Any           # (G,)
    agents: Any               # (G * n,) pyarrow strings, game-major
    players: Any              # (G * n,)
    final_scores: np.ndarray  # (G, n)
    winner_game: np.ndarray   # (W,) position in the batch of the game of each winner
    winner_seat: np.ndarray   # (W,) the winner's seat
    rule_options: list[str]   # (G,) the JSON text of each game's rule options
    round_game: np.ndarray    # (R,) position of the round's game in the batch
    round_start: np.ndarray   # (G + 1,) first round of each game (and R)
    round_number: np.ndarray  # (R,) 0-based within its game
    storyteller: np.ndarray   # (R,)
    storyteller_card: np.ndarray  # (R,) deck index
    clue: Any                 # (R,) pyarrow strings
    display: np.ndarray       # (R, D) deck indices (D cards shown: n, or 5 at 3 players)
    card_owner: np.ndarray    # (R, D) the seat that played each shown card
    votes: np.ndarray         # (R, n) display position, -1 for the storyteller
    points: np.ndarray        # (R, n)
    scores: np.ndarray        # (R, n)
    faults: np.ndarray        # (R, n) faults of the seat in the round
    fault_round: np.ndarray   # (F,) the round of each fault
    fault_seat: np.ndarray    # (F,) its seat
    fault_kinds: Any          # (F,) pyarrow strings: its kind
    hands: Any                # (R,) pyarrow list of the storyteller's hand
    unperceived: np.ndarray   # (R, n) 1 if the seat could not perceive the round's clue
    fault_actions: Any = None  # (F,) pyarrow strings: the action that failed (None: none)
    fault_messages: Any = None  # (F,) pyarrow strings: its message (None: none)

    @property
    def games(self) -> int:
        return len(self.record_index)

    @property
    def rounds(self) -> int:
        return len(self.round_game)

    @cached_property
    def target(self) -> np.ndarray:
        """(R,) display position of the storyteller's card."""
        return np.argmax(self.display == self.storyteller_card[:, None], axis=1)

    @cached_property
    def found(self) -> np.ndarray:
        """(R, n) the seat's vote found the storyteller's card (False for the storyteller)."""
        return (self.votes >= 0) & (self.votes == self.target[:, None])

    @cached_property
    def n_finders(self) -> np.ndarray:
        return self.found.sum(axis=1)

    @cached_property
    def votes_received(self) -> np.ndarray:
        """(R, n) votes of other players on the seat's cards (for the storyteller: the
        finds); a vote on one's own card, which ``own_card_votes`` allows, is nobody's."""
        votes = self.votes.ravel()
        cast = np.flatnonzero(votes >= 0)  # (round * n + seat) of every vote
        rows, seats = np.divmod(cast, self.n)
        shown = self.card_owner.shape[1]
        owners = self.card_owner.ravel().take(rows * shown + votes.take(cast))
        others = owners != seats
        flat = np.bincount((rows * self.n + owners)[others], minlength=self.rounds * self.n)
        return flat.reshape(self.rounds, self.n)

    @cached_property
    def is_storyteller(self) -> np.ndarray:
        return np.arange(self.n)[None, :] == self.storyteller[:, None]

    @cached_property
    def outcome_codes(self) -> np.ndarray:
        """(R,) 0 all_found, 1 some_found, 2 none_found (the names: ``OUTCOME_NAMES``)."""
        codes = np.empty(self.rounds, dtype=np.int8)
        voters = self.n - 1
        for finders in np.unique(self.n_finders):
            codes[self.n_finders == finders] = OUTCOME_NAMES.index(
                round_outcome(int(finders), voters))
        return codes

    def seat_values(self, per_game_seat: Any) -> Any:
        """A (G * n,) per game and seat array repeated on every (R * n) seat-round."""
        rows = (self.round_game[:, None] * self.n + np.arange(self.n)[None, :]).ravel()
        return per_game_seat.take(rows) if hasattr(per_game_seat, "take") else \
            per_game_seat[rows]

    @cached_property
    def player_codes(self) -> tuple[np.ndarray, list[str]]:
        """(G * n,) code of each seat's player name, and the names by code (first seen
        first)."""
        codes, names = self.coded("players")
        return codes, [str(name) for name in names]

    def coded(self, column: str) -> tuple[np.ndarray, list[Any]]:
        """A text column of the batch (``agents``, ``players``, ``deck``, ``rules``,
        ``clue``...) dictionary-encoded, once per batch for all its readers: ``(codes,
        values)`` with ``values[codes[i]]`` its ``i``-th value, values first seen first (a
        null is a value of its own, None)."""
        import pyarrow.compute as pc

        found = self._codes.get(column)
        if found is None:
            encoded = pc.dictionary_encode(getattr(self, column), null_encoding="encode")
            if hasattr(encoded, "combine_chunks"):
                encoded = encoded.combine_chunks()
            found = self._codes[column] = (
                np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
                encoded.dictionary.to_pylist())
        return found

    @cached_property
    def _codes(self) -> dict[str, tuple[np.ndarray, list[Any]]]:
        return {}


OUTCOME_NAMES: tuple[str, ...] = ("all_found", "some_found", "none_found")


def _from_table(table: pa.Table, record_index: np.ndarray, rule_options: list[str]
                ) -> Iterator[GameBatch]:
    """Batches (one per table size) of a parsed table of records."""
    import pyarrow as pa
    import pyarrow.compute as pc

    agents = table.column("agents").combine_chunks()
    sizes = np.asarray(pc.list_value_length(agents).to_numpy(zero_copy_only=False))
    sizes = sizes * 1000 + _display_sizes(table.column("rounds").combine_chunks(), sizes)
    if len(np.unique(sizes)) > 1:
        for size in np.unique(sizes):
            pick = np.flatnonzero(sizes == size)
            part = table.take(pa.array(pick))
            yield from _from_table(part, record_index[pick], [rule_options[i] for i in pick])
        return
    n, shown = (int(sizes[0]) // 1000, int(sizes[0]) % 1000) if len(sizes) else (0, 0)
    rounds = table.column("rounds").combine_chunks()
    flat = rounds.flatten()
    r = len(flat)

    def matrix(name: str, width: int) -> np.ndarray:
        values = flat.field(name)
        lengths = pc.list_value_length(values).to_numpy(zero_copy_only=False)
        if r and (np.any(lengths != width)):
            raise ConfigError(f"a round's {name} has another length than the game's others")
        return _ints(values.flatten(), -1).reshape(r, width)

    meta = table.column("meta").combine_chunks()
    games = meta.field("game")
    game = np.where(pc.is_null(games).to_numpy(zero_copy_only=False), record_index,
                    _ints(games))
    players = meta.field("players").flatten() if meta.field("players").null_count == 0 \
        else None
    if players is None or len(players) != len(agents.flatten()):
        players = _player_names(meta, agents, n)
    round_game = np.asarray(rounds.value_parent_indices(), dtype=np.int64)
    offsets = np.asarray(rounds.offsets, dtype=np.int64)
    offsets = offsets - offsets[0]
    round_number = np.arange(r, dtype=np.int64) - offsets[round_game]
    faults_list = flat.field("faults")
    fault_structs = faults_list.flatten()
    fault_round = np.asarray(faults_list.value_parent_indices(), dtype=np.int64)
    fault_seat = _ints(fault_structs.field("seat"), 0)
    faults = np.bincount(fault_round * n + fault_seat, minlength=r * n).reshape(r, n) \
        if len(fault_round) else np.zeros((r, n), dtype=np.int64)
    unheard_list = flat.field("unperceived")
    unheard_round = np.asarray(unheard_list.value_parent_indices(), dtype=np.int64)
    unheard_seat = _ints(unheard_list.flatten(), 0)
    if np.any((unheard_seat < 0) | (unheard_seat >= max(n, 1))):
        raise ConfigError("a round's unperceived names a seat the game does not have")
    unperceived = np.minimum(np.bincount(unheard_round * n + unheard_seat,
                                         minlength=r * n), 1).reshape(r, n) \
        if len(unheard_round) else np.zeros((r, n), dtype=np.int64)
    winners = table.column("winners").combine_chunks()
    finals = table.column("final_scores").combine_chunks()
    if np.any(pc.list_value_length(finals).to_numpy(zero_copy_only=False) != n):
        raise ConfigError("final_scores do not have one entry per player")
    yield GameBatch(
        n=n, record_index=record_index, game=game,
        rules=table.column("rules").combine_chunks(), deck=table.column("deck").combine_chunks(),
        end_reason=table.column("end_reason").combine_chunks(), agents=agents.flatten(),
        players=players, final_scores=_ints(finals.flatten()).reshape(-1, n),
        winner_game=np.asarray(winners.value_parent_indices(), dtype=np.int64),
        winner_seat=_ints(winners.flatten()), rule_options=rule_options,
        round_game=round_game, round_start=offsets, round_number=round_number,
        storyteller=_ints(flat.field("storyteller")),
        storyteller_card=_ints(flat.field("storyteller_card")), clue=flat.field("clue"),
        display=matrix("display", shown), card_owner=matrix("card_owner", shown),
        votes=matrix("votes", n), points=matrix("points", n), scores=matrix("scores", n),
        faults=faults,
        fault_round=fault_round, fault_seat=fault_seat,
        fault_kinds=fault_structs.field("kind"), hands=flat.field("storyteller_hand"),
        unperceived=unperceived, fault_actions=fault_structs.field("action"),
        fault_messages=fault_structs.field("message"))


def _display_sizes(rounds: Any, sizes: np.ndarray) -> np.ndarray:
    """Cards displayed in each game's first round (its table size for a game without one)."""
    import pyarrow.compute as pc

    offsets = np.asarray(rounds.offsets, dtype=np.int64)
    offsets = offsets - offsets[0]
    played = offsets[1:] > offsets[:-1]
    lengths = pc.list_value_length(rounds.flatten().field("display")).to_numpy(
        zero_copy_only=False)
    first = np.where(played, offsets[:-1], 0)
    shown = lengths[first] if len(lengths) else np.zeros(len(sizes), np.int64)
    return np.where(played, shown, sizes).astype(np.int64)


def _player_names(meta: Any, agents: Any, n: int) -> Any:
    """Player names by seat: meta.players where a game has them, else its agent specs."""
    import pyarrow as pa

    names = meta.field("players").to_pylist()
    specs = agents.to_pylist()
    out: list[str] = []
    for index, (given, spec) in enumerate(zip(names, specs, strict=True)):
        if given is not None and len(given) != n:
            raise ConfigError(f"game {index}: meta['players'] names {len(given)} players for "
                             f"{n} seats")
        out.extend(str(x) for x in (given if given is not None else spec))
    return pa.array(out, pa.string())


def _rule_text(line: bytes) -> str:
    start = line.find(b'"rule_options":')
    end = line.find(b',"agents":', start)
    return line[start + 15:end].decode() if start >= 0 and end > start else "{}"


def _parse(lines: Sequence[bytes]) -> pa.Table:
    import pyarrow as pa
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=_schema(), unexpected_field_behavior="ignore")
    read = pj.ReadOptions(block_size=max(1 << 20, 2 * max(len(x) for x in lines)))
    return pj.read_json(pa.py_buffer(b"".join(lines)), read_options=read,
                        parse_options=options)


def record_batches(records: Iterable[GameRecord], batch_games: int = BATCH_GAMES
                   ) -> Iterator[GameBatch]:
    """:class:`GameBatch` es of records in memory (``record_index`` their position)."""
    lines: list[bytes] = []
    first = 0
    for record in records:
        lines.append(record.to_json().encode() + b"\n")
        if len(lines) == batch_games:
            yield from _from_lines(lines, first)
            first += len(lines)
            lines = []
    if lines:
        yield from _from_lines(lines, first)


def batches_of_lines(lines: Sequence[bytes], indices: np.ndarray) -> Iterator[GameBatch]:
    """The batches of some record lines (each ending with a newline) of games ``indices``
    (their ``record_index``)."""
    if not len(lines):
        return
    yield from _from_table(_parse(lines), indices, [_rule_text(line) for line in lines])


def _from_lines(lines: list[bytes], first: int) -> Iterator[GameBatch]:
    yield from batches_of_lines(lines, np.arange(first, first + len(lines), dtype=np.int64))


def file_batches(path: Path, *, check: bool = True, batch_games: int = BATCH_GAMES,
                 decks: DeckLookup = by_name) -> Iterator[GameBatch]:
    """The records of a games file in batches; with ``check``, a file that is not whole and
    consistent is refused (:class:`~dixit_lab.errors.ConfigError` naming file and line, the
    message of :func:`~dixit_lab.records.integrity.check_record_line`); ``decks``: how the
    games' deck is found, whose size bounds their cards (a results folder's:
    :func:`~dixit_lab.records.decks.folder_decks`)."""
    from array import array

    lines: list[bytes] = []
    numbers: list[int] = []
    line_of = array("q")  # the line of every game so far: 8 bytes a game, for messages
    first = 0
    with open_records(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            lines.append(line if line.endswith(b"\n") else line + b"\n")
            numbers.append(number)
            if len(lines) == batch_games:
                yield from _checked(path, lines, numbers, first, check, line_of, decks)
                first += len(lines)
                lines, numbers = [], []
    if lines:
        yield from _checked(path, lines, numbers, first, check, line_of, decks)


def _checked(path: Path, lines: list[bytes], numbers: list[int], first: int, check: bool,
             line_of: Any, decks: DeckLookup) -> Iterator[GameBatch]:
    try:
        batches = list(_from_lines(lines, first))
    except (ValueError, KeyError, TypeError):
        _explain(path, lines, numbers, first, line_of)
        raise
    if check and any(_first_inconsistent(batch, decks) is not None or not _rules_build(batch)
                     for batch in batches):
        _explain(path, lines, numbers, first, line_of)
        raise ConfigError(f"{path}: games {first}..{first + len(lines) - 1} contradict "
                          f"their own scores, seats or cards; the file was edited")
    line_of.extend(numbers)
    yield from batches


def _rules_build(batch: GameBatch) -> bool:
    """Whether every game's rule options make a rule set."""
    try:
        rule_sets(batch.rule_options)
    except (TypeError, ValueError, KeyError):
        return False
    return True


def _explain(path: Path, lines: list[bytes], numbers: list[int], first: int,
             line_of: Any) -> None:
    """Raise the one-line error of the first bad line of a batch (checked record by record,
    as :func:`~dixit_lab.records.integrity.read_checked_records` does)."""
    from dixit_lab.records.integrity import check_record_line

    batch_lines = dict(zip(range(first, first + len(lines)), numbers, strict=True))

    def first_line(index: int) -> int:
        return int(line_of[index]) if index < len(line_of) else batch_lines[index]

    for position, (line, number) in enumerate(zip(lines, numbers, strict=True)):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{path}, line {number}: not UTF-8 text") from None
        check_record_line(text, f"{path}, line {number}", first + position, first_line)


def _first_inconsistent(batch: GameBatch, decks: DeckLookup = by_name) -> int | None:
    """The record index of the first game whose indices, scores, winners, seats, votes or
    cards contradict themselves (or its deck, when it can be loaded), or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from dixit_lab.records.format import END_REASONS

    bad = batch.game != batch.record_index
    known = pc.is_in(batch.end_reason, value_set=pa.array(END_REASONS, pa.string()))
    bad |= ~np.asarray(pc.fill_null(known, False).to_numpy(zero_copy_only=False), dtype=bool)
    for texts in (batch.rules, batch.deck):
        bad |= np.asarray(pc.is_null(texts).to_numpy(zero_copy_only=False), dtype=bool)
    missing = np.asarray(pc.is_null(batch.agents).to_numpy(zero_copy_only=False), dtype=bool)
    bad |= missing.reshape(batch.games, batch.n).any(axis=1) if batch.n else False
    if batch.rounds:
        bad |= np.bincount(batch.round_game[_bad_rounds(batch, decks)],
                           minlength=batch.games) > 0
        totals = np.cumsum(batch.points, axis=0)
        padded = np.r_[np.zeros((1, batch.n), np.int64), totals]
        running = totals - padded[batch.round_start[batch.round_game]]
        wrong = np.any(running != batch.scores, axis=1)
        bad |= np.bincount(batch.round_game[wrong], minlength=batch.games) > 0
        ends = batch.round_start[1:] - 1
        played = batch.round_start[1:] > batch.round_start[:-1]
        finals = np.where(played[:, None], running[np.maximum(ends, 0)], batch.final_scores)
        bad |= np.any(finals != batch.final_scores, axis=1)
    top = batch.final_scores == batch.final_scores.max(axis=1, keepdims=True)
    marked = np.zeros_like(top)
    seats = batch.winner_seat
    outside = (seats < 0) | (seats >= batch.n)
    bad[batch.winner_game[outside]] = True
    marked[batch.winner_game[~outside], seats[~outside]] = True
    counts = np.bincount(batch.winner_game, minlength=batch.games)
    bad |= np.any(marked != top, axis=1) | (counts != top.sum(axis=1))
    position = np.flatnonzero(bad)
    return int(batch.record_index[position[0]]) if len(position) else None


def _bad_rounds(batch: GameBatch, decks: DeckLookup) -> np.ndarray:
    """(R,) rounds whose seats, votes or cards are out of range: a storyteller or an owner
    that is not a seat, a vote that is not a displayed position (or the storyteller's), a
    storyteller's card not displayed, a card outside the deck, no clue."""
    import pyarrow.compute as pc

    n, shown = batch.n, batch.display.shape[1]
    teller = batch.storyteller
    bad = (teller < 0) | (teller >= n)
    bad |= np.asarray(pc.is_null(batch.clue).to_numpy(zero_copy_only=False), dtype=bool)
    bad |= np.any((batch.card_owner < 0) | (batch.card_owner >= n), axis=1)
    is_teller = np.arange(n)[None, :] == teller[:, None]
    votes = batch.votes
    bad |= np.any(np.where(is_teller, votes != -1, (votes < 0) | (votes >= shown)), axis=1)
    bad |= ~np.any(batch.display == batch.storyteller_card[:, None], axis=1)
    size = _deck_size(batch, decks)
    if size is not None:
        cards = np.concatenate([batch.display, batch.storyteller_card[:, None]], axis=1)
        bad |= np.any((cards < 0) | (cards >= size), axis=1)
    return bad


def _deck_size(batch: GameBatch, decks: DeckLookup) -> int | None:
    """The cards of the batch's deck (one deck, loadable here), else None."""
    import pyarrow.compute as pc

    names = pc.unique(batch.deck).to_pylist()
    if len(names) != 1:
        return None
    deck = decks(str(names[0]))
    return None if deck is None else len(deck)


def rule_sets(texts: Sequence[str]) -> dict[str, Any]:
    """Each distinct rule-options text and its :class:`~dixit_lab.core.rules.RuleSet`."""
    from dixit_lab.core.rules import RuleSet

    return {text: RuleSet(**json.loads(text)) for text in dict.fromkeys(texts)}
