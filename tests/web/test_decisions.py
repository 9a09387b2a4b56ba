"""People's recorded decisions and the ``human`` agent that replays them."""

from __future__ import annotations

import os

import pytest

from dixit_lab.core.agent import Clue, TellView, make_agent
from dixit_lab.web.decisions import (
    DECISIONS_FILE,
    DecisionLog,
    decisions_path,
    load_decisions,
    recorded_decisions,
    view_key,
)


def test_a_decision_is_found_again_by_its_view_only(tmp_path):
    view = TellView(0, 0, (3, 5, 8), (0, 0, 0), ())
    log = DecisionLog()
    log.add(0, 0, "tell", view, Clue(5, "a storm"))
    (tmp_path / DECISIONS_FILE).write_text(log.text(), encoding="utf-8")
    assert load_decisions(tmp_path / DECISIONS_FILE) == {view_key(view): ("tell",
                                                                          Clue(5, "a storm"))}
    assert view_key(view) != view_key(view._replace(hand=(3, 5, 9)))
    agent = make_agent("human")
    environment = dict(os.environ)
    with recorded_decisions(tmp_path):
        assert decisions_path() == (tmp_path / DECISIONS_FILE).resolve()
        assert dict(os.environ) == environment  # no variable carries the decisions
        agent.begin_game(None)  # type: ignore[arg-type]  # the agent needs no context
        assert agent.tell(view) == Clue(5, "a storm")
        with pytest.raises(LookupError, match="no recorded tell decision"):
            agent.tell(view._replace(round=1))
    assert decisions_path() is None


def test_without_recorded_decisions_the_human_agent_says_to_use_play(tmp_path):
    with recorded_decisions(tmp_path), pytest.raises(RuntimeError, match="dixit-lab play"):
        make_agent("human").begin_game(None)  # type: ignore[arg-type]


def test_a_bad_decisions_line_is_named(tmp_path):
    path = tmp_path / DECISIONS_FILE
    path.write_text('{"action": "vote", "view": "x", "answer": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=f"{DECISIONS_FILE}, line 2: not a recorded decision"):
        load_decisions(path)
