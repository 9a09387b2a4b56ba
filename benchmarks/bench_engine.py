"""Reference-engine speed: games/s and rounds/s for random agents on one core.

    python benchmarks/bench_engine.py [--seconds 3]

Prints one line per (rules, players); the target is >= 2,000 games/s for 5 random players
under ``classic``. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import platform
import time

from dixit_lab.agent import make_agent
from dixit_lab.cards import Deck
from dixit_lab.game import play_game
from dixit_lab.rules import get_rules
from dixit_lab.seeding import game_seed


def measure(rules_name: str, n_players: int, seconds: float) -> tuple[float, float, int]:
    rules = get_rules(rules_name)
    deck = Deck.numbered(84)
    agents = [make_agent("random") for _ in range(n_players)]
    for i in range(20):  # warm up
        play_game(agents, rules, deck, game_seed(1, i))
    games = rounds = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(50):
            rounds += len(play_game(agents, rules, deck, game_seed(0, games)).rounds)
            games += 1
    return games / elapsed, rounds / elapsed, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    args = parser.parse_args()
    print(f"# reference engine, random agents, one core ({platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()})")
    print(f"{'rules':<8} {'players':>7} {'games/s':>9} {'rounds/s':>10} {'games':>7}")
    for rules_name in ("classic", "refresh"):
        for n in (4, 5, 6):
            games_per_s, rounds_per_s, games = measure(rules_name, n, args.seconds)
            print(f"{rules_name:<8} {n:>7} {games_per_s:>9.0f} {rounds_per_s:>10.0f} {games:>7}")
    print("target: >= 2000 games/s for 5 random players under classic")


if __name__ == "__main__":
    main()
