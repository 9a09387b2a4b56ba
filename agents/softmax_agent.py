"""``softmax``: the noisy, human-like population, and the listener the tuned storytellers
assume."""

from __future__ import annotations

import numpy as np

from agents.embedding_agent import EmbeddingAgent, categorical_small
from dixit_lab.agent import Clue, GameContext, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace

DEFAULT_TEMPERATURE = 0.05


@register_agent("softmax")
class SoftmaxAgent(EmbeddingAgent):
    """Like ``literal``, but every choice is drawn at random, with probabilities given by a
    softmax of similarities divided by ``temperature``: near 0 it plays like ``literal``,
    large values play at random.

    * tell: a card of its hand with probability ∝ exp(best clue similarity / T), then a clue of
      the bank with probability ∝ exp(similarity to that card / T);
    * submit: a card of its hand ∝ exp(similarity to the clue / T) (two without replacement at
      three players);
    * vote: a displayed card that is not its own ∝ exp(similarity to the clue / T).

    Each draw inverts the softmax's cumulative distribution at one number of the seat's
    counter-based stream (``context.uniforms``).
    """

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default") -> None:
        super().__init__(embedder, clues)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self._u = context.uniforms.next

    def prepare(self, space: EmbeddingSpace) -> None:
        similarity = np.asarray(space.similarity, dtype=np.float64)
        self.best_similarity = similarity.max(axis=0).tolist()
        # per card, the cumulative softmax weights over the clue bank (for one-draw sampling)
        logits = similarity.T / self.temperature
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.clue_cdf = np.cumsum(weights, axis=1)

    def tell(self, view: TellView) -> Clue:
        hand = view.hand
        card = hand[categorical_small([self.best_similarity[c] for c in hand], self.temperature,
                                      self._u())]
        cdf = self.clue_cdf[card]
        clue = int(np.searchsorted(cdf, self._u() * cdf[-1], side="right"))
        return Clue(card, self.space.clues.texts[min(clue, len(cdf) - 1)])

    def submit(self, view: SubmitView) -> list[int]:
        row = self.clue_row(view.clue)
        hand = list(view.hand)
        chosen = []
        for _ in range(view.n_cards):
            index = categorical_small([row[c] for c in hand], self.temperature, self._u())
            chosen.append(hand.pop(index))
        return chosen

    def vote(self, view: VoteView) -> int:
        row = self.clue_row(view.clue)
        display = view.display
        allowed = [i for i in range(len(display)) if i not in view.own_positions]
        index = categorical_small([row[display[i]] for i in allowed], self.temperature,
                                  self._u())
        return allowed[index]
