"""The games of the vector environment: the game's array state machine, a decision at a time.

:class:`VectorTables` is :class:`~dixit_lab.engine.table_states.TableStates` (deal, tell, lay
out, score, refill, end: the mechanics' one home, which the batched engine drives too) stepped
one card at a time over all its tables: every round has the same steps (``tell_card``,
``tell_clue``, ``submit`` once per card, ``vote``), and the cards a seat has picked in the
decision in play are marked (``chosen``) for the masks. A table whose game ended is dealt again
by the environment. ``tests/env/test_vector.py`` plays the same games in the PettingZoo
environment step by step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import game_key
from dixit_lab.engine.table_states import GOING, MAX_ROUNDS, TableStates
from dixit_lab.env.encoding import SUBMIT, TELL_CARD, TELL_CLUE, VOTE

__all__ = ["VectorTables", "round_steps"]


def round_steps(cards_per_player: int) -> tuple[int, ...]:
    """The steps of every round, in order (``encoding.TELL_CARD`` ...)."""
    return (TELL_CARD, TELL_CLUE, *([SUBMIT] * cards_per_player), VOTE)


class VectorTables(TableStates):
    """T games of ``n`` players under ``rules`` with a deck of ``deck_size`` cards, all at the
    same step of the round."""

    def __init__(self, count: int, n: int, rules: RuleSet, deck_size: int) -> None:
        super().__init__(count, n, rules, deck_size)
        t, h = count, self.hand_size
        self.tell_slot = np.zeros(t, dtype=np.int64)
        self.picks = np.zeros((t, n, self.per), dtype=np.int64)  # hand slots, in pick order
        self.chosen = np.zeros((t, n, h), dtype=bool)            # picked in this decision
        self._rows = np.arange(t)

    def deal_seeds(self, rows: np.ndarray,
                   seeds: Sequence[int | np.random.SeedSequence]) -> None:
        """Start game ``seeds[i]`` at table ``rows[i]`` (the environment seats player k at
        seat k)."""
        keys = np.array([game_key(seed) for seed in seeds], dtype=np.uint64).reshape(-1, 2)
        self.deal(rows, keys)
        self.chosen[rows] = False

    def acting(self, step: int) -> np.ndarray:
        """(T, n) bool: the seats that decide at ``step``."""
        is_teller = self._seats[None, :] == self.storyteller[:, None]
        return is_teller if step in (TELL_CARD, TELL_CLUE) else ~is_teller

    def tell_card(self, slots: np.ndarray) -> None:
        """The storytellers' hand slots (T,)."""
        self.tell_slot[:] = slots
        self.chosen[self._rows, self.storyteller, slots] = True

    def tell_clue(self, clues: np.ndarray) -> None:
        """The storytellers' clues (T,): the card leaves the hand, the clue is public."""
        self.chosen[:] = False
        self.tell(self._rows, self.tell_slot, clues)

    def submit(self, substep: int, slots: np.ndarray) -> None:
        """The listeners' ``substep``-th picks, (T, n) hand slots (the storyteller's ignored);
        after the last one the cards leave the hands and the display is laid out."""
        self.picks[:, :, substep] = slots
        if substep + 1 < self.per:
            t_rows, seats = np.nonzero(self.acting(SUBMIT))
            self.chosen[t_rows, seats, slots[t_rows, seats]] = True
            return
        self.chosen[:] = False
        self.lay_out(self._rows, self.picks)

    def vote(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The listeners' display positions, (T, n) (the storyteller's ignored): the round is
        scored and ends. Returns (points (T, n), ended (T,), truncated (T,))."""
        votes = np.where(self.acting(VOTE), positions, -1)
        points, ending = self.score(self._rows, votes)
        return points, ending != GOING, ending == MAX_ROUNDS
