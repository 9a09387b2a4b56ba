"""Paired differences between neighbouring points of a sweep: ``sweep_pairs.csv``.

Every point of a sweep keeps the experiment seed, so game ``i`` of one point is played on the
same deal, with the same seating, as game ``i`` of the next. The difference of a metric
between two neighbouring points is therefore best estimated game by game: the luck of the
deal cancels, and the interval is narrower than the two points' own intervals suggest.

Two points are neighbours when they differ in one swept parameter only, the second holding
that parameter's next value in the sweep's list, every other parameter the same: in a sweep
of one parameter, each point and the next; in a grid, the steps along each parameter within
each value of the others (never from the last point of one row of the grid to the first of
the next). For each player whose agent changes along the sweep (all players if none does)
and each metric of :data:`PAIRED_METRICS`, this gives the mean of (second point − first
point) over the games both played, with a paired t interval and p-value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dixit_lab.records.batches import file_batches
from dixit_lab.records.files import find_records, games_file
from dixit_lab.stats.catalogue import per_game_samples
from dixit_lab.stats.intervals import paired_difference

__all__ = ["PAIRED_METRICS", "neighbour_differences", "neighbours", "per_game_values",
           "sweep_pairs_section"]

PAIRED_METRICS = ("storyteller_points_per_turn", "points_per_game")


def per_game_values(folder: Path, players: Sequence[str], metric: str
                    ) -> dict[str, dict[int, float]]:
    """Each player's per-game sample of ``metric`` in the run at ``folder``, by game index
    (games where it does not apply are left out)."""
    values: dict[str, dict[int, float]] = {player: {} for player in players}
    for batch in file_batches(games_file(folder), check=False):
        game_of = dict(zip(batch.record_index.tolist(), batch.game.tolist(), strict=True))
        for player in players:
            for index, value in per_game_samples(metric, batch, player).items():
                values[player][game_of[index]] = value
    return values


def neighbours(sweep: pd.DataFrame, paths: Sequence[str]) -> list[tuple[int, int]]:
    """The rows ``(i, j)`` of ``sweep`` that are neighbours: they differ in one of ``paths``
    only, where ``j`` holds the value after ``i``'s (in the order the sweep lists them).
    By ``i``, then by parameter; for one parameter, ``(0, 1), (1, 2), ...``."""
    values = {p: [_same(v) for v in sweep[p].tolist()] for p in paths}
    order = {p: {v: k for k, v in enumerate(dict.fromkeys(values[p]))} for p in paths}

    def others(i: int, path: str) -> tuple[object, ...]:
        return tuple(values[q][i] for q in paths if q != path)

    row_of = {(p, others(i, p), order[p][values[p][i]]): i
              for p in paths for i in range(len(sweep))}
    found = []
    for i in range(len(sweep)):
        for p in paths:
            j = row_of.get((p, others(i, p), order[p][values[p][i]] + 1))
            if j is not None:
                found.append((i, j))
    return found


def _same(value: object) -> object:
    """A swept value as a key equal to itself (an empty cell reads as NaN, unequal to NaN)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def neighbour_differences(sweep_dir: Path, sweep: pd.DataFrame, paths: Sequence[str],
                          players: Sequence[str]) -> pd.DataFrame:
    """One row per (neighbouring points, player, metric; :func:`neighbours`): ``from_point,
    to_point``, the swept values of both, ``player, metric, difference, ci_low, ci_high,
    p_value, games``."""
    folders = [Path(sweep_dir) / str(f) for f in sweep["folder"]]
    per_point = [{m: per_game_values(f, players, m) for m in PAIRED_METRICS} if
                 find_records(f) is not None else None for f in folders]
    rows = []
    for i, j in neighbours(sweep, paths):
        before, after = per_point[i], per_point[j]
        if before is None or after is None:
            continue
        for player in players:
            for metric in PAIRED_METRICS:
                a, b = after[metric][player], before[metric][player]
                common = sorted(set(a) & set(b))
                result = paired_difference([a[g] for g in common], [b[g] for g in common])
                rows.append({"from_point": sweep["point"].iloc[i],
                             "to_point": sweep["point"].iloc[j],
                             **{f"from {p}": sweep[p].iloc[i] for p in paths},
                             **{f"to {p}": sweep[p].iloc[j] for p in paths},
                             "player": player, "metric": metric,
                             "difference": result.mean, "ci_low": result.low,
                             "ci_high": result.high, "p_value": result.p_value,
                             "games": result.pairs})
    return pd.DataFrame(rows)


def sweep_pairs_section(pairs: pd.DataFrame, paths: Sequence[str]) -> list[str]:
    """Markdown for the storyteller-points rows of :func:`neighbour_differences`."""
    shown = pairs[pairs["metric"] == "storyteller_points_per_turn"] if len(pairs) else pairs
    shown = shown[shown["games"] > 0] if len(shown) else shown
    if shown.empty:
        return []
    lines = ["## Neighbouring points, paired by game", "",
             "Change in storyteller points per turn from one point to the next, game by game "
             "(both points play the same deals and seats, so the luck of the deal cancels; "
             "in a grid, each step changes one parameter and keeps the others): "
             "mean difference with a 95% paired t interval. Points per game as well in "
             "[sweep_pairs.csv](sweep_pairs.csv).", "",
             "| from | to | player | difference [95% CI] | p | games |",
             "|---|---|---|---|---|---|"]
    for _, row in shown.iterrows():
        step = [", ".join(str(row[f"{end} {p}"]) for p in paths) for end in ("from", "to")]
        lines.append(f"| {step[0]} | {step[1]} | {row['player']} | {row['difference']:+.3f} "
                     f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] | {row['p_value']:.3g} | "
                     f"{int(row['games'])} |")
    return [*lines, ""]
