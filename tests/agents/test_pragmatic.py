"""``pragmatic``: maximises expected points; votes knowing why decoys match the clue."""

from __future__ import annotations

import numpy as np

from dixit_lab.core.agent import GameContext, TellView, VoteView, make_agent
from dixit_lab.core.rules import get_rules
from dixit_lab.listener.model import expected_storyteller_points
from tests.tiny_space import make_space, one_clue_per_card


def ready(spec, space, rules, n_players=5, seat=0):
    agent = make_agent(spec).use_space(space)
    agent.begin_game(GameContext(seat, n_players, rules, space.deck, ("x",) * n_players))
    return agent


def test_tells_the_pair_with_the_most_expected_points():
    space = one_clue_per_card()
    for rules in (get_rules("classic"), get_rules("classic", lone_finder_points=4)):
        agent = ready("pragmatic", space, rules)
        hand = [2, 8, 15, 22, 35, 50]
        clue = agent.tell(TellView(0, 0, tuple(hand), (0,) * 5, ()))
        points = expected_storyteller_points(agent.model.find_at(0)[hand], 4, rules,
                                             agent.model.variance_at(0)[hand])
        row = hand.index(clue.card)
        column = space.clue_index(clue.text)
        assert points[row, column] >= points.max() - agent.tolerance - 1e-6


def test_lone_finder_bonus_makes_it_aim_lower():
    space = one_clue_per_card(n_cards=80, seed=3)
    hand = [1, 12, 23, 34, 45, 56]
    plain = ready("pragmatic(temperature=0.3)", space, get_rules("classic"))
    lone = ready("pragmatic(temperature=0.3)", space, get_rules("classic", lone_finder_points=6))
    a = plain.tell(TellView(0, 0, tuple(hand), (0,) * 5, ()))
    b = lone.tell(TellView(0, 0, tuple(hand), (0,) * 5, ()))
    assert (lone.predicted_find(hand, b.card, b.text, 0)
            < plain.predicted_find(hand, a.card, a.text, 0))


def test_voter_distrusts_a_perfect_but_typical_decoy():
    """Card 0 matches the clue a little better than card 1, but card 0 is the card every
    listener holding it would submit (the clue's best match in the deck), while card 1 is an
    unusual match; the pragmatic voter picks card 1, the literal voter card 0."""
    rng = np.random.default_rng(1)
    n = 40
    cards = rng.standard_normal((n, 8)) * 0.2
    cards[:, 0] = -1.0  # most cards are far from the clue direction
    cards[0] = [1.0, 0, 0, 0, 0, 0, 0, 0.05]
    cards[1] = [0.93, 0.1, 0, 0, 0, 0, 0, 0]
    clues = np.zeros((1, 8))
    clues[0, 0] = 1.0
    space = make_space(cards, clues, ["the clue"])
    rules = get_rules("classic")
    view = VoteView(1, 0, 0, "the clue", (), (5, 0, 1, 7), (3,), (0,) * 5, ())
    literal = ready("literal", space, rules, seat=1)
    assert view.display[literal.vote(view)] == 0
    pragmatic = ready("pragmatic(temperature=0.2, decoy_discount=1.0)", space, rules, seat=1)
    assert view.display[pragmatic.vote(view)] == 1


def test_voter_never_votes_for_its_own_card():
    space = one_clue_per_card()
    agent = ready("pragmatic", space, get_rules("classic"), seat=2)
    for own in range(4):
        view = VoteView(2, 0, 0, "clue 5", (), (5, 6, 7, 8), (own,), (0,) * 5, ())
        assert agent.vote(view) != own
