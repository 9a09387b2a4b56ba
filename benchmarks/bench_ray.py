"""Ray vs the process pool on this machine, and Ray's cost per chunk (to size chunks).

    pip install "dixit-lab[ray]"
    python benchmarks/bench_ray.py [--games 2000] [--workers 2] [--chunk-size 25]
                                   [--address HEAD:6379]

Prints: the start-up of a local Ray instance; games/s of the quickstart players for the process
pool and for Ray (cold: the workers build agents and spaces; warm: a second run on the same
workers); the time per chunk of empty chunks (pure executor overhead), and on Ray 1-game chunks
against chunks of 25 of the same games (best of --repeat runs). Not a test: figures depend on
the machine and its load.
"""

from __future__ import annotations

import argparse
import logging
import platform
import time
from pathlib import Path

from dixit_lab.run.executors import available_workers, chunked, run_chunks
from dixit_lab.run.experiment import load_config
from dixit_lab.run.runner import game_specs, table_setup
from dixit_lab.run.tournament import GameSpec, TableSetup

QUICKSTART = Path(__file__).resolve().parent.parent / "experiments" / "quickstart.yaml"


def timed(setup: TableSetup, chunks: list[list[GameSpec]], kind: str, workers: int,
          address: str | None) -> tuple[float, int]:
    start = time.perf_counter()
    games = sum(len(c) for c in run_chunks(setup, chunks, kind, workers, address))
    return time.perf_counter() - start, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-size", type=int, default=25)
    parser.add_argument("--overhead-chunks", type=int, default=400,
                        help="chunks in the per-chunk overhead measurements")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--address", help="a Ray cluster (default: a local Ray instance)")
    args = parser.parse_args()
    import ray

    config = load_config(str(QUICKSTART)).model_copy(update={"games": args.games})
    setup, specs = table_setup(config), game_specs(config)
    chunks = chunked(specs, args.chunk_size)
    w = args.workers
    print(f"# quickstart players, {args.games} games, chunks of {args.chunk_size}, {w} workers "
          f"({available_workers()} cores here; Python {platform.python_version()}, "
          f"ray {ray.__version__})")

    start = time.perf_counter()
    if args.address:
        ray.init(address=args.address, logging_level=logging.ERROR)
    else:
        ray.init(address="local", num_cpus=w, include_dashboard=False,
                 logging_level=logging.ERROR)
    print(f"ray start-up (ray.init)             {time.perf_counter() - start:8.2f} s")
    try:
        best = min(timed(setup, chunks, "process", w, None) for _ in range(args.repeat))
        rows = [("process pool", *best),
                ("ray, cold workers", *timed(setup, chunks, "ray", w, args.address))]
        best = min(timed(setup, chunks, "ray", w, args.address) for _ in range(args.repeat))
        rows.append(("ray, warm workers", *best))
        for label, seconds, games in rows:
            print(f"{label:<35} {games / seconds:8.0f} games/s  ({seconds:.2f} s)")

        n = args.overhead_chunks
        print(f"# per-chunk cost, {n} chunks, {w} workers, best of {args.repeat} "
              f"(wall time / chunks)")
        empty: list[list[GameSpec]] = [[] for _ in range(n)]
        singles, batches = chunked(specs[:n], 1), chunked(specs[:n], 25)
        for kind in ("process", "ray"):
            seconds = min(timed(setup, empty, kind, w, args.address)[0]
                          for _ in range(args.repeat))
            print(f"{kind + ', empty chunks':<35} {1000 * seconds / n:8.2f} ms/chunk")
        for kind in ("ray",):  # (a process pool's start-up would blur its figure)
            many = min(timed(setup, singles, kind, w, args.address)[0]
                       for _ in range(args.repeat))
            few = min(timed(setup, batches, kind, w, args.address)[0]
                      for _ in range(args.repeat))
            extra = (many - few) / (len(singles) - len(batches))
            print(f"{kind + ', 1-game chunks':<35} {1000 * many / n:8.2f} ms/game  vs "
                  f"{1000 * few / n:.2f} ms/game in chunks of 25: {1000 * extra:+.2f} ms "
                  f"per extra chunk")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
