"""``DixitSingleAgentEnv``: one learning seat against dixit_lab agents, as a Gymnasium ``Env``.

A thin layer over :class:`~dixit_lab.env.parallel.DixitParallelEnv`: the other seats are
played by :class:`~dixit_lab.env.policies.AgentPolicy` opponents, and the steps in which the
learner can only pass are played for it, so every ``step`` is one of the learner's choices.
The reward of a step is the learner's reward over the parallel steps it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from dixit_lab.core.agent import Agent
from dixit_lab.env.parallel import DixitParallelEnv, check_seed
from dixit_lab.env.policies import AgentPolicy

__all__ = ["DixitSingleAgentEnv"]


class DixitSingleAgentEnv(gymnasium.Env):
    """The learner sits at ``seat``; ``opponents`` (agents or specs such as ``"literal"``)
    fill the other seats in order. ``options`` are those of the parallel environment
    (rules, deck, embedder, reward, on_illegal, rule options ...).

    Observations and actions are those of the learner's seat: a ``Dict`` with the flat
    ``observation`` and the int8 ``action_mask`` (also returned by :meth:`action_masks`,
    the method masked-PPO implementations call)."""

    def __init__(self, opponents: Sequence[Agent | str], seat: int = 0,
                 render_mode: str | None = None, **options: Any) -> None:
        n_players = len(opponents) + 1
        if not 0 <= seat < n_players:
            raise ValueError(f"seat must be in 0..{n_players - 1}, got {seat}")
        self.table = DixitParallelEnv(n_players, render_mode=render_mode, **options)
        self.metadata = self.table.metadata
        self.render_mode = render_mode
        self.learner = self.table.possible_agents[seat]
        others = [agent for agent in self.table.possible_agents if agent != self.learner]
        self.opponents = {agent: AgentPolicy(self.table, agent, player)
                          for agent, player in zip(others, opponents, strict=True)}
        self.observation_space = self.table.observation_space(self.learner)
        self.action_space = self.table.action_space(self.learner)
        self._observations: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        seed = None if seed is None else check_seed(seed)  # before Gymnasium's own reading
        super().reset(seed=seed)
        self._observations, _ = self.table.reset(seed=seed, options=options)
        self._advance(0.0)
        return self._observation(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                         dict[str, Any]]:
        if not self.table.agents:
            raise RuntimeError("the game is over; call reset()")
        reward, terminated, truncated = self._table_step(action)
        if not (terminated or truncated):
            reward, terminated, truncated = self._advance(reward)
        return self._observation(), reward, terminated, truncated, {}

    def action_masks(self) -> np.ndarray:
        """The learner's mask now (bool), for masked policy-gradient libraries."""
        return self._observations[self.learner]["action_mask"].astype(bool)

    def _table_step(self, action: Any) -> tuple[float, bool, bool]:
        actions = {agent: policy(self._observations[agent]["observation"],
                                 self._observations[agent]["action_mask"])
                   for agent, policy in self.opponents.items()}
        actions[self.learner] = action
        self._observations, rewards, terminations, truncations, _ = self.table.step(actions)
        return (float(rewards[self.learner]), bool(terminations[self.learner]),
                bool(truncations[self.learner]))

    def _advance(self, reward: float) -> tuple[float, bool, bool]:
        """Play the steps in which the learner can only pass, up to its next choice."""
        while self.table.agents and self.table.decision(self.learner) is None:
            gained, terminated, truncated = self._table_step(0)
            reward += gained
            if terminated or truncated:
                return reward, terminated, truncated
        return reward, False, False

    def _observation(self) -> dict[str, np.ndarray]:
        observation = self._observations[self.learner]
        return {"observation": observation["observation"],
                "action_mask": np.array(observation["action_mask"])}

    def render(self) -> Any:
        return self.table.render()

    def close(self) -> None:
        self.table.close()
