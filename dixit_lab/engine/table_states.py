"""The game's one array state machine: T tables of one shape, stepped together.

A round is four steps, each a method: :meth:`TableStates.tell` (the storyteller's card leaves
its hand, the clue is public), :meth:`~TableStates.lay_out` (the listeners' cards leave their
hands and the display is laid out in the round's order), :meth:`~TableStates.score` (the votes
are scored; then the end checks, the discard, the refill from the storyteller's left, the
reshuffle and the next storyteller), after :meth:`~TableStates.deal`. Every step takes the
rows (tables) it concerns, so tables may be at different rounds: the batched engine
(:mod:`dixit_lab.engine.batched`) steps the games still in play a round at a time, the vector
environment (:mod:`dixit_lab.env.vector_tables`) all its tables a decision at a time, dealing a
table again when its game ends. Both are checked byte for byte against the reference engine
(:mod:`dixit_lab.engine.game`), the plain statement of the rules; the compiled kernel
(:mod:`dixit_lab.engine.kernel`) plays the same machine in machine code and is checked against
both.

Hands are (T, n, H) card numbers in the reference's list order (a card that leaves moves the
ones after it up, as ``list.remove`` does), -1 after the last card (``hand_len``); the pile is
kept as the reference keeps its list (the last card is drawn first). Every random draw comes
from the game key's streams (:mod:`dixit_lab.core.seeding`).
"""

from __future__ import annotations

import numpy as np

from dixit_lab.core.rules import RuleSet, score_batch
from dixit_lab.core.seeding import Streams, stream_base, uniforms

__all__ = ["DECK_EXHAUSTED", "END_REASONS", "GOING", "MAX_ROUNDS", "TARGET_SCORE",
           "TableStates"]

#: how a round leaves a game (:meth:`TableStates.score`): going on, or its end and why
GOING, TARGET_SCORE, DECK_EXHAUSTED, MAX_ROUNDS = 0, 1, 2, 3
#: the records' ``end_reason`` of each ending (GOING has none)
END_REASONS: tuple[str, ...] = ("", "target_score", "deck_exhausted", "max_rounds")


class TableStates:
    """T games of ``n`` players under ``rules`` with a deck of ``deck_size`` cards."""

    def __init__(self, count: int, n: int, rules: RuleSet, deck_size: int) -> None:
        self.count, self.n, self.rules, self.deck_size = count, n, rules, deck_size
        self.hand_size = h = rules.hand_size_for(n)
        self.per = rules.cards_per_player(n)
        self.shown = k = rules.displayed_cards(n)
        t = count
        self.hands = np.full((t, n, h), -1, dtype=np.int64)
        self.hand_len = np.zeros((t, n), dtype=np.int64)
        self.dealt = self.hands.copy()                      # fixed hands: every round's hands
        self.pile = np.zeros((t, deck_size), dtype=np.int64)
        self.pile_len = np.zeros(t, dtype=np.int64)
        self.discard = np.zeros((t, deck_size), dtype=np.int64)
        self.discard_len = np.zeros(t, dtype=np.int64)
        self.reshuffles = np.zeros(t, dtype=np.int64)
        self.keys = np.zeros((t, 2), dtype=np.uint64)
        self.display_base = np.zeros(t, dtype=np.uint64)
        self.storyteller = np.zeros(t, dtype=np.int64)
        self.scores = np.zeros((t, n), dtype=np.int64)
        self.round = np.zeros(t, dtype=np.int64)            # rounds scored
        # the round in play
        self.clue = np.full(t, -1, dtype=np.int64)          # the clue, -1: untold
        self.teller_card = np.zeros(t, dtype=np.int64)
        self.display = np.full((t, k), -1, dtype=np.int64)  # -1: not laid out
        self.card_owner = np.zeros((t, k), dtype=np.int64)
        self._slots = np.arange(h)
        self._seats = np.arange(n)
        # a hand's slots after the card in slot s leaves (row s; row h: none leaves): the
        # cards after it move up one, as ``list.remove`` moves them
        self._after_leaving = np.minimum(self._slots + (self._slots >= np.arange(h + 1)[:, None]),
                                         h - 1)

    # -- a new game -------------------------------------------------------------------------

    def deal(self, rows: np.ndarray, keys: np.ndarray,
             first_seats: np.ndarray | None = None) -> None:
        """Start the games of keys ``keys`` ((R, 2) uint64: ``seeding.game_key``) at tables
        ``rows``: the reference's deal and first storyteller (``first_seats``: the seat of the
        config's first player in each game, for ``first_storyteller: first_player``; None: 0)."""
        n, h, rules = self.n, self.hand_size, self.rules
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1, 2)
        k0, k1 = keys[:, :1], keys[:, 1:]
        self.keys[rows] = keys
        order = np.argsort(uniforms(stream_base(k0, k1, Streams.DEAL),
                                    np.arange(self.deck_size, dtype=np.uint64)),
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
        if rules.first_storyteller == "random":
            first = uniforms(stream_base(k0, k1, Streams.FIRST_STORYTELLER), 0)[:, 0]
            self.storyteller[rows] = np.minimum((first * n).astype(np.int64), n - 1)
        elif rules.first_storyteller == "first_player" and first_seats is not None:
            self.storyteller[rows] = first_seats
        else:
            self.storyteller[rows] = 0
        self.scores[rows] = 0
        self.round[rows] = 0
        self.clue[rows] = -1
        self.display[rows] = -1

    # -- the steps of a round ---------------------------------------------------------------

    def tell(self, rows: np.ndarray, slots: np.ndarray, clues: np.ndarray) -> None:
        """The storytellers' hand slots and clues, (R,) each: the card leaves its hand."""
        teller = self.storyteller[rows]
        hand = self.hands[rows, teller]                                   # (R, h)
        self.clue[rows] = clues
        self.teller_card[rows] = hand[np.arange(len(rows)), slots]
        hand = np.take_along_axis(hand, self._after_leaving[slots], axis=1)
        length = self.hand_len[rows, teller] - 1
        hand[np.arange(len(rows)), length] = -1  # the slot after the last card
        self.hands[rows, teller] = hand
        self.hand_len[rows, teller] = length

    def lay_out(self, rows: np.ndarray, picks: np.ndarray) -> None:
        """The listeners' cards, (R, n, per) slots of their hands in the order they picked
        them (the storyteller's row ignored): they leave the hands, and the display is laid
        out (``display``, ``card_owner``) in the round's order (``Streams.DISPLAY``)."""
        n, per, k, h = self.n, self.per, self.shown, self.hand_size
        size = len(rows)
        at = np.arange(size)
        teller = self.storyteller[rows]
        hands = self.hands[rows]                                          # (R, n, h)
        table = np.empty((size, k), dtype=np.int64)
        owners = np.empty((size, k), dtype=np.int64)
        table[:, 0], owners[:, 0] = self.teller_card[rows], teller
        column = 1
        for offset in range(1, n):  # from the storyteller's left, each seat's picks in order
            seat = (teller + offset) % n
            for pick in range(per):
                table[:, column] = hands[at, seat, picks[at, seat, pick]]
                owners[:, column] = seat
                column += 1
        # the picked cards leave the hands one at a time (a later slot moves up one when an
        # earlier one leaves before it); the storyteller's row picks nothing (slot h)
        lengths = self.hand_len[rows]
        slots = np.where((self._seats[None, :] != teller[:, None])[:, :, None], picks, h)
        for pick in range(per):
            slot = slots[:, :, pick]
            hands = np.take_along_axis(hands, self._after_leaving[slot], axis=2)
            left = slot < h
            lengths = lengths - left
            # the slot after the last card is empty again (every later one was already)
            last = np.minimum(lengths, h - 1)[:, :, None]
            np.put_along_axis(hands, last, np.where(
                left[:, :, None], -1, np.take_along_axis(hands, last, axis=2)), axis=2)
            slots[:, :, pick + 1:] -= slots[:, :, pick + 1:] > slot[:, :, None]
        self.hands[rows], self.hand_len[rows] = hands, lengths
        counters = (self.round[rows, None] * k + np.arange(k)).astype(np.uint64)
        order = np.argsort(uniforms(self.display_base[rows, None], counters), axis=1,
                           kind="stable")
        self.display[rows] = np.take_along_axis(table, order, axis=1)
        self.card_owner[rows] = np.take_along_axis(owners, order, axis=1)

    def score(self, rows: np.ndarray, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The listeners' display positions, (R, n) (the storyteller's -1): the round is
        scored and ends. Returns (points (R, n), ending (R,): :data:`GOING` or why the game
        ended). A game that ended keeps its final scores, round count and last storyteller
        until it is dealt again."""
        rules = self.rules
        teller = self.storyteller[rows]
        points = score_batch(rules, teller, self.display[rows], self.card_owner[rows], votes,
                             self.teller_card[rows])
        self.scores[rows] += points
        self.round[rows] += 1
        ending = np.zeros(len(rows), dtype=np.int64)
        if rules.target_score is not None:
            ending[self.scores[rows].max(axis=1) >= rules.target_score] = TARGET_SCORE
        if rules.fixed_hands:  # every round from the hands as dealt
            self.hands[rows] = self.dealt[rows]
            self.hand_len[rows] = self.hand_size
        else:
            if rules.deck_exhausted == "reshuffle_discard":  # only a reshuffle reads it
                span = self.discard_len[rows, None] + np.arange(self.shown)
                self.discard[rows[:, None], span] = self.display[rows]
                self.discard_len[rows] += self.shown
            going = ending == GOING
            ending[going] = np.where(self._refill(rows[going]), DECK_EXHAUSTED, GOING)
        ending[(ending == GOING) & (self.round[rows] >= rules.max_rounds)] = MAX_ROUNDS
        going = ending == GOING
        self.storyteller[rows[going]] = (teller[going] + 1) % self.n
        self.clue[rows] = -1
        self.display[rows] = -1
        return points, ending

    # -- the pile ---------------------------------------------------------------------------

    def _refill(self, rows: np.ndarray) -> np.ndarray:
        """The reference's refill of the games ``rows`` (after the reshuffle of the discard,
        or the end, that a short pile brings): seats from the storyteller's left, each to a
        full hand. True where the game ends for its deck."""
        mode, n, h = self.rules.deck_exhausted, self.n, self.hand_size
        ends = np.zeros(len(rows), dtype=bool)
        if not len(rows):
            return ends
        need = (h - self.hand_len[rows]).sum(axis=1)
        short = self.pile_len[rows] < need
        if short.any():
            if mode == "end_when_cannot_refill":
                ends |= short
            elif mode == "reshuffle_discard":
                self._reshuffle(rows[short])
                ends |= short & (self.pile_len[rows] < need)
        teller = self.storyteller[rows]
        seats = (teller[:, None] + np.arange(1, n + 1)[None, :]) % n     # the teller last
        deficit = np.where(ends[:, None], 0, h - self.hand_len[rows[:, None], seats])
        wanted = np.cumsum(deficit, axis=1)                      # (R, n), seat order
        earlier = wanted - deficit                               # drawn before each seat's
        drawn = np.minimum(wanted[:, -1], self.pile_len[rows])
        top = self.pile_len[rows] - 1                            # the next card's place
        for order in range(n):  # each seat its cards, the t-th card drawn from the top
            seat, wants = seats[:, order], deficit[:, order]
            for card in range(int(wants.max(initial=0))):
                t = earlier[:, order] + card
                take = (card < wants) & (t < drawn)
                at, to = rows[take], seat[take]
                card_of = self.pile[at, top[take] - t[take]]
                self.hands[at, to, self.hand_len[at, to] + card] = card_of
        got = np.clip(np.minimum(wanted, drawn[:, None]) - earlier, 0, None)
        self.hand_len[rows[:, None], seats] += got
        self.pile_len[rows] -= drawn
        empty = ~ends & (self.pile_len[rows] == 0)
        if mode == "end_when_last_drawn":
            ends |= empty
        elif mode == "play_out_hands" and empty.any():  # can the next round be played?
            following = (teller + 1) % n
            needed = np.where(self._seats[None, :] == following[:, None], 1, self.per)
            ends |= empty & (self.hand_len[rows] < needed).any(axis=1)
        return ends

    def _reshuffle(self, rows: np.ndarray) -> None:
        """The discard shuffled under the pile of each game of ``rows`` (its
        ``reshuffles``-th), the games of one pile, discard and count at once."""
        groups = np.stack([self.pile_len[rows], self.discard_len[rows], self.reshuffles[rows]],
                          axis=1)
        shapes, which = np.unique(groups, axis=0, return_inverse=True)
        for index, (pile, discard, count) in enumerate(shapes.tolist()):
            group = rows[which.reshape(-1) == index]
            combined = np.concatenate([self.pile[group, :pile],
                                       self.discard[group, :discard]], axis=1)
            keys = self.keys[group]
            base = stream_base(keys[:, :1], keys[:, 1:], Streams.RESHUFFLE + count)
            order = np.argsort(uniforms(base, np.arange(pile + discard, dtype=np.uint64)),
                               axis=1, kind="stable")
            self.pile[group, :pile + discard] = np.take_along_axis(combined, order, axis=1)
            self.pile_len[group] = pile + discard
            self.discard_len[group] = 0
            self.reshuffles[group] += 1
