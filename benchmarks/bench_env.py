"""Environment speed: AEC steps/s (and parallel steps/s) of random masked policies, one core.

    python benchmarks/bench_env.py [--seconds 1]

An AEC step is one agent's action through ``dixit_lab.env.env`` (``parallel_to_aec`` in
PettingZoo's order-enforcing wrapper): ``agent_iter``, ``last``, the policy, ``step``. A
parallel step is one phase for the whole table. Each seat's policy draws a random legal action
from the mask. Target: >= 10,000 AEC steps/s. Not a test: figures
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import platform
import time

import dixit_lab.env as dixit_env
from dixit_lab.env import random_policy


def aec_steps(n_players: int, rules: str, seconds: float,
              clue_texts: list[str] | None = None) -> float:
    """AEC steps/s (one agent's action each) with ``clue_texts`` (None: the whole bank)."""
    env = dixit_env.env(n_players, rules, clue_texts=clue_texts)
    policies = {agent: random_policy(seat) for seat, agent in enumerate(env.possible_agents)}
    env.reset(seed=0)  # warm up (space, thumbnails of nothing: no rendering)
    steps, game = 0, 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        env.reset(seed=game)
        game += 1
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                action = policies[agent](observation["observation"],
                                         observation["action_mask"])
            env.step(action)
            steps += 1
    return steps / elapsed


def parallel_steps(n_players: int, rules: str, seconds: float,
                   clue_texts: list[str] | None = None) -> float:
    """Parallel steps/s (one phase of the whole table each)."""
    env = dixit_env.parallel_env(n_players, rules, clue_texts=clue_texts)
    policies = {agent: random_policy(seat) for seat, agent in enumerate(env.possible_agents)}
    steps, game = 0, 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        observations, _ = env.reset(seed=game)
        game += 1
        while env.agents:
            actions = {agent: policies[agent](obs["observation"], obs["action_mask"])
                       for agent, obs in observations.items()}
            observations, *_ = env.step(actions)
            steps += 1
    return steps / elapsed


def best_of(measure, n_players: int, rules: str, seconds: float, repeats: int = 3
            ) -> tuple[float, float]:
    """Best and median of ``repeats`` timings (the best is the least disturbed by other load
    on the machine)."""
    timings = sorted(measure(n_players, rules, seconds) for _ in range(repeats))
    return timings[-1], timings[len(timings) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="time per timing (three timings per configuration and form)")
    args = parser.parse_args()
    print(f"# dixit_lab.env, random masked policies, one core "
          f"({platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}), embedder conse, deck dreams")
    print(f"{'rules':<8} {'players':>7} {'AEC steps/s best':>17} {'median':>7} "
          f"{'parallel steps/s best':>22} {'median':>7}")
    for n_players, rules in ((3, "classic"), (4, "classic"), (5, "classic"), (8, "refresh")):
        aec, aec_median = best_of(aec_steps, n_players, rules, args.seconds)
        parallel, parallel_median = best_of(parallel_steps, n_players, rules, args.seconds)
        print(f"{rules:<8} {n_players:>7} {aec:>17,.0f} {aec_median:>7,.0f} "
              f"{parallel:>22,.0f} {parallel_median:>7,.0f}")
    print("target: >= 10,000 AEC steps/s")


if __name__ == "__main__":
    main()
