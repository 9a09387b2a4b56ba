"""The parts of a run in progress, and how they become the results folder's files.

Each finished chunk of games leaves three files in ``parts/``, written where the chunk was
played (a pool worker, or the runner): its rows of the round table
(``rounds-<first>-<last>.parquet``), its sums (``stats-<first>-<last>.json``,
:class:`~dixit_lab.stats.game_stats.GameStats`), and last its records
(``games-<first>-<last>.jsonl.zst``, or ``.jsonl``). The records are the truth: a chunk is
saved when its records file exists, and a missing or unreadable summary is recomputed from
them. When every game is saved, :func:`merge_parts` adds up the sums and moves the
round-table parts into the ``rounds.parquet`` dataset folder, so that the tables of a million
games cost about what a chunk's do; the records are concatenated into the games file (zstd
frames concatenate: no game is decompressed) while the tables are written
(:func:`finished_beside`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dixit_lab.atomic import (
    atomic_write,
    atomic_write_bytes,
    atomic_write_text,
    folder_staging,
    replace_folder,
)
from dixit_lab.records.batches import GameBatch
from dixit_lab.records.decks import DeckLookup, by_name, folder_decks
from dixit_lab.records.files import RECORD_NAMES, compressor, find_records, records_name
from dixit_lab.stats.game_stats import GameStats, batch_stats
from dixit_lab.stats.round_table import ROUNDS_DATASET, part_stem

__all__ = ["MergedParts", "finished_beside", "forget_predictions", "merge_parts", "save_part",
           "summarise_lines"]

_PART = re.compile(r"^games-(\d+)-(\d+)\.(jsonl(?:\.zst)?)$")
_CACHE: dict[str, object] = {}


def forget_predictions() -> None:
    """Drop the storytellers this process rebuilt for their predicted find rates (a sweep
    point's, once the point is done)."""
    _CACHE.clear()


def summarise_lines(lines: Sequence[str], indices: Sequence[int], rounds_path: Path | None,
                    batch: GameBatch | None = None, untrusted: frozenset[str] = frozenset(),
                    decks: DeckLookup = by_name) -> GameStats:
    """The sums of some record lines (games ``indices``, in order) and, with
    ``rounds_path``, their rows of the round table written there; ``batch``: the same games
    in columns already (the batched engine's), so that the lines need not be parsed;
    ``untrusted``: the specs of untrusted seats, whose agents are never built here;
    ``decks``: the deck the games were played with (by name, unless told)."""
    from dixit_lab.records.batches import batches_of_lines
    from dixit_lab.stats.find_rates import PredictionCache, predicted_finds
    from dixit_lab.stats.round_table import write_round_table

    cache = _CACHE.setdefault(f"predictions {sorted(untrusted)}", PredictionCache(untrusted))
    stats = GameStats()
    batches = [batch] if batch is not None else list(batches_of_lines(
        [line.encode() + b"\n" for line in lines], np.asarray(indices, dtype=np.int64)))
    for batch in batches:
        stats.add(batch_stats(batch, predicted_finds(batch, cache, decks)))  # type: ignore[arg-type]
    if rounds_path is not None:
        atomic_write(rounds_path, lambda tmp: write_round_table(batches, tmp, decks))
    return stats


def save_part(parts: Path, results: Sequence[tuple[int, str]], records: str,
              batch: GameBatch | None = None, untrusted: frozenset[str] = frozenset(),
              decks: DeckLookup = by_name, text: str | None = None) -> None:
    """Write a finished chunk's three files (the records last); ``batch``: its games in
    columns, when the engine gave them; ``decks``: the deck they were played with;
    ``text``: the lines of ``results`` as one text, each line and its newline, when the
    engine gave it (else they are joined here)."""
    indices = [index for index, _ in results]
    lines = [line for _, line in results]
    stem = part_stem(indices[0], indices[-1])
    stats = summarise_lines(lines, indices, parts / f"rounds-{stem}.parquet", batch,
                            untrusted, decks)
    atomic_write_text(parts / f"stats-{stem}.json", json.dumps(stats.to_json()))
    if text is None:
        text = "\n".join([*lines, ""])  # each line and its newline, in one join
    data = text.encode()
    if records.endswith(".zst"):
        data = compressor().compress(data)  # type: ignore[attr-defined]
    atomic_write_bytes(parts / f"games-{stem}.{records}", data)


def _record_parts(parts: Path) -> list[tuple[int, int, Path]]:
    found = []
    for path in parts.glob("games-*"):
        match = _PART.match(path.name)
        if match:
            found.append((int(match.group(1)), int(match.group(2)), path))
    return sorted(found)


def _part_stats(path: Path, stem: str, parts: Path, trusted: bool,
                untrusted_specs: frozenset[str], decks: DeckLookup) -> GameStats:
    """A part's sums: read when this run wrote them, else (a part left by an interrupted
    run, which anything may have touched since) recomputed from its records, which were
    checked line by line when the run resumed."""
    from dixit_lab.records.files import open_text
    from dixit_lab.records.format import game_index

    if trusted:
        try:
            data = json.loads((parts / f"stats-{stem}.json").read_text(encoding="utf-8"))
            if (parts / f"rounds-{stem}.parquet").is_file():
                return GameStats.from_json(data)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    with open_text(path) as handle:
        lines = [line.rstrip("\n") for line in handle if line.strip()]
    return summarise_lines(lines, [game_index(line) for line in lines],
                           parts / f"rounds-{stem}.parquet", untrusted=untrusted_specs,
                           decks=decks)


@dataclass(frozen=True)
class MergedParts:
    """Parts merged but for their records: ``stats``, the games' sums, and the round-table
    dataset in place. :meth:`finish` writes the rest, the games file (the parts' records
    concatenated, hashed on the way) with its manifest, then removes ``parts/``; nothing the
    tables read, so a caller may run it beside them (:func:`finished_beside`)."""

    stats: GameStats
    folder: Path
    games: int
    records: str
    sources: tuple[Path, ...]

    def finish(self) -> None:
        from dixit_lab.records.manifest import write_manifest

        target = self.folder / records_name(self.records)
        digest = hashlib.sha256()

        def concatenate(temporary: Path) -> None:
            with temporary.open("wb") as out:
                for path in self.sources:
                    with path.open("rb") as source:
                        while block := source.read(_BLOCK):
                            digest.update(block)  # the manifest's digest, in the same pass
                            out.write(block)

        atomic_write(target, concatenate)
        write_manifest(self.folder, target, self.games, digest.hexdigest())
        shutil.rmtree(self.folder / "parts", ignore_errors=True)


_BLOCK = 1 << 23  # bytes read at a time when concatenating the records


@contextlib.contextmanager
def finished_beside(merged: MergedParts | None) -> Iterator[None]:
    """Run ``merged.finish()`` in a thread while the ``with`` block runs (it reads, hashes
    and writes files: the GIL is free for the block's tables), and wait for it on the way
    out, whatever ends the block: a Ctrl-C in the block still leaves a whole games file.
    Its error, if any, is raised after the block's own (None: nothing to do)."""
    if merged is None:
        yield
        return
    failure: list[BaseException] = []

    def run() -> None:
        try:
            merged.finish()
        except BaseException as error:  # handed to the main thread below
            failure.append(error)

    thread = threading.Thread(target=run, name="dixit-lab games file")
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failure:
        raise failure[0]


def merge_parts(folder: Path, expected: int, records: str,
                trusted: set[int] | frozenset[int] = frozenset(),
                untrusted_specs: frozenset[str] = frozenset()) -> MergedParts | None:
    """Merge ``folder/parts``: add up the games' sums, move the round-table parts into the
    ``rounds.parquet`` dataset and return them with what is left to do, the games file of
    format ``records`` (:meth:`MergedParts.finish`); None when the parts do not tile the
    games 0..expected-1 exactly (the caller then merges line by line and rebuilds the
    tables). ``trusted``: the first games of the parts this run wrote (their sums are read;
    the others' are recomputed from their records); ``untrusted_specs``: the specs of
    untrusted seats, never built to ask their predictions."""
    parts = folder / "parts"
    found = _record_parts(parts)
    other = find_records(folder)
    if other is not None or not found:
        return None
    position = 0
    for first, last, path in found:
        if first != position or not path.name.endswith(records):
            return None
        position = last + 1
    if position != expected:
        return None
    total = GameStats()
    decks = folder_decks(folder)  # the deck config.yaml records (the resume checked it)
    for first, last, path in found:
        stats = _part_stats(path, part_stem(first, last), parts, first in trusted,
                            untrusted_specs, decks)
        if stats.games != last - first + 1:
            return None  # a resumed chunk of scattered games: merge line by line
        total.add(stats)
    dataset = folder / ROUNDS_DATASET
    staging = folder_staging(dataset)
    for first, last, _ in found:
        stem = part_stem(first, last)
        os.replace(parts / f"rounds-{stem}.parquet", staging / f"part-{stem}.parquet")
    replace_folder(staging, dataset)
    return MergedParts(total, folder, expected, records, tuple(path for _, _, path in found))


def other_records(folder: Path, records: str) -> list[Path]:
    """Games files of the other format in ``folder`` (to be removed once merged)."""
    return [folder / name for name in RECORD_NAMES
            if name != records_name(records) and (folder / name).is_file()]
