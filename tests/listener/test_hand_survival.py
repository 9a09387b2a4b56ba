"""The pool law of the listener model: the law of a card in a slot of a hand, round by round,
against the rules' round count and the hands of engine games."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.batched import play_batch
from dixit_lab.listener.hand_survival import HandDynamics, pool_laws
from dixit_lab.records.format import GameRecord

HAZARD = np.linspace(0.02, 0.35, 84)


@pytest.mark.parametrize("rules", [get_rules("classic"), get_rules("refresh"),
                                   get_rules("quest")])
@pytest.mark.parametrize("n_players", [3, 4, 5, 6])
def test_laws_are_distributions_from_the_uniform_deal(rules, n_players):
    laws = pool_laws(HAZARD, HandDynamics.of(rules, n_players, 84))
    assert np.allclose(laws.sum(axis=1), 1.0) and laws.min() > 0
    assert np.allclose(laws[0], 1 / 84)
    # the cards that are submitted often are the ones that leave the hands
    shift = laws[-1] - laws[0]
    assert np.corrcoef(shift, HAZARD)[0, 1] < -0.9


def test_fixed_hands_never_change():
    rules = get_rules("dixitworld")
    assert pool_laws(np.linspace(0.05, 0.5, 84), HandDynamics.of(rules, 4, 84)).shape == (1, 84)


@pytest.mark.parametrize("rules", [get_rules("classic"), get_rules("quest", target_score=None),
                                   get_rules("refresh", target_score=None, max_rounds=40)])
@pytest.mark.parametrize("n_players", [3, 4, 5, 6])
def test_a_law_for_every_round_the_engine_plays(rules, n_players):
    """The pile is counted as the engine counts it: as many laws as a game has rounds (the
    deck runs out, or the bound on rounds)."""
    deck = load_deck("dreams")
    record = GameRecord.from_json(play_batch([[make_agent("literal")] * n_players], rules,
                                             deck, [game_seed(3, 0)])[0])
    laws = pool_laws(HAZARD, HandDynamics.of(rules, n_players, len(deck)))
    assert len(laws) == len(record.rounds)


def _listener_hands(n_players, rules, deck, games):
    """Per round, the cards of every listener's hand at the start of the round, counted over
    reference-engine games of softmax players."""
    from dixit_lab.core.agent import TellView
    from dixit_lab.engine.game import GameSteps, Phase, agent_answer

    counts: dict[int, np.ndarray] = {}
    agents = [make_agent("softmax") for _ in range(n_players)]
    for g in range(games):
        game = GameSteps(("softmax",) * n_players, rules, deck, game_seed(11, g))
        for seat, agent in enumerate(agents):
            agent.begin_game(game.context(seat))
        event = game.start()
        while event is not None:
            if isinstance(event, Phase):
                view = event.decisions[0].view
                if isinstance(view, TellView):
                    row = counts.setdefault(view.round, np.zeros(len(deck)))
                    for seat in range(n_players):
                        if seat != view.seat:
                            np.add.at(row, list(game.hand(seat)), 1)
                event = game.send([agent_answer(agents[d.seat], d) for d in event.decisions])
            else:
                for agent in agents:
                    agent.observe(event)
                event = game.send(None)
    return counts


@pytest.mark.parametrize("n_players", [3, 5])
def test_the_law_follows_the_hands_of_engine_games(n_players):
    """Softmax players: the cards of the listeners' hands, round by round, over 600 games, are
    much closer to the model's pool law than to the deal's uniform law once the game is under
    way (within 0.05 in total variation, about the sampling error of 600 games, where the
    uniform law is 0.12 to 0.22 away)."""
    from dixit_lab.embeddings import get_space
    from dixit_lab.listener.model import listener_model

    rules, deck = get_rules("classic"), load_deck("dreams")
    model = listener_model(get_space("conse", deck, "default"), 0.05, rules, n_players, 0.05)
    counts = _listener_hands(n_players, rules, deck, 600)
    for index in range(3, model.rounds):
        seen = counts[index] / counts[index].sum()
        to_model = 0.5 * np.abs(seen - model.pool_law[index]).sum()
        to_uniform = 0.5 * np.abs(seen - 1 / len(deck)).sum()
        assert to_model < 0.4 * to_uniform, (index, to_model, to_uniform)
