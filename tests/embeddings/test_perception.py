"""Perception noise: a seeded, per-game distortion of what an embedding agent perceives."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import AgentSpecError, GameContext, make_agent
from dixit_lab.core.rules import get_rules
from dixit_lab.embeddings.perception import NoisyView, effective_temperature
from dixit_lab.engine.batched import batch_supported
from dixit_lab.engine.game import play_game
from tests.tiny_space import one_clue_per_card

RULES = get_rules("classic")


def _context(space, base):
    return GameContext(0, 4, RULES, space.deck, ("x",) * 4, stream_base=base)


def test_the_view_adds_gaussian_noise_of_the_given_scale():
    space = one_clue_per_card()
    view = NoisyView(space, 0.05, np.random.default_rng(1))
    difference = view.similarity - space.similarity
    assert abs(float(difference.std()) - 0.05) < 0.005 and abs(float(difference.mean())) < 0.005
    assert np.array_equal(view.text_similarity(space.clues.texts[3]), view.similarity[3])
    assert view.deck is space.deck and view.clue_index(space.clues.texts[2]) == 2


def test_noise_is_fixed_within_a_game_and_redrawn_between_games():
    space = one_clue_per_card()
    agent = make_agent("softmax(noise=0.05)").use_space(space)
    agent.begin_game(_context(space, 7))
    first = np.array(agent.space.similarity)
    assert np.array_equal(agent.clue_row(space.clues.texts[0]), first[0].tolist())
    agent.begin_game(_context(space, 7))
    assert np.array_equal(agent.space.similarity, first)  # same game stream, same view
    agent.begin_game(_context(space, 8))
    assert not np.array_equal(agent.space.similarity, first)


def test_noisy_agents_play_legal_reproducible_games_on_the_reference_engine():
    space = one_clue_per_card()

    def table():
        return [make_agent("literal(noise=0.1)").use_space(space),
                make_agent("softmax(noise=0.05)").use_space(space),
                make_agent("literal").use_space(space), make_agent("softmax").use_space(space)]

    agents = table()
    assert not batch_supported(agents[0]) and not batch_supported(agents[1])
    assert batch_supported(agents[2]) and batch_supported(agents[3])
    record = play_game(agents, RULES, space.deck, 5)
    assert play_game(table(), RULES, space.deck, 5) == record
    quiet = play_game([make_agent("literal").use_space(space) for _ in range(2)]
                      + [make_agent("softmax").use_space(space) for _ in range(2)],
                      RULES, space.deck, 5)
    assert quiet != record  # the noise changed decisions


def test_noise_must_not_be_negative():
    with pytest.raises((AgentSpecError, ValueError), match="noise"):
        make_agent("softmax(noise=-0.1)")


def _softmax(values, temperature):
    weights = np.exp((values - values.max()) / temperature)
    return weights / weights.sum()


@pytest.mark.parametrize("embedder", ["conse", "text"])
@pytest.mark.parametrize(("temperature", "noise"), [(0.05, 0.1), (0.02, 0.1), (0.05, 0.05)])
def test_a_noisy_softmax_votes_like_the_softmax_at_its_effective_temperature(
        embedder, temperature, noise):
    from dixit_lab.embeddings import get_space

    similarity = np.asarray(get_space(embedder, "dreams").similarity, dtype=np.float64)
    rng = np.random.default_rng(11)
    effective = effective_temperature(temperature, noise)
    near, ignored = [], []
    for _ in range(60):  # displays as the game makes them: one card that fits, four decoys
        clue = int(rng.integers(len(similarity)))
        order = np.argsort(-similarity[clue])
        cards = [int(order[rng.integers(3)]), *(int(c) for c in rng.choice(order[3:40], 4,
                                                                            replace=False))]
        values = similarity[clue, cards]
        draws = 20_000
        perceived = values + noise * rng.standard_normal((draws, len(cards)))
        choice = np.argmax(perceived / temperature + rng.gumbel(size=perceived.shape), axis=1)
        observed = np.bincount(choice, minlength=len(cards)) / draws
        near.append(0.5 * np.abs(observed - _softmax(values, effective)).sum())
        ignored.append(0.5 * np.abs(observed - _softmax(values, temperature)).sum())
    # total variation between the noisy listener's choices and the model's (Monte Carlo
    # error alone is about 0.005): 0.007-0.009 at T 0.05, 0.024 where noise dominates
    # (T 0.02, σ 0.1: Gaussian noise has thinner tails than the Gumbel of a softmax)
    assert np.mean(near) < 0.03
    assert np.mean(near) < np.mean(ignored) / 3


def test_effective_temperature():
    assert effective_temperature(0.05, 0.0) == 0.05
    assert effective_temperature(0.05, 0.1) == pytest.approx(0.0926, abs=1e-4)
    with pytest.raises(ValueError, match="noise"):
        effective_temperature(0.05, -0.1)
