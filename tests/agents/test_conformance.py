"""Every built-in agent passes the reusable conformance check."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import Agent, Clue, register_agent
from dixit_lab.testing import CHECKS, check_agent

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


@register_agent("test-global-random")
class GlobalRandom(Agent):
    """Draws from Python's global random module, which the contract forbids."""

    def tell(self, view):
        import random

        return Clue(random.choice(view.hand), "dream")

    def submit(self, view):
        return list(view.hand[: view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)


@register_agent("test-numpy-random")
class NumpyRandom(GlobalRandom):
    """Draws from NumPy's global random state."""

    def tell(self, view):
        import numpy as np

        return Clue(view.hand[np.random.randint(len(view.hand))], "dream")  # noqa: NPY002


@pytest.mark.parametrize(("spec", "culprit"), [("test-global-random", "Python's global random"),
                                               ("test-numpy-random", "NumPy's global random")])
def test_the_check_names_global_random_as_the_fault(spec, culprit, capsys):
    with pytest.raises(AssertionError, match=culprit):
        check_agent(spec)
    assert f"check_agent('{spec}'): FAILED" in capsys.readouterr().out


def test_the_check_says_what_it_checked_and_its_verdict(capsys):
    assert check_agent("random", players=(3,)) == list(CHECKS)
    out = capsys.readouterr().out
    assert "classic, 3 players" in out and "verdict: PASSED" in out
    assert all(check in out for check in CHECKS)
    check_agent("random", players=(3,), log=None)
    assert capsys.readouterr().out == ""


def test_the_check_says_which_engine_plays_an_agent_that_inherits_a_policy(capsys):
    from tests.engine.test_batched import KthClue  # noqa: F401 - registers test-kth-clue

    check_agent("test-kth-clue(rank=30)", players=(4,), max_rounds=4)
    out = capsys.readouterr().out
    assert ("engine: reference only: KthClue overrides tell, which the batched policy of "
            "LiteralAgent does not play") in out and "verdict: PASSED" in out


@register_agent("test-false-voucher")
class FalseVoucher(Agent):
    """Tells its last card but vouches for a batched policy that tells the first."""

    def tell(self, view):
        return Clue(view.hand[-1], "dream")

    def submit(self, view):
        return list(view.hand[: view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)

    def batch_policy(self):
        from dixit_lab_agents.literal import LiteralAgent

        agent = LiteralAgent()
        agent.begin_game(self.context)
        return agent.batch_policy()


def test_the_check_catches_a_batched_policy_that_plays_other_games():
    with pytest.raises(AssertionError, match="batch_policy\\(\\) does not play its decisions"):
        check_agent("test-false-voucher", players=(4,), max_rounds=4)
