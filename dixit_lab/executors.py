"""Executors: play chunks of games in this process, in a pool of worker processes, or on Ray.

Chunks come back as they finish (in any order); every game is determined by its spec, so the
records do not depend on the executor or the number of workers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from functools import partial
from pathlib import Path

from dixit_lab.files import atomic_write_text
from dixit_lab.tournament import GameSpec, TableSetup, play_chunk

__all__ = ["available_workers", "chunked", "part_name", "play_and_save", "run_chunks"]


def available_workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def chunked(specs: list[GameSpec], size: int) -> list[list[GameSpec]]:
    return [specs[i:i + size] for i in range(0, len(specs), size)]


def part_name(first: int, last: int) -> str:
    """The file of a chunk of saved games in a results folder's ``parts/``."""
    return f"games-{first:07d}-{last:07d}.jsonl"


def play_and_save(setup: TableSetup, chunk: list[GameSpec], parts: Path
                  ) -> list[tuple[int, str | None]]:
    """Play a chunk and write its part file here (atomically): only the indices travel
    back to the parent process, not megabytes of records."""
    results = play_chunk(setup, chunk)
    text = "".join(line + "\n" for _, line in results)
    atomic_write_text(parts / part_name(results[0][0], results[-1][0]), text)
    return [(index, None) for index, _ in results]


def run_chunks(setup: TableSetup, chunks: list[list[GameSpec]], kind: str = "process",
               workers: int | None = None, address: str | None = None,
               parts: Path | None = None) -> Iterator[list[tuple[int, str | None]]]:
    """Yield each chunk's (game index, JSON line) pairs as soon as the chunk is done.
    ``address`` is the Ray cluster of the ``ray`` executor (None: a local Ray instance).
    With ``parts`` (a folder on this machine), the process pool's workers write each chunk's
    part file themselves and yield ``(index, None)`` pairs."""
    if kind == "ray":
        from dixit_lab.ray_executor import run_chunks_ray

        yield from run_chunks_ray(setup, chunks, address=address, workers=workers)
        return
    if kind == "local" or not chunks:
        for chunk in chunks:
            yield play_chunk(setup, chunk)
        return
    if kind != "process":
        raise ValueError(f"unknown executor {kind!r}; allowed: local, process, ray")
    count = min(workers or available_workers(), len(chunks))
    if count <= 1:
        yield from run_chunks(setup, chunks, "local")
        return
    task = partial(play_and_save, parts=parts) if parts is not None else play_chunk
    # Prepare the agents, spaces and models here, once: forked workers inherit them instead
    # of each building its own (one game, thrown away; chunks replay it).
    play_chunk(setup, chunks[0][:1])
    with ProcessPoolExecutor(max_workers=count) as pool:
        pending: set[Future[list[tuple[int, str | None]]]] = set()
        queue = iter(chunks)
        for chunk in queue:  # keep a few chunks in flight per worker, not all of them
            pending.add(pool.submit(task, setup, chunk))
            if len(pending) >= 2 * count:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
                chunk = next(queue, None)
                if chunk is not None:
                    pending.add(pool.submit(task, setup, chunk))
