"""Report notes: the pairwise differences section and the warnings for readers."""

from __future__ import annotations

import pandas as pd

from dixit_lab.report.notes import pairs_section, reading_notes


def _agents(*rows: dict) -> pd.DataFrame:
    base = {"storyteller_turns": 10, "all_found_rate": 0.1, "some_found_rate": 0.8,
            "listener_accuracy": 0.5, "listener_chance": 0.25}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_the_random_note_states_the_folders_own_rates():
    notes = "\n".join(reading_notes(_agents(
        {"player": "lit", "agent": "literal", "all_found_rate": 0.31, "some_found_rate": 0.66},
        {"player": "soft", "agent": "softmax", "all_found_rate": 0.2},
        {"player": "noise", "agent": "random", "listener_accuracy": 0.27,
         "listener_chance": 0.25, "all_found_rate": 0.0})))
    assert "`random` (noise) votes at random: it found the storyteller's card in 27% of its " \
        "votes, where chance is 25%" in notes
    assert "lit's clues, found by everyone in 31% of its turns (the most of any " \
        "storyteller), found some but not all in 66%" in notes
    other = "\n".join(reading_notes(_agents(
        {"player": "lit", "agent": "literal", "all_found_rate": 0.05},
        {"player": "soft", "agent": "softmax", "all_found_rate": 0.4, "some_found_rate": 0.5},
        {"player": "random", "agent": "random", "listener_accuracy": 0.2})))
    assert "`random` votes at random: it found the storyteller's card in 20%" in other
    assert "soft's clues, found by everyone in 40%" in other and "lit's" not in other
    assert reading_notes(_agents({"player": "a", "agent": "literal"},
                                 {"player": "b", "agent": "softmax"})) == []
    # a name that only contains "random" is not the random agent
    assert reading_notes(_agents({"player": "x", "agent": "random_walker(k=1)"})) == []


def test_the_prediction_note_states_each_gap_and_its_side():
    rows = [{"player": "amb", "agent": "ambiguity(target=0.5)", "predicted_find_rate": 0.5,
             "observed_find_rate": 0.531, "observed_find_rate_ci_low": 0.52,
             "observed_find_rate_ci_high": 0.54},
            {"player": "prag", "agent": "pragmatic", "predicted_find_rate": 0.5,
             "observed_find_rate": 0.49, "observed_find_rate_ci_low": 0.47,
             "observed_find_rate_ci_high": 0.51},
            {"player": "soft", "agent": "softmax", "predicted_find_rate": None,
             "observed_find_rate": 0.9}]
    notes = "\n".join(reading_notes(_agents(*rows)))
    assert ("amb predicted 0.500 and its listeners found 0.531 [0.520, 0.540]: observed "
            "above predicted by 0.031, the prediction outside the 95% interval") in notes
    assert ("prag predicted 0.500 and its listeners found 0.490 [0.470, 0.510]: observed "
            "below predicted by 0.010, the prediction inside the 95% interval") in notes
    assert "soft predicted" not in notes and "`random`" not in notes
    assert "ignores what earlier rounds" not in notes  # false since the round-by-round model


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
