"""Shared machinery of the storytellers that plan with a model of their listeners."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.literal import LiteralAgent
from agents.softmax_agent import DEFAULT_TEMPERATURE
from dixit_lab.agent import Clue, GameContext, TellView
from dixit_lab.listener_model import ListenerModel, listener_model

__all__ = ["ModelStoryteller"]


class ModelStoryteller(LiteralAgent):
    """A storyteller that scores every (card of its hand, clue of the bank) pair and tells the
    best one; among pairs whose score is within ``tolerance`` of the best it prefers the clue
    most similar to its card. As a listener it plays like ``literal``.

    ``temperature`` is the softmax temperature it assumes its listeners vote with (see
    :mod:`dixit_lab.listener_model`); give it the population's temperature.
    """

    tolerance: float = 0.01

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default") -> None:
        super().__init__(embedder, clues)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature
        self.model: ListenerModel
        self._shape: tuple[Any, ...] | None = None

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        n, rules = context.n_players, context.rules
        shape = (id(self.space), n, rules)
        if shape == self._shape:
            return
        self._shape = shape
        self.voters = n - 1
        self.model = listener_model(self.space, self.temperature, rules.hand_size_for(n),
                                    rules.cards_per_player(n), n - 2)
        self.similarity_by_card = np.ascontiguousarray(self.space.similarity.T)
        self.table_scores = self.score_matrix()

    def score_matrix(self) -> np.ndarray | None:
        """(n_cards, n_clues) scores to maximise, when they do not depend on the rest of the
        hand (computed once per table shape); else None and :meth:`pair_scores` is used."""
        return None

    def pair_scores(self, hand: list[int]) -> np.ndarray:
        """(len(hand), n_clues) scores of the pairs of this hand."""
        if self.table_scores is None:
            raise NotImplementedError(f"{type(self).__name__} must define score_matrix or "
                                      f"pair_scores")
        return self.table_scores[hand]

    def tell(self, view: TellView) -> Clue:
        hand = list(view.hand)
        scores = self.pair_scores(hand)
        near = scores >= scores.max() - self.tolerance
        similarity = np.where(near, self.similarity_by_card[hand], -np.inf)
        row, clue = divmod(int(np.argmax(similarity)), similarity.shape[1])
        return Clue(hand[row], self.space.clues.texts[clue])

    def predicted_find(self, hand: list[int], card: int, clue_text: str) -> float:
        """The model's probability that one listener finds ``card`` of ``hand`` after
        ``clue_text`` (call after ``begin_game``, which fixes the table shape)."""
        return float(self.model.find[card, self.space.clue_index(clue_text)])
