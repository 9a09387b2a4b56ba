"""Ratings speed: batch fit with bootstrap, and OpenSkill, on synthetic games.

    python benchmarks/bench_ratings.py [--games 10000] [--seats 5] [--names 8] [--bootstrap 200]

Games are drawn from a Plackett–Luce model (Gumbel trick: sort strength + Gumbel noise), with
several seats of one game sometimes taken by the same name and scores rounded so that ties
occur. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from dixit_lab.ratings.plackett_luce import Game, openskill_ratings, plackett_luce


def synthetic_games(n_games: int, seats: int, n_names: int, seed: int = 0) -> list[Game]:
    """Plackett–Luce games among ``n_names`` names, seats filled with replacement."""
    rng = np.random.default_rng(seed)
    strengths = np.linspace(1.5, -1.5, n_names)
    names = [f"agent{i}" for i in range(n_names)]
    picks = rng.integers(0, n_names, size=(n_games, seats))
    utility = strengths[picks] + rng.gumbel(size=(n_games, seats))
    scores = np.round(utility * 3)  # coarse scores: ties happen
    return [
        (tuple(names[i] for i in pick), tuple(score.tolist()))
        for pick, score in zip(picks, scores, strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seats", type=int, default=5)
    parser.add_argument("--names", type=int, default=8)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    games = synthetic_games(args.games, args.seats, args.names)
    print(f"{platform.python_implementation()} {platform.python_version()}, "
          f"{args.games} games x {args.seats} seats, {args.names} names")
    plackett_luce(games[:100], bootstrap=10)  # warm up imports
    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        plackett_luce(games, bootstrap=args.bootstrap, seed=0)
        best = min(best, time.perf_counter() - start)
    print(f"plackett_luce, {args.bootstrap} bootstraps: {best:.2f} s (best of {args.repeats})")
    start = time.perf_counter()
    openskill_ratings(games)
    print(f"openskill_ratings: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
