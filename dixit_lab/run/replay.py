"""Replay a results folder: play every game again from its config and seeds and compare."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dixit_lab.core.recording import Recording
from dixit_lab.progress import progress
from dixit_lab.records.batches import file_batches
from dixit_lab.records.compare import Difference, first_difference, line_difference
from dixit_lab.records.decks import folder_decks
from dixit_lab.records.files import find_records, open_text
from dixit_lab.run.executors import chunked, run_chunks
from dixit_lab.run.experiment import ConfigError
from dixit_lab.run.folder import played_config, read_header
from dixit_lab.run.provenance import check_replayed_code, run_working_directory

__all__ = ["Difference", "first_difference", "replay_folder"]


def replay_folder(folder: str | Path, *, executor: str = "process", workers: int | None = None,
                  show_progress: bool = True, address: str | None = None
                  ) -> tuple[int, Difference | None]:
    """Replay every game of ``folder``; returns (games compared, first difference or None).
    ``address``: the Ray cluster of the ``ray`` executor (None: a local Ray instance).

    The games are played from the folder the run read its relative paths from (config.yaml's
    ``working_directory``, while this runs), after checking that its outside agents' code is
    what played them (a change is refused in one line naming the player and the file)."""
    folder = Path(folder).absolute()
    header = read_header(folder)
    with run_working_directory(header):
        check_replayed_code(folder, header)
        return _replay(folder, executor, workers, show_progress, address)


def _replay(folder: Path, executor: str, workers: int | None, show_progress: bool,
            address: str | None) -> tuple[int, Difference | None]:
    """:func:`replay_folder` in the run's working folder."""
    games_path = find_records(folder) or folder / "games.jsonl"
    played = played_config(folder)  # config.yaml as run: resolved rules, specs, the deck
    if not games_path.is_file():
        raise FileNotFoundError(f"{games_path} is missing: is {folder} a results folder?")
    config = played.config
    from dixit_lab.run.runner import chunk_size_for, game_specs, table_setup

    # a missing, repeated or truncated game, a card outside the deck: file and line, in
    # bounded memory
    for _ in file_batches(games_path, check=True, decks=folder_decks(folder)):
        pass
    with open_text(games_path) as handle:
        recorded = [line for line in handle.read().split("\n") if line.strip()]
    specs = game_specs(config)
    if len(recorded) != len(specs):
        n, expected = len(recorded), len(specs)
        missing = f"game {n} is" if n + 1 == expected else f"games {n}-{expected - 1} are"
        raise ConfigError(f"{games_path}: {n} games, but the experiment has {expected}"
                          + (f": {missing} missing (an unfinished run? dixit-lab run "
                             f"resumes it)" if n < expected else "; the file was edited"))
    from dixit_lab.run.deal_secret import folder_secret

    setup = dataclasses.replace(table_setup(config, folder_secret(folder)), rules=played.rules,
                                specs=played.specs)
    # the seats' recorders answer from the folder only (model replies, people's decisions)
    setup = dataclasses.replace(setup, recording=Recording.of(folder, setup.recorders(),
                                                              "replay"))
    compared = 0
    with progress(total=len(specs), desc="replay", unit="game",
                  disable_all=not show_progress) as bar:
        replayed: dict[int, str] = {}
        for results in run_chunks(setup, chunked(specs, chunk_size_for(config, setup)), executor,
                                  workers, address):
            for index, line in results:
                assert line is not None  # no parts: the lines come back
                replayed[index] = line
            bar.update(len(results))
    for index, line in enumerate(recorded):
        compared += 1
        found = line_difference(index, line, replayed[index])
        if found is not None:
            return compared, found
    return compared, None
