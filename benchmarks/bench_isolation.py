"""The cost of ``isolation: process``: the same games with each agent in or out of its own
process, per decision (tell, submit or vote) and per game.

    python benchmarks/bench_isolation.py [--games 200]
"""

from __future__ import annotations

import argparse
import time

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.engine.isolation import IsolatedAgent


def timed(table: list, games: int) -> tuple[float, int]:
    rules, deck = get_rules("classic"), load_deck("dreams")
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        record = play_game(table, rules, deck, game_seed(1, g))
        decisions += sum(len(record.agents) * 2 - 1 for _ in record.rounds)
    return time.perf_counter() - start, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    specs = ["literal", "softmax", "ambiguity(target=0.4)", "random", "random"]
    inside = [make_agent(spec) for spec in specs]
    start = time.perf_counter()
    outside = [IsolatedAgent(spec) for spec in specs]
    startup = time.perf_counter() - start
    timed(outside, 2)  # children start and load their spaces
    base, decisions = timed(inside, args.games)
    isolated, _ = timed(outside, args.games)
    for agent in outside:
        agent.close()
    per_decision = (isolated - base) / decisions * 1e6
    print(f"{args.games} games, {decisions} decisions, 5 seats "
          f"({', '.join(specs)}); the children run beside the engine")
    print(f"  in-process:          {base:7.2f} s  ({args.games / base:7.1f} games/s)")
    print(f"  isolation: process:  {isolated:7.2f} s  ({args.games / isolated:7.1f} games/s)")
    print(f"  cost per decision:   {per_decision:7.1f} us (a round trip through a pipe, "
          f"view pickled, answer in JSON)")
    print(f"  children checked their specs in {startup:.2f} s (one short-lived process each)")


if __name__ == "__main__":
    main()
