"""Embedding agents' speed: games/s on one core with the shipped embeddings.

    python benchmarks/bench_agents.py [--seconds 3]

Target (issue "Agents"): >= 500 games/s per core for 5 players of pragmatic / ambiguity on the
default deck and clue bank. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game

TABLES = {
    "5 literal": ["literal"] * 5,
    "5 softmax": ["softmax"] * 5,
    "5 ambiguity": ["ambiguity(target=0.5)"] * 5,
    "5 pragmatic": ["pragmatic"] * 5,
    "5 calibrated": ["calibrated"] * 5,
    "pragmatic + 4 softmax": ["pragmatic"] + ["softmax"] * 4,
}


def measure(specs: list[str], seconds: float) -> tuple[float, float, float]:
    deck, rules = load_deck("dreams"), get_rules("classic")
    agents = [make_agent(spec) for spec in specs]
    start = time.perf_counter()
    play_game(agents, rules, deck, game_seed(0, 10**6))  # builds spaces and models
    cold = time.perf_counter() - start
    games = rounds = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            rounds += len(play_game(agents, rules, deck, game_seed(0, games)).rounds)
            games += 1
    return games / elapsed, rounds / elapsed, cold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--profile", help="profile one table (e.g. '5 pragmatic')")
    args = parser.parse_args()
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(measure, TABLES[args.profile], args.seconds)
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        return
    print("# embedding agents on dreams + default clue bank (shipped conse), classic, 1 core")
    print(f"{'table':<24} {'games/s':>8} {'rounds/s':>9} {'first game (s)':>15}")
    for name, specs in TABLES.items():
        games, rounds, cold = measure(specs, args.seconds)
        print(f"{name:<24} {games:>8.0f} {rounds:>9.0f} {cold:>15.2f}")
    print("target: >= 500 games/s per core for 5 pragmatic and for 5 ambiguity")


if __name__ == "__main__":
    main()
