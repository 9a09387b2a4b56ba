"""``softmax``: draws follow the softmax of similarities, from the seat's own stream."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from dixit_lab.core.agent import AgentSpecError, GameContext, SubmitView, VoteView, make_agent
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from tests.agents.test_literal import axis_space
from tests.tiny_space import one_clue_per_card

RULES = get_rules("classic")


def ready(spec, space, seed=0):
    agent = make_agent(spec).use_space(space)
    agent.begin_game(GameContext(1, 4, RULES, space.deck, ("x",) * 4, stream_base=seed))
    return agent


def test_vote_frequencies_follow_the_softmax():
    space = axis_space()
    temperature = 0.5
    agent = ready(f"softmax(temperature={temperature})", space)
    display, own = (0, 3, 4, 5), (0,)
    counts = Counter(agent.vote(VoteView(1, 0, 0, "pair", (), display, own, (0,) * 4, ()))
                     for _ in range(6000))
    row = space.text_similarity("pair")
    weights = [math.exp(float(row[display[i]]) / temperature) for i in (1, 2, 3)]
    expected = [w / sum(weights) for w in weights]
    assert 0 not in counts
    for position, share in zip((1, 2, 3), expected, strict=True):
        assert abs(counts[position] / 6000 - share) < 0.02


def test_cold_softmax_plays_like_literal():
    space = axis_space()
    cold, literal = ready("softmax(temperature=0.001)", space), ready("literal", space)
    for hand in [(0, 4, 3, 5), (1, 2, 4, 0)]:
        view = SubmitView(1, 0, 0, "pair", hand, 1, (0,) * 4, ())
        assert cold.submit(view) == literal.submit(view)


def test_two_cards_without_replacement():
    agent = ready("softmax(temperature=5)", axis_space())
    for _ in range(200):
        chosen = agent.submit(SubmitView(1, 0, 0, "pair", (0, 1, 2, 3, 4, 5, 6)[:6], 2,
                                         (0,) * 3, ()))
        assert len(set(chosen)) == 2


def test_hot_softmax_tells_many_clues():
    space = one_clue_per_card()
    agents = [make_agent("softmax(temperature=2)").use_space(space) for _ in range(4)]
    record = play_game(agents, get_rules("refresh", target_score=None, max_rounds=60),
                       space.deck, 5)
    assert len({r.clue for r in record.rounds}) > 30


def test_seeded_and_seat_specific():
    space = one_clue_per_card()
    agents = [make_agent("softmax").use_space(space) for _ in range(4)]
    first = play_game(agents, RULES, space.deck, 8)
    assert play_game(agents, RULES, space.deck, 8) == first
    assert play_game(agents, RULES, space.deck, 9) != first
    for rnd in first.rounds:
        assert rnd.storyteller_card in rnd.storyteller_hand


@pytest.mark.parametrize("bad", ["softmax(temperature=0)", "softmax(temperature=-1)"])
def test_temperature_must_be_positive(bad):
    with pytest.raises(AgentSpecError, match="temperature must be positive"):
        make_agent(bad)
