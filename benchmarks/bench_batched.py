"""Batched vs reference engine: games/s for 5 literal and 5 pragmatic players, and memory.

    python benchmarks/bench_batched.py [--games 20000] [--profile]

1. One core: ``play_batch`` over ``--games`` games vs ``play_game`` one at a time.
2. Both cores: the runner (process pool, 2 workers, records streamed to disk) with the
   batched engine.
3. Memory: peak resident memory of a run of N and 4N games (a fresh process each), which
   should stay flat: records go to disk in chunks and are merged by streaming.
Figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.batched import play_batch
from dixit_lab.engine.game import play_game

TABLES = {"5 literal": "literal", "5 pragmatic": "pragmatic"}

_MEMORY_RUN = """
import resource, sys
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
config = parse_config({"name": "memory", "seed": 1, "rules": "classic", "deck": "dreams",
                       "players": [{"agent": sys.argv[1], "count": 5}],
                       "games": int(sys.argv[2]), "executor": {"kind": "local"}})
run_experiment(config, sys.argv[3], show_progress=False, write_outputs=False)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def one_core(spec: str, games: int) -> tuple[float, float]:
    rules, deck = get_rules("classic"), load_deck("dreams")
    shared = make_agent(spec)
    play_batch([[shared] * 5] * 50, rules, deck, [game_seed(9, g) for g in range(50)])
    seeds = [game_seed(1, g) for g in range(games)]
    start = time.perf_counter()
    play_batch([[shared] * 5] * games, rules, deck, seeds)
    batched = games / (time.perf_counter() - start)
    table = [make_agent(spec) for _ in range(5)]
    play_game(table, rules, deck, game_seed(9, 0))
    count = max(200, games // 20)
    start = time.perf_counter()
    for g in range(count):
        play_game(table, rules, deck, seeds[g])
    reference = count / (time.perf_counter() - start)
    return batched, reference


def two_cores(spec: str, games: int) -> float:
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    config = parse_config({"name": "bench", "seed": 1, "rules": "classic", "deck": "dreams",
                           "players": [{"agent": spec, "count": 5}], "games": games,
                           "executor": {"kind": "process", "workers": 2}})
    with tempfile.TemporaryDirectory() as tmp:
        result = run_experiment(config, Path(tmp) / "run", show_progress=False,
                                write_outputs=False)
    return result.games_per_second


def peak_memory(spec: str, games: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", _MEMORY_RUN, spec, str(games),
                              str(Path(tmp) / "run")], capture_output=True, text=True,
                             check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--profile", action="store_true", help="where the batched time goes")
    args = parser.parse_args()
    if args.profile:
        for spec in TABLES.values():
            profile = cProfile.Profile()
            profile.runcall(one_core, spec, args.games)
            print(f"## {spec}")
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)
        return
    print("# classic rules, dreams deck, shipped conse embeddings")
    print(f"{'table':<14} {'reference 1 core':>17} {'batched 1 core':>15} "
          f"{'batched 2 cores':>16}")
    figures = {}
    for name, spec in TABLES.items():
        batched, reference = one_core(spec, args.games)
        both = two_cores(spec, 2 * args.games)
        figures[name] = {"reference_1": reference, "batched_1": batched, "batched_2": both}
        print(f"{name:<14} {reference:>17.0f} {batched:>15.0f} {both:>16.0f}")
    print("targets: >= 20,000 games/s for 5 literal and >= 5,000 for 5 pragmatic, 2 cores")
    small, large = args.games // 4, args.games
    for spec in TABLES.values():
        low, high = peak_memory(spec, small), peak_memory(spec, large)
        print(f"peak memory, 5 {spec}: {low:.0f} MB for {small} games, {high:.0f} MB for "
              f"{large} games")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
