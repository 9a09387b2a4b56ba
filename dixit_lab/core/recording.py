"""The recording seam: what a feature keeps of a run in its results folder so that a replay
plays the same games, and how the runner and the replay open it without naming the feature.

Some seats decide from outside the engine: a model answers over HTTP, a person at a web page.
Their answers are recorded as they are made (the model exchanges, ``dixit_lab.vlm.store``;
the people's decisions, ``dixit_lab.web.decisions``) and a replay answers from the record.
An agent class names its :class:`Recorder` (``Agent.recorder``, a name of the
``dixit_lab.recorders`` registry: entry points, like agents); the engine learns it with the
rest of what it knows of a seat (``isolation.trust.AgentInfo``, told by a child for an untrusted
seat). The runner and the replay put a :class:`Recording` (the results folder, the mode, the
run's budget, the recorders of the config's agents) in the ``TableSetup`` that every worker
receives, and each chunk is played inside :func:`recording` of it: no environment variable
carries it, and a worker of any executor opens the same recorders.

A recorder fails as a user's input does (a :class:`~dixit_lab.errors.UserError`, one line): one
that is unknown, does not import, is not a :class:`Recorder` or cannot be made
(:func:`get_recorder`, which the runner asks for every agent's recorder before anything is
written), and one whose session raises while the games are played (:func:`recording`: the run
stops, its saved games kept). :func:`recorder_columns` asks every installed recorder, and skips
one that is broken or fails with a one-line warning: a plugin merely installed never stops a
run's tables or a ``report``.
"""

from __future__ import annotations

import contextlib
import functools
import typing
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from dixit_lab.bundled import source_checkout
from dixit_lab.errors import UserError
from dixit_lab.plugins.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RECORDERS", "RECORD_MODES", "RecordMode", "Recorder", "RecorderError", "Recording",
           "chunk_player", "get_recorder", "recorder_columns", "recording"]

#: ``auto``: reuse what is recorded, else ask and record (a resumed run); ``record``: always
#: ask and record; ``replay``: answer from the record only (``dixit-lab replay``)
RecordMode = Literal["auto", "record", "replay"]
RECORD_MODES: tuple[str, ...] = ("auto", "record", "replay")


class Recorder:
    """What a feature records of the seats whose agents name it. Subclasses are registered as
    entry points of ``dixit_lab.recorders``; every hook has a default that does nothing."""

    #: whether :meth:`play_chunk` plays its seats' games (all of a chunk at once, for seats
    #: that wait on something outside: a model server); else the engine plays them one by one
    plays_chunks: ClassVar[bool] = False

    def session(self, folder: Path, mode: RecordMode | None,
                budget: Mapping[str, Any] | None) -> contextlib.AbstractContextManager[None]:
        """While inside, this process's agents record into (or replay from) the results
        ``folder`` in ``mode`` (None: the recorder's default), within the run's ``budget``
        (the config's ``model_budget``, None in a replay)."""
        return contextlib.nullcontext()

    def agent_columns(self, folder: Path) -> pd.DataFrame | None:
        """Its columns of ``agents.csv`` (one row per ``player``), from what it recorded in
        ``folder``; None when it recorded nothing there."""
        return None

    def play_chunk(self, setup: Any, chunk: list[Any]) -> list[tuple[int, str]]:
        """The (game index, JSON line) pairs of ``chunk`` (a ``run.tournament.TableSetup``'s
        games), when :attr:`plays_chunks`."""
        raise NotImplementedError(f"{type(self).__name__} does not play games")


RECORDERS: Registry[Recorder] = Registry("dixit_lab.recorders", "recorder", Recorder,
                                         source_checkout)


class RecorderError(UserError):
    """A recorder that cannot be made, or that failed while a run or a report used it."""


@functools.cache
def get_recorder(name: str) -> Recorder:
    """The recorder registered as ``name`` (one instance a process). Raises a
    :class:`~dixit_lab.errors.UserError` naming it when it is unknown, does not import, is not
    a :class:`Recorder` (:class:`~dixit_lab.plugins.registry.UnknownName`) or cannot be made
    (:class:`RecorderError`)."""
    cls = RECORDERS.get(name)
    try:
        return cls()
    except Exception as error:
        raise RecorderError(f"recorder {name!r} ({cls.__module__}.{cls.__qualname__}) could "
                            f"not be made: {_reason(error)}") from None


def _reason(error: BaseException) -> str:
    """An exception as one line of at most 300 characters."""
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


@dataclass(frozen=True)
class Recording:
    """What a run or a replay records: the results ``folder``, the ``mode`` (None: each
    recorder's default), the run's ``budget`` (sorted (key, value) pairs of the config's
    ``model_budget``) and the ``recorders`` of its agents, by name. Plain values: it travels
    in the ``TableSetup`` to every worker."""

    folder: str
    mode: RecordMode | None = None
    budget: tuple[tuple[str, Any], ...] = ()
    recorders: tuple[str, ...] = ()

    @classmethod
    def of(cls, folder: str | Path, recorders: Iterable[str | None], mode: str | None = None,
           budget: Mapping[str, Any] | None = None) -> Recording:
        if mode is not None and mode not in RECORD_MODES:
            raise ValueError(f"record mode must be one of {', '.join(RECORD_MODES)}, got "
                             f"{mode!r}")
        names = tuple(dict.fromkeys(name for name in recorders if name))
        return cls(str(folder), typing.cast("RecordMode | None", mode),
                   tuple(sorted((budget or {}).items())), names)


@contextlib.contextmanager
def recording(plan: Recording | None) -> Iterator[None]:
    """Open every recorder of ``plan`` (nothing for None) for as long as inside. A session
    that raises as it opens or closes is a :class:`RecorderError` naming its recorder (what
    the games inside raise passes through as it is)."""
    if plan is None or not plan.recorders:
        yield
        return
    budget = dict(plan.budget) or None
    with contextlib.ExitStack() as stack:
        for name in plan.recorders:
            stack.enter_context(_Session(name, Path(plan.folder), plan.mode, budget))
        yield


class _Session:
    """A recorder's session, whose own failures name the recorder."""

    def __init__(self, name: str, folder: Path, mode: RecordMode | None,
                 budget: Mapping[str, Any] | None) -> None:
        self.name, self.folder = name, folder
        recorder = get_recorder(name)
        try:
            self.session = recorder.session(folder, mode, budget)
        except UserError:
            raise
        except Exception as error:
            raise self._failed("could not open its session", error) from error

    def __enter__(self) -> None:
        try:
            self.session.__enter__()
        except UserError:
            raise
        except Exception as error:
            raise self._failed("could not open its session", error) from error

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool | None:
        try:
            return self.session.__exit__(kind, value, traceback)
        except UserError:
            raise
        except Exception as error:
            if error is value:  # the games' own error, passed on
                raise
            raise self._failed("failed as its session closed", error) from error

    def _failed(self, what: str, error: Exception) -> RecorderError:
        return RecorderError(f"recorder {self.name!r} {what} in {self.folder}: "
                             f"{_reason(error)}")


def chunk_player(names: Iterable[str | None]) -> Recorder | None:
    """The first recorder of ``names`` that plays its seats' chunks itself (None: none)."""
    for name in dict.fromkeys(names):
        if name and get_recorder(name).plays_chunks:
            return get_recorder(name)
    return None


def recorder_columns(folder: str | Path) -> list[pd.DataFrame]:
    """The ``agents.csv`` columns of every installed recorder that recorded in ``folder``,
    in name order. A recorder that cannot be made, or whose ``agent_columns`` raises anything
    but a :class:`~dixit_lab.errors.UserError` (what it recorded there is at fault: that
    stops the tables, named), is left out with a one-line warning."""
    found = []
    for name in RECORDERS.names():
        try:
            recorder = get_recorder(name)
        except UserError as error:
            _left_out(f"{error}")
            continue
        try:
            columns = recorder.agent_columns(Path(folder))
        except UserError:
            raise
        except Exception as error:
            _left_out(f"recorder {name!r} failed to give its columns for {folder}: "
                      f"{_reason(error)}")
            continue
        if columns is not None and len(columns):
            found.append(columns)
    return found


def _left_out(problem: str) -> None:
    # one line: no source line under it (the problem is the plugin, not this code)
    warnings.warn_explicit(f"{problem}; agents.csv is written without its columns",
                           RuntimeWarning, "dixit_lab recorders", 0)
