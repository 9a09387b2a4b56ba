"""Do the rating intervals hold their level? Identical twins, many fresh tournaments.

    python benchmarks/coverage_pairs.py [--seeds 400] [--games 30 200] [--bootstrap N]

Every player of a tournament is the same agent (``softmax`` at temperature 0.05) under its
own name, so every true strength difference is 0 and every player's true (centred) strength
is 0. For each schedule (``rotation``: 4 players at a table of 4; ``sampled``: 6 players, 4 a
table) and each number of games, ``--seeds`` tournaments are played from fresh seeds on the
batched engine and rated exactly as a results folder's report rates them
(:func:`~dixit_lab.ratings.plackett_luce.strength_replicates`, the replicates
``ratings.csv`` and ``rating_pairs.csv`` share, and their
:func:`~dixit_lab.ratings.plackett_luce.bootstrap_interval`). The script prints, for each
setting, the share of pair intervals (``rating_pairs.csv``'s ``ci_low``..``ci_high``) that
hold 0 and the share of player intervals (``ratings.csv``) that hold 0, each with its
standard error over tournaments (the pairs of one tournament are not independent).
docs/statistics.md quotes these figures (``scripts/figures.py --only pair_coverage`` runs
this study with the defaults and writes them to docs/figures.json).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from dixit_lab.ratings import BOOTSTRAP
from dixit_lab.ratings.plackett_luce import bootstrap_interval, strength_replicates
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.tournament import play_chunk, schedule_games, table_setup

#: the pool and table of each schedule studied
SCHEDULES = {"rotation": (4, 4), "sampled": (6, 4)}
TWIN = {"agent": "softmax", "params": {"temperature": 0.05}}
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Coverage:
    """One setting's result: shares of intervals that hold the truth, and their standard
    errors over tournaments."""

    schedule: str
    games: int
    seeds: int
    bootstrap: int
    pairs: float
    pairs_se: float
    players: float
    players_se: float


def twin_games(schedule: str, games: int, seed: int) -> list[tuple[list[str], list[float]]]:
    """The ``(names, final scores)`` of one tournament of identical twins."""
    pool, table = SCHEDULES[schedule]
    kind: dict[str, object] = {"kind": schedule}
    if schedule == "sampled":
        kind["table_size"] = table
    config = parse_config({"name": "twins", "seed": seed, "rules": "classic", "deck": "dreams",
                           "games": games, "schedule": kind,
                           "players": [{"name": f"twin{i}", **TWIN} for i in range(pool)]})
    setup = table_setup(config)
    lines = play_chunk(setup, list(schedule_games(schedule, pool, table, games, seed)))
    records = [json.loads(line) for _, line in lines]
    return [(record["meta"]["players"], record["final_scores"]) for record in records]


def _share(held: np.ndarray) -> tuple[float, float]:
    per_tournament = held.mean(axis=1)
    return float(held.mean()), float(per_tournament.std(ddof=1) / np.sqrt(len(held)))


def coverage(schedule: str, games: int, seeds: int, bootstrap: int = BOOTSTRAP,
             first_seed: int = 10_000, confidence: float = CONFIDENCE) -> Coverage:
    """The coverage of the report's rating intervals (95%: ``confidence``) over ``seeds``
    fresh tournaments (seeds ``first_seed`` onward; the bootstrap's seed the tournament's
    number, as a report uses one seed per folder)."""
    pairs, players = [], []
    for number in range(seeds):
        _, strength, boot = strength_replicates(
            twin_games(schedule, games, first_seed + number), bootstrap=bootstrap, seed=number)
        low, high = bootstrap_interval(strength, boot, confidence)
        players.append((low <= 0) & (high >= 0))
        held = []
        for i, j in combinations(range(len(strength)), 2):
            both = boot[:, i] - boot[:, j]
            a, b = bootstrap_interval(strength[i] - strength[j], both[np.isfinite(both)],
                                      confidence)
            held.append(a <= 0 <= b)
        pairs.append(held)
    pair_share, pair_se = _share(np.array(pairs, dtype=float))
    player_share, player_se = _share(np.array(players, dtype=float))
    return Coverage(schedule, games, seeds, bootstrap, pair_share, pair_se, player_share,
                    player_se)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=400)
    parser.add_argument("--games", type=int, nargs="+", default=[30, 200])
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP)
    args = parser.parse_args(argv)
    print(f"identical twins, {args.seeds} tournaments a setting, {args.bootstrap} bootstrap "
          f"replicates, 95% intervals (target 95% +- 1.5%)")
    for schedule in SCHEDULES:
        for games in args.games:
            start = time.perf_counter()
            c = coverage(schedule, games, args.seeds, args.bootstrap)
            print(f"{schedule:>8} {games:>5} games: pairs {c.pairs:.1%} (se {c.pairs_se:.1%}), "
                  f"players {c.players:.1%} (se {c.players_se:.1%})  "
                  f"[{time.perf_counter() - start:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
