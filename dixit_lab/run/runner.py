"""Run an experiment into a results folder: atomically, resumably, on any executor.

Finished chunks of games are written to ``parts/`` as they come back (each file written to a
temporary name and renamed, so a file is either whole or absent). Rerunning the same config
into the same folder plays only the games that are missing, when the saved games were played
on the same deck by the same code (:mod:`dixit_lab.run.resume`; ``restart`` plays them all
again). When every game is there, the parts are merged in game order into ``games.jsonl``
and the tables, ratings and report are written.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dixit_lab._version import __version__
from dixit_lab.atomic import atomic_write, atomic_write_text
from dixit_lab.core.agent import make_agent
from dixit_lab.core.recording import RecorderError, Recording, get_recorder
from dixit_lab.errors import UserError
from dixit_lab.isolation.seats import seat_info
from dixit_lab.progress import progress, stage
from dixit_lab.records.decks import DECK_PLAYED, deck_played
from dixit_lab.records.files import compressor, find_records, records_name
from dixit_lab.records.integrity import FolderLock
from dixit_lab.records.manifest import MANIFEST_NAME, remove_manifest, write_manifest
from dixit_lab.run.deal_secret import run_secret
from dixit_lab.run.executors import WorkerLost, chunked, get_executor, run_chunks
from dixit_lab.run.experiment import (
    ConfigError,
    ExperimentConfig,
    expand_sweep,
    load_config,
    read_yaml_file,
)
from dixit_lab.run.folder import ENGINE_PLAYED
from dixit_lab.run.parts import (
    finished_beside,
    forget_predictions,
    merge_parts,
    other_records,
    save_part,
)
from dixit_lab.run.provenance import (
    AGENTS_PLAYED,
    CODE_DIGEST,
    PLAYED_BY,
    WORKING_DIRECTORY,
    agents_played,
    what_plays,
)
from dixit_lab.run.resume import (
    check_same_agents,
    check_same_code,
    check_same_deck,
    check_same_experiment,
    discard_run,
    done_indices,
    line_check,
    saved_files,
    saved_lines,
)
from dixit_lab.run.tournament import (
    GameSpec,
    TableSetup,
    forget_agents,
    schedule_games,
    table_setup,
)

__all__ = ["FaultShareError", "RunResult", "model_players", "model_shares", "prepare_folder",
           "run_experiment", "run_file", "run_sweep", "table_setup"]

@dataclass(frozen=True)
class RunResult:
    folder: Path
    games: int
    played: int
    wall_seconds: float
    workers: int

    @property
    def games_per_second(self) -> float:
        return self.played / self.wall_seconds if self.wall_seconds > 0 else float("nan")


class FaultShareError(ConfigError):
    """A seat's faults replaced more of its decisions than the config allows
    (``max_fault_share``; a model seat made less than ``min_model_share`` of them itself):
    its row is in part the seeded fallbacks' play. Every result is written; ``result`` is the
    run's (a sweep's folder for a sweep); ``over``: each seat over its limit, as
    :func:`~dixit_lab.report.faults.over_limits` gives them."""

    def __init__(self, message: str, result: RunResult | Path,
                 over: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.result = result
        self.over = list(over)


def model_players(config: ExperimentConfig) -> list[str]:
    """The players of ``config`` that are model seats (remote agents), each once."""
    untrusted = {spec for (_, spec), isolation in zip(config.seats(), config.isolation(),
                                                      strict=True) if isolation.untrusted}
    # an untrusted agent is never built here (a model agent is trusted code, seated so)
    return [name for name, spec in dict(config.seats()).items()
            if spec not in untrusted and seat_info(spec).remote]


def model_shares(folder: Path, config: ExperimentConfig) -> list[tuple[str, int, float]]:
    """(player, decisions, share made by the model itself) of each model seat, from the
    folder's agents.csv."""
    import pandas as pd

    path = folder / "agents.csv"
    models = model_players(config)
    if not path.is_file() or not models:
        return []
    table = pd.read_csv(path, dtype={"player": str}).set_index("player")
    return [(name, int(table.loc[name, "decisions"]),
             float(table.loc[name, "own_decision_share"]))
            for name in models if name in table.index]


def _check_faults(config: ExperimentConfig, result: RunResult) -> None:
    """Fail the run (its results written) if a seat's faults are over the config's limit."""
    from dixit_lab.report.faults import folder_faults, limits_message, over_limits

    seats = folder_faults(result.folder)
    over = over_limits(seats, config.max_fault_share, config.min_model_share,
                       model_players(config)) if seats else []
    if over:
        raise FaultShareError(limits_message(str(result.folder), over), result, over)


def chunk_size_for(config: ExperimentConfig, setup: TableSetup,
                   override: int | None = None, workers: int = 1) -> int:
    """Games per chunk: as given, else enough for four chunks per worker (the last chunks
    balance the load), bounded so that a chunk is about a second of work: 25 to 250 games
    for the reference engine (25 when a seat is isolated or a model: seconds a game), 100
    to 5,000 for the batched engine (a million games are 200 chunks, 200 files of the round
    table)."""
    given = override or config.executor.chunk_size
    if given:
        return given
    share = -(-config.games // (4 * max(workers, 1)))
    if setup.batched():
        return max(100, min(5000, share))
    if setup.untrusted or setup.remote():
        return 25
    return max(25, min(250, share))


def game_specs(config: ExperimentConfig) -> Sequence[GameSpec]:
    return schedule_games(config.schedule.kind, len(config.seats()), config.table_size,
                          config.games, config.seed)


@functools.lru_cache(maxsize=64)
def has_budgets(specs: tuple[str, ...]) -> bool:
    """True if an agent of ``specs`` has a spending budget of its own (a truthy ``budget``:
    a model agent's ``max_tokens_total``, ...)."""
    return any(bool(getattr(make_agent(spec), "budget", None))
               for spec in dict.fromkeys(specs))


def _check_budget_executor(config: ExperimentConfig, kind: str) -> None:
    """Budgets are kept by one process: refuse them with workers of their own."""
    if kind == "local":
        return
    trusted = tuple(spec for (_, spec), isolation in zip(config.seats(), config.isolation(),
                                                          strict=True)
                    if not isolation.untrusted)  # an untrusted agent is never built here
    if config.model_budget or has_budgets(trusted):
        raise ConfigError(f"{config.name}: model budgets (model_budget, max_tokens_total, "
                          f"max_cost_usd) are kept by one process: use executor: local "
                          f"(model games are played concurrently in it anyway)")


def _merge(folder: Path, expected: int, records: str) -> None:
    """Stream every saved game, in index order and once each, into the games file of format
    ``records`` (memory stays flat however many games there are); the slow path of
    :func:`~dixit_lab.run.parts.merge_parts`, for parts that do not tile the games."""
    import heapq

    sources = saved_files(folder)
    merged = heapq.merge(*(saved_lines(path) for path in sources), key=lambda item: item[0])
    target = folder / records_name(records)

    def write(temporary: Path) -> None:
        last = -1
        with temporary.open("wb") as raw:
            out: Any = raw
            if records.endswith(".zst"):
                import zstandard

                out = compressor().stream_writer(raw, closefd=False)  # type: ignore[attr-defined]
            for index, line in merged:
                if index == last or not 0 <= index < expected:
                    continue  # the same game saved twice (games.jsonl and a part)
                out.write(line.encode("utf-8") + b"\n")
                last = index
            if out is not raw:
                out.flush(zstandard.FLUSH_FRAME)

    atomic_write(target, write)
    for path in other_records(folder, records):
        path.unlink()


def prepare_folder(config: ExperimentConfig, folder: Path,
                   setup: TableSetup | None = None) -> None:
    """Create the results folder (or check that it holds this experiment, its saved games
    played on the same deck by the same code: :mod:`dixit_lab.run.resume`) and write its
    config.yaml: the resolved config, what plays it (the version, the package's code digest,
    the commit, the Python, the working folder, the outside agents' code:
    :mod:`dixit_lab.run.provenance`), the deck and the engine (and why)."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"results folder {folder} is a file, not a folder; choose another "
                          f"--out")
    folder.mkdir(parents=True, exist_ok=True)
    resolved = config.resolved()
    old = check_same_experiment(folder, resolved)
    deck = deck_played(config.deck)  # the deck by path and content
    check_same_deck(folder, old, deck)
    agents = agents_played(resolved["players"])  # their files, read here: never a child's word
    check_same_agents(folder, old, agents)
    setup = setup or table_setup(config)
    engine, why = setup.engine_choice()
    now = what_plays(engine)
    history = check_same_code(folder, old, now, config, setup, game_specs(config))
    header = {"experiment": resolved, "dixit_lab_version": __version__,
              CODE_DIGEST: now[CODE_DIGEST], "git_commit": now["git_commit"],
              "python": sys.version.split()[0], WORKING_DIRECTORY: str(Path.cwd()),
              DECK_PLAYED: deck, ENGINE_PLAYED: {"engine": engine, "why": why}}
    if agents:
        header[AGENTS_PLAYED] = agents
    if history:
        header[PLAYED_BY] = history
    atomic_write_text(folder / "config.yaml", yaml.safe_dump(header, sort_keys=False))


def run_experiment(config: ExperimentConfig, out: str | Path | None = None, *,
                   executor: str | None = None, workers: int | None = None,
                   chunk_size: int | None = None, show_progress: bool = True,
                   write_outputs: bool = True, address: str | None = None,
                   exchanges: str | None = None, restart: bool = False) -> RunResult:
    """Play every game of ``config`` that is not in the results folder yet, then write the
    tables, ratings and report. A config with a ``sweep`` runs each point in a sub-folder.
    ``executor``, ``workers`` and ``address`` (the Ray cluster of the ``ray`` executor)
    override the config's ``executor`` section. ``exchanges`` is the mode of the recorders of
    the agents (``auto``, ``record``, ``replay``; the model agents' exchange store in
    ``<folder>/exchanges``: :mod:`dixit_lab.core.recording`). ``restart`` first discards
    what a run wrote in the folder (:func:`~dixit_lab.run.resume.discard_run`): every game
    is played again."""
    if config.sweep:
        raise ConfigError("this config has a sweep: use run_sweep (dixit-lab run does)")
    _check_players(config)
    get_executor(executor or config.executor.kind)  # a plugin that does not load: one line
    folder = Path(out) if out is not None else config.results_dir()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"results folder {folder} is a file, not a folder; choose another "
                          f"--out")
    folder.mkdir(parents=True, exist_ok=True)
    with FolderLock(folder):
        if restart:
            discard_run(folder)
        result = _run_locked(config, folder, executor, workers, chunk_size, show_progress,
                             write_outputs, address, exchanges)
    if write_outputs:
        _check_faults(config, result)
    return result


def _check_players(config: ExperimentConfig) -> None:
    """Refuse, before the results folder is made, a config that ``run`` cannot play: a person
    at the table (``dixit-lab play`` plays it), or an agent whose recorder cannot be used
    (its ``recorder`` not a name; a name that is unknown, does not import, is not a recorder
    or cannot be made), naming the player; and say, a line each, which sandboxed seat binds
    a folder holding another player's agent code."""
    for index, player in enumerate(config.players):
        try:
            info = seat_info(player.spec(), player.seat_isolation(), config.deck)
            if info.recorder is not None:
                get_recorder(info.recorder)
        except UserError as error:
            raise ConfigError(f"{config.name}: players.{index}.agent: {error}") from None
        if info.person:
            raise ConfigError(f"{config.name}: a player is a person (agent: human): play "
                              f"this config with `dixit-lab play`")
    from dixit_lab.isolation.isolated_agent import shared_code

    for line in shared_code([(player.display_name(), player.spec(), player.seat_isolation())
                             for player in config.players]):
        print(f"{config.name}: {line}", file=sys.stderr)


def _run_locked(config: ExperimentConfig, folder: Path, executor: str | None,
                workers: int | None, chunk_size: int | None, show_progress: bool,
                write_outputs: bool, address: str | None, exchanges: str | None) -> RunResult:
    """:func:`run_experiment` once the folder is locked."""
    setup = table_setup(config)
    prepare_folder(config, folder, setup)
    batched, why = setup.engine_plan()
    if not batched and config.engine == "auto":  # said once a run, and in report.md
        print(f"{config.name}: the reference engine plays these games ({why})",
              file=sys.stderr)
    kind = executor or config.executor.kind
    address = address or config.executor.address
    count = workers or config.executor.workers
    if count is None:  # the executor's default (0 on a cluster: as many as it has CPUs)
        count = get_executor(kind).default_workers(address)

    specs = game_specs(config)
    _check_budget_executor(config, kind)
    secret = run_secret(config, folder)  # untrusted seats: deals no seat can recompute
    done = done_indices(folder, line_check(config, specs, secret))
    missing: Sequence[GameSpec] = specs if not done else [
        spec for spec in specs if spec.index not in done]
    saved = len(done)  # games saved: the resumed ones, then each chunk's
    del done
    setup = table_setup(config, secret)
    budget = config.model_budget.model_dump() if config.model_budget else None
    setup = dataclasses.replace(setup, recording=Recording.of(  # opened where chunks play
        folder, setup.recorders(), exchanges, budget))
    parts = folder / "parts"
    start = time.perf_counter()
    played = 0
    written: set[int] = set()  # the first game of each part this run wrote
    loading = None  # what the tables will need, loaded while other processes play
    if missing:
        parts.mkdir(exist_ok=True)
        chunks = chunked(missing, chunk_size_for(config, setup, chunk_size, count))
        records = config.records
        bar = progress(total=len(specs), desc=config.name, unit="game",
                       initial=len(specs) - len(missing), disable_all=not show_progress)
        try:
            with bar:
                for results in run_chunks(setup, chunks, kind, count or None, address,
                                          parts=parts, records=records):
                    if results[0][1] is not None:  # not written by the worker itself
                        save_part(parts, results, records,  # type: ignore[arg-type]
                                  untrusted=setup.untrusted_specs, decks=setup.decks())
                    if loading is None and write_outputs and kind != "local" and count != 1:
                        from dixit_lab.report.outputs import prepare_outputs

                        loading = prepare_outputs(len(specs))  # the workers are forked now
                    saved += len(results)
                    written.add(results[0][0])
                    played += len(results)
                    bar.update(len(results))
        except KeyboardInterrupt as interrupt:
            from dixit_lab.run.tournament import ChunkInterrupted

            if isinstance(interrupt, ChunkInterrupted):  # its ended games: saved as parts
                saved += len(interrupt.results)
            print(f"\ninterrupted: {saved} of {len(specs)} games are saved in {folder}; "
                  f"run the same command again to play the rest", file=sys.stderr)
            raise
        except WorkerLost as error:  # the chunks other workers finished may be saved too
            raise WorkerLost(f"{folder}: {error}; at least {saved} of {len(specs)} games are "
                             f"saved: run the same command again to play the rest") from None
        except RecorderError as error:  # a recorder's session failed: a fault of the run
            raise RecorderError(f"{error}; {saved} of {len(specs)} games are saved in "
                                f"{folder}: run the same command again to play the "
                                f"rest") from None
    wall = time.perf_counter() - start
    if saved != len(specs):
        raise ConfigError(f"{folder}: {len(specs) - saved} games are missing after the "
                           f"run; run the same command again")
    result = RunResult(folder, len(specs), played, wall, count)
    if played and write_outputs:  # for a rerun that plays nothing if the tables never come
        from dixit_lab.report.outputs import write_timing

        write_timing(folder, result)
    merged = None
    if missing or parts.is_dir():
        remove_manifest(folder)  # the games file is rewritten: its manifest follows it
        with stage("merging the parts", show_progress):
            merged = merge_parts(folder, len(specs), config.records, written,
                                 setup.untrusted_specs)
            if merged is None:  # parts of scattered games, or a games file already there
                _merge(folder, len(specs), config.records)
    if merged is None:
        games_file = find_records(folder)
        assert games_file is not None  # every game is saved
        if missing or parts.is_dir() or not (folder / MANIFEST_NAME).is_file():
            write_manifest(folder, games_file, len(specs))  # an old folder's lines: checked
        if parts.is_dir():  # merged: the parts (and temporary files of a killed run) can go
            shutil.rmtree(parts)
    with finished_beside(merged):  # the games file written while the tables are
        if write_outputs:
            from dixit_lab.report.outputs import write_tables

            write_tables(folder, result, stats=merged.stats if merged else None,
                         show_progress=show_progress)
    return result


def run_sweep(data: dict[str, Any], source: str, out: str | Path | None = None, *,
              executor: str | None = None, workers: int | None = None,
              show_progress: bool = True, address: str | None = None,
              restart: bool = False) -> Path:
    """Run every point of a config's ``sweep`` into ``out/points/<k>`` and join the reports.
    With the ``ray`` executor all points share one Ray connection; ``restart``: every point
    played again (:func:`run_experiment`'s). A point whose seats are over their fault limits
    does not stop the sweep: once every point and the sweep's report are written,
    :class:`FaultShareError` names them all."""
    import csv
    import io

    points = list(expand_sweep(data, source))
    base = points[0][2]
    folder = Path(out) if out is not None else base.results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    paths = list(data["sweep"])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["point", *paths, "folder"])
    session = get_executor(executor or base.executor.kind).session(  # e.g. Ray, once
        address or base.executor.address, workers or base.executor.workers)
    over: list[tuple[str, str]] = []  # the points' seats over their limits: said at the end
    with FolderLock(folder):  # the sweep's files: one writer (each point locks its own)
        with session:
            for index, settings, config in points:
                sub = folder / "points" / f"{index:03d}"
                label = ", ".join(f"{k}={v}" for k, v in settings.items())
                if show_progress:
                    print(f"sweep point {index + 1}/{len(points)}: {label}", file=sys.stderr)
                try:
                    run_experiment(config, sub, executor=executor, workers=workers,
                                   show_progress=show_progress, address=address,
                                   restart=restart)
                except FaultShareError as error:  # its results are written: the next point
                    over += [(f"point {index} ({label}): {why}", field)
                             for why, field in error.over]
                forget_predictions()  # the next point plays other setups: memory stays flat
                forget_agents()
                writer.writerow([index, *[settings[p] for p in paths],
                                 os.path.relpath(sub, folder)])
        atomic_write_text(folder / "sweep.csv", buffer.getvalue())
        from dixit_lab.report.faults import limits_message
        from dixit_lab.report.sweep import write_sweep_report

        write_sweep_report(folder)
    if over:
        raise FaultShareError(limits_message(str(folder), over), folder, over)
    return folder


def run_file(path: str | Path, out: str | Path | None = None, *, records: str | None = None,
             executor: str | None = None, workers: int | None = None,
             chunk_size: int | None = None, show_progress: bool = True,
             address: str | None = None, exchanges: str | None = None,
             restart: bool = False) -> RunResult | Path:
    """Run the config file at ``path``: its experiment (returns its :class:`RunResult`), or
    every point of its sweep (returns the sweep folder). ``records`` overrides the config's
    ``records``; the other options are :func:`run_experiment`'s."""
    config = load_config(path)
    if config.sweep:
        data = read_yaml_file(path)
        if records:
            data["records"] = records
        return run_sweep(data, str(path), out, executor=executor, workers=workers,
                         show_progress=show_progress, address=address, restart=restart)
    if records:
        config = config.model_copy(update={"records": records})
    return run_experiment(config, out, executor=executor, workers=workers,
                          chunk_size=chunk_size, show_progress=show_progress, address=address,
                          exchanges=exchanges, restart=restart)
