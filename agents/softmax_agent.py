"""``softmax``: the noisy, human-like population, and the listener the tuned storytellers
assume."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.core.agent import Clue, GameContext, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.policy import kernel
from dixit_lab.policy.backends import MANY, ONE, Backend, without_replacement
from dixit_lab.policy.batch_tools import check_same_bank
from dixit_lab_agents.embedding_agent import EmbeddingAgent

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
    (see :class:`~agents.embedding_agent.EmbeddingAgent`). Its decisions are
    :class:`SoftmaxPolicy`'s, for one game here and for many in the batched engine.
    """

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default", noise: float = 0.0) -> None:
        super().__init__(embedder, clues, noise)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self._draws = context.uniforms

    def prepare(self, space: EmbeddingSpace) -> None:
        similarity = np.asarray(space.similarity, dtype=np.float64)
        self.best_similarity = similarity.max(axis=0)
        # per card, the cumulative softmax weights over the clue bank (for one-draw sampling)
        logits = similarity.T / self.temperature
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.clue_cdf = np.cumsum(weights, axis=1)
        self.decide = SoftmaxPolicy(self, ONE)

    def tell(self, view: TellView) -> Clue:
        card, clue = self.decide.tell(view.hand, self._draws)
        return Clue(card, self.space.clues.texts[clue])

    def submit(self, view: SubmitView) -> list[int]:
        return self.decide.submit(view.hand, view.clue, view.n_cards, self._draws)

    def vote(self, view: VoteView) -> int:
        return self.decide.vote(view.display, view.own_positions, view.clue, self._draws)

    def batch_policy(self) -> SoftmaxPolicy:
        """The same decisions over many games at once (dixit_lab.engine.batched)."""
        return SoftmaxPolicy(self, MANY)


class SoftmaxPolicy:
    """``softmax``'s decisions, written once for both backends (:mod:`.backends`; a clue is
    its text for ``ONE``, its row of the clue bank for ``MANY``)."""

    def __init__(self, agent: SoftmaxAgent, on: Backend = MANY) -> None:
        self.on = on
        self.temperature = agent.temperature
        self.similarity = np.asarray(agent.space.similarity) if on is MANY \
            else agent.clue_rows
        self.best_similarity = on.vector(agent.best_similarity)
        self.clue_cdf = agent.clue_cdf
        self.clue_total = on.vector(agent.clue_cdf[:, -1])
        self.last_clue = agent.clue_cdf.shape[1] - 1
        self.clue_texts = agent.space.clues.texts

    def bind(self, texts: tuple[str, ...]) -> None:
        check_same_bank(self.clue_texts, texts)

    def tell(self, hands: Any, draws: Any) -> tuple[Any, Any]:
        """A card ∝ exp(best clue similarity / T), then a clue ∝ exp(similarity / T), each
        by inverting the cumulative weights at one draw."""
        on = self.on
        index = on.categorical(on.gather(self.best_similarity, hands), self.temperature,
                               draws.next())
        cards = on.pick(hands, index)
        clues = on.searchsorted(self.clue_cdf, cards, draws.next() * on.at(self.clue_total, cards))
        return cards, on.minimum(clues, self.last_clue)

    def submit(self, hands: Any, clues: Any, n_cards: int, draws: Any) -> Any:
        on = self.on
        values = on.lookup(self.similarity, clues, hands)
        return without_replacement(on, hands, n_cards, draws, lambda remaining, u: (
            on.categorical(values, self.temperature, u, remaining)))

    def vote(self, display: Any, own: Any, clues: Any, draws: Any) -> Any:
        on = self.on
        return on.categorical(on.lookup(self.similarity, clues, display), self.temperature,
                              draws.next(), on.others(own, display))

    def kernel_policy(self) -> kernel.KernelPolicy:
        """The same decisions for the compiled engine (:mod:`dixit_lab.policy.kernel`)."""
        return kernel.KernelPolicy(kernel.TELL_SOFTMAX, kernel.SUBMIT_SOFTMAX,
                                   kernel.VOTE_SOFTMAX, temperature=self.temperature,
                                   listen=self.similarity, vote_table=self.similarity,
                                   card_value=self.best_similarity, clue_cdf=self.clue_cdf,
                                   clue_total=self.clue_total)
