"""The exchange store: every model call of a run, content-addressed, in the results folder.

An *exchange* is one chat-completions request and its outcome (the reply and its usage, or a
classified error). Its key is the sha256 of the request in canonical JSON, with every image
replaced by :func:`~dixit_lab.vlm.images.image_ref`. The store lives in ``<results>/exchanges/``
as JSON Lines segments, one per writing process, appended line by line (a line is written
with one call and flushed; a torn last line from a killed process is skipped on reading).

Modes (:func:`exchange_session`; the runner and the replay open it through the recording seam,
:class:`dixit_lab.vlm.recorder.ExchangeRecorder`, :mod:`dixit_lab.core.recording`):

- ``auto``: reuse a recorded outcome, else call the model and record it (a resumed run
  reuses what an interrupted one recorded);
- ``record``: always call the model and record (``dixit-lab run --record-only``);
- ``replay``: never call the model; an exchange that was not recorded is an error
  (``dixit-lab replay``, ``dixit-lab run --replay-only``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from dixit_lab.errors import UserError
from dixit_lab.records.format import one_line

__all__ = [
    "EXCHANGES_FOLDER",
    "MODES",
    "ExchangeStore",
    "ExchangeWriteError",
    "Mode",
    "ReplayMiss",
    "current_store",
    "exchange_key",
    "exchange_session",
    "run_budget",
]

Mode = Literal["auto", "record", "replay"]
MODES: tuple[str, ...] = ("auto", "record", "replay")
EXCHANGES_FOLDER = "exchanges"  # in a results folder


class ReplayMiss(UserError, RuntimeError):
    """Replay-only mode met a request that was never recorded (a different prompt, model or
    parameter than the recorded run)."""


class ExchangeWriteError(OSError):
    """An exchange could not be appended to the store (a full disk, a quota, a read-only
    file system): ``FILE: reason``. It stops the run (the decision is no model's fault);
    the exchanges recorded until then are reused when the run is resumed."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def exchange_key(request: dict[str, Any]) -> str:
    """sha256 hex digest of the request (model, messages with image refs, parameters)."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ExchangeStore:
    """Recorded exchanges of one folder (or of memory only, with ``folder=None``)."""

    def __init__(self, folder: str | Path | None, mode: Mode = "auto") -> None:
        if mode not in MODES:
            raise ValueError(f"exchange mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.folder = Path(folder) if folder is not None else None
        self.mode: Mode = mode
        self._entries: dict[str, dict[str, Any]] = {}
        self._charged: dict[str, tuple[str, float, float]] = {}  # key -> (player, tokens, $)
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None
        self._pid = os.getpid()
        if self.folder is not None and self.folder.is_dir():
            self._load(self.folder)

    def _load(self, folder: Path) -> None:
        for path in sorted(folder.glob("*.jsonl")):  # names start with a time: later wins
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    try:
                        entry = json.loads(line)
                        self._entries[entry["key"]] = entry["outcome"]
                        charged = entry.get("charged")
                        if isinstance(charged, dict):
                            self._charged[entry["key"]] = (
                                str(entry.get("player")), float(charged.get("tokens", 0)),
                                float(charged.get("cost_usd", 0)))
                    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                        continue  # a torn last line of a killed process

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> dict[str, Any] | None:
        """The recorded outcome of ``key`` (None in ``record`` mode, which always calls)."""
        if self.mode == "record":
            return None
        return self._entries.get(key)

    def put(self, key: str, request: dict[str, Any], outcome: dict[str, Any],
            about: dict[str, Any] | None = None) -> None:
        """Record an outcome (in memory, and appended to this process's segment), with what
        made it (``about``: ``player``, ``charged``, ``dialect``, ``format``, ``probe``)."""
        with self._lock:
            self._entries[key] = outcome
            if self.folder is None:
                return
            line = one_line(canonical_json({**(about or {}), "key": key, "request": request,
                                            "outcome": outcome})) + "\n"
            handle = None
            try:
                handle = self._segment()
                handle.write(line)
                handle.flush()
            except OSError as error:  # a full disk, a quota: name the segment, stop the run
                self._handle = None  # a later line starts a segment of its own
                if handle is not None:
                    with contextlib.suppress(OSError):
                        handle.close()
                raise ExchangeWriteError(error.errno, error.strerror or str(error),
                                         getattr(handle, "name", None) or str(self.folder)
                                         ) from error

    def recorded_spend(self) -> dict[str, tuple[float, float]]:
        """(tokens, dollars) charged to each player by the exchanges read from the folder."""
        spent: dict[str, tuple[float, float]] = {}
        for player, tokens, cost in self._charged.values():
            before = spent.get(player, (0.0, 0.0))
            spent[player] = (before[0] + tokens, before[1] + cost)
        return spent

    def _segment(self) -> IO[str]:
        if self._handle is None or self._pid != os.getpid():  # a forked child writes its own
            assert self.folder is not None
            self.folder.mkdir(parents=True, exist_ok=True)
            self._pid = os.getpid()
            name = f"{time.time_ns():020d}-{socket.gethostname()}-{self._pid}.jsonl"
            self._handle = (self.folder / name).open("a", encoding="utf-8")
        return self._handle

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._handle = None


_STORES: dict[tuple[str | None, str], ExchangeStore] = {}
_STORES_LOCK = threading.Lock()
#: the session of this process (and of the workers it forks): (folder, mode, run budget)
_SESSION: tuple[str | None, Mode, dict[str, Any] | None] = (None, "auto", None)


def current_store() -> ExchangeStore:
    """The store of the current :func:`exchange_session` (one object per folder and mode in a
    process); outside one, an in-memory store."""
    folder, mode, _ = _SESSION
    key = (str(Path(folder).resolve()) if folder else None, mode)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = ExchangeStore(folder, mode)
        return store


def run_budget() -> dict[str, Any] | None:
    """The run's budget of the current session (``max_tokens_total``, ``max_cost_usd``)."""
    return _SESSION[2]


@contextlib.contextmanager
def exchange_session(folder: str | Path | None, mode: Mode | None = None,
                     budget: dict[str, Any] | None = None) -> Iterator[None]:
    """Point the model agents of this process (and of worker processes it forks) at the store
    in ``folder`` with ``mode`` (None: keep the current session's folder or mode, else
    ``auto``), and at the run's ``budget`` (``max_tokens_total``, ``max_cost_usd``:
    :mod:`dixit_lab.vlm.ledger`)."""
    global _SESSION
    if mode is not None and mode not in MODES:
        raise ValueError(f"exchange mode must be one of {', '.join(MODES)}, got {mode!r}")
    saved = _SESSION
    _SESSION = (str(folder) if folder is not None else saved[0], mode or saved[1],
                dict(budget) if budget else None)
    try:
        yield
    finally:
        _SESSION = saved


def _reset_after_fork() -> None:
    global _STORES_LOCK
    _STORES_LOCK = threading.Lock()
    for store in _STORES.values():
        store._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
