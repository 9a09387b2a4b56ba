"""A folder's faults read back from agents.csv and summary.json, the line said of each seat,
and which seats are over their limit: max_fault_share, or min_model_share for a model seat."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dixit_lab.report.faults import (
    fault_line,
    folder_faults,
    limits_message,
    over_limits,
    seat_faults,
)


def _table(**rows: dict) -> pd.DataFrame:
    """An agent table: per player its decisions, own share and fault counts by kind."""
    return pd.DataFrame([{"player": name, "agent": row.get("agent", name),
                          "decisions": row["decisions"], "own_decision_share": row["own"],
                          "faults": sum(row.get("kinds", {}).values()),
                          **{f"faults_{k}": row.get("kinds", {}).get(k, 0)
                             for k in ("illegal", "raised", "timeout", "unparsable")}}
                         for name, row in rows.items()])


FIRST = {"game": 3, "round": 1, "seat": 2, "action": "vote", "kind": "raised",
         "message": "the agent raised ZeroDivisionError: division by zero"}


def test_only_seats_with_faults_get_a_line_with_kinds_share_and_first_fault():
    agents = _table(clean={"decisions": 100, "own": 1.0},
                    broken={"agent": "my.py:Broken", "decisions": 600, "own": 1 - 173 / 600,
                            "kinds": {"raised": 173, "illegal": 2}})
    seats = seat_faults(agents, {"broken": FIRST})
    assert [seat.player for seat in seats] == ["broken"]
    assert seats[0].replaced == 173 and seats[0].total == 175
    assert fault_line(seats[0]) == (
        "faults: broken (agent my.py:Broken): 173 of 600 decisions replaced (29%), 2 failed "
        "begin_game or observe: illegal 2, raised 173 — first: vote, game 3, round 2: the "
        "agent raised ZeroDivisionError: division by zero")


def test_a_hostile_name_or_message_reaches_the_line_escaped_and_cut():
    agents = _table(**{"\x1b[2Jevil\u202e": {"decisions": 10, "own": 0.0,
                                            "kinds": {"raised": 10}}})
    first = {**FIRST, "message": "\x1b]0;pwned\x07" + "x" * 5000, "action": "vote\n"}
    line = fault_line(seat_faults(agents, {"\x1b[2Jevil\u202e": first})[0])
    assert line.isprintable() and "\\x1b[2Jevil\\u202e" in line and "\\x1b]0;pwned\\x07" in line
    assert "vote\\n, game 3" in line and line.endswith("…") and len(line) < 400


def test_folder_faults_reads_the_names_as_text(tmp_path):
    agents = _table(**{"007": {"decisions": 10, "own": 0.5, "kinds": {"timeout": 5}},
                       "NA": {"decisions": 10, "own": 0.9, "kinds": {"unparsable": 1}}})
    agents.to_csv(tmp_path / "agents.csv", index=False)
    (tmp_path / "summary.json").write_text(json.dumps({"first_faults": {"007": FIRST}}))
    seats = folder_faults(tmp_path)
    assert [(s.player, s.replaced, s.kinds, s.first) for s in seats] == [
        ("007", 5, {"timeout": 5}, FIRST), ("NA", 1, {"unparsable": 1}, None)]
    assert folder_faults(tmp_path / "missing") == []


@pytest.mark.parametrize(("replaced", "limit", "over"), [
    (5, 0.05, False), (6, 0.05, True), (100, 1.0, False), (1, 0.0, True), (0, 0.0, False)])
def test_a_seat_fails_over_max_fault_share_only(replaced, limit, over):
    agents = _table(s={"decisions": 100, "own": 1 - replaced / 100,
                       "kinds": {"illegal": replaced or 1}})  # 0: a failed hook only
    found = over_limits(seat_faults(agents, {}), limit, 0.5)
    assert bool(found) is over
    if over:
        assert found == [(f"s had {replaced} of 100 decisions replaced by faults "
                          f"({replaced / 100:.1%}), over max_fault_share {limit:g}",
                          "max_fault_share")]


def test_a_model_seat_is_held_to_min_model_share_instead():
    agents = _table(model={"decisions": 100, "own": 0.6, "kinds": {"unparsable": 40}},
                    code={"decisions": 100, "own": 0.6, "kinds": {"raised": 40}})
    seats = seat_faults(agents, {})
    over = over_limits(seats, 0.05, 0.5, models={"model"})
    assert [field for _, field in over] == ["max_fault_share"]  # model: 60% >= 50%
    over = over_limits(seats, 0.05, 0.7, models={"model"})
    assert over[0] == ("model made 60 of 100 decisions itself (60%), under min_model_share "
                       "0.7", "min_model_share")
    message = limits_message("results/x", over)
    assert message.startswith("results/x: model made 60 of 100 decisions itself")
    assert "set min_model_share: 0 and max_fault_share: 1 in the config" in message
    assert "fix the model's server or prompts and the agent" in message
    assert "--max-fault-share 1" in limits_message("the games", over[1:], option=True)
