"""``random``'s one-game decisions, written out with builtins, are :class:`RandomPolicy`'s on
the ONE backend: the same draws in the same order, so the same games."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import Clue
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import PRESETS, get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab_agents.random_agent import _ONE, WORDS, RandomAgent


class _PolicyRandom(RandomAgent):
    """The decisions through RandomPolicy and the ONE backend, as before they were
    written out."""

    def tell(self, view):  # type: ignore[no-untyped-def]
        card, word = _ONE.tell(view.hand, self._draws)
        return Clue(card, WORDS[word])

    def submit(self, view):  # type: ignore[no-untyped-def]
        return _ONE.submit(view.hand, view.clue, view.n_cards, self._draws)

    def vote(self, view):  # type: ignore[no-untyped-def]
        return _ONE.vote(view.display, view.own_positions, view.clue, self._draws)


@pytest.mark.parametrize(("preset", "players"), [
    (preset, players) for preset in PRESETS for players in (3, 4, 6)
    if get_rules(preset).min_players <= players <= get_rules(preset).max_players])
def test_written_out_decisions_are_the_policys(preset, players):
    rules = get_rules(preset)
    deck = Deck.numbered(84)
    for game in range(25):
        seed = game_seed(5, game)
        fast = play_game([RandomAgent() for _ in range(players)], rules, deck, seed)
        slow = play_game([_PolicyRandom() for _ in range(players)], rules, deck, seed)
        assert fast.rounds == slow.rounds and fast.final_scores == slow.final_scores


def test_under_own_card_votes_its_one_game_decisions_are_its_policys():
    """(It never votes for its own card: the rule allows that vote, random does not cast it.)"""
    rules = get_rules("classic", own_card_votes=True)
    deck = Deck.numbered(84)
    for game in range(25):
        seed = game_seed(6, game)
        fast = play_game([RandomAgent() for _ in range(4)], rules, deck, seed)
        slow = play_game([_PolicyRandom() for _ in range(4)], rules, deck, seed)
        assert fast.rounds == slow.rounds
