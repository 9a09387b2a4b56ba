"""Attacks on the PettingZoo environment (issue 26, item 7): environments made and dropped
must be freed, and a seed that is not an integer is refused, never rounded or parsed."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the environment needs pettingzoo: "
                    "pip install 'dixit-lab[env]'")

import dixit_lab.env as dixit_env

MADE = 8


def make_and_use(seed: int) -> weakref.ref:
    env = dixit_env.parallel_env(4)
    env.reset(seed=seed)
    for agent in env.possible_agents:  # what every training loop calls
        env.observation_space(agent)
        env.action_space(agent)
    return weakref.ref(env)


def test_environments_made_and_dropped_are_freed():
    make_and_use(0)  # the first one loads the deck's shipped embeddings: kept on purpose
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        refs = [make_and_use(seed) for seed in range(1, MADE + 1)]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    alive = sum(ref() is not None for ref in refs)
    assert alive == 0, f"{alive} of {MADE} dropped environments are still alive"
    # each environment holds ~6 MB (its encoder's tables): kept, MADE would be ~50 MB
    assert grown < 4_000_000, f"{MADE} environments made and dropped left {grown:,} bytes"


def test_the_spaces_are_the_same_object_at_every_call():
    env = dixit_env.parallel_env(3)
    assert env.observation_space("player_1") is env.observation_space("player_1")
    assert env.action_space("player_2") is env.action_space("player_0")
    with pytest.raises(KeyError, match="unknown agent 'player_9'"):
        env.action_space("player_9")


def forms():
    return {"parallel": lambda: dixit_env.parallel_env(3),
            "aec": lambda: dixit_env.env(3),
            "single": lambda: dixit_env.single_agent_env(["random", "random"])}


@pytest.mark.parametrize("form", ["parallel", "aec", "single"])
@pytest.mark.parametrize("seed", [1.5, "7", True, np.float64(3.0), [1]],
                         ids=["float", "str", "bool", "numpy-float", "list"])
def test_a_seed_that_is_not_an_integer_is_refused(form, seed):
    env = forms()[form]()
    with pytest.raises(TypeError, match=r"seed must be a non-negative integer or None, got "):
        env.reset(seed=seed)


@pytest.mark.parametrize("form", ["parallel", "aec", "single"])
def test_a_negative_seed_is_refused_naming_it(form):
    env = forms()[form]()
    with pytest.raises(ValueError, match=r"non-negative integer or None, got -1$"):
        env.reset(seed=-1)


@pytest.mark.parametrize("form", ["parallel", "single"])
def test_a_numpy_integer_seed_plays_the_same_game_as_the_int(form):
    first, second = forms()[form](), forms()[form]()
    a, _ = first.reset(seed=np.int64(7))
    b, _ = second.reset(seed=7)
    if form == "parallel":
        a, b = a["player_0"], b["player_0"]
    np.testing.assert_array_equal(a["observation"], b["observation"])
