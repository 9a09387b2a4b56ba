"""``literal``: says what it sees. The obvious baseline, expected to be too obvious."""

from __future__ import annotations

import numpy as np

from agents.embedding_agent import EmbeddingAgent, top_cards
from dixit_lab.agent import Clue, SubmitView, TellView, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace


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
