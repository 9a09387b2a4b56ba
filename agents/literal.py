"""``literal``: says what it sees. The obvious baseline, expected to be too obvious."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.agent import Clue, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab_agents.batch_tools import check_same_bank, first_max
from dixit_lab_agents.embedding_agent import EmbeddingAgent, top_cards


@register_agent("literal")
class LiteralAgent(EmbeddingAgent):
    """The literal player.

    * As storyteller: for every card of its hand it finds the clue of the bank most similar to
      that card, then tells the card whose best clue is the most similar of all ("its
      best-described card") with that clue.
    * As listener: submits the card(s) of its hand most similar to the clue, and votes for the
      displayed card (not its own) most similar to the clue.
    """

    def prepare(self, space: EmbeddingSpace) -> None:
        similarity = space.similarity
        best = np.argmax(similarity, axis=0)  # per card
        self.best_clue = best.tolist()
        self.best_similarity = similarity[best, np.arange(similarity.shape[1])].tolist()

    def tell(self, view: TellView) -> Clue:
        card = max(view.hand, key=self.best_similarity.__getitem__)
        return Clue(card, self.space.clues.texts[self.best_clue[card]])

    def submit(self, view: SubmitView) -> list[int]:
        return top_cards(self.clue_row(view.clue), view.hand, view.n_cards)

    def vote(self, view: VoteView) -> int:
        row = self.clue_row(view.clue)
        display, own = view.display, view.own_positions
        allowed = [i for i in range(len(display)) if i not in own]
        return max(allowed, key=lambda i: row[display[i]])

    def batch_policy(self) -> LiteralPolicy:
        """The same decisions over many games at once (dixit_lab.batched)."""
        return LiteralPolicy(self)


class LiteralPolicy:
    """``literal``'s decisions over many games at once (see dixit_lab.batched)."""

    def __init__(self, agent: LiteralAgent) -> None:
        self.similarity = np.asarray(agent.space.similarity)            # (clues, cards)
        self.best_similarity = np.array(agent.best_similarity)          # as the agent's list
        self.best_clue = np.array(agent.best_clue, dtype=np.int64)
        self.clue_texts = agent.space.clues.texts

    def bind(self, texts: tuple[str, ...]) -> None:
        check_same_bank(self.clue_texts, texts)

    def tell(self, hands: np.ndarray, draws: Any) -> tuple[np.ndarray, np.ndarray]:
        cards = np.take_along_axis(hands, first_max(self.best_similarity[hands])[:, None],
                                   axis=1)[:, 0]
        return cards, self.best_clue[cards]

    def submit(self, hands: np.ndarray, clues: np.ndarray, n_cards: int,
               draws: Any) -> np.ndarray:
        values = self.similarity[clues[:, None], hands]
        if n_cards == 1:
            order = first_max(values)[:, None]
        else:
            order = np.argsort(-values, axis=1, kind="stable")[:, :n_cards]
        return np.take_along_axis(hands, order, axis=1)

    def vote(self, display: np.ndarray, own: np.ndarray, clues: np.ndarray,
             draws: Any) -> np.ndarray:
        values = self.similarity[clues[:, None], display].astype(np.float64)
        return first_max(values, ~own)
