"""``theory_of_mind``: a posterior over listener types from public votes, and clues aimed
under it."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import GameContext, PublicRound, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.embeddings import get_space
from dixit_lab.engine.batched import batch_supported
from dixit_lab.engine.game import play_game
from dixit_lab.listener.model import expected_storyteller_points

RULES = get_rules("classic")
SPEC = "theory_of_mind(embedders='conse,text', temperatures='0.05')"


@pytest.fixture(scope="module")
def agent():
    deck = load_deck("dreams")
    teller = make_agent(SPEC)
    teller.begin_game(GameContext(0, 5, RULES, deck, ("x",) * 5, stream_base=1))
    return teller


def _votes_from(space, rng, rounds=12):
    """Public rounds in which seats 1-4 vote like softmax(T=0.05) listeners of ``space``."""
    results = []
    texts = space.clues.texts
    for r in range(rounds):
        clue = int(rng.integers(len(texts)))
        display = tuple(int(c) for c in rng.choice(84, 5, replace=False))
        owners = tuple(int(s) for s in rng.permutation(5))
        votes: list[int | None] = []
        for seat in range(5):
            if seat == 0:
                votes.append(None)
                continue
            allowed = [i for i in range(5) if owners[i] != seat]
            logits = np.array([space.similarity[clue, display[i]] for i in allowed]) / 0.05
            weights = np.exp(logits - logits.max())
            votes.append(allowed[int(rng.choice(len(allowed), p=weights / weights.sum()))])
        results.append(PublicRound(r, 0, texts[clue], display, owners, tuple(votes),
                                   (0,) * 5, (0,) * 5))
    return results


def test_the_posterior_finds_how_the_listeners_see(agent):
    rng = np.random.default_rng(4)
    agent.begin_game(GameContext(0, 5, RULES, agent.context.deck, ("x",) * 5, stream_base=2))
    assert np.allclose(agent.posterior, 0.5)
    for result in _votes_from(get_space("text", "dreams", "default"), rng):
        agent.observe(result)
    # types are (conse, 0.05) then (text, 0.05): every listener seat is recognised as text
    assert (agent.posterior[1:, 1] > 0.9).all()
    assert np.allclose(agent.posterior[0], 0.5)  # its own seat is never updated


def test_scores_average_each_types_expected_points(agent):
    agent.begin_game(GameContext(0, 5, RULES, agent.context.deck, ("x",) * 5, stream_base=3))
    hand = [3, 9, 14, 27, 31, 40]
    for round_index in (0, 6):
        find = [model.find_at(round_index)[hand].astype(np.float64)
                for model in agent.type_models]
        points = [expected_storyteller_points(find[h], 4, RULES, 0) for h in range(2)]
        typed = agent.type_points(hand, round_index)
        # uniform prior: the average of the two types' points (each with its variance
        # correction)
        agent.log_posterior[:] = 0.0
        assert np.allclose(agent.table_posterior, 0.5)
        assert np.allclose(agent.pair_scores(hand, round_index), typed.mean(axis=0))
        agent.log_posterior[1:, 0] = -20.0  # the listeners' votes all say "text"
        assert agent.table_posterior[1] > 0.999
        assert np.allclose(agent.pair_scores(hand, round_index), typed[1], atol=1e-4)
        # the correction for a shared table lowers the points of every pair
        assert (typed[1] <= points[1] + 1e-5).all()


def test_plays_legal_games_on_the_reference_engine_only():
    deck = load_deck("dreams")
    agents = [make_agent(SPEC)] + [make_agent("softmax(embedder=text)") for _ in range(3)]
    assert not batch_supported(agents[0])
    record = play_game(agents, RULES, deck, 6)
    for rnd in record.rounds:
        assert rnd.storyteller_card in rnd.storyteller_hand and not rnd.faults
    again = [make_agent(SPEC)] + [make_agent("softmax(embedder=text)") for _ in range(3)]
    assert play_game(again, RULES, deck, 6) == record


@pytest.mark.parametrize("bad", ["theory_of_mind(temperatures='0,1')",
                                 "theory_of_mind(embedders='')",
                                 "theory_of_mind(lapse=1.5)"])
def test_bad_parameters(bad):
    with pytest.raises(Exception, match="temperatures|embedders|lapse"):
        make_agent(bad)
