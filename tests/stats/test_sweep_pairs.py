"""Sweep reports pair neighbouring points game by game."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dixit_lab.records.format import read_jsonl, write_jsonl
from dixit_lab.report.sweep import write_sweep_report
from dixit_lab.stats.catalogue import sample
from dixit_lab.stats.sweep_pairs import neighbour_differences
from tests.report.test_page import _records, _sweep


def test_neighbouring_points_are_paired_by_game(tmp_path):
    root = _sweep(tmp_path, [4, 16, 64], spec=lambda v: f"test-report-random(block={v})")
    report = write_sweep_report(root).read_text()
    pairs = pd.read_csv(root / "sweep_pairs.csv")
    assert len(pairs) == 2 * 2  # two steps, two metrics, the one varying player
    assert list(zip(pairs.from_point, pairs.to_point, strict=True)) == [(0, 1)] * 2 + [(1, 2)] * 2
    assert set(pairs["player"]) == {"tester"}
    row = pairs[(pairs.from_point == 0) & (pairs.metric == "points_per_game")].iloc[0]
    first, second = (list(read_jsonl(root / "points" / f"{p:03d}"))
                     for p in (0, 1))
    expected = np.mean([sample("points_per_game", b, "tester")
                        - sample("points_per_game", a, "tester")
                        for a, b in zip(first, second, strict=True)])
    assert np.isclose(row["difference"], expected) and row["games"] == len(first)
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert row["from players.0.params.block"] == 4 and row["to players.0.params.block"] == 16
    assert "## Neighbouring points, paired by game" in report


def test_a_two_parameter_sweep_pairs_points_that_differ_in_one_parameter(tmp_path):
    """Points 0-5 of tables (3, 4) x targets (0.1, 0.5, 0.9), the table size outer. Each pair
    changes one parameter to its next value and keeps the other: 3 players at 0.9 (point 2)
    is never compared with 4 players at 0.1 (point 3), the next point of the grid."""
    root, rows = tmp_path / "sweep", []
    grid = [(size, target) for size in (3, 4) for target in (0.1, 0.5, 0.9)]
    for point, (size, target) in enumerate(grid):
        folder = root / "points" / f"{point:03d}"
        folder.mkdir(parents=True)
        specs = [f"test-report-random(block={int(target * 10)})", *["random"] * 3]
        write_jsonl(_records(6, ["tester", "rnd", "rnd", "rnd"], specs, seed=point),
                    folder / "games.jsonl")
        rows.append({"point": point, "table": size, "target": target,
                     "folder": f"points/{point:03d}"})
    sweep = pd.DataFrame(rows)
    pairs = neighbour_differences(root, sweep, ["table", "target"], ["tester"])
    steps = list(dict.fromkeys(zip(pairs.from_point, pairs.to_point, strict=True)))
    assert steps == [(0, 3), (0, 1), (1, 4), (1, 2), (2, 5), (3, 4), (4, 5)]
    for _, row in pairs.iterrows():  # one parameter changes, to its next value
        changed = [p for p in ("table", "target") if row[f"from {p}"] != row[f"to {p}"]]
        assert len(changed) == 1, row
    assert (pairs.games == 6).all()
