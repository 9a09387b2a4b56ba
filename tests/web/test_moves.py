"""A person's moves checked against the rules (dixit_lab.web.moves)."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import VoteView
from dixit_lab.core.rules import get_rules
from dixit_lab.web.moves import IllegalMove, check_move

CLASSIC, OWN_VOTES = get_rules("classic"), get_rules("classic", own_card_votes=True)

VIEW = VoteView(seat=2, round=0, storyteller=0, clue="echo", hand=(1, 2, 3),
                display=(10, 11, 12, 13), own_positions=(1,), scores=(0, 0, 0, 0), history=())


def test_a_vote_on_ones_own_card_is_refused_unless_the_rules_allow_it():
    with pytest.raises(IllegalMove, match="never vote for their own card") as refused:
        check_move("vote", VIEW, {"vote": 1}, CLASSIC)
    assert refused.value.rule == "own-card" and refused.value.status == 422
    assert check_move("vote", VIEW, {"vote": 1}, OWN_VOTES) == 1
    assert check_move("vote", VIEW, {"vote": 3}, CLASSIC) == 3
    with pytest.raises(IllegalMove, match="0..3"):
        check_move("vote", VIEW, {"vote": 4}, OWN_VOTES)
