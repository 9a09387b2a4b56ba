"""The tables of a results folder: the ``rounds.parquet`` dataset, agents.csv, ratings.csv,
rating_pairs.csv, find_calibration.csv, summary.json and the report.

A run hands :func:`write_tables` the sums of its games, added up from its chunks as they
were played (:mod:`dixit_lab.run.parts`); ``dixit-lab report DIR`` rebuilds everything from
the games file alone, batch by batch (:mod:`dixit_lab.records.batches`), checking on the way
that it is whole and consistent. Either way memory stays that of a batch.
"""

from __future__ import annotations

import io
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import yaml

from dixit_lab.atomic import atomic_write_text, folder_staging, replace_folder
from dixit_lab.errors import ConfigError
from dixit_lab.progress import stage
from dixit_lab.ratings import BOOTSTRAP
from dixit_lab.records.files import find_records
from dixit_lab.stats.game_stats import GameStats, batch_stats
from dixit_lab.stats.round_table import ROUNDS_DATASET

__all__ = ["OUTPUT_FILES", "REPORT_AGAIN", "prepare_outputs", "rebuild_stats", "write_tables",
           "write_timing"]

#: what :func:`write_tables` writes in a results folder (files, and the ``rounds.parquet``
#: dataset and its staging folders): what ``dixit-lab run --restart`` discards with the games
OUTPUT_FILES = ("agents.csv", "find_calibration.csv", "ratings.csv", "rating_pairs.csv",
                "summary.json", "report.md", ROUNDS_DATASET, f".{ROUNDS_DATASET}.new",
                f".{ROUNDS_DATASET}.old", "plots/points_per_game.png",
                "plots/storyteller_outcomes.png", "plots/ratings.png",
                "plots/find_calibration.png")

#: what ``report`` tells its user when another command holds the folder's lock
REPORT_AGAIN = "wait for it to finish, then run `dixit-lab report` again"


def _seed(folder: Path) -> int:
    try:
        header = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8")) or {}
        return int(header.get("experiment", {}).get("seed", 0))
    except (OSError, yaml.YAMLError, ValueError):
        return 0


def _untrusted_specs(folder: Path) -> frozenset[str]:
    """The specs config.yaml says untrusted seats played (never built here)."""
    try:
        header = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8")) or {}
        players = header.get("experiment", {}).get("players") or []
        return frozenset(str(p.get("spec")) for p in players
                         if isinstance(p, dict) and p.get("isolation", "none") != "none")
    except (OSError, yaml.YAMLError, AttributeError):
        return frozenset()


def prepare_outputs(games: int) -> threading.Thread:
    """Start loading, in a daemon thread, what :func:`write_tables` will use for a run of
    ``games`` games: the plotting library with its fonts (a figure drawn to memory) and the
    compiled OpenSkill walk when a run this long uses it. For a runner whose games are
    played by other processes (its wait does this work, not the end of the run); start it
    only once they are forked. A failure here is let go: the tables meet it again and say
    so."""

    def load() -> None:
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            from dixit_lab.ratings.openskill import prepare_walk
            from dixit_lab.report import page  # noqa: F401 (what writes the report)

            figure = Figure(figsize=(1, 1))
            figure.subplots().set_title("dixit")
            FigureCanvasAgg(figure).print_png(io.BytesIO())
            prepare_walk(games)
        except Exception:  # met again where it matters
            pass

    thread = threading.Thread(target=load, name="dixit-lab outputs", daemon=True)
    thread.start()
    return thread


def rebuild_stats(folder: Path, games_path: Path, show_progress: bool = False) -> GameStats:
    """The sums of every game of ``games_path`` (refusing a file that is not whole and
    consistent), writing the ``rounds.parquet`` dataset on the way."""
    from dixit_lab.progress import progress
    from dixit_lab.records.batches import file_batches
    from dixit_lab.records.decks import folder_decks
    from dixit_lab.records.manifest import check_game_count
    from dixit_lab.stats.find_rates import PredictionCache, predicted_finds
    from dixit_lab.stats.round_table import part_stem, write_round_table

    decks = folder_decks(folder)  # the deck played, refused in one line if changed since
    staging = folder_staging(folder / ROUNDS_DATASET)
    stats = GameStats()
    cache = PredictionCache(_untrusted_specs(folder))
    try:
        with progress(desc="tables", unit="game", disable_all=not show_progress) as bar:
            for batch in file_batches(games_path, check=True, decks=decks):
                first, last = int(batch.record_index[0]), int(batch.record_index[-1])
                write_round_table([batch], staging / f"part-{part_stem(first, last)}.parquet",
                                  decks)
                stats.add(batch_stats(batch, predicted_finds(batch, cache, decks)))
                bar.update(batch.games)
        check_game_count(games_path, stats.games)  # none missing after the last whole frame
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replace_folder(staging, folder / ROUNDS_DATASET)
    return stats


def write_tables(folder: str | Path, run: Any = None, *, bootstrap: int = BOOTSTRAP,
                 stats: GameStats | None = None, show_progress: bool = False) -> None:
    """Compute and write every table and the report of ``folder``.

    ``stats`` are the sums of its games with the ``rounds.parquet`` dataset already in place
    (a run's); without them both are rebuilt from the games file. ``run`` (a
    :class:`~dixit_lab.run.runner.RunResult`) adds timing to summary.json; without it the timing
    of an earlier summary.json is kept.
    """
    from dixit_lab.core.recording import recorder_columns
    from dixit_lab.ratings.data import rating_data_from_arrays
    from dixit_lab.ratings.pairs import rating_pairs_data
    from dixit_lab.ratings.plackett_luce import ratings_table_data, strength_replicates_data
    from dixit_lab.report.page import write_report
    from dixit_lab.stats.tables import (
        agent_frame,
        calibration_frame,
        fault_frame,
        find_rate_frame,
        summary_dict,
    )

    folder = Path(folder)
    if stats is None:  # (a run's games file may still be being written beside this)
        games_path = find_records(folder)
        if games_path is None:
            raise FileNotFoundError(f"{folder} has no games.jsonl: is it a results folder?")
        stats = rebuild_stats(folder, games_path, show_progress)
    if not stats.games:
        raise ConfigError(f"{find_records(folder) or folder} holds no games")

    with stage("agents.csv, find_calibration.csv", show_progress):
        agents = agent_frame(stats).merge(find_rate_frame(stats), on="player", how="left")
        agents = agents.merge(fault_frame(stats), on="player", how="left")
        for columns in recorder_columns(folder):  # the model agents': tokens, cost, ...
            agents = agents.merge(columns, on="player", how="left")
        atomic_write_text(folder / "agents.csv", agents.to_csv(index=False))
        atomic_write_text(folder / "find_calibration.csv",
                          calibration_frame(stats).to_csv(index=False))
    if len(stats.players) > 1:
        with stage(f"ratings.csv, rating_pairs.csv ({bootstrap} bootstrap replicates)",
                   show_progress):
            data = rating_data_from_arrays(stats.rating_names, stats.rating_games)
            replicates = None
            if bootstrap > 0:  # one bootstrap for both tables (the same draws)
                _, strength, boot = strength_replicates_data(data, bootstrap=bootstrap,
                                                             seed=_seed(folder))
                replicates = (strength, boot)
            ratings = ratings_table_data(data, bootstrap=bootstrap, seed=_seed(folder),
                                         replicates=replicates)
            atomic_write_text(folder / "ratings.csv", ratings.to_csv(index=False))
            pairs = rating_pairs_data(data, bootstrap=bootstrap, seed=_seed(folder),
                                      replicates=replicates)
            atomic_write_text(folder / "rating_pairs.csv", pairs.to_csv(index=False))

    old = folder / "summary.json"
    summary = _summary(old)
    summary.update(summary_dict(stats))
    if summary["unperceived_clues"]:  # said where the run is watched, not only in the report
        import sys

        print(f"{folder}: {summary['unperceived_clues']} clue(s) could not be perceived by an "
              f"agent (outside its clue bank, with no text model here to embed them): see "
              f"report.md and the unperceived_clues column of agents.csv", file=sys.stderr)
    if run is not None and run.played:  # a rerun that played nothing keeps the old timing
        summary.update(_timing(run))
    _write_summary(old, summary)
    with stage("report.md and plots", show_progress):
        write_report(folder)


def write_timing(folder: Path, run: Any) -> None:
    """Record the timing of ``run`` (a :class:`~dixit_lab.run.runner.RunResult` that played
    games) in ``folder``'s summary.json as soon as its games are saved, before the tables: a
    command killed while they are written (or whose tables fail) leaves it for the rerun that
    plays nothing and writes them."""
    path = folder / "summary.json"
    _write_summary(path, {**_summary(path), **_timing(run)})


def _timing(run: Any) -> dict[str, Any]:
    return {"wall_seconds": round(run.wall_seconds, 3), "games_played_this_run": run.played,
            "games_per_second": round(run.games_per_second, 1), "workers": run.workers}


def _summary(path: Path) -> dict[str, Any]:
    """An earlier summary.json (empty if there is none), refused in one line if damaged."""
    if not path.is_file():
        return {}
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path}: not a JSON summary ({error}); delete it and run "
                          f"`dixit-lab report` again") from None
    if not isinstance(summary, dict):
        raise ConfigError(f"{path}: not a JSON summary (a {type(summary).__name__}); "
                          f"delete it and run `dixit-lab report` again")
    return summary


def _write_summary(path: Path, summary: dict[str, Any]) -> None:
    buffer = io.StringIO()
    json.dump(summary, buffer, indent=2, sort_keys=True, default=str)
    atomic_write_text(path, buffer.getvalue() + "\n")
