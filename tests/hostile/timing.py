"""Two entrants who cooperate through time: the storyteller ``DelayTeller`` takes
``step`` x (its card mod 3) seconds to tell; its partner ``DelayPartner`` times the gap
between its previous call's end and its ``submit`` (the storyteller's telling inside it),
reads the residue from it and votes for the display's card of that residue; its clues report
the residues it read at the storyteller's turns of the game (``report:{"reads": [...]}``)."""

from __future__ import annotations

import time

from dixit_lab.core.agent import Clue, GameContext, SubmitView, TellView, VoteView
from tests.hostile.common import Hostile


class DelayTeller(Hostile):
    def __init__(self, step: float = 0.03) -> None:
        self.step = step

    def tell(self, view: TellView) -> Clue:
        card = view.hand[0]
        time.sleep(self.step * (card % 3))
        return Clue(card, "patience")


class DelayPartner(Hostile):
    def __init__(self, partner: str = "teller", step: float = 0.03) -> None:
        self.partner, self.step = partner, step
        self.since = time.monotonic()
        self.residue: int | None = None

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self.since = time.monotonic()
        self.found = {"reads": []}

    def observe(self, result: object) -> None:
        self.since = time.monotonic()

    def submit(self, view: SubmitView) -> list[int]:
        gap = time.monotonic() - self.since
        self.residue = min(2, max(0, round(gap / self.step)))
        return super().submit(view)

    def vote(self, view: VoteView) -> int:
        allowed = [i for i in range(len(view.display)) if i not in view.own_positions]
        names = list(self.context.players)
        if (self.residue is not None and self.partner in names
                and view.storyteller == names.index(self.partner)):
            self.found["reads"].append(self.residue)
            for position in allowed:
                if view.display[position] % 3 == self.residue:
                    return position
        return allowed[0]
