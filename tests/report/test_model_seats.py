"""The report's model-seat and chance sections (report/model_seats)."""

from __future__ import annotations

import pandas as pd

from dixit_lab.report.model_seats import chance_section, model_section


def agents(share=0.25):
    return pd.DataFrame([
        {"player": "gemma", "listener_turns": 4, "listener_accuracy": 0.5,
         "listener_chance": 1 / 3, "listener_kappa": 0.25, "listener_accuracy_own": 1.0,
         "listener_kappa_own": 1.0, "model_decisions": 8.0, "decisions": 8,
         "own_decision_share": share, "faults_backend": 6, "faults_unparsable": 0,
         "response_format": "json_object_schema", "served_model": "gemma-3-270m",
         "prompt_tokens": 4000.0, "completion_tokens": 60.0, "latency_s_per_decision": 2.0},
        {"player": "dice", "listener_turns": 4, "listener_accuracy": 0.25,
         "listener_chance": 1 / 3, "listener_kappa": -0.125, "listener_accuracy_own": 0.25,
         "listener_kappa_own": -0.125, "model_decisions": None, "decisions": 8,
         "own_decision_share": 1.0, "faults_backend": 0, "faults_unparsable": 0,
         "response_format": None, "served_model": None, "prompt_tokens": None,
         "completion_tokens": None, "latency_s_per_decision": None}])


def test_a_seat_of_fallbacks_is_flagged_with_its_share_and_faults():
    text = "\n".join(model_section(agents()))
    assert "| gemma | 8 | 25% | backend 6 | json_object_schema | gemma-3-270m | 4,000 | 60 |" \
        in text
    assert "**Warning: gemma made 2 of 8 decisions itself (25%)**" in text
    assert "dice" not in text  # not a model seat
    assert "Warning" not in "\n".join(model_section(agents(share=0.9)))


def test_runs_without_model_seats_have_no_model_section():
    assert model_section(agents().drop(columns="model_decisions")) == []
    assert model_section(agents().assign(model_decisions=None)) == []


def test_listeners_are_shown_beside_chance():
    text = "\n".join(chance_section(agents()))
    assert "| gemma | 4 | 50% | 33% | 0.25 | 100% | 1.00 |" in text
    assert "| dice | 4 | 25% | 33% | -0.12 | 25% | -0.12 |" in text
