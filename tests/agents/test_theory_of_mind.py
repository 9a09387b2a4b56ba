"""``theory_of_mind``: a posterior over a broad family of listener types from public votes,
and clues aimed under it."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import GameContext, PublicRound, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.clues import ClueBank
from dixit_lab.core.rules import get_rules
from dixit_lab.embeddings import available_embedders, get_space, make_embedder
from dixit_lab.embeddings.base import ModelUnavailableError
from dixit_lab.embeddings.perception import NoisyView, effective_temperature
from dixit_lab.embeddings.shipped import load_shipped_cards, load_shipped_clues
from dixit_lab.engine.batched import batch_supported
from dixit_lab.engine.game import play_game
from dixit_lab_agents.theory_of_mind import DEFAULT_EMBEDDERS, TheoryOfMindAgent

RULES = get_rules("classic")
DECK = load_deck("dreams")
SMALL = "theory_of_mind(embedders='conse,text', temperatures='0.05', noise_levels='0,0.1')"


def _context(base: int, n: int = 5) -> GameContext:
    return GameContext(0, n, RULES, DECK, ("x",) * n, stream_base=base)


def _offline_embedders() -> set[str]:
    """Registered embedders whose vectors ship for the bundled deck and clue bank."""
    bank = ClueBank.load("default")
    found = set()
    for name in available_embedders():
        try:
            embedder = make_embedder(name)
            cards = load_shipped_cards(embedder, DECK)
            clues = load_shipped_clues(embedder, bank.name, bank.texts)
        except (ImportError, ModelUnavailableError):
            continue
        if cards is not None and clues is not None:
            found.add(name)
    return found


def test_the_default_family_is_every_offline_embedder_by_temperature_by_noise():
    agent = make_agent("theory_of_mind")
    assert set(DEFAULT_EMBEDDERS.split(",")) == _offline_embedders() == {"conse", "ridge",
                                                                          "text"}
    assert len(agent.types) == 3 * 4 * 3
    labels = {(t.embedder, t.temperature, t.noise) for t in agent.types}
    assert len(labels) == len(agent.types)
    # the shipped listener population (softmax: conse, T 0.05, no noise) is one type of 36,
    # with the prior of any other
    assert ("conse", 0.05, 0.0) in labels
    for kind in agent.types:
        assert kind.effective == pytest.approx(effective_temperature(kind.temperature,
                                                                     kind.noise))


def _rounds(space, temperature, rng, rounds, n=5, view_of_seat=None):
    """Public rounds in which seats 1..n-1 vote by a softmax of ``temperature`` in ``space``
    (or in the view of it ``view_of_seat(seat)`` gives); the storyteller's card is among the
    3 best for the clue in ``space``."""
    view_of_seat = view_of_seat or (lambda seat: space)
    results = []
    texts = space.clues.texts
    for r in range(rounds):
        clue = int(rng.integers(len(texts)))
        best = np.argsort(-np.asarray(space.similarity[clue]))[:3]
        card = int(rng.choice(best))
        others = rng.choice([c for c in range(84) if c != card], n - 1, replace=False)
        display = (card, *(int(c) for c in others))
        owners = (0, *range(1, n))
        votes: list[int | None] = [None]
        for seat in range(1, n):
            allowed = [i for i in range(n) if owners[i] != seat]
            row = view_of_seat(seat).similarity[clue]
            logits = np.array([row[display[i]] for i in allowed], dtype=np.float64)
            weights = np.exp((logits - logits.max()) / temperature)
            votes.append(allowed[int(rng.choice(len(allowed), p=weights / weights.sum()))])
        order = rng.permutation(n)  # shuffle the display positions
        results.append(PublicRound(r, 0, texts[clue], tuple(display[i] for i in order),
                                   tuple(owners[i] for i in order),
                                   tuple(None if v is None else int(np.flatnonzero(order == v)[0])
                                         for v in votes), (0,) * n, (0,) * n))
    return results


@pytest.mark.parametrize(("embedder", "temperature"),
                         [("text", 0.02), ("text", 0.05), ("ridge", 0.1), ("conse", 0.05)])
def test_the_posterior_concentrates_on_a_true_type_of_the_family(embedder, temperature):
    agent = make_agent("theory_of_mind")
    agent.begin_game(_context(2))
    assert np.allclose(agent.table_posterior, 1 / 36)
    space = get_space(embedder, DECK)
    for result in _rounds(space, temperature, np.random.default_rng(4), 20):
        agent.observe(result)
    posterior = agent.table_posterior
    on_space = sum(p for p, t in zip(posterior, agent.types, strict=True)
                   if t.embedder == embedder)
    effective = np.array([t.effective for t in agent.types])
    # 20 rounds of 4 votes (about two games' worth): the space is recognised...
    assert on_space > 0.95
    # ...and the temperature roughly: neighbours of the grid (T_eff 0.044, 0.05 and 0.063;
    # 0.093, 0.1 and 0.107) vote much alike
    assert posterior[np.abs(effective / temperature - 1) < 0.3].sum() > 0.9
    assert float(posterior @ effective) == pytest.approx(temperature, rel=0.2)
    assert np.allclose(agent.posterior[0], 1 / 36)  # its own seat is never updated


def test_noisy_listeners_are_recognised_by_their_effective_temperature():
    agent = make_agent("theory_of_mind")
    agent.begin_game(_context(3))
    space = get_space("text", DECK)
    rng = np.random.default_rng(5)
    views = {seat: NoisyView(space, 0.1, rng) for seat in range(1, 5)}  # each its own noise
    for result in _rounds(space, 0.05, rng, 20, view_of_seat=views.__getitem__):
        agent.observe(result)
    posterior = agent.table_posterior
    mean_effective = sum(p * t.effective for p, t in zip(posterior, agent.types, strict=True))
    assert sum(p for p, t in zip(posterior, agent.types, strict=True)
               if t.embedder == "text") > 0.95
    assert mean_effective == pytest.approx(effective_temperature(0.05, 0.1), rel=0.2)
    assert mean_effective > 0.07  # far from the noiseless listener's 0.05


def test_a_type_scores_pairs_as_pragmatic_told_its_space_and_temperature():
    agent = make_agent(SMALL)
    agent.begin_game(_context(4))
    hand = [3, 9, 14, 27, 31, 40]
    assert np.allclose(agent.table_posterior, 0.25)
    assert np.allclose(agent.pair_scores(hand), agent.type_points[:, hand].mean(axis=0),
                       atol=1e-6)
    labels = [(t.embedder, t.noise) for t in agent.types]
    for (embedder, noise), spec in [
            (("text", 0.0), "pragmatic(embedder=text)"),
            (("conse", 0.1), f"pragmatic(temperature={effective_temperature(0.05, 0.1)!r})")]:
        oracle = make_agent(spec)
        oracle.begin_game(_context(4))
        h = labels.index((embedder, noise))
        agent.log_posterior[1:] = -50.0
        agent.log_posterior[1:, h] = 0.0  # every listener's votes say "this type"
        assert agent.table_posterior[h] > 0.999
        assert np.array_equal(agent.type_points[h], oracle.table_scores)
        assert np.allclose(agent.pair_scores(hand), oracle.table_scores[hand], atol=1e-6)


def test_plays_legal_games_on_the_reference_engine_only():
    spec = "theory_of_mind(embedders='conse,text', temperatures='0.05', noise_levels='0')"
    agents = [make_agent(spec)] + [make_agent("softmax(embedder=text)") for _ in range(3)]
    assert not batch_supported(agents[0])
    record = play_game(agents, RULES, DECK, 6)
    for rnd in record.rounds:
        assert rnd.storyteller_card in rnd.storyteller_hand and not rnd.faults
    again = [make_agent(spec)] + [make_agent("softmax(embedder=text)") for _ in range(3)]
    assert play_game(again, RULES, DECK, 6) == record


def test_it_has_no_temperature_of_its_own():
    # the family's temperatures are what it assumes of listeners; the former `temperature`
    # parameter changed nothing it decided
    with pytest.raises(Exception, match="temperature"):
        make_agent("theory_of_mind(temperature=0.05)")
    assert isinstance(make_agent("theory_of_mind"), TheoryOfMindAgent)


@pytest.mark.parametrize("bad", ["theory_of_mind(temperatures='0,1')",
                                 "theory_of_mind(temperatures='0.1,0.1')",
                                 "theory_of_mind(noise_levels='-0.1')",
                                 "theory_of_mind(embedders='')",
                                 "theory_of_mind(embedders='conse,conse')",
                                 "theory_of_mind(lapse=1.5)"])
def test_bad_parameters(bad):
    with pytest.raises(Exception, match="temperatures|embedders|lapse|noise"):
        make_agent(bad)
