"""The scoring has one home (``core.rules.search_points``): a scoring option added to the rules
alone reaches every consumer — the listener model's expected points (what the `pragmatic`,
`calibrated` and `theory_of_mind` storytellers optimise), the model seats' prompt and the
report's notes. Before, the listener model and the prompt hard-coded "the storyteller scores 0"
when all or none find the card: 0.000 at p = 1.0 where the rules said 2."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest

from dixit_lab.core import rules as core_rules
from dixit_lab.core.rules import get_rules
from dixit_lab.listener.model import expected_storyteller_points
from dixit_lab.report.notes import reading_notes
from dixit_lab.vlm.prompts import Templates, table_fields

CLASSIC = get_rules("classic")


def _option(monkeypatch: pytest.MonkeyPatch, *, all_found: int | None = None,
            two_found: int | None = None) -> None:
    """A scoring option as a new rule would add it: in search_points only."""
    plain = core_rules.search_points

    def search_points(rules, n_players):  # type: ignore[no-untyped-def]
        teller, finder, missed = (list(x) for x in plain(rules, n_players))
        if all_found is not None:
            teller[-1] = all_found
        if two_found is not None and n_players > 3:
            teller[2] = two_found
        return tuple(teller), tuple(finder), tuple(missed)

    monkeypatch.setattr(core_rules, "search_points", search_points)


def _binomial(p: float, voters: int, table: list[int]) -> float:
    return sum(points * comb(voters, f) * p**f * (1 - p) ** (voters - f)
               for f, points in enumerate(table))


def test_the_listener_model_scores_what_the_rules_score(monkeypatch):
    assert float(expected_storyteller_points(1.0, 3, CLASSIC)) == 0.0
    _option(monkeypatch, all_found=2)
    assert float(expected_storyteller_points(1.0, 3, CLASSIC)) == pytest.approx(2.0)
    assert float(expected_storyteller_points(0.5, 3, CLASSIC)) == pytest.approx(
        _binomial(0.5, 3, [0, 3, 3, 2]))  # 2.500 (2.250 before the option)


def test_a_rule_the_usual_form_cannot_hold_is_summed_over_the_binomial_law(monkeypatch):
    _option(monkeypatch, two_found=1)  # 5 players: 2 finders of 4 score 1, 1 or 3 score 3
    table = list(core_rules.search_points(CLASSIC, 5)[0])
    assert table == [0, 3, 1, 3, 0]
    for p in (0.1, 0.5, 0.8):
        assert float(expected_storyteller_points(p, 4, CLASSIC)) == pytest.approx(
            _binomial(p, 4, table))
    with_spread = expected_storyteller_points(np.array([0.5]), 4, CLASSIC, variance=0.01)
    assert np.isfinite(with_spread).all() and abs(float(with_spread[0]) - _binomial(
        0.5, 4, table)) < 0.2


def test_the_prompt_tells_the_rules_scoring(monkeypatch):
    def system() -> str:
        return Templates().system.format_map({**table_fields(CLASSIC, 4, 0),
                                              "answer_format": "{}"})

    assert "the storyteller scores 0 and every other player 2" in system()
    _option(monkeypatch, all_found=2)
    assert "the storyteller scores 0 when none find it and 2 when all do" in system()


def test_the_reports_note_tells_the_rules_scoring(monkeypatch):
    agents = pd.DataFrame({"player": ["random", "literal"], "agent": ["random", "literal"],
                           "storyteller_turns": [10, 10], "all_found_rate": [0.0, 0.4],
                           "some_found_rate": [0.3, 0.5], "none_found_rate": [0.7, 0.1]})
    note = " ".join(reading_notes(agents, CLASSIC))
    assert "the storyteller scores 3 instead of 0" in note
    _option(monkeypatch, all_found=2)
    assert "the storyteller scores 3 instead of 2" in " ".join(reading_notes(agents, CLASSIC))
    assert "instead of" not in " ".join(reading_notes(agents, None))
