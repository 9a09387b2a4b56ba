"""Policies for the Dixit environment: a dixit_lab agent as a policy (opponents for training),
and the random masked policy.

A *policy* is a callable ``policy(observation, action_mask) -> action``: the flat observation
vector and the int8 mask of one seat, the index of a legal action back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.core.agent import Agent, make_agent

__all__ = ["AgentPolicy", "RandomPolicy", "random_policy"]


class AgentPolicy:
    """Seats a dixit_lab agent (an :class:`Agent` or a spec such as ``"literal"``) at
    ``agent`` of an environment, as a policy.

    The agent decides on its engine view (read from the environment: its own hand, the clue,
    the display and its own positions, the public history; exactly what it gets in
    ``play_game``), so it plays as it does in tournaments; ``begin_game`` and ``observe``
    are called as the game goes. Its answer is turned into the actions of the phase's steps.
    Works with the parallel and the AEC forms (it reads ``env.unwrapped``)."""

    def __init__(self, env: Any, agent: str, player: Agent | str | dict[str, Any]) -> None:
        self.base = env.unwrapped
        self.agent = agent
        self.base.observation_space(agent)  # an unknown agent id fails here
        self.player = player if isinstance(player, Agent) else make_agent(player)
        self._game = -1
        self._seen = 0
        self._planned: list[int] = []

    def __call__(self, observation: Any = None, action_mask: Any = None) -> int:
        base = self.base
        if base.games_started != self._game:
            self.player.begin_game(base.context(self.agent))
            self._game, self._seen, self._planned = base.games_started, 0, []
        for public in base.public_rounds[self._seen:]:
            self.player.observe(public)
        self._seen = len(base.public_rounds)
        pending = base.decision(self.agent)
        if pending is None:
            return 0
        decision, substep = pending
        if substep == 0:
            answer = getattr(self.player, decision.action)(decision.view)
            try:
                self._planned = base.encoder.actions_of(decision.view, answer)
            except ValueError as error:
                raise ValueError(f"agent {self.player!r} at {self.agent}, "
                                 f"{decision.action}: {error}") from None
        return self._planned[substep]

    def __repr__(self) -> str:
        return f"AgentPolicy({self.player!r} at {self.agent})"


class RandomPolicy:
    """A uniformly random legal action, from its own seeded generator. Pass (action 0) is
    legal in this environment only when it is the only legal action, so a legal pass is
    returned without reading the rest of the mask."""

    def __init__(self, seed: int | np.random.SeedSequence | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: Any, action_mask: np.ndarray) -> int:
        if action_mask[0]:
            return 0
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        return int(legal[self.rng.integers(len(legal))])


def random_policy(seed: int | np.random.SeedSequence | None = None) -> RandomPolicy:
    """The random masked policy (the floor, and the benchmark's policy)."""
    return RandomPolicy(seed)
