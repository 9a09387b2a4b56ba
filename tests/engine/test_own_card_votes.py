"""The reference engine under own_card_votes (rule preset dixitworld_as_run): a vote on one's
own card is legal, scored as the rules say, and changes nothing for agents that never cast
one."""

from __future__ import annotations

from dixit_lab.core.agent import make_agent
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from tests.engine.test_game import DECK, Cheater, randoms


def test_own_card_votes_make_a_vote_on_ones_own_card_legal():
    """Under own_card_votes the engine takes such a vote (no fault, on_illegal="raise") and
    scores it as round_points does; without it, each is a fault. Built-in agents never cast
    one (it cannot find the storyteller's card): their games are the same under the option."""
    from dixit_lab.core.cards import load_deck
    from dixit_lab.core.rules import round_points

    rules = get_rules("classic", own_card_votes=True)
    record = play_game([make_agent("random"), Cheater("vote_own"), *randoms(2)], rules, DECK, 2)
    assert all(rnd.card_owner[rnd.votes[1]] == 1 and not rnd.faults and rnd.points ==
               round_points(rules, rnd.storyteller, rnd.card_owner, rnd.votes)
               for rnd in record.rounds if rnd.storyteller != 1)
    refused = play_game([make_agent("random"), Cheater("vote_own"), *randoms(2)],
                        get_rules("classic"), DECK, 2, on_illegal="fallback")
    assert {fault.seat for rnd in refused.rounds for fault in rnd.faults} == {1}
    specs, deck = ["softmax", "literal", "random", "pragmatic"], load_deck("dreams")
    assert play_game([make_agent(s) for s in specs], rules, deck, 4).rounds == play_game(
        [make_agent(s) for s in specs], get_rules("classic"), deck, 4).rounds
