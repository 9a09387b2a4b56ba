"""The vector environment (dixit_lab/env/vector.py, vector_tables.py) plays the PettingZoo
environment's games: same seed and same actions -> the same observations, masks, rewards,
terminations and truncations, seat by seat and step by step, under every rule option."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.vector import AutoresetMode, VectorEnv

import dixit_lab.env as dixit_env
from dixit_lab.env.vector import DixitVectorEnv

# (players, preset, options, steps): every preset, every deck_exhausted mode, both first
# storyteller modes, both rewards, and the scoring options; the short max_rounds play many
# games (and truncate them)
CASES = [
    (3, "classic", {}, 200),
    (4, "classic", {}, 200),
    (6, "classic", {"lone_finder_points": 4, "vote_bonus_cap": 2, "all_found_points": 1,
                    "vote_bonus_points": 2}, 150),
    (4, "classic", {"deck_exhausted": "play_out_hands"}, 260),
    (5, "classic", {"deck_exhausted": "end_when_cannot_refill", "reward": "rank"}, 150),
    (4, "classic", {"first_storyteller": "random", "max_rounds": 3, "reward": "rank"}, 200),
    (3, "classic", {"first_storyteller": "random", "max_rounds": 2, "own_card_votes": True},
     200),
    (5, "refresh", {}, 150),
    (4, "refresh", {"target_score": None, "max_rounds": 20}, 170),  # reshuffles at round 15
    (8, "refresh", {"target_score": None, "max_rounds": 12}, 130),  # and at round 5
    (3, "quest", {}, 150),
    (4, "quest", {"max_rounds": 4}, 200),
    (4, "dixitworld", {}, 160),
    (4, "dixitworld_as_run", {"max_rounds": 5}, 200),
]
TABLES = 4


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])


def same_games(n: int, preset: str, options: dict, steps: int, seed: int,
               mode: str = "compact") -> int:
    """Step a vector env and one PettingZoo env per table with the same actions, comparing
    everything; the number of games finished."""
    vector = DixitVectorEnv(TABLES, n, preset, observations=mode, **options)

    def flat_of(given: dict) -> np.ndarray:
        return given["observation"] if mode == "flat" else \
            vector.flat_observations(given)

    tables = [dixit_env.parallel_env(n, preset, **options) for _ in range(TABLES)]
    compact, _ = vector.reset(seed=seed)
    expected = [table.reset(seed=seed + i)[0] for i, table in enumerate(tables)]
    rng = np.random.default_rng(seed)
    games = 0
    for step in range(steps):
        flat = flat_of(compact)
        for i, table in enumerate(tables):
            for seat, agent in enumerate(table.possible_agents):
                row, where = i * n + seat, f"step {step}, table {i}, seat {seat}"
                assert np.array_equal(flat[row], expected[i][agent]["observation"]), where
                assert np.array_equal(compact["action_mask"][row],
                                      expected[i][agent]["action_mask"]), where
                if mode == "compact":  # the card numbers: the seat's own hand, no other
                    hand = [card for card in compact["hand"][row].tolist() if card >= 0]
                    assert hand == list(table.game.hand(seat)), where
        actions = random_actions(compact["action_mask"], rng)
        compact, rewards, terminations, truncations, infos = vector.step(actions)
        for i, table in enumerate(tables):
            answer = {agent: int(actions[i * n + seat])
                      for seat, agent in enumerate(table.possible_agents)}
            observations, reward, terminated, truncated, _ = table.step(answer)
            rows = slice(i * n, (i + 1) * n)
            agents = table.possible_agents
            assert rewards[rows].tolist() == [reward[agent] for agent in agents]
            assert terminations[rows].tolist() == [terminated[agent] for agent in agents]
            assert truncations[rows].tolist() == [truncated[agent] for agent in agents]
            if table.agents:
                assert "final_obs" not in infos or not infos["_final_obs"][rows].any()
            else:  # the game is over: its last observation, then the table's next game
                games += 1
                final = infos["final_obs"]
                assert infos["_final_obs"][rows].all()
                assert np.array_equal(flat_of(final)[rows],
                                      [observations[agent]["observation"] for agent in agents])
                assert np.array_equal(final["action_mask"][rows],
                                      [observations[agent]["action_mask"] for agent in agents])
                observations, _ = table.reset()
            expected[i] = observations
    return games


@pytest.mark.parametrize(("n", "preset", "options", "steps"), CASES)
def test_the_same_games_as_the_pettingzoo_env(n, preset, options, steps):
    games = same_games(n, preset, options, steps, seed=11 + n)
    assert games >= 2 * TABLES  # each table ended a game and went on into the next


def test_flat_observations_play_the_same_games():
    assert same_games(3, "classic", {"max_rounds": 3}, 80, seed=8, mode="flat") \
        >= 2 * TABLES


def test_a_restricted_clue_list_plays_the_same_games():
    texts = list(dixit_env.parallel_env(4).encoder.clue_texts[10:17])
    assert same_games(4, "classic", {"clue_texts": texts}, 130, seed=3) >= TABLES


def test_flat_observations_are_the_compact_ones_expanded():
    flat, compact = (DixitVectorEnv(4, 3, observations=mode) for mode in ("flat", "compact"))
    one, _ = flat.reset(seed=2)
    other, _ = compact.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert np.array_equal(one["observation"], compact.flat_observations(other))
        assert np.array_equal(one["action_mask"], other["action_mask"])
        actions = random_actions(one["action_mask"], rng)
        one, *_ = flat.step(actions)
        other, *_ = compact.step(actions)
    assert set(other) == {"observation", "hand", "display", "clue", "action_mask"}
    assert other["observation"].shape == (12, compact.single_observation_space[
        "observation"].shape[0])


def test_a_gymnasium_vector_env_with_same_step_autoreset():
    env = DixitVectorEnv(5, 4)
    assert isinstance(env, VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.num_envs == 20 and env.action_space.shape == (20,)
    observations, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(100):
        assert env.observation_space.contains(observations)
        observations, rewards, terminations, truncations, _ = env.step(
            random_actions(observations["action_mask"], rng))
        assert rewards.shape == terminations.shape == truncations.shape == (20,)
    compact = DixitVectorEnv(2, 3, observations="compact")
    assert compact.observation_space.contains(compact.reset(seed=0)[0])


def test_same_seed_same_games_and_resets_go_on():
    def first_steps(env, seed):
        observations, _ = env.reset(seed=seed)
        return observations["observation"].copy()

    env = DixitVectorEnv(3, 4)
    assert np.array_equal(first_steps(env, 5), first_steps(DixitVectorEnv(3, 4), 5))
    assert not np.array_equal(first_steps(env, 5), first_steps(env, 6))
    # table 1 of seed 5 is table 0 of seed 6
    assert np.array_equal(first_steps(env, 5)[4:8], first_steps(env, 6)[:4])
    unseeded = DixitVectorEnv(2, 4)
    unseeded.reset()  # fresh entropy
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


def test_an_illegal_action_raises_before_anything_changes():
    env = DixitVectorEnv(2, 4)
    twin = DixitVectorEnv(2, 4)
    observations, _ = env.reset(seed=4)
    twin.reset(seed=4)
    masks = observations["action_mask"]
    legal = np.array([int(np.flatnonzero(mask)[0]) for mask in masks])
    teller_row = int(np.flatnonzero(masks[:, 0] == 0)[0])
    listener_row = next(row for row in range(8) if masks[row, 0] == 1)
    bad = legal.copy()
    bad[listener_row] = 1
    with pytest.raises(ValueError, match=r"player_\d does not decide now and must pass"):
        env.step(bad)
    bad = legal.copy()
    bad[teller_row] = env.encoder.actions.display_offset
    with pytest.raises(ValueError, match=r"table 0, player_0, round 1, tell_card: display "
                                         r"position 0 is not legal now \(6 legal actions"):
        env.step(bad)
    bad[teller_row] = 10_000
    with pytest.raises(ValueError, match="out of range"):
        env.step(bad)
    with pytest.raises(ValueError, match="expected 8 actions"):
        env.step(legal[:5])
    with pytest.raises(ValueError, match="integers"):
        env.step(legal.astype(float))
    # nothing changed: the retried step plays as in an environment that saw no bad action
    one, *_ = env.step(legal)
    other, *_ = twin.step(legal)
    assert np.array_equal(one["observation"], other["observation"])


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="num_tables"):
        DixitVectorEnv(0)
    with pytest.raises(ValueError, match="observations"):
        DixitVectorEnv(2, observations="pixels")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reward"):
        DixitVectorEnv(2, reward="score")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_illegal: the vector environment has no such"):
        DixitVectorEnv(2, on_illegal="fallback")
    with pytest.raises(RuntimeError, match="reset"):
        DixitVectorEnv(2).step(np.zeros(8, dtype=np.int64))


def test_the_docs_example_runs():
    page = (Path(__file__).resolve().parents[2] / "docs" / "environment.md").read_text()
    section = page.split("## Many tables at once", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(compile(example, "docs/environment.md", "exec"), namespace)  # the docs' own example
    assert namespace["steps"] == 64 * 4 * 100
