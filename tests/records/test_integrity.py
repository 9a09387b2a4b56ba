"""The checks of a games file's lines: a record edited in one round is refused naming the
game (numbered from 0, as in ``meta.game``) and the round (numbered from 1, as ``show``
prints it)."""

from __future__ import annotations

import json

import pytest

from dixit_lab import get_rules, make_agent, play_game
from dixit_lab.core.cards import load_deck
from dixit_lab.errors import ConfigError
from dixit_lab.records.integrity import check_record_line


def a_record_line() -> str:
    agents = [make_agent("random") for _ in range(4)]
    record = play_game(agents, get_rules("classic"), load_deck("numbered-60"), 7,
                       meta={"game": 0})
    return record.to_json()


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda rnd: rnd.update(clue=5), "round 3 has no clue"),
    (lambda rnd: rnd.update(storyteller_card=-1),
     "round 3: the storyteller's card is not displayed"),
    (lambda rnd: rnd.update(scores=[s + 1 for s in rnd["scores"]]),
     "round 3: its scores are not the sum of the points so far"),
])
def test_an_edited_round_is_named_counting_rounds_from_one(edit, problem):
    data = json.loads(a_record_line())
    assert len(data["rounds"]) >= 3
    edit(data["rounds"][2])  # the third round
    with pytest.raises(ConfigError) as info:
        check_record_line(json.dumps(data), "games.jsonl, line 1", 0, lambda _: 1)
    assert str(info.value) == f"games.jsonl, line 1: game 0: {problem}; the record was edited"
    assert check_record_line(a_record_line(), "games.jsonl, line 1", 0, lambda _: 1).meta == \
        {"game": 0}
