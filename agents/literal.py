"""``literal``: says what it sees. The obvious baseline, expected to be too obvious."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.core.agent import Clue, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.policy import kernel
from dixit_lab.policy.backends import MANY, ONE, Backend
from dixit_lab.policy.batch_tools import check_same_bank
from dixit_lab_agents.embedding_agent import EmbeddingAgent


@register_agent("literal")
class LiteralAgent(EmbeddingAgent):
    """The literal player.

    * As storyteller: for every card of its hand it finds the clue of the bank most similar to
      that card, then tells the card whose best clue is the most similar of all ("its
      best-described card") with that clue.
    * As listener: submits the card(s) of its hand most similar to the clue, and votes for the
      displayed card (not its own) most similar to the clue.

    Its decisions are :class:`LiteralPolicy`'s, for one game here and for many in the
    batched engine.
    """

    def prepare(self, space: EmbeddingSpace) -> None:
        similarity = space.similarity
        best = np.argmax(similarity, axis=0)  # per card
        self.best_clue = best
        self.best_similarity = similarity[best, np.arange(similarity.shape[1])]
        self.decide = LiteralPolicy(self, ONE)

    def tell(self, view: TellView) -> Clue:
        card, clue = self.decide.tell(view.hand, None)
        return Clue(card, self.space.clues.texts[clue])

    def submit(self, view: SubmitView) -> list[int]:
        return self.decide.submit(view.hand, view.clue, view.n_cards, None)

    def vote(self, view: VoteView) -> int:
        return self.decide.vote(view.display, view.own_positions, view.clue, None)

    def batch_policy(self) -> LiteralPolicy:
        """The same decisions over many games at once (dixit_lab.engine.batched)."""
        return LiteralPolicy(self, MANY)


class LiteralPolicy:
    """``literal``'s decisions, written once for both backends (:mod:`.backends`): ``ONE``
    for one game (a clue is its text), ``MANY`` for the batched engine (a clue is its row of
    the clue bank)."""

    def __init__(self, agent: LiteralAgent, on: Backend = MANY) -> None:
        self.on = on
        # the similarity of a clue (by row for MANY, by text for ONE) with every card
        self.similarity = np.asarray(agent.space.similarity) if on is MANY \
            else agent.clue_rows
        self.best_similarity = on.vector(agent.best_similarity)
        self.best_clue = on.vector(agent.best_clue)
        self.clue_texts = agent.space.clues.texts

    def bind(self, texts: tuple[str, ...]) -> None:
        check_same_bank(self.clue_texts, texts)

    def tell(self, hands: Any, draws: Any) -> tuple[Any, Any]:
        on = self.on
        cards = on.best_card(self.best_similarity, hands)
        return cards, on.at(self.best_clue, cards)

    def submit(self, hands: Any, clues: Any, n_cards: int, draws: Any) -> Any:
        return self.on.best_cards(self.similarity, clues, hands, n_cards)

    def vote(self, display: Any, own: Any, clues: Any, draws: Any) -> Any:
        return self.on.best_other(self.similarity, clues, display, own)

    def kernel_policy(self) -> kernel.KernelPolicy:
        """The same decisions for the compiled engine (:mod:`dixit_lab.policy.kernel`)."""
        return kernel.KernelPolicy(kernel.TELL_BEST, kernel.SUBMIT_BEST, kernel.VOTE_BEST,
                                   listen=self.similarity, vote_table=self.similarity,
                                   card_value=self.best_similarity, card_clue=self.best_clue)
