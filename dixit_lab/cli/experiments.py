"""The commands of experiments and their results folders: ``run``, ``replay``, ``report``,
``show`` and ``tune``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dixit_lab.cli.common import positive, positive_number, print_agents, seconds_since_start
from dixit_lab.cli.examples import config_argument
from dixit_lab.errors import UserError
from dixit_lab.records.files import RECORD_FORMATS
from dixit_lab.records.sweeps import sweep_points
from dixit_lab.run.executors import executor_names

__all__ = ["add_commands"]


def cmd_run(args: argparse.Namespace) -> int:
    from dixit_lab.run.experiment import load_config
    from dixit_lab.run.runner import FaultShareError, model_shares, run_file

    args.config = config_argument(args.config, "run")
    config = load_config(args.config)
    if config.tune and not config.sweep and not args.quiet:
        print("note: this config has a tune section; `dixit-lab tune` runs the search",
              file=sys.stderr)
    failed: FaultShareError | None = None
    try:
        result = run_file(args.config, args.out, records=args.records, executor=args.executor,
                          workers=args.workers, chunk_size=args.chunk_size,
                          show_progress=not args.quiet, address=args.address,
                          exchanges=args.exchanges, restart=args.restart)
    except FaultShareError as error:  # the results are written: show them, then fail
        failed, result = error, error.result
    if isinstance(result, Path):
        for point in sweep_points(result) or []:
            _print_faults(point.folder, f"point {point.point} ({point.label}): ")
        print(f"sweep of {len(config.sweep or {})} path(s) done: open {result / 'report.md'}")
    else:
        speed = result.games_per_second
        rate = (f"{speed:.0f} games/s" if speed >= 10 else f"{speed:.2f} games/s") \
            if result.played else "nothing to play"  # model games take seconds each
        workers = f"{result.workers} worker(s)" if result.workers else "the cluster's CPUs"
        print(f"{config.name}: {result.games} games ({result.played} played this run, {rate} "
              f"in {result.wall_seconds:.1f} s of play, {workers}; the whole command "
              f"{seconds_since_start():.1f} s)")
        print(f"results: {result.folder}  (report: {result.folder / 'report.md'})")
        print_agents(result.folder)
        for name, decisions, share in model_shares(result.folder, config):
            print(f"model seat {name}: {round(share * decisions)} of {decisions} decisions "
                  f"made by the model itself ({share:.0%}); the rest are seeded fallbacks of "
                  f"faults")
        _print_faults(result.folder)
    if failed is not None:
        print(f"dixit-lab run: error: {failed}", file=sys.stderr)
        return 2
    return 0


def _print_faults(folder: Path, prefix: str = "") -> None:
    """A line for each seat of the results folder with faults."""
    from dixit_lab.report.faults import fault_line, folder_faults

    for seat in folder_faults(folder):
        print(prefix + fault_line(seat))


def cmd_replay(args: argparse.Namespace) -> int:
    from dixit_lab.run.folder import read_header
    from dixit_lab.run.provenance import code_note
    from dixit_lab.run.replay import replay_folder

    points = sweep_points(args.folder)
    folders = [(f"point {p.point} ({p.label}): ", p.folder) for p in points or []] \
        or [("", Path(args.folder))]
    total = 0
    for prefix, folder in folders:
        compared, difference = replay_folder(folder, executor=args.executor,
                                             workers=args.workers, show_progress=not args.quiet,
                                             address=args.address)
        total += compared
        if difference is not None:
            note = code_note(read_header(folder))  # another version or package code played
            print(f"{prefix}DIFFERENT after {compared} game(s): {difference}"
                  + (f" ({note})" if note else ""))
            return 1
        if points:
            print(f"{prefix}identical: {compared} games")
    print(f"identical: {total} games replayed byte for byte"
          + (f" ({len(folders)} sweep points)" if points else ""))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dixit_lab.records.integrity import FolderLock
    from dixit_lab.report.outputs import REPORT_AGAIN, write_tables
    from dixit_lab.report.sweep import write_sweep_report

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder: give a results folder")
    points = sweep_points(folder)
    with FolderLock(folder, "report", REPORT_AGAIN):  # one writer a folder
        if points is not None:
            for point in points:
                with FolderLock(point.folder, "report", REPORT_AGAIN):
                    write_tables(point.folder)
            path = write_sweep_report(folder)
        else:
            write_tables(folder)
            path = folder / "report.md"
    print(f"wrote {path}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from dixit_lab.records.decks import folder_decks
    from dixit_lab.records.format import read_jsonl
    from dixit_lab.report.show import show_game

    path = Path(args.folder)
    points = sweep_points(path)
    if points is not None:
        chosen = [p for p in points if p.point == args.point]
        if not chosen:
            listing = "; ".join(f"--point {p.point}: {p.label}" for p in points)
            raise UserError(f"{path} is a sweep of {len(points)} points: choose one with "
                            f"--point N ({listing})")
        path = chosen[0].folder
    elif args.point is not None:
        raise UserError(f"{path} is not a sweep folder (no sweep.csv): leave out --point")
    decks = folder_decks(path)  # the deck played (a deck changed since: one line)
    for index, record in enumerate(read_jsonl(path)):
        if record.meta.get("game", index) == args.game:
            print(show_game(record, decks(record.deck)))
            return 0
    raise UserError(f"{path} has no game {args.game}")


def cmd_tune(args: argparse.Namespace) -> int:
    from dixit_lab.run.experiment import load_config, read_yaml_file
    from dixit_lab.tune.search import tune

    args.config = config_argument(args.config, "tune")
    config = load_config(args.config)
    data = read_yaml_file(args.config)
    out = Path(args.out) if args.out else config.results_dir()
    tune(data, args.config, out, workers=args.workers)  # it prints the verdict
    print(f"wrote {out / 'tune.csv'}, {out / 'tune.json'} and {out / 'tune.png'}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from dixit_lab.run.experiment import read_yaml_file
    from dixit_lab.run.plan import plan_run

    args.config = config_argument(args.config, "plan")
    data = read_yaml_file(args.config)
    plan = plan_run(data, str(args.config), pilot=args.pilot, target_width=args.target_width)
    for line in plan.lines():
        print(line)
    return 0


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    run = sub.add_parser("run", help="run an experiment config into a results folder")
    run.add_argument("config", help="experiment YAML, or a packaged example's name "
                                     "(`dixit-lab examples` lists them)")
    run.add_argument("--out", help="results folder (default: the config's out, or "
                                   "results/<name>)")
    run.add_argument("--executor", choices=executor_names(),
                     help="override the config's executor (ray: pip install "
                          "'dixit-lab[ray]')")
    run.add_argument("--workers", type=positive, help="worker processes (default: all cores)")
    run.add_argument("--address", help="Ray cluster address for --executor ray, e.g. "
                                       "HEAD:6379 (default: the config's, else a local Ray)")
    run.add_argument("--chunk-size", type=positive, help="games per chunk sent to a worker")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--restart", action="store_true",
                     help="discard what a run wrote in the results folder (its games, parts, "
                          "tables, config.yaml; nothing else) and play every game again")
    run.add_argument("--records", choices=RECORD_FORMATS,
                     help="how to keep the games: jsonl.zst (compressed, the default) or "
                          "jsonl (plain); overrides the config's records")
    models = run.add_mutually_exclusive_group()  # model agents' exchanges (docs/vlm.md)
    models.add_argument("--record-only", dest="exchanges", action="store_const", const="record",
                        help="model agents call their endpoint for every decision, reusing "
                             "nothing recorded")
    models.add_argument("--replay-only", dest="exchanges", action="store_const", const="replay",
                        help="model agents only reuse recorded replies (no server needed)")
    run.set_defaults(func=cmd_run)

    plan = sub.add_parser("plan", help="what a run will take (games for a target interval, "
                                       "time, model tokens and cost), from a short pilot")
    plan.add_argument("config", help="experiment YAML, or a packaged example's name")
    plan.add_argument("--pilot", type=positive, default=100,
                      help="games of the pilot (default 100; the run's first games)")
    plan.add_argument("--target-width", type=positive_number,
                      help="the rating interval width wanted: the games it needs")
    plan.set_defaults(func=cmd_plan)

    rep = sub.add_parser("replay", help="re-play every game of a results folder (or of every "
                                        "point of a sweep folder) and compare")
    rep.add_argument("folder")
    rep.add_argument("--executor", choices=executor_names(), default="process")
    rep.add_argument("--workers", type=positive)
    rep.add_argument("--address", help="Ray cluster address for --executor ray, e.g. HEAD:6379 "
                                       "(default: a local Ray)")
    rep.add_argument("--quiet", action="store_true")
    rep.set_defaults(func=cmd_replay)

    report = sub.add_parser("report", help="rebuild the tables and report of a results folder")
    report.add_argument("folder")
    report.set_defaults(func=cmd_report)

    show = sub.add_parser("show", help="print one game round by round")
    show.add_argument("folder", help="results folder, sweep folder or games.jsonl")
    show.add_argument("--game", type=int, default=0)
    show.add_argument("--point", type=int, help="the sweep point (for a sweep folder)")
    show.set_defaults(func=cmd_show)

    tune = sub.add_parser("tune", help="search one parameter for the best value of a metric")
    tune.add_argument("config", help="experiment YAML with a tune section, or a packaged "
                                      "example's name (tune_ambiguity)")
    tune.add_argument("--out", help="folder (default: the config's out, or results/<name>)")
    tune.add_argument("--workers", type=positive)
    tune.set_defaults(func=cmd_tune)
