"""Report notes: the pairwise differences section and the warnings for readers."""

from __future__ import annotations

import pandas as pd

from dixit_lab.report.notes import pairs_section, reading_notes


def test_reading_notes_explain_random_tables_and_predictions():
    notes = "\n".join(reading_notes(pd.DataFrame({"agent": ["literal", "random"]})))
    assert "random" in notes and "some but not all" in notes
    notes = "\n".join(reading_notes(pd.DataFrame({"agent": ["ambiguity(target=0.5)"]})))
    assert "predicted find rate" in notes and "`random` player" not in notes
    assert reading_notes(pd.DataFrame({"agent": ["literal", "softmax"]})) == []


def test_pairs_section_marks_clear_differences(tmp_path):
    assert pairs_section(tmp_path) == []
    pd.DataFrame([{"player_a": "a", "player_b": "b", "difference": 0.4, "ci_low": 0.1,
                   "ci_high": 0.7, "a_above_b": 0.6, "a_above_b_ci_low": 0.52,
                   "a_above_b_ci_high": 0.67, "a_stronger_share": 0.99},
                  {"player_a": "b", "player_b": "c", "difference": 0.1, "ci_low": -0.2,
                   "ci_high": 0.4, "a_above_b": 0.52, "a_above_b_ci_low": 0.45,
                   "a_above_b_ci_high": 0.6, "a_stronger_share": 0.7}]
                 ).to_csv(tmp_path / "rating_pairs.csv", index=False)
    text = "\n".join(pairs_section(tmp_path))
    assert "| a | b | +0.40 [+0.10, +0.70] * |" in text
    assert "| b | c | +0.10 [-0.20, +0.40] |" in text
