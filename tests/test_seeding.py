"""Random streams: explicit, independent, and free of global state."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dixit_lab.agent import make_agent
from dixit_lab.cards import Deck
from dixit_lab.game import play_game
from dixit_lab.rules import get_rules
from dixit_lab.seeding import game_seed, game_streams, seed_fields, stream


def test_streams_are_reproducible_and_distinct():
    a = game_streams(game_seed(1, 0), 4)
    b = game_streams(game_seed(1, 0), 4)
    assert a.deal.random() == b.deal.random()
    draws = {round(g.random(), 12) for g in (a.display, *a.agents, *a.fallbacks)}
    assert len(draws) == 1 + 2 * 4


def test_game_seeds_differ_by_index_and_experiment():
    values = {stream(game_seed(e, i), 0).random() for e in range(3) for i in range(3)}
    assert len(values) == 9


def test_seed_fields_round_trip():
    assert seed_fields(game_seed(7, 12)) == (7, (12,))
    assert seed_fields(3) == (3, ())


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
def test_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed"):
        stream(bad, 0)


def test_no_global_random_state_is_used():
    random.seed(0)
    np.random.seed(0)  # noqa: NPY002 - the point is to watch the global state
    before = (random.getstate(), np.random.get_state()[1].copy())  # noqa: NPY002
    agents = [make_agent("random") for _ in range(4)]
    play_game(agents, get_rules("refresh"), Deck.numbered(84), 3)
    assert random.getstate() == before[0]
    assert (np.random.get_state()[1] == before[1]).all()  # noqa: NPY002


def test_same_seed_as_int_or_sequence():
    deck = Deck.numbered(84)
    agents = [make_agent("random") for _ in range(4)]
    by_int = play_game(agents, get_rules("classic"), deck, 5)
    by_seq = play_game(agents, get_rules("classic"), deck, np.random.SeedSequence(5))
    assert by_int == by_seq
