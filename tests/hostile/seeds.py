"""Brute force of the seed from the agent's own hand: every seed below ``seeds`` and deal
below ``deals`` (the shipped configs' seeds and the default 0 are all small), each dealt as the
engine deals, until one gives this seat the hand it holds; then it knows every hand. Its clues
say whether the brute force found the deal (``report:{"found": ...}``), so that a test reads
the attack's outcome itself, not only its votes."""

from __future__ import annotations

import json

from dixit_lab.core.agent import Clue, GameContext, TellView
from dixit_lab.core.seeding import game_key, game_seed
from tests.spies import _Spy


class SeedSpy(_Spy):
    def __init__(self, seeds: int = 16, deals: int = 16) -> None:
        super().__init__()
        self.seeds, self.deals = seeds, deals

    def candidates(self, context: GameContext) -> list[tuple[int, int]]:
        return [game_key(game_seed(seed, deal)) for seed in range(self.seeds)
                for deal in range(self.deals)]

    def tell(self, view: TellView) -> Clue:
        clue = super().tell(view)
        return Clue(clue.card, "report:" + json.dumps({"found": self.key is not None}))
