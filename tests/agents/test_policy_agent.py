"""The ``policy`` agent: a trained policy of the environment seated in games and tournaments."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import AgentSpecError, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from dixit_lab.testing import check_agent
from dixit_lab_agents.policy_agent import PolicyAgent, load_policy


@pytest.mark.parametrize("policy", ["observation_driven", "seeded"])
def test_policy_agent_conforms(policy):
    check_agent(f"policy(policy=tests.env_policies:{policy})", players=(3, 5), max_rounds=4)


def test_a_policy_from_a_file(tmp_path):
    path = tmp_path / "my_policy.py"
    path.write_text("import numpy as np\n\nclass Last:\n    clue_texts = ['dream', 'shadow']\n"
                    "    def __call__(self, observation, mask):\n"
                    "        return int(np.flatnonzero(mask)[-1])\n", encoding="utf-8")
    agent = make_agent(f"policy(policy={path}:Last)")
    record = play_game([agent, make_agent("random"), make_agent("random")],
                       get_rules("classic", max_rounds=3), load_deck("dreams"), 1)
    assert record.rounds[0].storyteller == 0
    assert record.rounds[0].clue == "shadow"  # the last of its two clue actions


def test_bad_policies_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="is not 'package.module:name'"):
        load_policy("no_colon")
    with pytest.raises(ValueError, match="no module named 'no_such_module_xyz'"):
        load_policy("no_such_module_xyz:act")
    with pytest.raises(ValueError, match="has no attribute 'nothing'"):
        load_policy("tests.env_policies:nothing")
    with pytest.raises(ValueError, match="not found"):
        load_policy(f"{tmp_path}/missing.py:act")
    with pytest.raises(ValueError, match="is not callable"):
        load_policy("tests.env_policies:__doc__")
    with pytest.raises(AgentSpecError, match="needs parameter"):
        make_agent("policy")


def test_an_illegal_choice_of_the_policy_is_a_fault():
    agent = PolicyAgent(lambda observation, mask: 0)  # always passes: never legal here
    record = play_game([agent, make_agent("random"), make_agent("random")],
                       get_rules("classic", max_rounds=2), load_deck("dreams"), 3,
                       on_illegal="fallback")
    faults = [f for r in record.rounds for f in r.faults]
    assert faults and all("the policy chose pass" in f.message for f in faults)
