"""The decisions people made at the table, recorded so that ``dixit-lab replay`` replays them.

A ``play`` run writes ``human_decisions.jsonl`` next to ``games.jsonl``: one line per decision
of a human seat, keyed by a hash of the exact view the seat decided on. When a results folder
holds that file, the replay opens :class:`DecisionRecorder` (the ``human`` agent's recorder:
:mod:`dixit_lab.core.recording`) in every process that plays its games, which points the
agent at it (:func:`recorded_decisions`, :func:`decisions_path`), and the agent answers each
view it is shown with the decision recorded for it.
The same seeds give the same views, so the replayed game is the played game, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dixit_lab.core.agent import Clue
from dixit_lab.core.recording import Recorder, RecordMode
from dixit_lab.plugins.spec import parse_spec
from dixit_lab.records.format import json_text

if TYPE_CHECKING:
    from dixit_lab.run.experiment import ExperimentConfig

__all__ = [
    "DECISIONS_FILE",
    "HUMAN",
    "DecisionLog",
    "DecisionRecorder",
    "answer_from_json",
    "answer_to_json",
    "decisions_path",
    "human_players",
    "load_decisions",
    "recorded_decisions",
    "view_key",
]

DECISIONS_FILE = "human_decisions.jsonl"
HUMAN = "human"  # the agent of a person's seat
_PATH: Path | None = None  # the decisions the human seats of this process replay


def human_players(config: ExperimentConfig) -> list[int]:
    """The pool seats (the config's players, expanded by ``count``) that people play."""
    return [index for index, (_, spec) in enumerate(config.seats())
            if parse_spec(spec)[0] == HUMAN]


def view_key(view: Any) -> str:
    """A digest of everything a view holds (seat, round, hand, clue, display, scores, history):
    two decisions share a key only if they were taken on identical views."""
    return hashlib.blake2b(repr(view).encode("utf-8"), digest_size=16).hexdigest()


def answer_to_json(action: str, answer: Any) -> Any:
    """A human's answer (a :class:`Clue`, a list of cards or a display position) as JSON."""
    if action == "tell":
        return {"card": int(answer.card), "clue": str(answer.text)}
    if action == "submit":
        return [int(card) for card in answer]
    return int(answer)


def answer_from_json(action: str, data: Any) -> Any:
    if action == "tell":
        return Clue(int(data["card"]), str(data["clue"]))
    if action == "submit":
        return [int(card) for card in data]
    return int(data)


@dataclass
class DecisionLog:
    """The decisions of a play run, in the order they were taken."""

    lines: list[str] = field(default_factory=list)

    def add(self, game: int, seat: int, action: str, view: Any, answer: Any) -> None:
        entry = {"game": game, "seat": seat, "round": view.round, "action": action,
                 "view": view_key(view), "answer": answer_to_json(action, answer)}
        self.lines.append(json_text(entry))

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def load_decisions(path: str | Path) -> dict[str, tuple[str, Any]]:
    """{view key: (action, answer)} of a decisions file; a bad line raises naming it."""
    source = Path(path)
    found: dict[str, tuple[str, Any]] = {}
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                action = entry["action"]
                found[entry["view"]] = (action, answer_from_json(action, entry["answer"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise ValueError(f"{source}, line {number}: not a recorded decision "
                                 f"({error})") from None
    return found


def decisions_path() -> Path | None:
    """The decisions file the ``human`` seats of this process (and of the workers it forks)
    replay: the one :func:`recorded_decisions` opened, else None."""
    return _PATH


@contextmanager
def recorded_decisions(folder: str | Path) -> Iterator[Path | None]:
    """While inside, ``human`` seats replay the decisions recorded in ``folder`` (if any)."""
    global _PATH
    path = Path(folder) / DECISIONS_FILE
    if not path.is_file():
        yield None
        return
    previous = _PATH
    _PATH = path.resolve()
    try:
        yield path
    finally:
        _PATH = previous


class DecisionRecorder(Recorder):
    """The ``human`` agent's recorder (``recorder = "decisions"``): ``dixit-lab play`` writes
    the decisions (:class:`DecisionLog`, :mod:`dixit_lab.web.table`); a replay's seats answer
    from them."""

    def session(self, folder: Path, mode: RecordMode | None, budget: Any
                ) -> AbstractContextManager[None]:
        if mode != "replay":  # people's seats are played by `dixit-lab play` only
            return nullcontext()
        return _quiet(recorded_decisions(folder))


@contextmanager
def _quiet(inner: AbstractContextManager[Any]) -> Iterator[None]:
    with inner:
        yield
