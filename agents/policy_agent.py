"""``policy``: seats a trained policy of the Dixit environment (``dixit_lab.env``) in games and
tournaments.

The policy is a callable ``policy(observation, action_mask) -> action`` on the environment's
observation vector and mask; the agent builds them from its views with the environment's own
encoder (:mod:`dixit_lab.env.encoding`), so a policy plays here exactly as it played in the
environment. A policy that takes a keyword ``rng`` gets the seat's stream (``context.rng``).
A policy trained with a restricted list of clue actions carries it as ``clue_texts``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from dixit_lab.core.agent import (
    Agent,
    Clue,
    GameContext,
    SubmitView,
    TellView,
    VoteView,
    register_agent,
)
from dixit_lab.embeddings import EmbeddingSpace, get_space
from dixit_lab.env.encoding import Encoder
from dixit_lab.plugins.imports import load_attribute

__all__ = ["PolicyAgent", "load_policy"]


def load_policy(target: str) -> Callable[..., Any]:
    """The callable named by ``"package.module:name"`` or ``"path/file.py:name"`` (see
    :mod:`dixit_lab.plugins.imports`; a class is instantiated without arguments)."""
    policy = load_attribute(target)
    if isinstance(policy, type):
        policy = policy()
    if not callable(policy):
        raise ValueError(f"policy {target!r} is not callable")
    return policy


@register_agent("policy")
class PolicyAgent(Agent):
    """A trained policy: ``policy`` is a callable or an import string (see
    :func:`load_policy`); ``embedder`` and ``clues`` must be those it was trained with."""

    def __init__(self, policy: Any, embedder: str = "conse", clues: str = "default") -> None:
        self.policy = load_policy(policy) if isinstance(policy, str) else policy
        if not callable(self.policy):
            raise ValueError(f"policy must be callable or an import string, got {policy!r}")
        try:
            self._takes_rng = "rng" in inspect.signature(self.policy).parameters
        except (TypeError, ValueError):
            self._takes_rng = False
        self.embedder = embedder
        self.clues = clues
        self.clue_texts = getattr(self.policy, "clue_texts", None)
        self._space: EmbeddingSpace | None = None
        self._encoders: dict[tuple[Any, ...], Encoder] = {}

    def use_space(self, space: EmbeddingSpace) -> PolicyAgent:
        """Perceive through ``space`` instead of loading one (tests, notebooks)."""
        self._space = space
        return self

    def clue_perception_problem(self) -> tuple[str, str] | None:
        """Why a clue outside its bank could not be perceived here (see
        :meth:`dixit_lab_agents.embedding_agent.EmbeddingAgent.clue_perception_problem`)."""
        if self._space is not None:
            return None
        from dixit_lab.embeddings import text_model_problem

        return text_model_problem(self.embedder)

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        space = self._space or get_space(self.embedder, context.deck, self.clues)
        key = (id(space), context.n_players, context.rules)
        encoder = self._encoders.get(key)
        if encoder is None:
            encoder = self._encoders[key] = Encoder(space, context.n_players, context.rules,
                                                    self.clue_texts)
        self.encoder = encoder

    def _decide(self, view: TellView | SubmitView | VoteView) -> Any:
        encoder, actions = self.encoder, self.encoder.actions
        chosen: list[int] = []
        for step in range(encoder.steps_of(view)):
            state = encoder.state_of_view(view, [a - actions.hand_offset for a in chosen],
                                          clue_step=step == 1)
            observation, mask = encoder.observation(view.seat, state), encoder.mask(state)
            if self._takes_rng:
                action = self.policy(observation, mask, rng=self.context.rng)
            else:
                action = self.policy(observation, mask)
            action = int(action)
            if not (0 <= action < actions.size and mask[action]):
                raise ValueError(f"the policy chose {actions.describe(action)}, which is not "
                                 f"legal now")
            chosen.append(action)
        clue = getattr(view, "clue", None)
        if clue is not None and clue in encoder.unperceived:  # its features were zeros
            self.context.cannot_perceive(clue)
        return encoder.answer(view, chosen)

    def tell(self, view: TellView) -> Clue:
        return self._decide(view)

    def submit(self, view: SubmitView) -> list[int]:
        return self._decide(view)

    def vote(self, view: VoteView) -> int:
        return self._decide(view)
