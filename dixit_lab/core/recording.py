"""The recording seam: what a feature keeps of a run in its results folder so that a replay
plays the same games, and how the runner and the replay open it without naming the feature.

Some seats decide from outside the engine: a model answers over HTTP, a person at a web page.
Their answers are recorded as they are made (the model exchanges, ``dixit_lab.vlm.store``;
the people's decisions, ``dixit_lab.web.decisions``) and a replay answers from the record.
An agent class names its :class:`Recorder` (``Agent.recorder``, a name of the
``dixit_lab.recorders`` registry: entry points, like agents); the engine learns it with the
rest of what it knows of a seat (``engine.trust.AgentInfo``, told by a child for an untrusted
seat). The runner and the replay put a :class:`Recording` (the results folder, the mode, the
run's budget, the recorders of the config's agents) in the ``TableSetup`` that every worker
receives, and each chunk is played inside :func:`recording` of it: no environment variable
carries it, and a worker of any executor opens the same recorders.
"""

from __future__ import annotations

import contextlib
import functools
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from dixit_lab.plugins.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RECORDERS", "RECORD_MODES", "RecordMode", "Recorder", "Recording",
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


RECORDERS: Registry[Recorder] = Registry("dixit_lab.recorders", "recorder", Recorder)


@functools.cache
def get_recorder(name: str) -> Recorder:
    """The recorder registered as ``name`` (one instance a process)."""
    return RECORDERS.get(name)()


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
    """Open every recorder of ``plan`` (nothing for None) for as long as inside."""
    if plan is None or not plan.recorders:
        yield
        return
    budget = dict(plan.budget) or None
    with contextlib.ExitStack() as stack:
        for name in plan.recorders:
            stack.enter_context(get_recorder(name).session(Path(plan.folder), plan.mode,
                                                           budget))
        yield


def chunk_player(names: Iterable[str | None]) -> Recorder | None:
    """The first recorder of ``names`` that plays its seats' chunks itself (None: none)."""
    for name in dict.fromkeys(names):
        if name and get_recorder(name).plays_chunks:
            return get_recorder(name)
    return None


def recorder_columns(folder: str | Path) -> list[pd.DataFrame]:
    """The ``agents.csv`` columns of every installed recorder that recorded in ``folder``,
    in name order."""
    found = []
    for name in RECORDERS.names():
        columns = get_recorder(name).agent_columns(Path(folder))
        if columns is not None and len(columns):
            found.append(columns)
    return found
