"""What keeps a results folder honest: one run at a time (a lock), saved games that belong to
this experiment, and readers that refuse a games.jsonl with a missing, repeated, truncated or
edited game instead of computing tables from it.

Every problem is a :class:`~dixit_lab.run.experiment.ConfigError` naming the file and the line.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol

from dixit_lab.errors import ConfigError
from dixit_lab.records.format import GameRecord, game_index, json_text


class GameSpec(Protocol):
    """What a check needs of a scheduled game (:class:`dixit_lab.run.tournament.GameSpec`
    has it): its index, the pool seats at its table and its deal."""

    @property
    def index(self) -> int: ...

    @property
    def seats(self) -> tuple[int, ...]: ...

    @property
    def deal(self) -> int: ...

__all__ = ["FolderLock", "check_saved_line", "read_checked_records"]

LOCK_NAME = ".lock"


class FolderLock:
    """An exclusive lock on a results folder for one command that writes it (a POSIX lock,
    ``fcntl.lockf``, on ``.lock``: the system releases it when the process dies, so a killed
    command leaves no stale lock, and forked workers do not inherit it): ``run``, ``play``,
    ``report`` and ``tune`` take it. A second one on the same folder gets a one-line
    :class:`ConfigError` naming the holder (``what`` it is, its process) and ``advice``.

    While the lock is held the folder is mode 0700 (only the engine's user may read what is
    being written: the games, the deal secret, a model's exchanges); its mode is restored when
    the lock is released. The lock file records the mode to restore before the folder is
    made private, so after a kill (which leaves the folder 0700 and the file behind) the next
    holder restores the mode the folder had before, not 0700."""

    def __init__(self, folder: Path, what: str = "run",
                 advice: str = "wait for it to finish or choose another --out") -> None:
        self.path = folder / LOCK_NAME
        self.what = what
        self.advice = advice
        self._fd: int | None = None
        self._mode: int | None = None

    def __enter__(self) -> FolderLock:
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner, what, _ = _lock_lines(os.pread(fd, 256, 0))
                for _ in range(20):  # a holder that has just locked writes who it is next
                    if owner != "?":
                        break
                    time.sleep(0.01)
                    owner, what, _ = _lock_lines(os.pread(fd, 256, 0))
                os.close(fd)
                raise ConfigError(f"{self.path.parent} is in use by another {what} (process "
                                  f"{owner}); {self.advice}") from None
            try:  # the holder before us may have removed the file: lock the one in place
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        folder = self.path.parent
        try:
            _, _, recorded = _lock_lines(os.read(fd, 256))  # a killed holder's
            mode = folder.stat().st_mode & 0o7777
            if recorded is not None and mode == 0o700:  # as that holder left it
                mode = recorded
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n{self.what}\n{mode:04o}\n".encode("ascii"))
        except OSError as error:  # a full disk: the lock file named
            os.close(fd)
            raise OSError(error.errno, error.strerror, str(self.path)) from None
        self._fd = fd
        self._mode = mode
        folder.chmod(0o700)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is None:
            return
        if self._mode is not None:
            with contextlib.suppress(OSError):
                self.path.parent.chmod(self._mode)
        self.path.unlink(missing_ok=True)  # still held: no other command has it
        os.close(self._fd)
        self._fd = None


def _lock_lines(content: bytes) -> tuple[str, str, int | None]:
    """The holder's process, what it is and the folder's mode to restore, from a lock file
    (``?``, ``run`` and None where they are missing: an older or half-written file)."""
    lines = content.decode("ascii", "replace").split("\n")
    owner = lines[0].strip() or "?"
    what = lines[1].strip() if len(lines) > 1 and lines[1].strip() else "run"
    mode = lines[2].strip() if len(lines) > 2 else ""
    valid = len(mode) == 4 and all(c in "01234567" for c in mode)
    return owner, what, int(mode, 8) if valid else None


def _meta_tail(spec: GameSpec, names: tuple[str, ...]) -> str:
    meta = {"game": spec.index, "deal": spec.deal, "players": [names[s] for s in spec.seats]}
    return '"meta":' + json_text(meta) + "}"


def check_saved_line(line: str, path: Path, number: int, specs: Sequence[GameSpec],
                     names: tuple[str, ...], seed: int, secret: bytes | None = None) -> int:
    """The game index of a saved record line, after checking that it is a whole record of
    this experiment's game of that index: its seed (and the run's deal ``secret``), its deal
    and its players."""
    where = f"{path}, line {number}"
    try:
        index = game_index(line)
    except ValueError:
        raise ConfigError(f"{where}: not a game record of this runner; delete the file to "
                          f"replay those games") from None
    if not 0 <= index < len(specs):
        raise ConfigError(f"{where}: game {index} is not one of this experiment's "
                          f"{len(specs)} games; delete the file to replay those games")
    spec = specs[index]
    if not line.endswith(_meta_tail(spec, names)):
        raise ConfigError(f"{where}: game {index} is truncated or was played with other "
                          f"players or deals than this experiment's; delete the file to "
                          f"replay those games")
    from dixit_lab.core.seeding import deal_seed

    spawn_key = ",".join(str(k) for k in deal_seed(seed, spec.deal, secret).spawn_key)
    if not line.startswith(f'{{"seed":{seed},"spawn_key":[{spawn_key}],'):
        raise ConfigError(f"{where}: game {index} was played with another seed than this "
                          f"experiment's ({seed}); delete the file to replay those games")
    return index


def _inconsistency(record: GameRecord) -> str | None:
    """What in a record contradicts the rest of it (an edited file), or None."""
    from dixit_lab.core.rules import RuleSet
    from dixit_lab.records.format import END_REASONS

    try:
        RuleSet(**record.rule_options)
    except (TypeError, ValueError) as error:
        return f"its rule_options are not a rule set ({error})"
    if record.end_reason not in END_REASONS:
        return f"end_reason {record.end_reason!r} is not one of {', '.join(END_REASONS)}"
    if not all(isinstance(text, str) for text in (record.rules, record.deck, *record.agents)):
        return "its rules, deck or agents are not text"
    n = record.n_players
    totals = [0] * n
    for number, rnd in enumerate(record.rounds, start=1):  # rounds as people count them
        if len(rnd.points) != n or len(rnd.scores) != n or len(rnd.votes) != n:
            return f"round {number} has scores or votes for another number of players"
        if not 0 <= rnd.storyteller < n or any(not 0 <= seat < n for seat in rnd.card_owner):
            return f"round {number}: a storyteller or a card's owner is not a seat"
        if not isinstance(rnd.clue, str):
            return f"round {number} has no clue"
        if rnd.storyteller_card not in rnd.display:
            return f"round {number}: the storyteller's card is not displayed"
        if any((vote is not None) if seat == rnd.storyteller else
               not (isinstance(vote, int) and 0 <= vote < len(rnd.display))
               for seat, vote in enumerate(rnd.votes)):
            return f"round {number}: a vote is not a displayed position"
        totals = [a + b for a, b in zip(totals, rnd.points, strict=True)]
        if list(rnd.scores) != totals:
            return f"round {number}: its scores are not the sum of the points so far"
    if record.rounds and list(record.final_scores) != totals:
        return "final_scores are not the sum of the rounds' points"
    best = max(record.final_scores, default=0)
    if sorted(record.winners) != [s for s, v in enumerate(record.final_scores) if v == best]:
        return "winners are not the seats with the highest final score"
    return None


def check_record_line(line: str, where: str, expected: int,
                      first_line: Callable[[int], int]) -> GameRecord:
    """The record of one line of a games file that should hold game ``expected`` next, after
    checking that it is a whole, self-consistent record of that game; ``first_line(index)``
    is the line of an earlier game (for the message about a game repeated). ``where`` names
    the file and line."""
    try:
        record = GameRecord.from_json(line.rstrip("\n"))
    except json.JSONDecodeError as error:  # its own "line 1 column N" would mislead
        raise ConfigError(f"{where}: not a whole game record (not valid JSON from "
                          f"character {error.pos + 1}: truncated or edited)") from None
    except (ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{where}: not a whole game record ({error})") from None
    index = record.meta.get("game", expected)
    if not isinstance(index, int):
        raise ConfigError(f"{where}: meta.game is {index!r}, not a game index")
    if 0 <= index < expected:
        raise ConfigError(f"{where}: game {index} again (first on line "
                          f"{first_line(index)}); the file was edited or merged twice")
    if index != expected:
        raise ConfigError(f"{where}: game {index} where game {expected} was "
                          f"expected; game(s) are missing or out of order")
    problem = _inconsistency(record)
    if problem:
        raise ConfigError(f"{where}: game {index}: {problem}; the record was edited")
    return record


def read_checked_records(path: Path) -> list[GameRecord]:
    """Every record of a games file (plain or ``.zst``), refusing a file whose game indices
    are not 0..N-1 once each in order, or with a line that is not a whole, self-consistent
    record. For files too big for a list of records: :func:`dixit_lab.records.batches.
    file_batches` checks the same, batch by batch."""
    from dixit_lab.records.files import open_text

    records: list[GameRecord] = []
    lines: list[int] = []
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            records.append(check_record_line(line, f"{path}, line {number}", len(records),
                                             lines.__getitem__))
            lines.append(number)
    return records
