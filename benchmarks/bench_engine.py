"""Reference-engine speed: games/s and rounds/s for random agents on one core.

    python benchmarks/bench_engine.py [--seconds 3]

Prints one line per (rules, players); the target is >= 2,000 games/s for 5 random players
under ``classic``. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import platform
import time

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game


def measure(rules_name: str, n_players: int, seconds: float, repeats: int = 3
            ) -> tuple[float, float, float]:
    """Best and median games/s over ``repeats`` timings, and rounds/s of the best."""
    rules = get_rules(rules_name)
    deck = Deck.numbered(84)
    agents = [make_agent("random") for _ in range(n_players)]
    for i in range(20):  # warm up
        play_game(agents, rules, deck, game_seed(1, i))
    timings = []
    for _ in range(repeats):
        games = rounds = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(50):
                rounds += len(play_game(agents, rules, deck, game_seed(0, games)).rounds)
                games += 1
        timings.append((games / elapsed, rounds / elapsed))
    timings.sort()
    return timings[-1][0], timings[len(timings) // 2][0], timings[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="time per timing (three timings per configuration)")
    args = parser.parse_args()
    print(f"# reference engine, random agents, one core ({platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()})")
    print(f"{'rules':<8} {'players':>7} {'best games/s':>13} {'median':>7} {'rounds/s':>9}")
    for rules_name in ("classic", "refresh"):
        for n in (4, 5, 6):
            best, median, rounds_per_s = measure(rules_name, n, args.seconds)
            print(f"{rules_name:<8} {n:>7} {best:>13.0f} {median:>7.0f} {rounds_per_s:>9.0f}")
    print("target: >= 2000 games/s for 5 random players under classic")


if __name__ == "__main__":
    main()
