"""What a theory_of_mind storyteller costs: its first game at a table shape (the types' tables
are built then, once per process), and each decision after that.

    python benchmarks/bench_theory_of_mind.py [--spec theory_of_mind] [--players 5] [--games 40]

One theory_of_mind seat and softmax listeners on ``text`` (classic, ``dreams``), on the
reference engine in this process. Prints the first game's seconds (and the process CPU
seconds it took), the median milliseconds of a tell and of an observed round, and the games
per second after the first. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game


def _timed(agent: Any, method: str, times: list[float]) -> None:
    original: Callable[..., Any] = getattr(agent, method)

    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args)
        finally:
            times.append(time.perf_counter() - start)

    setattr(agent, method, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="theory_of_mind")
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--games", type=int, default=40, help="games after the first")
    parser.add_argument("--listener", default="softmax(embedder=text)")
    args = parser.parse_args()
    deck, rules = load_deck("dreams"), get_rules("classic")
    storyteller = make_agent(args.spec)
    tells: list[float] = []
    observes: list[float] = []
    listeners = [make_agent(args.listener) for _ in range(args.players - 1)]
    wall, cpu = time.perf_counter(), time.process_time()
    play_game([storyteller, *listeners], rules, deck, game_seed(0, 10**6))
    first, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
    _timed(storyteller, "tell", tells)
    _timed(storyteller, "observe", observes)
    start = time.perf_counter()
    for game in range(args.games):
        play_game([storyteller, *listeners], rules, deck, game_seed(0, game))
    elapsed = time.perf_counter() - start
    types = len(getattr(storyteller, "types", None) or storyteller.type_temperature)
    print(f"# {args.spec}: {types} types, {args.players} players, listeners {args.listener}")
    print(f"first game (tables built): {first:.1f} s ({first_cpu:.1f} s of CPU)")
    print(f"tell: {1e3 * statistics.median(tells):.2f} ms (median of {len(tells)}); observe: "
          f"{1e3 * statistics.median(observes):.2f} ms (median of {len(observes)})")
    print(f"after the first game: {args.games / elapsed:.1f} games/s")


if __name__ == "__main__":
    main()
