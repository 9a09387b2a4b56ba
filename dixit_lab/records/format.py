"""Game and round records: what happened, in a form that is lossless in JSON Lines.

Cards are deck indices (``GameRecord.deck`` names the deck), seats are 0-based, displayed
cards are 0-based positions. ``RoundRecord.votes`` is indexed by seat, with ``None`` for the
storyteller.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from dixit_lab.core.rules import round_outcome
from dixit_lab.errors import ConfigError

if TYPE_CHECKING:
    pass

__all__ = [
    "END_REASONS",
    "FAULT_KINDS",
    "GAME_FIELDS",
    "GAME_OPTIONAL_FIELDS",
    "ROUND_FIELDS",
    "ROUND_OPTIONAL_FIELDS",
    "ROUND_READ_DEFAULTS",
    "Fault",
    "GameRecord",
    "RoundRecord",
    "game_index",
    "game_json_keys",
    "json_text",
    "new_round",
    "one_line",
    "part_name",
    "player_names",
    "read_jsonl",
    "round_json_keys",
    "write_jsonl",
]

EndReason = Literal["target_score", "deck_exhausted", "max_rounds"]
END_REASONS: tuple[str, ...] = ("target_score", "deck_exhausted", "max_rounds")


@dataclass(frozen=True, slots=True)
class Fault:
    """A seat's failed decision or hook (``on_illegal="fallback"``): for an action, the engine
    replaced it by a seeded legal one. ``action`` is ``tell``, ``submit``, ``vote``,
    ``begin_game`` or ``observe``; ``kind`` is the failure class: ``illegal`` (an answer the
    rules forbid), ``raised`` (the agent raised), ``timeout`` and ``crashed`` (an isolated
    agent's process), or a class an agent reports (e.g. a model's ``unparsable`` reply)."""

    seat: int
    agent: str
    action: str
    message: str
    kind: str = "illegal"

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "agent": self.agent, "action": self.action,
                "message": self.message, "kind": self.kind}


#: The fault classes (``Fault.kind``) the harness records, each with a column of its own in
#: ``agents.csv`` (``faults_<kind>``), in this order (a kind an agent reports that is not here
#: gets a column after them): an answer the rules forbid, an agent that raised, an isolated
#: agent's timeout or crash, and the model agents' reply that held no answer, declined,
#: failed at the server, or was not sent because a budget was reached.
FAULT_KINDS: tuple[str, ...] = ("illegal", "raised", "timeout", "crashed", "unparsable",
                                "refused", "backend", "budget")


#: The fields of a round record, in the order a JSON line holds them, and their JSON kind
#: (``int``, ``str`` or ``ints``, a list of ints or nulls); ``faults`` follows when there are
#: any, then ``unperceived`` (the seats that could not perceive the clue) when there are any.
#: The one definition of the format: ``RoundRecord.to_dict`` and the batched engine's
#: vectorised writer (:func:`round_json_keys`) both follow it.
ROUND_FIELDS: tuple[tuple[str, str], ...] = (
    ("storyteller", "int"), ("clue", "str"), ("storyteller_card", "int"), ("display", "ints"),
    ("card_owner", "ints"), ("votes", "ints"), ("points", "ints"), ("scores", "ints"),
    ("storyteller_hand", "ints"),
)
#: The fields a round holds only when they are not empty, after :data:`ROUND_FIELDS`, and
#: their kind (``faults``: a list of ``{seat, action, kind}``).
ROUND_OPTIONAL_FIELDS: tuple[tuple[str, str], ...] = (("faults", "faults"), ("unperceived", "ints"))
#: Fields of :data:`ROUND_FIELDS` that records written before them lack, and what reading
#: such a record gives instead.
ROUND_READ_DEFAULTS: dict[str, Any] = {"storyteller_hand": ()}
#: The fields of a game record, in the order a JSON line holds them, and their JSON kind:
#: ``int``, ``str``, ``ints`` (a list of ints), ``strs`` (a list of strings), ``options`` (an
#: object: the rule options), ``rounds`` (the list of round records, :data:`ROUND_FIELDS`).
#: The one definition: ``GameRecord.to_dict`` and ``from_dict``, the columnar reader's schema
#: (:mod:`dixit_lab.records.batches`) and the batched engine's writer
#: (:func:`game_json_keys`) follow it.
GAME_FIELDS: tuple[tuple[str, str], ...] = (
    ("seed", "int"), ("spawn_key", "ints"), ("rules", "str"), ("rule_options", "options"),
    ("agents", "strs"), ("deck", "str"), ("rounds", "rounds"), ("final_scores", "ints"),
    ("winners", "ints"), ("end_reason", "str"),
)
#: The fields a game holds only when they are not empty, after :data:`GAME_FIELDS`, and their
#: kind (``meta``: an object, e.g. ``{"game", "deal", "players"}``).
GAME_OPTIONAL_FIELDS: tuple[tuple[str, str], ...] = (("meta", "meta"),)
_META_KEY = '"meta":{"game":'
#: what JSON may hold raw but a line splitter (``str.splitlines()``, JavaScript's line
#: terminators) splits on, or UTF-8 cannot encode: NEL, U+2028, U+2029, lone surrogates
_SPLITTERS = re.compile("[\x85\u2028\u2029\ud800-\udfff]")


def json_text(value: Any) -> str:
    """``value`` as compact JSON, as a record line holds it: UTF-8 text kept as it is, except
    what a line splitter could split or no file could hold (NEL, U+2028, U+2029, a lone
    surrogate), written as its ``\\uXXXX`` escape. Every reader reads it back as the same
    value, and every splitter sees one line: ``"\\n"`` is the only line break in a games
    file. The one writer of record JSON (both engines, the parts' checks, people's
    decisions)."""
    return one_line(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def one_line(text: str) -> str:
    """JSON ``text`` with NEL, U+2028, U+2029 and lone surrogates written as their
    ``\\uXXXX`` escapes: the same value for every JSON reader, one line for every splitter,
    and text UTF-8 can encode (also the exchange store's lines)."""
    if text.isascii():
        return text
    return _SPLITTERS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def round_json_keys() -> list[tuple[str, str]]:
    """(text before the value, text after it) for each field of :data:`ROUND_FIELDS`, so that
    joining them around the values' JSON gives ``RoundRecord.to_json`` byte for byte."""
    keys = []
    for index, (name, kind) in enumerate(ROUND_FIELDS):
        opening = ("{" if index == 0 else ",") + json.dumps(name) + ":"
        keys.append((opening + "[", "]") if kind == "ints" else (opening, ""))
    return keys


def game_json_keys() -> list[tuple[str, str]]:
    """(text before the value, text after it) for each field of :data:`GAME_FIELDS`, so that
    joining them around the values' JSON (lists without their brackets, as for
    :func:`round_json_keys`; the rounds joined by commas) and then ``,"meta":...`` if any
    and ``}`` gives ``GameRecord.to_json`` byte for byte."""
    keys = []
    for index, (name, kind) in enumerate(GAME_FIELDS):
        opening = ("{" if index == 0 else ",") + json.dumps(name) + ":"
        keys.append((opening + "[", "]") if kind in ("ints", "rounds") else (opening, ""))
    return keys


def part_name(first: int, last: int) -> str:
    """The file of a chunk of saved games (``first`` .. ``last``) in a results folder's
    ``parts/``."""
    return f"games-{first:07d}-{last:07d}.jsonl"


def game_index(line: str) -> int:
    """The game index (``meta.game``) of a record line, read without parsing the line: the
    runner's records end with their ``meta``, which starts with the game index."""
    at = line.rfind(_META_KEY)
    if at < 0:
        raise ValueError("no meta.game")
    start = end = at + len(_META_KEY)
    while end < len(line) and line[end].isdigit():
        end += 1
    if end == start:
        raise ValueError("meta.game is not a number")
    return int(line[start:end])


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One round. ``points`` are this round's points; ``scores`` the totals after it.
    ``storyteller_hand`` is the storyteller's hand when it told (for analysis: it was never
    shown to another seat). ``unperceived``: the seats that said they could not perceive the
    clue (outside their clue bank, with no model to embed it; see
    :meth:`~dixit_lab.core.agent.GameContext.cannot_perceive`)."""

    storyteller: int
    clue: str
    storyteller_card: int
    display: tuple[int, ...]
    card_owner: tuple[int, ...]
    votes: tuple[int | None, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    faults: tuple[Fault, ...] = ()
    storyteller_hand: tuple[int, ...] = ()
    unperceived: tuple[int, ...] = ()

    @property
    def finders(self) -> tuple[int, ...]:
        target = self.display.index(self.storyteller_card)
        return tuple(seat for seat, vote in enumerate(self.votes) if vote == target)

    @property
    def outcome(self) -> str:
        return round_outcome(len(self.finders), len(self.votes) - 1)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: list(getattr(self, name)) if kind == "ints"
                                else getattr(self, name) for name, kind in ROUND_FIELDS}
        if self.faults:
            data["faults"] = [fault.to_dict() for fault in self.faults]
        if self.unperceived:
            data["unperceived"] = list(self.unperceived)
        return data

    def with_faults(self, faults: tuple[Fault, ...]) -> RoundRecord:
        """This round with ``faults`` added after its own."""
        return dataclasses.replace(self, faults=self.faults + faults)

    def with_unperceived(self, seats: tuple[int, ...]) -> RoundRecord:
        """This round with ``seats`` as the seats that could not perceive its clue."""
        return dataclasses.replace(self, unperceived=seats)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundRecord:
        values: dict[str, Any] = {}
        for name, kind in ROUND_FIELDS:
            value = data[name] if name not in ROUND_READ_DEFAULTS else data.get(
                name, ROUND_READ_DEFAULTS[name])
            values[name] = tuple(value) if kind == "ints" else value
        return cls(**values,
                   faults=tuple(Fault(**fault) for fault in data.get("faults", ())),
                   unperceived=tuple(data.get("unperceived", ())))


_new_object = object.__new__
(_storyteller, _clue, _card, _display, _owner, _votes, _points, _scores, _faults, _hand,
 _unperceived) = (getattr(RoundRecord, f.name).__set__ for f in dataclasses.fields(RoundRecord))


def new_round(storyteller: int, clue: str, storyteller_card: int, display: tuple[int, ...],
              card_owner: tuple[int, ...], votes: tuple[int | None, ...],
              points: tuple[int, ...], scores: tuple[int, ...], faults: tuple[Fault, ...],
              storyteller_hand: tuple[int, ...]) -> RoundRecord:
    """``RoundRecord(...)`` for the reference engine, eleven rounds a game: the frozen
    dataclass's slots set directly (its ``__init__`` sets each through
    ``object.__setattr__``: half the time of a record, 2 % of a random game).
    ``tests/records/test_format.py`` checks it gives the same record."""
    record = _new_object(RoundRecord)
    _storyteller(record, storyteller)
    _clue(record, clue)
    _card(record, storyteller_card)
    _display(record, display)
    _owner(record, card_owner)
    _votes(record, votes)
    _points(record, points)
    _scores(record, scores)
    _faults(record, faults)
    _hand(record, storyteller_hand)
    _unperceived(record, ())
    return record


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole game: enough to replay it and to analyse it."""

    seed: int
    spawn_key: tuple[int, ...]
    rules: str
    rule_options: dict[str, Any]
    agents: tuple[str, ...]
    deck: str
    rounds: tuple[RoundRecord, ...]
    final_scores: tuple[int, ...]
    winners: tuple[int, ...]
    end_reason: EndReason
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_players(self) -> int:
        return len(self.agents)

    def to_dict(self) -> dict[str, Any]:
        data = {name: _WRITE.get(kind, _same)(getattr(self, name)) for name, kind in GAME_FIELDS}
        for name, _ in GAME_OPTIONAL_FIELDS:
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        values = {name: _READ.get(kind, _same)(data[name]) for name, kind in GAME_FIELDS}
        for name, _ in GAME_OPTIONAL_FIELDS:
            values[name] = dict(data.get(name, {}))
        return cls(**values)

    def to_json(self) -> str:
        """One line of JSON (:func:`json_text`); equal records give identical bytes."""
        return json_text(self.to_dict())

    @classmethod
    def from_json(cls, line: str) -> GameRecord:
        return cls.from_dict(json.loads(line))


def _same(value: Any) -> Any:
    return value


#: how a game field of each kind (:data:`GAME_FIELDS`) becomes JSON, and is read back
_WRITE: dict[str, Any] = {"ints": list, "strs": list,
                          "rounds": lambda rounds: [r.to_dict() for r in rounds]}
_READ: dict[str, Any] = {"ints": tuple, "strs": tuple, "options": dict,
                         "rounds": lambda rounds: tuple(RoundRecord.from_dict(r) for r in rounds)}


def player_names(record: GameRecord) -> tuple[str, ...]:
    """The player name of each seat: ``record.meta["players"]`` if present, else the specs."""
    names = record.meta.get("players")
    if names is None:
        return tuple(record.agents)
    if len(names) != record.n_players:
        raise ConfigError(f"game {record.meta.get('game', '?')}: meta['players'] names "
                         f"{len(names)} players for {record.n_players} seats")
    return tuple(str(name) for name in names)


def write_jsonl(records: Iterable[GameRecord], target: str | Path | IO[str]) -> int:
    """Write records one per line; returns how many were written. A path is written
    atomically (the whole file or none; a failed write names it)."""
    if isinstance(target, str | Path):
        from dixit_lab.atomic import atomic_write

        written: list[int] = []

        def write(temporary: Path) -> None:
            with temporary.open("w", encoding="utf-8") as handle:
                written.append(write_jsonl(records, handle))

        atomic_write(target, write)
        return written[0]
    count = 0
    for record in records:
        target.write(record.to_json())
        target.write("\n")
        count += 1
    return count


def read_jsonl(source: str | Path) -> Iterator[GameRecord]:
    """Read records written by :func:`write_jsonl` (a ``.jsonl`` or ``.jsonl.zst`` file, or
    a results folder holding one); a bad line raises naming file and line."""
    from dixit_lab.records.files import games_file, open_text

    path = games_file(source)
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield GameRecord.from_json(line)
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise ConfigError(f"{path}, line {number}: not a game record ({error})") from None
