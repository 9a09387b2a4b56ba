"""The ``dixit-lab`` command line."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from dixit_lab.agent import AgentSpecError, agent_parameters, available_agents, get_agent_class

__all__ = ["main"]


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


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


def _print_summary(records: list, n_players: int) -> None:
    games = len(records)
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
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name}({params})")
        if doc:
            print(f"    {doc}")
    return 0


def cmd_fit_listener(args: argparse.Namespace) -> int:
    from dixit_lab.calibration import fit_listener

    fitted = fit_listener(args.results, embedder=args.embedder, clue_bank=args.clues,
                          temperature=args.temperature, regularization=args.regularization)
    path = fitted.save(args.out)
    info = fitted.info
    print(f"fitted on {info['votes']} listener votes ({info['rounds_skipped']} rounds skipped)")
    print(f"{'':<16} {'log loss':>9} {'brier':>7} {'mean p':>7} {'observed':>8}")
    for label, key in (("analytic model", "analytic_model"), ("fitted model", "fitted")):
        m = info[key]
        print(f"{label:<16} {m['log_loss']:>9.4f} {m['brier']:>7.4f} {m['mean_predicted']:>7.3f} "
              f"{m['mean_observed']:>8.3f}")
    print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dixit-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play seeded games and print a summary table")
    sim.add_argument("--players", type=int, default=5)
    sim.add_argument("--rules", default="classic", help="preset: classic, refresh, quest")
    sim.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="override a rule option, e.g. --set lone_finder_points=4")
    sim.add_argument("--agents", default="random",
                     help="one agent spec for every seat, or a comma-separated spec per seat")
    sim.add_argument("--games", type=int, default=200)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--deck", default="numbered-84",
                     help="bundled deck name, 'numbered-N', or a folder of images")
    sim.add_argument("--on-illegal", choices=["raise", "fallback"], default="raise")
    sim.add_argument("--out", help="also write the games as JSON Lines to this file")
    sim.set_defaults(func=cmd_simulate)

    fit = sub.add_parser("fit-listener",
                         help="fit the calibrated agent's listener model on logged games")
    fit.add_argument("results", nargs="+", help="results folders or games.jsonl files")
    fit.add_argument("--out", required=True, help="where to write the model (JSON)")
    fit.add_argument("--embedder", default="conse", help="the space the features come from")
    fit.add_argument("--clues", default="default", help="the clue bank the games used")
    fit.add_argument("--temperature", type=float, default=0.05,
                     help="temperature of the analytic model used as a feature")
    fit.add_argument("--regularization", type=float, default=1.0,
                     help="inverse L2 strength of the logistic regression (C)")
    fit.set_defaults(func=cmd_fit_listener)

    ag = sub.add_parser("agents", help="list the registered agents and their parameters")
    ag.set_defaults(func=cmd_agents)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, AgentSpecError, ValueError, FileNotFoundError) as error:
        print(f"dixit-lab {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
