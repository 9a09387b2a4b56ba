"""The results folder of a ``play`` run: the same files as a ``run`` (config.yaml, games.jsonl,
rounds.parquet, the tables and the report, written by the project's own writers), plus
``human_decisions.jsonl`` so that ``dixit-lab replay`` replays the people's decisions.

Each finished game is saved at once (games.jsonl and the decisions, atomically), so a play run
that is stopped keeps its finished games, and the same command plays the missing ones.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType

from dixit_lab.atomic import atomic_write_text
from dixit_lab.errors import ConfigError
from dixit_lab.records.format import GameRecord, read_jsonl
from dixit_lab.records.integrity import FolderLock
from dixit_lab.records.manifest import remove_manifest, write_manifest
from dixit_lab.run.experiment import ExperimentConfig
from dixit_lab.run.runner import RunResult, game_specs, prepare_folder
from dixit_lab.run.tournament import GameSpec
from dixit_lab.web.decisions import DECISIONS_FILE

__all__ = ["PlayFolder"]


class PlayFolder:
    """Where a play run's games land. It holds the folder's lock (the one ``dixit-lab run``
    takes: :class:`~dixit_lab.records.integrity.FolderLock`) from before anything is read until
    :meth:`close`, so a second play server or a run on the same folder is refused, one line
    naming the folder, instead of writing over these games. Use it as a context manager."""

    def __init__(self, config: ExperimentConfig, folder: Path) -> None:
        self.folder = folder
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"results folder {folder} is a file, not a folder; choose "
                              f"another --out")
        folder.mkdir(parents=True, exist_ok=True)
        self._lock: FolderLock | None = FolderLock(folder).__enter__()
        try:
            prepare_folder(config, folder)
            from dixit_lab.run.deal_secret import run_secret

            self.secret = run_secret(config, folder, untrusted=True)  # a person is at the table
            self.specs = game_specs(config)
            self.games = self._saved_games(folder)
            self.decisions = self._saved_decisions(folder)
        except BaseException:
            self.close()
            raise
        self.started = time.perf_counter()
        self.played = 0

    def _saved_games(self, folder: Path) -> dict[int, str]:
        games: dict[int, str] = {}
        games_path = folder / "games.jsonl"
        if games_path.is_file():
            for record in read_jsonl(games_path):
                index = record.meta.get("game")
                if isinstance(index, int) and 0 <= index < len(self.specs):
                    games[index] = record.to_json()
        return games

    def _saved_decisions(self, folder: Path) -> dict[int, list[str]]:
        decisions: dict[int, list[str]] = {}
        decisions_path = folder / DECISIONS_FILE
        if decisions_path.is_file():
            for line in decisions_path.read_text(encoding="utf-8").split("\n"):
                if line.strip():
                    game = json.loads(line).get("game")
                    if game in self.games:  # the decisions of an unfinished game are dropped
                        decisions.setdefault(game, []).append(line)
        return decisions

    def close(self) -> None:
        """Release the folder's lock (the games saved so far stay)."""
        if self._lock is not None:
            self._lock.__exit__(None, None, None)
            self._lock = None

    def __enter__(self) -> PlayFolder:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def missing(self) -> list[GameSpec]:
        return [spec for spec in self.specs if spec.index not in self.games]

    def save(self, index: int, record: GameRecord, decisions: list[str]) -> None:
        """Save a finished game and the people's decisions in it."""
        self.games[index] = record.to_json()
        self.decisions[index] = decisions
        self.played += 1
        atomic_write_text(self.folder / DECISIONS_FILE,
                          "".join(line + "\n" for game in sorted(self.decisions)
                                  for line in self.decisions[game]))
        games_path = self.folder / "games.jsonl"
        remove_manifest(self.folder)  # killed before the next line: an old folder, not a lie
        atomic_write_text(games_path,
                          "".join(self.games[game] + "\n" for game in sorted(self.games)))
        write_manifest(self.folder, games_path, len(self.games))

    @property
    def complete(self) -> bool:
        return len(self.games) == len(self.specs)

    def finish(self) -> RunResult:
        """Write the tables, ratings and report (the same writers as ``dixit-lab run``)."""
        from dixit_lab.report.outputs import write_tables

        result = RunResult(self.folder, len(self.specs), self.played,
                           time.perf_counter() - self.started, 1)
        write_tables(self.folder, result)
        return result
