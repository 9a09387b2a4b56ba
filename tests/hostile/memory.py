"""Memory across games: with ``schedule: duplicate`` a deal is played again with the seats
rotated. The spy remembers, from every round revealed, which seat held each card of a deal;
when its own hand is one it has seen at its seat, it is the same deal again, and it votes for
the displayed card the storyteller's seat held then."""

from __future__ import annotations

from typing import Any

from tests.hostile.common import Hostile

#: card -> seat that held it, for every deal seen (kept in the process, across games)
SEEN: list[dict[int, int]] = []


class MemorySpy(Hostile):
    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        self.memory: dict[int, int] = {}
        SEEN.append(self.memory)
        self.recalled: dict[int, int] | None = None

    def _recall(self, hand: tuple[int, ...]) -> None:
        seat = self.context.seat
        for old in SEEN[:-1]:
            held = [old[card] for card in hand if card in old]
            if len(held) >= 2 and all(owner == seat for owner in held):
                self.recalled = old
                break
        self.found = {"recalled": self.recalled is not None, "deals": len(SEEN) - 1}

    def tell(self, view: Any) -> Any:
        if view.round == 0:
            self._recall(view.hand)
        return super().tell(view)

    def submit(self, view: Any) -> list[int]:
        if view.round == 0:
            self._recall(view.hand)
        return super().submit(view)

    def vote(self, view: Any) -> int:
        if self.recalled is not None:
            held = {c for c, s in self.recalled.items() if s == view.storyteller}
            self.teller_cards[view.storyteller] = held
        return super().vote(view)

    def observe(self, result: Any) -> None:
        for card, owner in zip(result.display, result.card_owner, strict=True):
            self.memory[card] = owner
