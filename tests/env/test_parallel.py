"""The PettingZoo environment: PettingZoo's own conformance tests, information hiding, the
same deal as ``play_game``, rewards, illegal actions and rendering."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the environment needs pettingzoo: "
                    "pip install 'dixit-lab[env]'")
pytest.importorskip("gymnasium", reason="the environment needs gymnasium: "
                    "pip install 'dixit-lab[env]'")

from pettingzoo.test import (
    api_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
)

import dixit_lab.env as dixit_env
from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import GameSteps, play_game
from dixit_lab.env import AgentPolicy, random_policy
from tests import env_policies

TABLES = [(3, "classic"), (5, "classic"), (8, "refresh")]
IDS = [f"{n}-{preset}" for n, preset in TABLES]


# every environment whose observations are Dicts with an action mask gets these two warnings
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_pettingzoo_api(n, preset):
    api_test(dixit_env.env(n, preset), num_cycles=200)


@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_pettingzoo_parallel_api(n, preset):
    parallel_api_test(dixit_env.parallel_env(n, preset), num_cycles=1000)


@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_pettingzoo_seed(n, preset):
    seed_test(lambda: dixit_env.env(n, preset), num_cycles=100)
    # parallel_seed_test samples actions without the mask: illegal ones become engine faults
    parallel_seed_test(lambda: dixit_env.parallel_env(n, preset, on_illegal="fallback"),
                       num_cycles=100)


@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_pettingzoo_render(n, preset):
    render_test(lambda render_mode=None: dixit_env.env(n, preset, render_mode=render_mode,
                                                       render_seat=0))


def play(env, policies, seed):
    """Play one game of a parallel env from ``reset(seed=seed)``: the list of (observations,
    pending decisions) of every step, and the rewards summed per agent."""
    observations, _ = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = []
    while env.agents:
        pending = {agent: env.decision(agent) for agent in env.agents}
        steps.append((observations, pending))
        actions = {agent: policies[agent](observations[agent]["observation"],
                                          observations[agent]["action_mask"])
                   for agent in env.agents}
        observations, rewards, _, _, _ = env.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
    return steps, totals


@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_same_seed_same_game_as_play_game(n, preset):
    env = dixit_env.parallel_env(n, preset)
    policies = {agent: AgentPolicy(env, agent, "random") for agent in env.possible_agents}
    _, totals = play(env, policies, 11)
    expected = play_game([make_agent("random") for _ in range(n)], get_rules(preset),
                         load_deck("dreams"), 11)
    assert env.record.rounds == expected.rounds
    assert env.record.final_scores == expected.final_scores
    assert [totals[agent] for agent in env.possible_agents] == list(expected.final_scores)


def test_resets_without_a_seed_go_on_with_the_experiment_seeds():
    env = dixit_env.parallel_env(4)
    rules, deck = get_rules("classic"), load_deck("dreams")

    def first_hand(seed):
        phase = GameSteps(env.possible_agents, rules, deck, seed).start()
        return phase.decisions[0].view.hand

    hands = []
    for seed in (21, None, None):
        env.reset(seed=seed)
        hands.append(env.decision("player_0")[0].view.hand)
    assert hands == [first_hand(21), first_hand(game_seed(21, 1)), first_hand(game_seed(21, 2))]


def test_a_policy_plays_the_same_in_the_env_and_as_a_policy_agent():
    """The env's observations of a deciding seat are those the ``policy`` agent builds."""
    for n, preset in TABLES:
        env = dixit_env.parallel_env(n, preset)
        play(env, dict.fromkeys(env.possible_agents, env_policies.observation_driven), 5)
        agents = [make_agent("policy(policy=tests.env_policies:observation_driven)")
                  for _ in range(n)]
        expected = play_game(agents, get_rules(preset), load_deck("dreams"), 5)
        assert env.record.rounds == expected.rounds


def visible_cards(env, block: np.ndarray) -> set[int]:
    """Cards whose feature vector is a row of ``block`` (an observation's hand or display)."""
    vectors = env.encoder.card_vectors
    rows = block.reshape(-1, env.encoder.dim)
    cards = set()
    for row in rows[np.abs(rows).sum(axis=1) > 0]:
        matches = np.flatnonzero((vectors == row).all(axis=1))
        assert len(matches) >= 1
        cards.update(matches.tolist())
    return cards


@pytest.mark.parametrize(("n", "preset"), TABLES, ids=IDS)
def test_observations_hold_only_the_seats_own_knowledge(n, preset):
    env = dixit_env.parallel_env(n, preset, max_rounds=6)
    layout = env.encoder.layout
    policies = {agent: random_policy(seat) for seat, agent in enumerate(env.possible_agents)}
    steps, _ = play(env, policies, 3)
    checked_submit = 0
    for observations, pending in steps:
        views = {agent: p[0].view for agent, p in pending.items() if p is not None}
        action = next(p[0].action for p in pending.values() if p is not None)
        hands = {agent: set(view.hand) for agent, view in views.items()}
        for agent, obs in observations.items():
            vector = obs["observation"]
            hand_cards = visible_cards(env, vector[layout.slice("hand")])
            display_cards = visible_cards(env, vector[layout.slice("display")])
            if agent in hands:
                assert hand_cards == hands[agent]
            else:  # a seat that does not decide still sees its own hand, and only its own
                assert hand_cards
                assert not hand_cards & set().union(*hands.values())
            if action == "vote":
                display = next(iter(views.values())).display
                assert display_cards == set(display)
                own = views[agent].own_positions if agent in views else ()
                flags = np.flatnonzero(vector[layout.slice("display_own")]).tolist()
                assert flags == sorted(own)  # own positions only, never another's
            else:  # before the reveal of the display: no display, nobody's submitted card
                assert not display_cards
                assert not vector[layout.slice("display_present")].any()
            if action == "submit":
                others = set().union(*(h for a, h in hands.items() if a != agent))
                assert not (hand_cards | display_cards) & others
                checked_submit += 1
    assert checked_submit > 0


def test_rank_rewards_are_paid_once_at_the_end():
    env = dixit_env.parallel_env(4, reward="rank", max_rounds=5)
    policies = dict.fromkeys(env.possible_agents, env_policies.first_legal)
    _, totals = play(env, policies, 8)
    scores = env.record.final_scores
    for seat, agent in enumerate(env.possible_agents):
        expected = (sum(s < scores[seat] for s in scores)
                    - sum(s > scores[seat] for s in scores)) / 3
        assert totals[agent] == pytest.approx(expected)


def test_max_rounds_truncates():
    env = dixit_env.parallel_env(4, max_rounds=2)
    observations, _ = env.reset(seed=1)
    while env.agents:
        observations, _, terminations, truncations, _ = env.step(
            {a: env_policies.first_legal(None, o["action_mask"]) for a, o in observations.items()})
    assert all(truncations.values()) and not any(terminations.values())
    assert len(env.record.rounds) == 2


def test_three_players_submit_two_cards_in_two_steps():
    env = dixit_env.parallel_env(3)
    observations, _ = env.reset(seed=2)
    first_legal = env_policies.first_legal
    for _ in range(2):  # the storyteller's card, then its clue
        observations, *_ = env.step({a: first_legal(None, o["action_mask"])
                                     for a, o in observations.items()})
    listeners = [a for a in env.agents if env.decision(a) is not None]
    assert len(listeners) == 2 and all(env.decision(a)[0].action == "submit" for a in listeners)
    first = {a: first_legal(None, observations[a]["action_mask"]) for a in listeners}
    observations, *_ = env.step({a: first.get(a, 0) for a in env.agents})
    for agent in listeners:
        assert env.decision(agent)[1] == 1  # the second sub-step of the same decision
        mask = observations[agent]["action_mask"]
        assert mask[first[agent]] == 0 and mask[1:8].sum() == 6
        chosen = observations[agent]["observation"][env.encoder.layout.slice("hand_chosen")]
        assert np.flatnonzero(chosen).tolist() == [first[agent] - 1]


def test_an_illegal_action_raises_or_becomes_a_fault():
    env = dixit_env.parallel_env(4)
    env.reset(seed=4)
    teller = next(a for a in env.agents if env.decision(a) is not None)
    with pytest.raises(ValueError, match=rf"{teller}, round 1, tell: display position 0 is not"):
        env.step({a: (7 if a == teller else 0) for a in env.agents})
    with pytest.raises(ValueError, match=rf"{teller}, round 1, tell: action 'x' is not legal"):
        env.step({a: ("x" if a == teller else 0) for a in env.agents})
    observations, *_ = env.step({a: (1 if a == teller else 0) for a in env.agents})  # a retry
    assert env.decision(teller)[1] == 1  # the card was taken once: now the clue
    assert observations[teller]["observation"][env.encoder.layout.slice("hand_chosen")][0] == 1
    env = dixit_env.parallel_env(4, on_illegal="fallback")
    env.reset(seed=4)
    while env.agents:
        env.step(dict.fromkeys(env.agents, 0))  # every deciding seat passes: all illegal
    faults = [fault for rnd in env.record.rounds for fault in rnd.faults]
    assert len(faults) == len(env.record.rounds) * 7  # 1 tell, 3 submits, 3 votes
    assert {fault.kind for fault in faults} == {"illegal"}


def test_a_seat_that_does_not_decide_must_pass():
    env = dixit_env.parallel_env(4)
    env.reset(seed=4)
    listener = next(a for a in env.agents if env.decision(a) is None)
    with pytest.raises(ValueError, match=f"{listener} does not decide now"):
        env.step({a: 1 for a in env.agents})


def test_agent_policy_names_a_clue_outside_the_clue_actions():
    env = dixit_env.parallel_env(4, clue_texts=["dream", "shadow"])
    observations, _ = env.reset(seed=0)
    policies = {agent: AgentPolicy(env, agent, "literal") for agent in env.agents}
    with pytest.raises(ValueError, match=r"agent literal at player_0, tell: clue .* is not one "
                                         r"of the environment's 2 clue actions"):
        while env.agents:
            env.step({a: policies[a](o["observation"], o["action_mask"])
                      for a, o in observations.items()})


def test_render_shows_the_public_table_and_only_the_chosen_hand():
    env = dixit_env.parallel_env(4, render_mode="ansi")
    env.reset(seed=6)
    text = env.render()
    assert "round 1" in text and "phase tell_card" in text and "hand" not in text
    image = dixit_env.parallel_env(4, render_mode="rgb_array", render_seat=2)
    image.reset(seed=6)
    array = image.render()
    assert array.dtype == np.uint8 and array.ndim == 3 and array.shape[2] == 3
    assert array.std() > 10  # card images are drawn, not a blank canvas


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="reward must be"):
        dixit_env.parallel_env(4, reward="score")
    with pytest.raises(ValueError, match="unknown rule option"):
        dixit_env.parallel_env(4, target=3)
    with pytest.raises(ValueError, match="allows 3 to 6 players, got 8"):
        dixit_env.parallel_env(8)
    with pytest.raises(ValueError, match="has no images"):
        dixit_env.parallel_env(4, deck="numbered-84")
    with pytest.raises(ValueError, match="render_seat must be a seat 0..3"):
        dixit_env.parallel_env(4, render_seat=4)
    with pytest.raises(ValueError, match="render_mode must be one of"):
        dixit_env.parallel_env(4, render_mode="video")
    with pytest.raises(ValueError, match="not in clue bank"):
        dixit_env.parallel_env(4, clue_texts=["no such clue at all 123"])


def test_any_space_and_a_deck_without_images():
    from tests.tiny_space import one_clue_per_card

    space = one_clue_per_card(60)
    env = dixit_env.parallel_env(4, deck=space.deck, space=space, render_mode="rgb_array")
    observations, _ = env.reset(seed=1)
    assert env.encoder.actions.n_clues == 60 and env.encoder.dim == 16
    assert env.observation_space("player_0")["observation"].shape == (
        observations["player_0"]["observation"].shape)
    image = env.render()
    assert image.dtype == np.uint8 and image.shape[2] == 3


def test_single_agent_env_passes_gymnasiums_checker():
    from gymnasium.utils.env_checker import check_env

    env = dixit_env.single_agent_env(["literal", "random"], seat=1, on_illegal="fallback",
                                     render_mode="ansi")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not having a spec")
        check_env(env)


def _documented_check_env() -> str:
    """The docs' block that runs Gymnasium's checker on the single-agent form."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "environment.md").read_text()
    blocks = [block for block in re.findall(r"^```python\n(.*?)^```", page, flags=re.M | re.S)
              if "check_env(" in block]
    assert len(blocks) == 1, "docs/environment.md shows one check_env block"
    return blocks[0]


def test_the_documented_construction_passes_check_env_and_the_default_does_not():
    block = _documented_check_env()
    assert 'on_illegal="fallback"' in block
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not having a spec")
        exec(block, {"dixit_env": dixit_env})  # the page's words, run as written
        default = block.replace(', on_illegal="fallback"', "")
        with pytest.raises(ValueError, match="not legal|illegal|mask"):
            exec(default, {"dixit_env": dixit_env})


def test_single_agent_env_steps_are_the_learners_choices_in_the_engines_game():
    opponents = ["literal", "pragmatic", "random"]
    env = dixit_env.single_agent_env(opponents, seat=2)
    observation, _ = env.reset(seed=9)
    total, done, steps = 0.0, False, 0
    while not done:
        mask = observation["action_mask"]
        assert mask[0] == 0 and mask.sum() >= 1  # never a step where it could only pass
        assert np.array_equal(env.action_masks(), mask.astype(bool))
        action = env_policies.observation_driven(observation["observation"], mask)
        observation, reward, terminated, truncated, _ = env.step(action)
        total, done, steps = total + reward, terminated or truncated, steps + 1
    agents = [make_agent(spec) for spec in opponents]
    agents.insert(2, make_agent("policy(policy=tests.env_policies:observation_driven)"))
    expected = play_game(agents, get_rules("classic"), load_deck("dreams"), 9)
    assert env.table.record.rounds == expected.rounds
    assert total == expected.final_scores[2]
    assert steps == 2 * len(expected.rounds)  # card+clue as storyteller, submit+vote else


def test_single_agent_envs_batch_with_gymnasiums_vector_envs():
    import gymnasium

    batch = gymnasium.vector.SyncVectorEnv(
        [lambda: dixit_env.single_agent_env(["random", "literal"]) for _ in range(3)])
    observations, _ = batch.reset(seed=4)
    assert observations["observation"].shape == (3, batch.single_observation_space[
        "observation"].shape[0])
    first_hands = [env.table.decision("player_0")[0].view.hand for env in batch.envs]
    assert len({tuple(hand) for hand in first_hands}) == 3  # seeds 4, 5, 6: three deals
    for _ in range(4):
        actions = [env_policies.first_legal(None, mask) for mask in observations["action_mask"]]
        observations, *_ = batch.step(np.array(actions))
