"""Broken agents, entered by import string (``tests/broken_agents.py:RaisesInVote``), for the
checks that a run says loudly when a seat's decisions were faults: one whose ``vote`` always
raises, one whose every answer is illegal, and one with an off-by-one index that raises
``IndexError`` in about one decision in five."""

from __future__ import annotations

from dixit_lab.core.agent import Agent, Clue, SubmitView, TellView, VoteView


class _Plain(Agent):
    """Legal, simple choices: the first card of the hand, the first display position not its
    own."""

    def tell(self, view: TellView) -> Clue:
        return Clue(view.hand[0], "dream")

    def submit(self, view: SubmitView) -> list[int]:
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        return next(p for p in range(len(view.display)) if p not in view.own_positions)


class RaisesInVote(_Plain):
    """Tells and submits legally; every vote divides by zero."""

    def vote(self, view: VoteView) -> int:
        return len(view.display) // 0


class IllegalEveryMove(Agent):
    """Every answer is one the rules forbid: a card it does not hold, a position not shown."""

    def tell(self, view: TellView) -> Clue:
        return Clue(-1, "dream")

    def submit(self, view: SubmitView) -> list[int]:
        return [-1] * view.n_cards

    def vote(self, view: VoteView) -> int:
        return len(view.display) + 7


class OffByOne(_Plain):
    """Picks item ``floor(u * (k + 1))`` of ``k`` options: ``IndexError`` once in ``k + 1``
    decisions (about one in five at five players)."""

    def _pick(self, options: list[int]) -> int:
        return options[int(self.context.uniforms.next() * (len(options) + 1))]

    def tell(self, view: TellView) -> Clue:
        return Clue(self._pick(list(view.hand)), "dream")

    def submit(self, view: SubmitView) -> list[int]:
        return [self._pick(list(view.hand))] if view.n_cards == 1 else \
            list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        return self._pick([p for p in range(len(view.display)) if p not in view.own_positions])
