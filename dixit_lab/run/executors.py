"""Executors: play chunks of games in this process, in a pool of worker processes, or on Ray
(:mod:`dixit_lab.run.ray_executor`), each registered by name.

Chunks come back as they finish (in any order); every game is determined by its spec, so the
records do not depend on the executor or the number of workers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from pathlib import Path
from typing import Any, Protocol, overload

from dixit_lab.bundled import source_checkout
from dixit_lab.errors import ConfigError, UserError
from dixit_lab.isolation.process_life import pool_worker_setup
from dixit_lab.plugins.registry import Registry
from dixit_lab.records.format import part_name
from dixit_lab.run.tournament import GameSpec, TableSetup, play_chunk

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "ProcessExecutor",
    "WorkerLost",
    "available_workers",
    "chunked",
    "executor_names",
    "get_executor",
    "part_name",
    "play_and_save",
    "run_chunks",
]


def available_workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class _Chunks(Sequence[list[GameSpec]]):
    """Consecutive chunks of ``size`` games, each made when asked for."""

    def __init__(self, specs: Sequence[GameSpec], size: int) -> None:
        self.specs, self.size = specs, size

    def __len__(self) -> int:
        return -(-len(self.specs) // self.size)

    @overload
    def __getitem__(self, index: int) -> list[GameSpec]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[GameSpec]]: ...

    def __getitem__(self, index: int | slice) -> list[GameSpec] | list[list[GameSpec]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"chunk {index} of {len(self)}")
        return list(self.specs[index * self.size:(index + 1) * self.size])


def chunked(specs: Sequence[GameSpec], size: int) -> Sequence[list[GameSpec]]:
    """The games in consecutive chunks of ``size`` (the last one shorter), made as they are
    sent: a million games are never a million objects at once."""
    return _Chunks(specs, size)


def play_and_save(setup: TableSetup, chunk: list[GameSpec], parts: Path,
                  records: str = "jsonl.zst") -> list[tuple[int, str | None]]:
    """Play a chunk and write its part files here (its records, round-table rows and sums:
    :func:`dixit_lab.run.parts.save_part`): only the indices travel back to the parent
    process, not megabytes of records, and the chunk is summarised where it was played."""
    from dixit_lab.run.parts import save_part
    from dixit_lab.run.tournament import ChunkInterrupted, play_chunk_columns

    try:
        results, batch, text = play_chunk_columns(setup, chunk)
    except ChunkInterrupted as interrupted:  # the games that ended, saved before it goes on
        for run in _consecutive(interrupted.results):
            save_part(parts, run, records, None, setup.untrusted_specs, setup.decks())
        raise
    save_part(parts, results, records, batch, setup.untrusted_specs, setup.decks(), text)
    return [(index, None) for index, _ in results]


def _consecutive(results: list[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """``results`` (in game order) as runs of consecutive games, a part each."""
    run: list[tuple[int, str]] = []
    for item in results:
        if run and item[0] != run[-1][0] + 1:
            yield run
            run = []
        run.append(item)
    if run:
        yield run


class WorkerLost(ConfigError):
    """A worker process of the pool died while it played (killed by the system: the
    out-of-memory killer's way, or by a person): a fault of the run, not of its config. The
    chunks that finished are saved; the same command plays the rest."""


class Executor(Protocol):
    """Where chunks of games are played. Executors are registered as entry points of the
    ``dixit_lab.executors`` group (``pyproject.toml``); the config schema and the command
    line take their names from the registry."""

    #: whether the workers write each chunk's part file themselves (the runner passes
    #: ``parts``; only for workers on this machine)
    writes_parts: bool

    def default_workers(self, address: str | None) -> int:
        """Workers when the config names none (0: as many as the cluster has CPUs)."""
        ...

    def session(self, address: str | None, workers: int | None
                ) -> contextlib.AbstractContextManager[Any]:
        """A context held around a whole run, sweep or search (e.g. one Ray connection)."""
        ...

    def run(self, setup: TableSetup, chunks: Sequence[list[GameSpec]], workers: int | None,
            address: str | None, parts: Path | None, records: str = "jsonl.zst"
            ) -> Iterator[list[tuple[int, str | None]]]:
        """Yield each chunk's (game index, JSON line) pairs as the chunks finish; with
        ``parts``, ``(index, None)`` pairs for chunks whose part files a worker wrote (in
        the ``records`` format)."""
        ...


EXECUTORS: Registry[Any] = Registry("dixit_lab.executors", "executor", object, source_checkout)


def get_executor(name: str) -> Executor:
    """An instance of the executor registered as ``name``; one that is unknown, does not
    import or cannot be made is a :class:`~dixit_lab.errors.UserError` naming it."""
    cls = EXECUTORS.get(name)
    try:
        return cls()  # type: ignore[no-any-return]
    except UserError:
        raise
    except Exception as error:
        raise UserError(f"executor {name!r} ({cls.__module__}.{cls.__qualname__}) could not "
                        f"be made: {type(error).__name__}: {error}") from None


def executor_names() -> list[str]:
    return EXECUTORS.names()


class LocalExecutor:
    """Every chunk in this process, one after the other; with ``parts``, each chunk's part
    files are written from the engine's columns as it ends (:func:`play_and_save`), so that
    its records need not be parsed back."""

    writes_parts = True

    def default_workers(self, address: str | None) -> int:
        return 1

    def session(self, address: str | None, workers: int | None
                ) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def run(self, setup: TableSetup, chunks: Sequence[list[GameSpec]], workers: int | None,
            address: str | None, parts: Path | None, records: str = "jsonl.zst"
            ) -> Iterator[list[tuple[int, str | None]]]:
        for chunk in chunks:
            yield (play_and_save(setup, chunk, parts, records) if parts is not None
                   else list(play_chunk(setup, chunk)))


@contextlib.contextmanager
def _stopped_on_exit(pool: ProcessPoolExecutor) -> Iterator[None]:
    """Stop ``pool`` at once if the run ends early (Ctrl-C, SIGTERM, an error, the consumer
    gone): queued chunks are cancelled and the workers terminated, never left orphaned or
    finishing games nobody will save."""
    try:
        yield
    except BaseException:
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.join(timeout=5)
        raise


class ProcessExecutor(LocalExecutor):
    """A pool of worker processes on this machine (default: one per core), forked after the
    agents, spaces and models are prepared here once, so that they inherit them."""

    writes_parts = True

    def default_workers(self, address: str | None) -> int:
        return available_workers()

    def run(self, setup: TableSetup, chunks: Sequence[list[GameSpec]], workers: int | None,
            address: str | None, parts: Path | None, records: str = "jsonl.zst"
            ) -> Iterator[list[tuple[int, str | None]]]:
        count = min(workers or available_workers(), len(chunks))
        if count <= 1:
            yield from LocalExecutor().run(setup, chunks, 1, address, parts, records)
            return
        task: Callable[[TableSetup, list[GameSpec]], list[tuple[int, str | None]]] = (
            partial(play_and_save, parts=parts, records=records)  # type: ignore[assignment]
            if parts is not None else play_chunk)
        # Prepare the agents, spaces and models here, once: forked workers inherit them
        # instead of each building its own (one game, thrown away; chunks replay it), and
        # the storytellers' predictions that summarising a chunk asks for.
        warm = play_chunk(setup, chunks[0][:1])
        if parts is not None:
            from dixit_lab.run.parts import summarise_lines

            summarise_lines([line for _, line in warm], [index for index, _ in warm], None,
                            untrusted=setup.untrusted_specs, decks=setup.decks())
        # workers die with this process (even under SIGKILL) and leave signals to it
        pool_executor = ProcessPoolExecutor(max_workers=count, initializer=pool_worker_setup)
        with pool_executor as pool, _stopped_on_exit(pool):
            games: dict[Future[list[tuple[int, str | None]]], list[GameSpec]] = {}
            queue = iter(chunks)
            # A dead worker breaks the pool: the next result *or submit* raises (which one
            # comes first is a race), so both are inside the one guard.
            try:
                for chunk in queue:  # keep a few chunks in flight per worker, not all of them
                    games[pool.submit(task, setup, chunk)] = chunk
                    if len(games) >= 2 * count:
                        break
                while games:
                    done, _ = wait(games, return_when=FIRST_COMPLETED)
                    for future in done:
                        result = future.result()
                        del games[future]
                        yield result
                        following = next(queue, None)
                        if following is not None:
                            games[pool.submit(task, setup, following)] = following
            except BrokenProcessPool:
                raise WorkerLost(_lost(games.values())) from None

def _lost(in_play: Iterator[list[GameSpec]] | Any) -> str:
    """What :class:`WorkerLost` says: the games that were in play when a worker died."""
    spans = sorted((chunk[0].index, chunk[-1].index) for chunk in in_play if chunk)
    shown = ", ".join(f"{first}-{last}" for first, last in spans[:4])
    more = f" and {len(spans) - 4} more chunk(s)" if len(spans) > 4 else ""
    return (f"a worker process died while games {shown}{more} were in play (killed by the "
            f"system: running out of memory is the usual cause; fewer --workers or a smaller "
            f"--chunk-size use less)")


def run_chunks(setup: TableSetup, chunks: Sequence[list[GameSpec]], kind: str = "process",
               workers: int | None = None, address: str | None = None,
               parts: Path | None = None, records: str = "jsonl.zst"
               ) -> Iterator[list[tuple[int, str | None]]]:
    """Yield each chunk's (game index, JSON line) pairs as soon as the chunk is done, on the
    executor registered as ``kind``. ``address`` is a cluster's (for ``ray``; None: a local
    instance). With ``parts`` (a folder on this machine), executors whose workers write part
    files themselves yield ``(index, None)`` pairs."""
    executor = get_executor(kind)
    if not chunks:
        return
    yield from executor.run(setup, chunks, workers, address,
                            parts if executor.writes_parts else None, records)
