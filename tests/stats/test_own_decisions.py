"""Faults and fallbacks apart from play: a seat's share of the decisions it made itself, its
listener accuracy over its own votes beside over all, and accuracy against chance (1 over
the cards a listener may vote for) with a kappa-style corrected figure."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import AgentFailure, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from dixit_lab.stats.metrics import agent_table
from dixit_lab_agents.random_agent import RandomAgent
from tests.stats.test_game_stats import _oracle, _same


class Flaky(RandomAgent):
    """A random agent whose every second vote and every tell in an odd round fail."""

    votes = 0

    def vote(self, view):
        self.votes += 1
        if self.votes % 2 == 0:
            raise AgentFailure("unparsable", "no JSON")
        return super().vote(view)

    def tell(self, view):
        if view.round % 2 == 1:
            raise AgentFailure("backend", "HTTP 500")
        return super().tell(view)


def _games(players: int, games: int = 6) -> list:
    records = []
    for game in range(games):
        agents = [Flaky()] + [make_agent("random") for _ in range(players - 1)]
        for agent in agents:
            agent.spec = "flaky" if isinstance(agent, Flaky) else "random"
        records.append(play_game(agents, get_rules("classic", max_rounds=6),
                                 load_deck("dreams"), game, on_illegal="fallback",
                                 meta={"game": game, "players": [
                                     "flaky", *[f"r{i}" for i in range(players - 1)]]}))
    return records


@pytest.mark.parametrize("players", [3, 4, 6])
def test_the_own_decision_columns_equal_those_counted_vote_by_vote(players):
    records = _games(players)
    table = agent_table(records)
    _same(table, _oracle(records))
    flaky = table.set_index("player").loc["flaky"]
    assert 0.5 < flaky["own_decision_share"] < 1.0
    assert table.set_index("player").loc["r0", "own_decision_share"] == 1.0


@pytest.mark.parametrize(("players", "chance"), [(3, 1 / 3), (4, 1 / 3), (6, 1 / 5)])
def test_chance_is_one_over_the_cards_a_listener_may_vote_for(players, chance):
    # three players show five cards, two of them each listener's own: 1/3; else 1/(n - 1)
    table = agent_table(_games(players, 2)).set_index("player")
    assert table["listener_chance"].tolist() == pytest.approx([chance] * players)
    row = table.loc["r0"]
    assert row["listener_kappa"] == pytest.approx(
        (row["listener_accuracy"] - chance) / (1 - chance))


def test_own_votes_leave_out_the_fallbacks():
    records = _games(4, 8)
    table = agent_table(records).set_index("player")
    own = [(rnd.votes[0] == rnd.display.index(rnd.storyteller_card))
           for record in records for rnd in record.rounds if rnd.storyteller != 0
           and not any(f.seat == 0 and f.action == "vote" for f in rnd.faults)]
    assert table.loc["flaky", "listener_accuracy_own"] == pytest.approx(sum(own) / len(own))
