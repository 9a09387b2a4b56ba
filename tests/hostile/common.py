"""What every hostile agent shares: plain play, a report in its clues, a vote for a card it
knows is the storyteller's."""

from __future__ import annotations

import json
from typing import Any

from dixit_lab.core.agent import Agent, Clue, GameContext, SubmitView, TellView, VoteView


class Hostile(Agent):
    """First cards, first allowed vote; ``found`` (what the attack got) goes out in every clue
    it tells; ``teller_cards``: cards it knows the storyteller holds, which it votes for."""

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self.found: dict[str, Any] = getattr(self, "found", {})
        self.teller_cards: dict[int, set[int]] = {}  # seat -> cards it holds

    def report(self) -> str:
        return "report:" + json.dumps(self.found, sort_keys=True, separators=(",", ":"))

    def tell(self, view: TellView) -> Clue:
        return Clue(view.hand[0], self.report())

    def submit(self, view: SubmitView) -> list[int]:
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        allowed = [i for i in range(len(view.display)) if i not in view.own_positions]
        known = self.teller_cards.get(view.storyteller, set())
        for position in allowed:
            if view.display[position] in known:
                return position
        return allowed[0]
