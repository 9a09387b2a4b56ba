"""``softmax``: the noisy, human-like population, and the listener the tuned storytellers
assume."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.agent import Clue, GameContext, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab_agents.batch_tools import categorical_rows, check_same_bank, searchsorted_rows
from dixit_lab_agents.embedding_agent import EmbeddingAgent, categorical_small

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
    counter-based stream (``context.uniforms``). ``noise`` > 0: a per-game perception noise
    (see :class:`~agents.embedding_agent.EmbeddingAgent`).
    """

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default", noise: float = 0.0) -> None:
        super().__init__(embedder, clues, noise)
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

    def batch_policy(self) -> SoftmaxPolicy:
        """The same decisions over many games at once (dixit_lab.batched)."""
        return SoftmaxPolicy(self)


class SoftmaxPolicy:
    """``softmax``'s decisions over many games at once (see dixit_lab.batched)."""

    def __init__(self, agent: SoftmaxAgent) -> None:
        self.temperature = agent.temperature
        self.similarity = np.asarray(agent.space.similarity)
        self.best_similarity = np.array(agent.best_similarity)
        self.clue_cdf = agent.clue_cdf
        self.clue_texts = agent.space.clues.texts

    def bind(self, texts: tuple[str, ...]) -> None:
        check_same_bank(self.clue_texts, texts)

    def tell(self, hands: np.ndarray, draws: Any) -> tuple[np.ndarray, np.ndarray]:
        index = categorical_rows(self.best_similarity[hands], self.temperature, draws.next())
        cards = np.take_along_axis(hands, index[:, None], axis=1)[:, 0]
        cdf = self.clue_cdf
        targets = draws.next() * cdf[cards, -1]
        clues = searchsorted_rows(cdf, cards, targets, side="right")
        return cards, np.minimum(clues, cdf.shape[1] - 1)

    def submit(self, hands: np.ndarray, clues: np.ndarray, n_cards: int,
               draws: Any) -> np.ndarray:
        values = self.similarity[clues[:, None], hands].astype(np.float64)
        remaining = np.ones(hands.shape, dtype=bool)
        chosen = np.empty((hands.shape[0], n_cards), dtype=hands.dtype)
        rows = np.arange(hands.shape[0])
        for i in range(n_cards):
            column = categorical_rows(values, self.temperature, draws.next(), remaining)
            chosen[:, i] = hands[rows, column]
            remaining[rows, column] = False
        return chosen

    def vote(self, display: np.ndarray, own: np.ndarray, clues: np.ndarray,
             draws: Any) -> np.ndarray:
        values = self.similarity[clues[:, None], display].astype(np.float64)
        return categorical_rows(values, self.temperature, draws.next(), ~own)
