"""``literal`` on hand-built spaces."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import GameContext, SubmitView, TellView, VoteView, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from tests.tiny_space import make_space, one_clue_per_card

RULES = get_rules("classic")


def ready(spec: str, space, n_players: int = 4, seat: int = 0):
    agent = make_agent(spec).use_space(space)
    agent.begin_game(GameContext(seat, n_players, RULES, space.deck, ("x",) * n_players))
    return agent


def axis_space():
    # cards along axes 0..5; clue "sharp" points exactly at card 2, "vague" between 0 and 1
    cards = np.eye(6)
    clues = np.array([[0, 0, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0.2], [0, 0, 0, 1, 0.9, 0]])
    return make_space(cards, clues, ["sharp", "vague", "pair"])


def test_tells_its_best_described_card_with_its_best_clue():
    agent = ready("literal", axis_space())
    clue = agent.tell(TellView(0, 0, (0, 2, 5), (0,) * 4, ()))
    assert (clue.card, clue.text) == (2, "sharp")


def test_submits_the_card_most_like_the_clue():
    agent = ready("literal", axis_space())
    view = SubmitView(1, 0, 0, "pair", (0, 4, 3, 5), 1, (0,) * 4, ())
    assert agent.submit(view) == [3]
    view = SubmitView(1, 0, 0, "pair", (0, 4, 3, 5), 2, (0,) * 4, ())
    assert agent.submit(view) == [3, 4]


def test_votes_for_the_most_similar_card_that_is_not_its_own():
    agent = ready("literal", axis_space())
    view = VoteView(1, 0, 0, "pair", (), (0, 3, 4, 5), (1,), (0,) * 4, ())
    assert agent.vote(view) == 2  # card 3 is the best match but its own; card 4 is next


def test_never_tells_a_card_it_does_not_hold_nor_votes_for_its_own():
    space = one_clue_per_card()
    for n in (3, 4, 6):
        agents = [make_agent("literal").use_space(space) for _ in range(n)]
        record = play_game(agents, get_rules("refresh", max_rounds=25), space.deck, 1)
        for rnd in record.rounds:
            assert rnd.storyteller_card in rnd.storyteller_hand
            for seat, vote in enumerate(rnd.votes):
                assert vote is None or rnd.card_owner[vote] != seat
            assert not rnd.faults


def test_deterministic():
    space = one_clue_per_card()
    agents = [make_agent("literal").use_space(space) for _ in range(4)]
    first = play_game(agents, RULES, space.deck, 3).to_json()
    assert play_game(agents, RULES, space.deck, 3).to_json() == first


def test_a_clue_it_cannot_perceive_is_said_to_its_context_and_it_still_plays():
    agent = ready("literal", axis_space())  # a space of its own: no model to embed new text
    view = VoteView(1, 0, 0, "not in the bank", (), (0, 3, 4), (0,), (0,) * 4, ())
    assert agent.vote(view) in (1, 2)
    assert not agent.context.perceived("not in the bank")
    agent.begin_game(GameContext(0, 4, RULES, agent.space.deck))  # the next game: said again
    assert agent.context.perceived("not in the bank")
    assert agent.vote(view) in (1, 2) and not agent.context.perceived("not in the bank")
    assert agent.context.perceived("sharp")


def test_a_deck_without_images_is_a_clear_error():
    agent = make_agent("literal")
    context = GameContext(0, 4, RULES, Deck.numbered(84), ("x",) * 4)
    with pytest.raises(ValueError, match="has none; use an image deck"):
        agent.begin_game(context)
