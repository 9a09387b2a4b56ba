"""Reference-engine speed: games/s and rounds/s for random agents on one core.

    python benchmarks/bench_engine.py [--seconds 3]

Prints one line per (rules, players), and the reference engine's share of a bare-Python Dixit
loop (``bare_python_dixit.py``: the same game with no views, records or checks) timed in the
same run, interleaved with it so that the machine's load falls on both: the Speed issue's
target is a share >= 0.35 for 5 random players under ``classic``. Not a test: figures depend
on the machine and its load; the share is what compares across machines.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_python_dixit import play_bare_game


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


def share_of_bare_loop(n_players: int, seconds: float,
                       repeats: int = 5) -> tuple[float, float, float]:
    """Median games/s of the engine and of the bare loop, and the median of their ratios,
    over ``repeats`` interleaved pairs of timings (random players, classic, agents reused as
    the runner reuses them)."""
    rules = get_rules("classic")
    deck = Deck.numbered(84)
    agents = [make_agent("random") for _ in range(n_players)]

    def rate(play: object, offset: int) -> float:
        games = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 2:
            for _ in range(10):
                play(offset + games)  # type: ignore[operator]
                games += 1
        return games / elapsed

    engine, bare, ratios = [], [], []
    for repeat in range(repeats):
        offset = repeat * 1_000_000
        engine.append(rate(lambda i: play_game(agents, rules, deck, game_seed(0, i)), offset))
        bare.append(rate(lambda i: play_bare_game(n_players, i), offset))
        ratios.append(engine[-1] / bare[-1])
    return statistics.median(engine), statistics.median(bare), statistics.median(ratios)


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
    engine, bare, share = share_of_bare_loop(5, args.seconds)
    print(f"reference engine {engine:.0f} games/s, bare-Python loop {bare:.0f} games/s "
          f"(5 random players, classic, same run): share {share:.2f} (target >= 0.35)")


if __name__ == "__main__":
    main()
