"""The compiled kernel plays exactly the reference engine's games (a sample in CI: one compile,
a few hundred games; the check over many games is
``benchmarks/check_batched.py --engine compiled``). Skips, saying why, without the ``fast``
extra (Numba)."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.compiled import agent_blocker, kernel_problem, play_compiled
from dixit_lab.policy.backends import MANY
from dixit_lab.testing import batch_differences
from dixit_lab_agents.literal import LiteralAgent, LiteralPolicy

needs_numba = pytest.mark.skipif(kernel_problem() is not None,
                                 reason=kernel_problem() or "")

SUPPORTED = ["random", "literal", "softmax", "ambiguity(target=0.3)", "pragmatic"]


def compare(specs: list[str], preset: str, games: int, **overrides) -> None:
    bad = batch_differences(specs, get_rules(preset, **overrides), load_deck("dreams"), games,
                            engine="compiled")
    assert not bad, f"games {bad} of {specs} under {preset} differ"


@needs_numba
@pytest.mark.parametrize("preset", ["classic", "refresh", "quest"])
def test_every_built_in_agent_at_one_mixed_table(preset):
    compare(SUPPORTED, preset, 5)
    compare(["softmax", "random", "literal"], preset, 40)


@needs_numba
@pytest.mark.parametrize("overrides", [{"deck_exhausted": "end_when_cannot_refill"},
                                       {"deck_exhausted": "reshuffle_discard"},
                                       {"first_storyteller": "random"},
                                       {"target_score": 12}, {"fixed_hands": True}])
def test_rule_options(overrides):
    compare(["random", "literal", "softmax", "random"], "classic", 30, **overrides)


@needs_numba
def test_six_players_with_the_search_bonus_preset():
    compare(["pragmatic", "softmax", "random", "literal", "ambiguity(target=0.6)", "random"],
            "refresh", 5)


class _VotesItsOwnWay(LiteralPolicy):
    def vote(self, display, own, clues, draws):  # a vote the compiled form does not play
        return super().vote(display, own, clues, draws)


class _OwnVote(LiteralAgent):
    def batch_policy(self) -> _VotesItsOwnWay:
        return _VotesItsOwnWay(self, MANY)


def test_the_kernel_names_what_it_cannot_play():
    assert agent_blocker(make_agent("literal")) is None
    assert "overrides vote" in (agent_blocker(_OwnVote()) or "")


@needs_numba
def test_a_table_it_cannot_play_is_refused_naming_the_agent():
    with pytest.raises(ValueError, match="overrides vote"):
        play_compiled([[_OwnVote(), make_agent("random"), make_agent("random")]],
                      get_rules("classic"), load_deck("dreams"), [1])
