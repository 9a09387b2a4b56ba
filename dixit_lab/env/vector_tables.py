"""The games of the vector environment: many tables of one shape as NumPy arrays.

:class:`Tables` holds T games in lockstep at one step of the round (every round has the same
steps: ``tell_card``, ``tell_clue``, ``submit`` once per card, ``vote``), and plays them as
the reference engine (:mod:`dixit_lab.engine.game`) plays one: the same deal, refills,
reshuffles and display orders from the game key's streams (:mod:`dixit_lab.core.seeding`),
the same scoring (:func:`dixit_lab.core.rules.score_batch`), the same end. Hands are (T, n, H)
card numbers in the engine's list order, -1 after the last card; the pile is kept as the
engine keeps its list (the last card is drawn first). ``tests/env/test_vector.py`` plays the
same games in the PettingZoo environment step by step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dixit_lab.core.rules import RuleSet, score_batch
from dixit_lab.core.seeding import Streams, game_key, permutation, stream_base, uniforms
from dixit_lab.env.encoding import SUBMIT, TELL_CARD, TELL_CLUE, VOTE

__all__ = ["Tables", "round_steps"]


def round_steps(cards_per_player: int) -> tuple[int, ...]:
    """The steps of every round, in order (``encoding.TELL_CARD`` ...)."""
    return (TELL_CARD, TELL_CLUE, *([SUBMIT] * cards_per_player), VOTE)


class Tables:
    """T games of ``n`` players under ``rules`` with a deck of ``deck_size`` cards."""

    def __init__(self, count: int, n: int, rules: RuleSet, deck_size: int) -> None:
        self.count, self.n, self.rules, self.deck_size = count, n, rules, deck_size
        self.hand_size = h = rules.hand_size_for(n)
        self.per = per = rules.cards_per_player(n)
        self.shown = k = rules.displayed_cards(n)
        t = count
        self.hands = np.full((t, n, h), -1, dtype=np.int64)
        self.hand_len = np.zeros((t, n), dtype=np.int64)
        self.dealt = self.hands.copy()
        self.pile = np.zeros((t, deck_size), dtype=np.int64)
        self.pile_len = np.zeros(t, dtype=np.int64)
        self.discard = np.zeros((t, deck_size), dtype=np.int64)
        self.discard_len = np.zeros(t, dtype=np.int64)
        self.reshuffles = np.zeros(t, dtype=np.int64)
        self.keys = np.zeros((t, 2), dtype=np.uint64)
        self.display_base = np.zeros(t, dtype=np.uint64)
        self.storyteller = np.zeros(t, dtype=np.int64)
        self.scores = np.zeros((t, n), dtype=np.int64)
        self.round = np.zeros(t, dtype=np.int64)
        # the round in play: the storyteller's card slot and clue, the listeners' picks
        self.tell_slot = np.zeros(t, dtype=np.int64)
        self.clue = np.full(t, -1, dtype=np.int64)          # clue action index, -1: untold
        self.picks = np.zeros((t, n, per), dtype=np.int64)  # hand slots, in pick order
        self.chosen = np.zeros((t, n, h), dtype=bool)       # slots picked in this decision
        self.display = np.full((t, k), -1, dtype=np.int64)  # -1: not laid out
        self.card_owner = np.zeros((t, k), dtype=np.int64)
        self.teller_card = np.zeros(t, dtype=np.int64)
        self.points = np.zeros((t, n), dtype=np.int64)
        self._rows = np.arange(t)
        self._slots = np.arange(h)

    # -- a new game -------------------------------------------------------------------------

    def deal(self, rows: np.ndarray, seeds: Sequence[int | np.random.SeedSequence]) -> None:
        """Start game ``seeds[i]`` at table ``rows[i]``: the engine's deal and storyteller."""
        n, h, rules = self.n, self.hand_size, self.rules
        keys = np.array([game_key(seed) for seed in seeds], dtype=np.uint64).reshape(-1, 2)
        k0, k1 = keys[:, :1], keys[:, 1:]
        self.keys[rows] = keys
        base = stream_base(k0, k1, Streams.DEAL)
        order = np.argsort(uniforms(base, np.arange(self.deck_size, dtype=np.uint64)),
                           axis=1, kind="stable")
        self.hands[rows] = order[:, :n * h].reshape(-1, n, h)
        self.dealt[rows] = self.hands[rows]
        self.hand_len[rows] = h
        rest = self.deck_size - n * h
        self.pile[rows, :rest] = order[:, n * h:][:, ::-1]
        self.pile_len[rows] = rest
        self.discard_len[rows] = 0
        self.reshuffles[rows] = 0
        self.display_base[rows] = stream_base(k0, k1, Streams.DISPLAY)[:, 0]
        if rules.first_storyteller != "random":  # the env seats player k at seat k
            self.storyteller[rows] = 0
        else:
            first = uniforms(stream_base(k0, k1, Streams.FIRST_STORYTELLER), 0)[:, 0]
            self.storyteller[rows] = np.minimum((first * n).astype(np.int64), n - 1)
        self.scores[rows] = 0
        self.round[rows] = 0
        self.clue[rows] = -1
        self.chosen[rows] = False
        self.display[rows] = -1

    # -- the steps --------------------------------------------------------------------------

    def acting(self, step: int) -> np.ndarray:
        """(T, n) bool: the seats that decide at ``step``."""
        is_teller = np.arange(self.n)[None, :] == self.storyteller[:, None]
        return is_teller if step in (TELL_CARD, TELL_CLUE) else ~is_teller

    def tell_card(self, slots: np.ndarray) -> None:
        """The storytellers' hand slots (T,)."""
        self.tell_slot[:] = slots
        self.chosen[self._rows, self.storyteller, slots] = True

    def tell_clue(self, clues: np.ndarray) -> None:
        """The storytellers' clues (T,): the card leaves the hand, the clue is public."""
        rows, teller = self._rows, self.storyteller
        self.clue[:] = clues
        self.teller_card[:] = self.hands[rows, teller, self.tell_slot]
        self.chosen[:] = False
        h = self.hand_size  # the storyteller's card leaves its hand (list.remove)
        index = np.minimum(self._slots + (self._slots >= self.tell_slot[:, None]), h - 1)
        hand = np.take_along_axis(self.hands[rows, teller], index, axis=1)
        self.hand_len[rows, teller] -= 1
        hand[self._slots >= self.hand_len[rows, teller][:, None]] = -1
        self.hands[rows, teller] = hand

    def submit(self, substep: int, slots: np.ndarray) -> None:
        """The listeners' ``substep``-th picks, (T, n) hand slots (the storyteller's ignored);
        after the last one the cards leave the hands and the display is laid out."""
        listeners = self.acting(SUBMIT)
        self.picks[:, :, substep] = slots
        if substep + 1 < self.per:
            t_rows, seats = np.nonzero(listeners)
            self.chosen[t_rows, seats, slots[t_rows, seats]] = True
            return
        self.chosen[:] = False
        rows, n, per, k = self._rows, self.n, self.per, self.shown
        table = np.empty((self.count, k), dtype=np.int64)
        owners = np.empty((self.count, k), dtype=np.int64)
        table[:, 0], owners[:, 0] = self.teller_card, self.storyteller
        column = 1
        for offset in range(1, n):
            seat = (self.storyteller + offset) % n
            for pick in range(per):
                table[:, column] = self.hands[rows, seat, self.picks[rows, seat, pick]]
                owners[:, column] = seat
                column += 1
        # the picked cards leave the hands one at a time (a later slot moves up one when an
        # earlier one leaves before it)
        picks = np.where(listeners[:, :, None], self.picks, self.hand_size)
        for pick in range(per):
            slot = picks[:, :, pick]
            self._drop(slot)
            picks[:, :, pick + 1:] -= picks[:, :, pick + 1:] > slot[:, :, None]
        counters = (self.round[:, None] * k + np.arange(k)).astype(np.uint64)
        order = np.argsort(uniforms(self.display_base[:, None], counters), axis=1,
                           kind="stable")
        self.display[:] = np.take_along_axis(table, order, axis=1)
        self.card_owner[:] = np.take_along_axis(owners, order, axis=1)

    def vote(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The listeners' display positions, (T, n) (the storyteller's ignored): the round is
        scored and ends. Returns (points (T, n), ended (T,), truncated (T,)); the games that
        ended keep their final scores, round count and last storyteller until dealt again."""
        rules, n = self.rules, self.n
        teller = self.storyteller
        votes = np.where(self.acting(VOTE), positions, -1)
        points = score_batch(rules, teller, self.display, self.card_owner, votes,
                             self.teller_card)
        self.points[:] = points
        self.scores += points
        self.round += 1
        ended = np.zeros(self.count, dtype=bool)
        if rules.target_score is not None:
            ended = self.scores.max(axis=1) >= rules.target_score
        if rules.deck_exhausted == "reshuffle_discard" and not rules.fixed_hands:
            span = self.discard_len[:, None] + np.arange(self.shown)  # only a reshuffle reads it
            self.discard[self._rows[:, None], span] = self.display
            self.discard_len += self.shown
        if rules.fixed_hands:
            self.hands[:] = self.dealt
            self.hand_len[:] = self.hand_size
        else:
            ended |= self._refill(~ended)
        truncated = ~ended & (self.round >= rules.max_rounds)
        ended |= truncated
        going = ~ended
        self.storyteller[going] = (teller[going] + 1) % n
        self.clue[:] = -1
        self.display[:] = -1
        return points, ended, truncated

    # -- hands and the pile -----------------------------------------------------------------

    def _drop(self, slots: np.ndarray) -> None:
        """Take slot ``slots[t, seat]`` out of each hand (``hand_size``: none), the cards
        after it moving up one (``list.remove``)."""
        h = self.hand_size
        index = np.minimum(self._slots + (self._slots >= slots[:, :, None]), h - 1)
        self.hands[:] = np.take_along_axis(self.hands, index, axis=2)
        self.hand_len -= slots < h
        self.hands[self._slots >= self.hand_len[:, :, None]] = -1

    def _refill(self, going: np.ndarray) -> np.ndarray:
        """The engine's refill of the games ``going`` (from the storyteller's left, the
        reshuffle of the discard, the exhausted deck): True where a game ends."""
        mode, n, h = self.rules.deck_exhausted, self.n, self.hand_size
        ends = np.zeros(self.count, dtype=bool)
        need = (h - self.hand_len).sum(axis=1)
        short = going & (self.pile_len < need)
        if short.any():
            if mode == "end_when_cannot_refill":
                ends |= short
                going = going & ~short
            elif mode == "reshuffle_discard":
                for row in np.flatnonzero(short).tolist():
                    self._reshuffle(row)
                again = short & (self.pile_len < need)
                ends |= again
                going = going & ~again
        rows = self._rows
        for offset in range(1, n + 1):
            seat = (self.storyteller + offset) % n
            while True:
                draws = going & (self.hand_len[rows, seat] < h) & (self.pile_len > 0)
                if not draws.any():
                    break
                at, who = np.flatnonzero(draws), seat[draws]
                self.pile_len[at] -= 1
                self.hands[at, who, self.hand_len[at, who]] = self.pile[at, self.pile_len[at]]
                self.hand_len[at, who] += 1
        empty = going & (self.pile_len == 0)
        if mode == "end_when_last_drawn":
            ends |= empty
        elif mode == "play_out_hands" and empty.any():
            following = (self.storyteller + 1) % n
            is_next = np.arange(n)[None, :] == following[:, None]
            playable = self.hand_len >= np.where(is_next, 1, self.per)
            ends |= empty & ~playable.all(axis=1)
        return ends

    def _reshuffle(self, row: int) -> None:
        """The discard shuffled under the pile of one game (its ``reshuffles``-th)."""
        pile = self.pile[row, :self.pile_len[row]]
        combined = np.concatenate([pile, self.discard[row, :self.discard_len[row]]])
        key = self.keys[row]
        base = stream_base(key[0], key[1], Streams.RESHUFFLE + int(self.reshuffles[row]))
        self.reshuffles[row] += 1
        self.pile[row, :combined.size] = combined[permutation(base, combined.size)]
        self.pile_len[row] = combined.size
        self.discard_len[row] = 0
