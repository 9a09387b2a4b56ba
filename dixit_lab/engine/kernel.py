"""The compiled kernel: whole games of the built-in policies in Numba, one game after another.

Imported by :mod:`dixit_lab.engine.compiled` (the ``fast`` extra). :func:`play_games` mirrors
the reference game (:mod:`dixit_lab.engine.game`) with the same streams
(:mod:`dixit_lab.engine.kernel_streams`) and plays the decision rules of
:mod:`dixit_lab.engine.kernel_rules` into flat round arrays.

**Its on-disk cache** (``cache=True``: a compile takes seconds) must follow the files whose
functions it takes in. Numba's follows only the file that defines the cached function, and
the key of each compiled version holds the function's bytecode and the contents of its
closure (numba/numba#1833). So :func:`play_games` is made by :func:`_compiled`, closed over a
digest of the kernel's other files (:data:`SOURCES`): a change of any of them is a new key,
a fresh compile (``tests/engine/test_kernel.py`` checks that Numba still works so).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dixit_lab.engine import kernel_rules, kernel_streams
from dixit_lab.engine.kernel_rules import SUBMIT, TELL, VOTE, play_submit, play_tell, play_vote
from dixit_lab.engine.kernel_streams import (
    HELPER,
    HOT,
    STREAM_DEAL,
    STREAM_DISPLAY,
    STREAM_FIRST,
    STREAM_RESHUFFLE,
    stream_argsort,
    stream_base,
    uniform,
)
from dixit_lab.engine.numba_cache import cached_njit
from dixit_lab.policy import kernel as policy_kernel

__all__ = ["CANNOT_REFILL", "DECK_EXHAUSTED", "LAST_DRAWN", "MAX_ROUNDS", "PLAY_OUT", "RESHUFFLE",
           "SOURCES", "TARGET_SCORE", "Games", "Policies", "Results", "Rounds", "Table",
           "play_games", "sources_digest"]

# deck_exhausted modes (dixit_lab.core.rules.DECK_EXHAUSTED_MODES, in order)
LAST_DRAWN, CANNOT_REFILL, RESHUFFLE, PLAY_OUT = 0, 1, 2, 3
# end reasons
MAX_ROUNDS, TARGET_SCORE, DECK_EXHAUSTED = 0, 1, 2
#: the modules whose functions and constants :func:`play_games` compiles in, beside this one
SOURCES = (kernel_streams, kernel_rules, policy_kernel)


class Games(NamedTuple):
    """The batch's games, B of them."""

    keys: np.ndarray        #: (B, 2) uint64: each game's key
    seat_bases: np.ndarray  #: (B, n) uint64: each seat's stream base
    seating: np.ndarray     #: (B, n): the policy (row of ``Policies.pol``) of each seat
    firsts: np.ndarray      #: (B,): the first storyteller, unless it is drawn


class Table(NamedTuple):
    """The table's shape and rules, as integers."""

    #: players, hand size, cards per listener, displayed cards, deck size
    dims: np.ndarray
    #: deck_exhausted mode, target score (-1: none), max_rounds, random first storyteller,
    #: fixed hands
    rule_ints: np.ndarray
    #: the search points by number of finders: rows storyteller, finder, missed
    search: np.ndarray
    #: the vote bonus by votes received
    bonus: np.ndarray


class Policies(NamedTuple):
    """The policies' arrays (``dixit_lab.engine.compiled._pack`` says each), and the margin of
    the fast softmax draw."""

    pol: np.ndarray
    temps: np.ndarray
    tabs: np.ndarray
    vecs: np.ndarray
    ivecs: np.ndarray
    cdfs: np.ndarray
    near_keys: np.ndarray
    nbest: np.ndarray
    words: np.ndarray
    near_rows: np.ndarray
    wtabs: np.ndarray
    wvecs: np.ndarray
    #: :data:`dixit_lab.engine.compiled.MARGIN`
    margin: float


class Results(NamedTuple):
    """What each game comes to (written by :func:`play_games`)."""

    round_start: np.ndarray  #: (B + 1,): the first row of each game's rounds
    end_round: np.ndarray    #: (B,): the index of its last round
    end_reason: np.ndarray   #: (B,): MAX_ROUNDS, TARGET_SCORE or DECK_EXHAUSTED
    final: np.ndarray        #: (B, n): the final scores


class Rounds(NamedTuple):
    """The round arrays, a row a round (the batched engine's names, written by
    :func:`play_games`)."""

    storyteller: np.ndarray
    clue: np.ndarray
    card: np.ndarray
    display: np.ndarray
    card_owner: np.ndarray
    votes: np.ndarray
    points: np.ndarray
    scores: np.ndarray
    hand: np.ndarray  #: the storyteller's hand (-1 in the slots of a shrunk hand)


def sources_digest() -> str:
    """The SHA-256 of the source files of :data:`SOURCES`, in order."""
    digest = hashlib.sha256()
    for module in SOURCES:
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


@HOT
def _remove(hands, lengths, seat, card):  # type: ignore[no-untyped-def]
    """``hand.remove(card)``."""
    size = lengths[seat]
    i = 0
    while hands[seat, i] != card:
        i += 1
    for j in range(i, size - 1):
        hands[seat, j] = hands[seat, j + 1]
    lengths[seat] = size - 1


@HELPER
def _refill(hands, lengths, dealt, pile, plen, discard, dlen, teller, dims, rule_ints, k0, k1,
            reshuffles, keys, spare, counts, order, combined):  # type: ignore[no-untyped-def]
    """``GameSteps._refill``: (game ends?, pile length, discard length, reshuffles)."""
    n, h, mode, fixed = dims[0], dims[1], rule_ints[0], rule_ints[4]
    if fixed:
        for s in range(n):
            for i in range(h):
                hands[s, i] = dealt[s, i]
            lengths[s] = h
        return False, plen, dlen, reshuffles
    need = 0
    for s in range(n):
        need += h - lengths[s]
    if plen < need:
        if mode == CANNOT_REFILL:
            return True, plen, dlen, reshuffles
        if mode == RESHUFFLE:
            total = plen + dlen
            for i in range(total):  # the pile, then the discard
                combined[i] = pile[i] if i < plen else discard[i - plen]
            stream_argsort(stream_base(k0, k1, STREAM_RESHUFFLE + reshuffles), 0, total, keys,
                           spare, counts, order)
            for i in range(total):
                pile[i] = combined[order[i]]
            plen, dlen, reshuffles = total, 0, reshuffles + 1
            if plen < need:
                return True, plen, dlen, reshuffles
    for offset in range(1, n + 1):
        s = (teller + offset) % n
        while lengths[s] < h and plen > 0:
            hands[s, lengths[s]] = pile[plen - 1]
            lengths[s] += 1
            plen -= 1
    if mode == PLAY_OUT and plen == 0:  # can the next round be played from the hands?
        following = (teller + 1) % n
        for s in range(n):
            if lengths[s] < (1 if s == following else dims[2]):
                return True, plen, dlen, reshuffles
    return mode == LAST_DRAWN and plen == 0, plen, dlen, reshuffles


def _compiled(sources: str) -> Any:
    """:func:`play_games`, its cache keyed by ``sources`` (the module's docstring says why)."""

    @cached_njit()
    def play_games(games, table, policies, start, stop, results, rounds
                   ):  # type: ignore[no-untyped-def]
        """Play ``games`` (:class:`Games`) ``start .. stop - 1`` at ``table``
        (:class:`Table`) with ``policies`` (:class:`Policies`), writing each game's
        :class:`Results` and its :class:`Rounds` from row ``results.round_start[start]``,
        and return the index of the first game not played: ``stop``, or earlier if the round
        arrays could not hold ``max_rounds`` more rounds (the caller grows them and calls
        again from there)."""
        keys, seat_bases, seating, firsts = games
        dims, rule_ints, search, bonus = table
        (pol, temps, tabs, vecs, ivecs, cdfs, near_keys, nbest, words, near_rows, wtabs,
         wvecs, margin) = policies
        round_start, end_round, end_reason, final = results
        r_teller, r_clue, r_card, r_display, r_owner, r_votes, r_points, r_scores, r_hand = \
            rounds
        if not sources:  # (the digest, read once a batch: it is the cache's key, see above)
            return start
        n, h, per, k, size = dims[0], dims[1], dims[2], dims[3], dims[4]
        target, max_rounds, first_random = rule_ints[1], rule_ints[2], rule_ints[3]
        capacity = r_teller.shape[0]
        hands = np.empty((n, h), dtype=np.int64)
        dealt = np.empty((n, h), dtype=np.int64)
        lengths = np.empty(n, dtype=np.int64)
        pile = np.empty(size, dtype=np.int64)
        discard = np.empty(size, dtype=np.int64)
        combined = np.empty(size, dtype=np.int64)
        sort_keys = np.empty(max(size, k, h), dtype=np.uint64)
        spare = np.empty(max(size, k, h), dtype=np.uint64)
        counts = np.empty(2 * max(size, k, h), dtype=np.int64)
        order = np.empty(max(size, k), dtype=np.int64)
        counters = np.zeros(n, dtype=np.int64)
        scores = np.zeros(n, dtype=np.int64)
        table = np.empty(k, dtype=np.int64)
        owners = np.empty(k, dtype=np.int64)
        display = np.empty(k, dtype=np.int64)
        owner = np.empty(k, dtype=np.int64)
        votes = np.empty(n, dtype=np.int64)
        received = np.zeros(n, dtype=np.int64)
        chosen = np.empty(per, dtype=np.int64)
        allowed = np.empty(max(h, k), dtype=np.bool_)
        values = np.empty(2 * max(h, k), dtype=np.float64)  # and categorical's running totals
        weights = np.empty(2 * max(h, k), dtype=np.float64)  # and weighted's running totals
        bases = np.empty(n, dtype=np.uint64)
        row = round_start[start]
        for g in range(start, stop):
            round_start[g] = row
            if row + max_rounds > capacity:
                return g
            k0, k1 = keys[g, 0], keys[g, 1]
            for s in range(n):
                bases[s] = seat_bases[g, s]
            stream_argsort(stream_base(k0, k1, STREAM_DEAL), 0, size, sort_keys, spare, counts,
                           order)
            for s in range(n):
                for i in range(h):
                    hands[s, i] = dealt[s, i] = order[s * h + i]
                lengths[s] = h
            plen, dlen, reshuffles = size - n * h, 0, 0
            for i in range(plen):  # drawn from the end: the next card is order[n * h]
                pile[i] = order[size - 1 - i]
            teller = firsts[g]
            if first_random:
                first = uniform(stream_base(k0, k1, STREAM_FIRST), 0)
                teller = min(np.int64(first * n), n - 1)
            counters[:] = 0
            scores[:] = 0
            display_base = stream_base(k0, k1, STREAM_DISPLAY)
            reason, last = MAX_ROUNDS, max_rounds - 1
            for index in range(max_rounds):
                for i in range(lengths[teller]):
                    r_hand[row, i] = hands[teller, i]
                for i in range(lengths[teller], h):  # a hand shrunk under play_out_hands
                    r_hand[row, i] = -1
                p = seating[g, teller]
                card, clue = play_tell(pol[p, TELL], p, hands, teller, lengths[teller],
                                       bases, counters, pol, temps, vecs, ivecs, cdfs,
                                       near_keys, nbest, words, near_rows, index, values,
                                       allowed, wvecs, weights, margin)
                _remove(hands, lengths, teller, card)
                table[0], owners[0], column = card, teller, 1
                for offset in range(1, n):
                    seat = (teller + offset) % n
                    p = seating[g, seat]
                    play_submit(pol[p, SUBMIT], p, hands, seat, lengths[seat], clue, per,
                                chosen, bases, counters, pol, temps, tabs, values, allowed,
                                wtabs, weights, margin)
                    for j in range(per):
                        _remove(hands, lengths, seat, chosen[j])
                        table[column], owners[column] = chosen[j], seat
                        column += 1
                stream_argsort(display_base, index * k, k, sort_keys, spare, counts, order)
                for j in range(k):
                    display[j], owner[j] = table[order[j]], owners[order[j]]
                votes[teller], finders, received[:] = -1, 0, 0
                for offset in range(1, n):
                    seat = (teller + offset) % n
                    p = seating[g, seat]
                    vote = play_vote(pol[p, VOTE], p, display, owner, k, seat, clue,
                                     bases, counters, pol, temps, tabs, values, allowed,
                                     wtabs, weights, margin)
                    votes[seat] = vote
                    if owner[vote] == teller:
                        finders += 1
                    else:
                        received[owner[vote]] += 1
                for seat in range(n):
                    if seat == teller:
                        points = search[0, finders]
                    else:
                        found = owner[votes[seat]] == teller
                        points = search[1 if found else 2, finders] + bonus[received[seat]]
                    scores[seat] += points
                    r_points[row, seat] = points
                    r_scores[row, seat] = scores[seat]
                    r_votes[row, seat] = votes[seat]
                r_teller[row], r_clue[row], r_card[row] = teller, clue, card
                for j in range(k):
                    r_display[row, j], r_owner[row, j] = display[j], owner[j]
                if not rule_ints[4]:  # fixed hands: nothing is discarded for good
                    for j in range(k):
                        discard[dlen + j] = display[j]
                    dlen += k
                row += 1
                top = scores[0]
                for seat in range(1, n):
                    top = max(top, scores[seat])
                if target >= 0 and top >= target:
                    reason, last = TARGET_SCORE, index
                    break
                ended, plen, dlen, reshuffles = _refill(
                    hands, lengths, dealt, pile, plen, discard, dlen, teller, dims, rule_ints,
                    k0, k1, reshuffles, sort_keys, spare, counts, order, combined)
                if ended:
                    reason, last = DECK_EXHAUSTED, index
                    break
                teller = (teller + 1) % n
            end_round[g], end_reason[g] = last, reason
            for s in range(n):
                final[g, s] = scores[s]
        round_start[stop] = row
        return stop

    return play_games


play_games = _compiled(sources_digest())
