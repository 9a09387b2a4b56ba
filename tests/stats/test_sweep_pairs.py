"""Sweep reports pair neighbouring points game by game."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dixit_lab.records.format import read_jsonl
from dixit_lab.report.sweep import write_sweep_report
from dixit_lab.stats.catalogue import sample
from tests.report.test_page import _sweep


def test_neighbouring_points_are_paired_by_game(tmp_path):
    root = _sweep(tmp_path, [4, 16, 64], spec=lambda v: f"test-report-random(block={v})")
    report = write_sweep_report(root).read_text()
    pairs = pd.read_csv(root / "sweep_pairs.csv")
    assert len(pairs) == 2 * 2  # two steps, two metrics, the one varying player
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
