"""``dixit-lab simulate``: seeded games without a config, and a summary table."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from dixit_lab.cli.common import check_output_file, non_negative, share
from dixit_lab.errors import UserError

__all__ = ["add_commands"]


def cmd_simulate(args: argparse.Namespace) -> int:
    from dixit_lab.core.agent import make_agent
    from dixit_lab.core.cards import load_deck
    from dixit_lab.core.rules import IllegalAction, get_rules
    from dixit_lab.core.seeding import game_seed
    from dixit_lab.engine.game import play_game
    from dixit_lab.plugins.spec import parse_assignment, split_specs
    from dixit_lab.progress import progress
    from dixit_lab.records.format import write_jsonl

    overrides = dict(parse_assignment(item, "--set") for item in args.set or [])
    rules = get_rules(args.rules, **overrides)
    specs = split_specs(args.agents)
    if len(specs) == 1:
        specs = specs * args.players
    if len(specs) != args.players:
        raise UserError(f"--agents lists {len(specs)} agents for {args.players} players; give "
                        f"one spec for all seats or one per seat")
    rules.check_players(args.players)
    if args.out:
        check_output_file(args.out, "--out")
    deck = load_deck(args.deck)
    agents = [make_agent(spec) for spec in specs]
    records = []
    stopped = None
    with progress(total=args.games, desc="games", unit="game") as bar:
        for index in range(args.games):
            try:
                records.append(play_game(agents, rules, deck, game_seed(args.seed, index),
                                         on_illegal=args.on_illegal, meta={"game": index}))
            except IllegalAction as error:  # --on-illegal raise: the agent's fault, one line
                stopped = (f"game {index}: {error} (--on-illegal fallback plays a legal move "
                           f"instead and counts the fault)")
                break
            bar.update(1)
    if args.out and (records or stopped is None):
        write_jsonl(records, args.out)
    if stopped is not None:
        kept = f"; the {len(records)} games before it are in {args.out}" if (
            args.out and records) else ""
        raise UserError(stopped + kept)
    _print_summary(records)
    _check_faults(records, args.max_fault_share)
    return 0


def _check_faults(records: list[Any], max_fault_share: float | None) -> None:
    """A line for each seat with faults (``--on-illegal fallback``), and the error of the
    seats over ``max_fault_share`` (None: a config's default)."""
    if not any(rnd.faults for record in records for rnd in record.rounds):
        return
    from dixit_lab.report.faults import fault_line, limits_message, over_limits, stats_faults
    from dixit_lab.run.experiment import MAX_FAULT_SHARE
    from dixit_lab.stats.metrics import records_stats

    seats = stats_faults(records_stats(records))
    for seat in seats:
        print(fault_line(seat))
    over = over_limits(seats, MAX_FAULT_SHARE if max_fault_share is None else max_fault_share,
                       0.0)
    if over:
        raise UserError(limits_message("the games", over, option=True))


def _print_summary(records: list[Any]) -> None:
    from dixit_lab.stats.metrics import seat_games_frame

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
    seats = seat_games_frame(records).groupby("seat")[["final_score", "win_share"]].mean()
    print(f"{'seat':>4}  {'agent':<28} {'mean points':>11} {'win share':>9}")
    for seat, row in seats.iterrows():
        name = records[0].agents[seat]
        print(f"{seat:>4}  {name:<28} {row.final_score:>11.2f} {row.win_share:>9.3f}")


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    sim = sub.add_parser("simulate", help="play seeded games and print a summary table")
    sim.add_argument("--players", type=int, default=5)
    sim.add_argument("--rules", default="classic",
                     help="preset: classic, refresh, quest, dixitworld")
    sim.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="override a rule option, e.g. --set lone_finder_points=4")
    sim.add_argument("--agents", default="random",
                     help="one agent spec for every seat, or a comma-separated spec per seat")
    sim.add_argument("--games", type=non_negative, default=200)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--deck", default="dreams",
                     help="bundled deck name (dreams: images with embeddings, for every agent), "
                          "'numbered-N' (rules-only, for random agents), or a folder of images")
    sim.add_argument("--on-illegal", choices=["raise", "fallback"], default="raise")
    sim.add_argument("--max-fault-share", type=share,
                     help="with --on-illegal fallback: exit 2 once the games are summarised "
                          "if faults replaced more than this share of a seat's decisions "
                          "(default: a config's max_fault_share; 1 accepts any)")
    sim.add_argument("--out", help="also write the games as JSON Lines to this file")
    sim.set_defaults(func=cmd_simulate)
