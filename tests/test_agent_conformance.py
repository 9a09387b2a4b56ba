"""Every built-in agent passes the reusable conformance check."""

from __future__ import annotations

import pytest

from dixit_lab.agent import Agent, Clue, register_agent
from dixit_lab.testing import check_agent

BUILT_IN = ["random", "literal", "softmax", "ambiguity(target=0.3)", "pragmatic",
            "calibrated"]


@pytest.mark.parametrize("spec", BUILT_IN)
def test_built_in_agents_conform(spec):
    check_agent(spec)


@register_agent("test-leaky")
class Leaky(Agent):
    """Remembers across games: its clue changes with the number of games it played."""

    def __init__(self) -> None:
        self.games = 0

    def begin_game(self, context):
        super().begin_game(context)
        self.games += 1

    def tell(self, view):
        return Clue(view.hand[self.games % len(view.hand)], "leak")

    def submit(self, view):
        return list(view.hand[: view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)


def test_the_check_catches_an_agent_that_carries_state_between_games():
    with pytest.raises(AssertionError, match="reused agent differs"):
        check_agent("test-leaky")
