"""The ``dixit-lab`` command line."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from dixit_lab.agent import AgentSpecError, agent_parameters, available_agents, get_agent_class
from dixit_lab.executors import executor_names
from dixit_lab.record_files import RECORD_FORMATS
from dixit_lab.sweep_folder import sweep_points

__all__ = ["main"]


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _seconds_since_start() -> float:
    """Seconds since the package was first imported: the whole command but the interpreter's
    own start-up."""
    from dixit_lab._clock import STARTED

    return time.perf_counter() - STARTED


def _parse_override(text: str) -> tuple[str, object]:
    from dixit_lab.spec import parse_spec

    if "=" not in text:
        raise CliError(f"--set expects key=value, got {text!r}")
    _, values = parse_spec(f"x({text})")
    return next(iter(values.items()))


def _split_agents(text: str) -> list[str]:
    """Split a comma-separated list of agent specs, keeping commas inside parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p for p in parts if p]


def cmd_simulate(args: argparse.Namespace) -> int:
    from dixit_lab.agent import make_agent
    from dixit_lab.cards import load_deck
    from dixit_lab.game import play_game
    from dixit_lab.progress import progress
    from dixit_lab.records import write_jsonl
    from dixit_lab.rules import get_rules
    from dixit_lab.seeding import game_seed

    overrides = dict(_parse_override(item) for item in args.set or [])
    rules = get_rules(args.rules, **overrides)
    specs = _split_agents(args.agents)
    if len(specs) == 1:
        specs = specs * args.players
    if len(specs) != args.players:
        raise CliError(f"--agents lists {len(specs)} agents for {args.players} players; give "
                       f"one spec for all seats or one per seat")
    rules.check_players(args.players)
    if args.out:
        _check_output_file(args.out, "--out")
    deck = load_deck(args.deck)
    agents = [make_agent(spec) for spec in specs]
    records = []
    with progress(total=args.games, desc="games", unit="game") as bar:
        for index in range(args.games):
            records.append(play_game(agents, rules, deck, game_seed(args.seed, index),
                                     on_illegal=args.on_illegal, meta={"game": index}))
            bar.update(1)
    if args.out:
        write_jsonl(records, args.out)
    _print_summary(records, args.players)
    return 0


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``."""
    def check(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value

    return check


_positive, _non_negative = _at_least(1), _at_least(0)


def _check_output_file(path: str, option: str) -> None:
    """Refuse, before any work, an output file that is a folder or lies in a missing one."""
    target = Path(path)
    if target.is_dir():
        raise CliError(f"{option} {path} is a folder; give a file name")
    if not target.parent.is_dir():
        raise CliError(f"{option} {path}: folder {target.parent} does not exist")


def _print_summary(records: list, n_players: int) -> None:
    games = len(records)
    if not games:
        print("games        0 (nothing to summarise)")
        return
    rounds = sum(len(r.rounds) for r in records) / games
    reasons = Counter(r.end_reason for r in records)
    print(f"games        {games}")
    print(f"mean rounds  {rounds:.2f}")
    print("end reasons  " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    print()
    print(f"{'seat':>4}  {'agent':<28} {'mean points':>11} {'win share':>9}")
    for seat in range(n_players):
        mean = sum(r.final_scores[seat] for r in records) / games
        wins = sum(1 / len(r.winners) for r in records if seat in r.winners) / games
        name = records[0].agents[seat]
        print(f"{seat:>4}  {name:<28} {mean:>11.2f} {wins:>9.3f}")


def cmd_agents(args: argparse.Namespace) -> int:
    for name in available_agents():
        cls = get_agent_class(name)
        params = ", ".join(p.describe() for p in agent_parameters(cls))
        print(f"{name}({params})")
        for line in textwrap.wrap(_first_paragraph(cls.__doc__), width=92):
            print(f"    {line}")
    return 0


def _first_paragraph(doc: str | None) -> str:
    """A docstring's first paragraph as one line of plain text (no reST backticks/roles)."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n")[0]
    text = " ".join(paragraph.split())
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)  # :class:`X` -> X
    return text.replace("``", "").replace("`", "")


def cmd_fit_listener(args: argparse.Namespace) -> int:
    from dixit_lab.listener_fit import fit_listener

    if bool(args.results) == bool(args.config):
        raise CliError("fit-listener: give results folders or --config (one of the two)")
    _check_output_file(args.out, "--out")
    if args.plot:
        _check_output_file(args.plot, "--plot")
    if args.config:
        from dixit_lab.listener_fit_eval import run_training

        args.results = [run_training(args.config)]
    fitted = fit_listener(args.results, embedder=args.embedder, clue_bank=args.clues,
                          temperature=args.temperature, regularization=args.regularization,
                          listeners=args.listener, holdout=args.holdout,
                          sources=[args.config] if args.config else None)
    path = fitted.save(args.out)
    info = fitted.info
    print(f"fitted on {info['votes']} listener votes ({info['rounds_skipped']} rounds skipped); "
          f"held out: {info['holdout']['deals']} deals ({info['holdout']['games']} games), "
          f"{info['holdout']['votes']} votes")
    print(f"{'held out':<16} {'log loss':>9} {'brier':>7} {'mean p':>7} {'observed':>8}")
    for label, key in (("analytic model", "analytic_model"), ("fitted model", "fitted")):
        m = info[key]
        print(f"{label:<16} {m['log_loss']:>9.4f} {m['brier']:>7.4f} {m['mean_predicted']:>7.3f} "
              f"{m['mean_observed']:>8.3f}")
    if args.plot:
        from dixit_lab.listener_fit_eval import plot_reliability

        print(f"wrote {plot_reliability(info, args.plot)}")
    print(f"wrote {path}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from dixit_lab.experiment import load_config, read_yaml_file
    from dixit_lab.runner import run_experiment, run_sweep

    config = load_config(args.config)
    if args.records:
        config = config.model_copy(update={"records": args.records})
    if config.sweep:
        data = read_yaml_file(args.config)
        if args.records:
            data["records"] = args.records
        folder = run_sweep(data, args.config, args.out, executor=args.executor,
                           workers=args.workers, show_progress=not args.quiet,
                           address=args.address)
        print(f"sweep of {len(config.sweep)} path(s) done: open {folder / 'report.md'}")
        return 0
    if config.tune and not args.quiet:
        print("note: this config has a tune section; `dixit-lab tune` runs the search",
              file=sys.stderr)
    result = run_experiment(config, args.out, executor=args.executor, workers=args.workers,
                            chunk_size=args.chunk_size, show_progress=not args.quiet,
                            address=args.address, exchanges=args.exchanges)
    speed = result.games_per_second
    rate = (f"{speed:.0f} games/s" if speed >= 10 else f"{speed:.2f} games/s") \
        if result.played else "nothing to play"  # model games take seconds each
    workers = f"{result.workers} worker(s)" if result.workers else "the cluster's CPUs"
    print(f"{config.name}: {result.games} games ({result.played} played this run, {rate} in "
          f"{result.wall_seconds:.1f} s of play, {workers}; the whole command "
          f"{_seconds_since_start():.1f} s)")
    print(f"results: {result.folder}  (report: {result.folder / 'report.md'})")
    _print_agents(result.folder)
    return 0


def _print_agents(folder: Path) -> None:
    import pandas as pd

    path = folder / "agents.csv"
    if not path.is_file():
        return
    table = pd.read_csv(path)
    columns = [c for c in ("player", "games", "win_share", "points_per_game",
                           "storyteller_points_per_turn", "some_found_rate", "all_found_rate",
                           "none_found_rate", "listener_accuracy") if c in table.columns]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table[columns].round(3).to_string(index=False))


def cmd_replay(args: argparse.Namespace) -> int:
    from dixit_lab.replay import replay_folder

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
            print(f"{prefix}DIFFERENT after {compared} game(s): {difference}")
            return 1
        if points:
            print(f"{prefix}identical: {compared} games")
    print(f"identical: {total} games replayed byte for byte"
          + (f" ({len(folders)} sweep points)" if points else ""))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dixit_lab.results_tables import write_tables
    from dixit_lab.sweep_report import write_sweep_report

    folder = Path(args.folder)
    points = sweep_points(folder)
    if points is not None:
        for point in points:
            write_tables(point.folder)
        path = write_sweep_report(folder)
    else:
        write_tables(folder)
        path = folder / "report.md"
    print(f"wrote {path}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from dixit_lab.cards import DeckError, load_deck
    from dixit_lab.records import read_jsonl
    from dixit_lab.show import show_game

    path = Path(args.folder)
    points = sweep_points(path)
    if points is not None:
        chosen = [p for p in points if p.point == args.point]
        if not chosen:
            listing = "; ".join(f"--point {p.point}: {p.label}" for p in points)
            raise CliError(f"{path} is a sweep of {len(points)} points: choose one with "
                           f"--point N ({listing})")
        path = chosen[0].folder
    elif args.point is not None:
        raise CliError(f"{path} is not a sweep folder (no sweep.csv): leave out --point")
    for index, record in enumerate(read_jsonl(path)):
        if record.meta.get("game", index) == args.game:
            try:
                deck = load_deck(record.deck)
            except DeckError:
                deck = None
            print(show_game(record, deck))
            return 0
    raise CliError(f"{path} has no game {args.game}")


def cmd_tune(args: argparse.Namespace) -> int:
    from dixit_lab.experiment import load_config, read_yaml_file
    from dixit_lab.tuning import tune

    config = load_config(args.config)
    data = read_yaml_file(args.config)
    out = Path(args.out) if args.out else config.results_dir()
    candidates = tune(data, args.config, out, workers=args.workers)
    alive = [c for c in candidates if c.alive]
    best = max(alive, key=lambda c: c.mean)
    print(f"best value: {best.value:g} (mean {best.mean:.3f} ± {best.half_width:.3f} = 95% "
          f"interval half-width, {len(best.samples)} games); still in the race: "
          f"{', '.join(f'{c.value:g}' for c in alive)}")
    print(f"wrote {out / 'tune.csv'} and {out / 'tune.png'}")
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    from dixit_lab.embeddings import regenerate_shipped

    for deck in args.deck:
        out = Path(args.out) if args.out else None
        for path in regenerate_shipped(deck, args.embedder, args.clues, out):
            print(f"wrote {path}")
    return 0


def cmd_export_bench(args: argparse.Namespace) -> int:
    from dixit_lab.bench_export import TIERS, export_bench

    counts = export_bench(args.results, args.out, per_tier=args.per_tier, seed=args.seed)
    print(f"wrote {sum(counts.values())} items to {args.out} ("
          + ", ".join(f"{tier} {counts[tier]}" for tier in TIERS) + ")")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dixit-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play seeded games and print a summary table")
    sim.add_argument("--players", type=int, default=5)
    sim.add_argument("--rules", default="classic",
                     help="preset: classic, refresh, quest, dixitworld")
    sim.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="override a rule option, e.g. --set lone_finder_points=4")
    sim.add_argument("--agents", default="random",
                     help="one agent spec for every seat, or a comma-separated spec per seat")
    sim.add_argument("--games", type=_non_negative, default=200)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--deck", default="dreams",
                     help="bundled deck name (dreams: images with embeddings, for every agent), "
                          "'numbered-N' (rules-only, for random agents), or a folder of images")
    sim.add_argument("--on-illegal", choices=["raise", "fallback"], default="raise")
    sim.add_argument("--out", help="also write the games as JSON Lines to this file")
    sim.set_defaults(func=cmd_simulate)

    fit = sub.add_parser("fit-listener",
                         help="fit the calibrated agent's listener model on logged games")
    fit.add_argument("results", nargs="*", help="results folders or games.jsonl files")
    fit.add_argument("--config", help="a training config: play its games, then fit on them")
    fit.add_argument("--holdout", type=float, default=0.2,
                     help="share of deals held out, with all their games, to evaluate the "
                          "fit (default 0.2)")
    fit.add_argument("--plot", help="write a held-out reliability diagram (PNG) here")
    fit.add_argument("--out", required=True, help="where to write the model (JSON)")
    fit.add_argument("--embedder", default="conse", help="the space the features come from")
    fit.add_argument("--clues", default="default", help="the clue bank the games used")
    fit.add_argument("--temperature", type=float, default=0.05,
                     help="temperature of the analytic model used as a feature")
    fit.add_argument("--listener", action="append",
                     help="learn from the votes of this player name, agent spec or agent "
                          "name only (repeatable; default: every listener)")
    fit.add_argument("--regularization", type=float, default=1.0,
                     help="inverse L2 strength of the logistic regression (C)")
    fit.set_defaults(func=cmd_fit_listener)

    run = sub.add_parser("run", help="run an experiment config into a results folder")
    run.add_argument("config", help="experiment YAML (see experiments/)")
    run.add_argument("--out", help="results folder (default: the config's out, or "
                                   "results/<name>)")
    run.add_argument("--executor", choices=executor_names(),
                     help="override the config's executor (ray: from the clone, "
                          "pip install -e \".[ray]\")")
    run.add_argument("--workers", type=_positive, help="worker processes (default: all cores)")
    run.add_argument("--address", help="Ray cluster address for --executor ray, e.g. "
                                       "HEAD:6379 (default: the config's, else a local Ray)")
    run.add_argument("--chunk-size", type=_positive, help="games per chunk sent to a worker")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
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

    rep = sub.add_parser("replay", help="re-play every game of a results folder (or of every "
                                        "point of a sweep folder) and compare")
    rep.add_argument("folder")
    rep.add_argument("--executor", choices=executor_names(), default="process")
    rep.add_argument("--workers", type=_positive)
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
    tune.add_argument("config", help="experiment YAML with a tune section")
    tune.add_argument("--out", help="folder (default: the config's out, or results/<name>)")
    tune.add_argument("--workers", type=_positive)
    tune.set_defaults(func=cmd_tune)

    embed = sub.add_parser("embed", help="(re)compute the shipped embeddings of a deck")
    embed.add_argument("--deck", action="append", required=True,
                       help="deck name (repeat for several)")
    embed.add_argument("--embedder", default="conse")
    embed.add_argument("--clues", default="default")
    embed.add_argument("--out", help="folder (default: data/embeddings)")
    embed.set_defaults(func=cmd_embed)

    bench = sub.add_parser("export-bench", help="a static listener set (clue, cards, answer, "
                                                "difficulty tier) from logged games")
    bench.add_argument("results", nargs="+", help="results folders or games.jsonl files")
    bench.add_argument("--out", required=True, help="the items, as JSON Lines")
    bench.add_argument("--per-tier", type=int, help="at most this many items of each tier")
    bench.add_argument("--seed", type=int, default=0, help="draws the --per-tier sample")
    bench.set_defaults(func=cmd_export_bench)

    from dixit_lab.web.commands import add_commands as add_web_commands  # play, view

    add_web_commands(sub)

    ag = sub.add_parser("agents", help="list the registered agents and their parameters")
    ag.set_defaults(func=cmd_agents)
    return parser


def _interrupt_on_sigterm() -> object:
    """SIGTERM (a job scheduler, ``kill``, a container stopping) behaves like Ctrl-C: the
    worker pool is stopped, the saved games are kept and one line says so. Returns the
    previous handler (None off the main thread, where no handler can be set)."""
    import signal
    import threading

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, interrupt)


def _os_error(error: OSError) -> str:
    """One line for a file the command could not read or write."""
    where = " -> ".join(str(name) for name in (error.filename, error.filename2) if name)
    reason = error.strerror or type(error).__name__
    return f"{where}: {reason}" if where else str(error)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = _interrupt_on_sigterm()
    try:
        return int(args.func(args))
    except (CliError, AgentSpecError, ValueError, FileNotFoundError, RuntimeError) as error:
        print(f"dixit-lab {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0
    except OSError as error:  # a file or folder that cannot be written or read
        print(f"dixit-lab {args.command}: error: {_os_error(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
