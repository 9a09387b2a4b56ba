"""``ambiguity``: tells the pair whose predicted find rate is closest to its target."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import AgentSpecError, GameContext, TellView, make_agent
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from tests.tiny_space import one_clue_per_card

RULES = get_rules("classic")


def ready(spec, space, n_players=5):
    agent = make_agent(spec).use_space(space)
    agent.begin_game(GameContext(0, n_players, RULES, space.deck, ("x",) * n_players))
    return agent


@pytest.mark.parametrize("target", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("round_index", [0, 3, 9])
def test_tells_the_pair_closest_to_target(target, round_index):
    space = one_clue_per_card()
    agent = ready(f"ambiguity(target={target}, temperature=0.3)", space)
    hand = (3, 9, 14, 27, 31, 40)
    clue = agent.tell(TellView(0, round_index, hand, (0,) * 5, ()))
    assert clue.card in hand
    predictions = agent.model.find_at(round_index)[list(hand)]
    best_gap = np.abs(predictions - target).min()
    told = agent.predicted_find(list(hand), clue.card, clue.text, round_index)
    assert abs(told - target) <= best_gap + agent.tolerance + 1e-6


def test_higher_target_means_more_obvious_clues():
    space = one_clue_per_card()
    hand = [3, 9, 14, 27, 31, 40]
    found = []
    for target in (0.1, 0.5, 0.9):
        agent = ready(f"ambiguity(target={target}, temperature=0.3)", space)
        clue = agent.tell(TellView(0, 0, tuple(hand), (0,) * 5, ()))
        found.append(agent.predicted_find(hand, clue.card, clue.text, 0))
    assert found[0] < found[1] < found[2]
    assert abs(found[1] - 0.5) < 0.05


def test_plays_legal_games_as_listener_like_literal():
    space = one_clue_per_card()
    agents = [make_agent("ambiguity").use_space(space) for _ in range(3)] + \
        [make_agent("literal").use_space(space)]
    record = play_game(agents, RULES, space.deck, 4)
    for rnd in record.rounds:
        assert rnd.storyteller_card in rnd.storyteller_hand and not rnd.faults
        for seat, vote in enumerate(rnd.votes):
            assert vote is None or rnd.card_owner[vote] != seat
    assert play_game(agents, RULES, space.deck, 4) == record


@pytest.mark.parametrize("bad", ["ambiguity(target=0)", "ambiguity(target=1.2)"])
def test_target_must_be_inside_zero_one(bad):
    with pytest.raises(AgentSpecError, match="target must be in"):
        make_agent(bad)
