"""``dixit-lab league``: enter agents into a league folder, rated against the frozen
reference pool on sealed deals, and print its leaderboard."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dixit_lab.cli.common import positive, positive_number
from dixit_lab.errors import UserError
from dixit_lab.league.entry import LeagueOptions

DEFAULTS = LeagueOptions()

__all__ = ["add_commands"]


def cmd_league(args: argparse.Namespace) -> int:
    from dixit_lab.league.entry import LeagueOptions, enter, parse_entrant
    from dixit_lab.league.leaderboard import open_league, write_leaderboard

    folder = Path(args.folder)
    entries = [parse_entrant(text) for text in args.enter or []]  # every bad one before play
    options = LeagueOptions(target_width=args.target_width, max_games=args.max_games,
                            max_seconds=args.max_seconds, max_tokens=args.max_tokens,
                            max_cost_usd=args.max_cost_usd, deals=args.deals,
                            isolation=args.isolation, executor=args.executor,
                            workers=args.workers)
    if args.combine:
        from dixit_lab.league.combine import combine

        if entries:
            raise UserError("--combine pools finished leagues; enter agents apart")
        for entry in combine(folder, [Path(source) for source in args.combine]):
            print(f"{entry.name}: {entry.strength:+.3f} [{entry.ci_low:+.3f}, "
                  f"{entry.ci_high:+.3f}] over {entry.games} games of "
                  f"{len(entry.provenance['pooled_from'])} league(s)")
    pool = open_league(folder, args.pool)
    say = (lambda line: None) if args.quiet else None
    for name, spec in entries:
        entry = enter(folder, name, spec, pool, options, deal_secret=args.deal_secret, say=say)
        write_leaderboard(folder, pool)
        print(f"{entry.name}: {entry.strength:+.3f} [{entry.ci_low:+.3f}, "
              f"{entry.ci_high:+.3f}] after {entry.games} games (stopped: {entry.stopped})")
    rows = write_leaderboard(folder, pool)
    for row in rows:
        print(f"{row['rank']:>3}  {row['player']:<24} {row['strength']:+.3f}  "
              f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  {row['games']:>6} games  "
              f"{row['kind']}")
    print(f"wrote {folder / 'leaderboard.csv'} and {folder / 'leaderboard.md'}")
    return 0


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    league = sub.add_parser(
        "league", help="rate agents against the frozen reference pool (a league folder, its "
                       "leaderboard)",
        description="Enter agents into a league folder: each plays the reference pool on "
                    "sealed deals until its rating's 95%% interval is at most --target-width "
                    "wide or its budget is spent; ratings are on the pool's fixed scale, so "
                    "they compare across leagues (docs/league.md). Without --enter, the "
                    "leaderboard is written and printed.")
    league.add_argument("folder", help="the league folder (made if new)")
    league.add_argument("--enter", action="append", metavar="NAME=SPEC",
                        help="an entrant: its name and agent spec (repeat for several); "
                             "an entrant already rated is not played again")
    league.add_argument("--pool", help="the reference pool's version (default: the newest; "
                                       "an existing league keeps its own)")
    league.add_argument("--target-width", type=positive_number, default=DEFAULTS.target_width,
                        help=f"stop when the 95%% interval is at most this wide (default "
                             f"{DEFAULTS.target_width})")
    league.add_argument("--max-games", type=positive, default=DEFAULTS.max_games,
                        help=f"stop after this many games (default {DEFAULTS.max_games})")
    league.add_argument("--max-seconds", type=positive_number,
                        help="stop after this many seconds of play")
    league.add_argument("--max-tokens", type=positive,
                        help="a model entrant: stop once its calls took this many tokens "
                             "(each block runs under what is left)")
    league.add_argument("--max-cost-usd", type=positive_number,
                        help="a model entrant: stop once its calls cost this much (its "
                             "price_in and price_out)")
    league.add_argument("--deals", type=positive, default=DEFAULTS.deals,
                        help=f"deals a block, each played once per seat (default "
                             f"{DEFAULTS.deals})")
    league.add_argument("--isolation", choices=["none", "process", "sandbox"],
                        help="how the entrant is seated (default: a sandbox for outside "
                             "code, in process for the package's own agents)")
    league.add_argument("--executor", default="local", help="where blocks run (default local)")
    league.add_argument("--workers", type=positive, help="worker processes of the executor")
    league.add_argument("--deal-secret", help="32 hex digits: deal from this secret (a "
                                              "published one, to play an entry again)")
    league.add_argument("--combine", nargs="+", metavar="LEAGUE",
                        help="pool the finished entries of these league folders (same pool "
                             "version, same agents) into one rating each, in FOLDER")
    league.add_argument("--quiet", action="store_true", help="no line per block")
    league.set_defaults(func=cmd_league)
