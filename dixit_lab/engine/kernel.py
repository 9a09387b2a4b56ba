"""The compiled kernel: whole games of the built-in policies in Numba, one game after another.

Imported by :mod:`dixit_lab.engine.compiled` (the ``fast`` extra). :func:`play_games` mirrors
the reference game (:mod:`dixit_lab.engine.game`) with the same streams
(:mod:`dixit_lab.core.seeding`) and plays the decision rules of :mod:`dixit_lab.policy.kernel`
(the float operations and tie-breaking of :mod:`dixit_lab.policy.backends`) into flat round
arrays. Every function it calls lives in this file: Numba's on-disk cache (``cache=True``) is
invalidated by a change of a function's own file, not of the files it calls.

**Why the helpers are ``_nrt=False``**: Numba counts references to every array a function
receives or slices (an atomic add and subtract each): 58 % of the kernel's time, with a dozen
arrays handed to each decision. Every function but :func:`play_games` (which allocates the
scratch arrays) is compiled without Numba's runtime and takes no view of an array. ``_nrt``
is an underscored option of Numba's ``jit``: were a release to drop it, or a helper to
allocate, the kernel would fail to compile, not run wrong.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: how every function but ``play_games`` is compiled (see above); Numba inlines the small ones
#: every decision calls (``_hot``): LLVM does not, and their calls were a tenth of a game
_helper = njit(cache=True, _nrt=False)  # type: ignore[call-overload]
_hot = njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]

# -- the streams (dixit_lab.core.seeding, for one number at a time) ------------------------------
_GOLDEN, _STREAM = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_LOW11, _LOW32, _S32 = np.uint64(2047), np.uint64(0xFFFFFFFF), np.uint64(32)
_TO_UNIT = 1.0 / 2.0**53
_DEAL, _DISPLAY, _FIRST, _RESHUFFLE = 1, 2, 3, 1000

# the decision rules (dixit_lab.policy.kernel) and the columns of a policy's row of ``pol``
_TELL_RANDOM, _TELL_BEST, _TELL_SOFTMAX, _TELL_NEAR_BEST = 0, 1, 2, 3
_SUBMIT_RANDOM, _SUBMIT_BEST, _SUBMIT_SOFTMAX = 0, 1, 2
_VOTE_RANDOM, _VOTE_BEST, _VOTE_SOFTMAX = 0, 1, 2
(TELL, SUBMIT, VOTE, LISTEN, VOTE_TABLE, CARD_VALUE, CARD_CLUE, CDF, CLUE_TOTAL, WORDS,
 WORD_COUNT, LAST_CLUE, LISTEN_WEIGHTS, VOTE_WEIGHTS, CARD_WEIGHTS, COLUMNS) = range(16)
# deck_exhausted modes (dixit_lab.core.rules.DECK_EXHAUSTED_MODES, in order)
LAST_DRAWN, CANNOT_REFILL, RESHUFFLE = 0, 1, 2
# end reasons
MAX_ROUNDS, TARGET_SCORE, DECK_EXHAUSTED = 0, 1, 2


@_hot
def _mix(x: np.uint64) -> np.uint64:
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@_hot
def _bits(base: np.uint64, counter: int) -> np.uint64:
    """The 53 bits of number ``counter`` of a stream (``uniforms`` is them over 2**53)."""
    return _mix(base + np.uint64(counter + 1) * _GOLDEN) >> _S11


@_hot
def _uniform(base: np.uint64, counter: int) -> float:
    return np.float64(_bits(base, counter)) * _TO_UNIT


@_helper
def _stream_base(k0: np.uint64, k1: np.uint64, stream: int) -> np.uint64:
    return _mix(k0 ^ _mix(k1 ^ (np.uint64(stream) * _STREAM)))


@_helper
def _order(base, offset, size, keys, spare, counts, out):  # type: ignore[no-untyped-def]
    """``out[:size]`` = the stable argsort of numbers ``offset ..`` of a stream
    (``seeding.permutation``): each number's 53 bits above its index, sorted; many (a deal)
    first into buckets by their top bits (a comparison sort's mispredictions were a third of
    a game)."""
    for i in range(size):
        keys[i] = (_bits(base, offset + i) << _S11) | np.uint64(i)
    ordered = keys
    if size > 24:
        bits = 1
        while (1 << bits) < size:
            bits += 1
        shift = np.uint64(64 - bits)
        for bucket in range(1 << bits):
            counts[bucket] = 0
        for i in range(size):
            counts[np.int64(keys[i] >> shift)] += 1
        total = 0
        for bucket in range(1 << bits):
            count = counts[bucket]
            counts[bucket] = total
            total += count
        for i in range(size):
            bucket = np.int64(keys[i] >> shift)
            spare[counts[bucket]] = keys[i]
            counts[bucket] += 1
        ordered = spare
    _insertion_sort(ordered, size)
    for i in range(size):
        out[i] = np.int64(ordered[i] & _LOW11)


@_hot
def _insertion_sort(keys, size):  # type: ignore[no-untyped-def]
    for i in range(1, size):
        key = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key


# -- the decision rules ----------------------------------------------------------------------


@_hot
def _draw(bases, counters, seat):  # type: ignore[no-untyped-def]
    """The seat's next number (``draws.next()``)."""
    value = _uniform(bases[seat], counters[seat])
    counters[seat] += 1
    return value


@_hot
def _below(u, count):  # type: ignore[no-untyped-def]
    return min(np.int64(u * count), count - 1)


@_hot
def _nth_allowed(allowed, count, index):  # type: ignore[no-untyped-def]
    seen = 0
    for i in range(count):
        if allowed[i]:
            if seen == index:
                return i
            seen += 1
    return -1


@_hot
def _first_max(values, count, allowed):  # type: ignore[no-untyped-def]
    best, top = -1, -np.inf
    for i in range(count):
        if allowed[i] and (best < 0 or values[i] > top):
            best, top = i, values[i]
    return best


@_helper
def _categorical(values, count, temperature, u, allowed):  # type: ignore[no-untyped-def]
    """``categorical_small`` over the allowed: the first whose cumulative weight exp((v -
    top) / T) exceeds ``u * total``, else the last allowed (running totals in ``values``'
    second half). A softmax's draw where ``_weighted`` cannot vouch for its own."""
    top = -np.inf
    for i in range(count):
        if allowed[i] and values[i] > top:
            top = values[i]
    totals = values.shape[0] // 2
    total = 0.0
    for i in range(count):
        if allowed[i]:
            total += math.exp((values[i] - top) / temperature)
        values[totals + i] = total
    threshold = u * total
    last = -1
    for i in range(count):
        if allowed[i]:
            if threshold < values[totals + i]:
                return i
            last = i
    return last


@_hot
def _weighted(weights, count, u, allowed, margin):  # type: ignore[no-untyped-def]
    """``_categorical``'s draw from weights made once per table, exp((v - row max) / T)
    (``compiled.softmax_weights``): the reference's times one constant, up to rounding far
    below ``margin`` (``compiled.MARGIN``). -1 where that rounding could change the draw: a
    sum compared within ``margin * total`` of the threshold, or a total outside [1e-200,
    1e300] (a weight that counts lost to underflow, near overflow, NaN)."""
    totals = weights.shape[0] // 2
    total = 0.0
    for i in range(count):
        if allowed[i]:
            total += weights[i]
        weights[totals + i] = total
    if not 1e-200 <= total <= 1e300:
        return -1
    threshold, below, room = u * total, 0.0, margin * total
    for i in range(count):
        if allowed[i]:
            if threshold < weights[totals + i]:
                if weights[totals + i] - threshold > room and threshold - below > room:
                    return i
                return -1
            below = weights[totals + i]
    return -1


@_hot
def _search_right(stack, a, b, target):  # type: ignore[no-untyped-def]
    """``searchsorted(stack[a, b], target, side="right")``."""
    low, high = 0, stack.shape[2]
    while low < high:
        middle = (low + high) // 2
        if stack[a, b, middle] <= target:
            low = middle + 1
        else:
            high = middle
    return low


@_helper
def _tell(rule, p, hands, seat, size, bases, counters, pol, temps, vecs, ivecs, cdfs,
          near_keys, nbest, words, near_rows, index, values, allowed, wvecs, weights,
          margin):  # type: ignore[no-untyped-def]
    """(card, clue row) of the storyteller's rule in round ``index`` for ``hands[seat, :size]``
    (``near_rows[p, r]``: the ``NearBest`` of round ``r``, the last one for every later)."""
    if rule == _TELL_RANDOM:
        card = hands[seat, _below(_draw(bases, counters, seat), size)]
        word = _below(_draw(bases, counters, seat), pol[p, WORD_COUNT])
        return card, words[pol[p, WORDS], word]
    if rule == _TELL_BEST:
        value = pol[p, CARD_VALUE]
        for i in range(size):
            values[i] = vecs[value, hands[seat, i]]
            allowed[i] = True
        card = hands[seat, _first_max(values, size, allowed)]
        return card, ivecs[pol[p, CARD_CLUE], card]
    if rule == _TELL_SOFTMAX:
        value, weight = pol[p, CARD_VALUE], pol[p, CARD_WEIGHTS]
        u = _draw(bases, counters, seat)
        for i in range(size):
            weights[i] = wvecs[weight, hands[seat, i]]
            allowed[i] = True
        index = _weighted(weights, size, u, allowed, margin)
        if index < 0:  # the values themselves, only now (one table's rows are not read twice)
            for i in range(size):
                values[i] = vecs[value, hands[seat, i]]
            index = _categorical(values, size, temps[p], u, allowed)
        card = hands[seat, index]
        target = _draw(bases, counters, seat) * vecs[pol[p, CLUE_TOTAL], card]
        clue = _search_right(cdfs, pol[p, CDF], card, target)
        return card, min(clue, pol[p, LAST_CLUE])
    # _TELL_NEAR_BEST: NearBest.tell, on its keys_by_best_card table
    near = near_rows[p, min(index, near_rows.shape[1] - 1)]
    top_card = hands[seat, 0]
    for i in range(1, size):
        if nbest[near, hands[seat, i]] > nbest[near, top_card]:
            top_card = hands[seat, i]
    position, top = 0, np.uint64(0)
    for i in range(size):
        high = near_keys[near, top_card, hands[seat, i]] >> _S32
        if i == 0 or high > top:
            position, top = i, high
    clue = np.int64(_LOW32 - (near_keys[near, top_card, hands[seat, position]] & _LOW32))
    return hands[seat, position], clue


@_helper
def _submit(rule, p, hands, seat, size, clue, n_cards, chosen, bases, counters, pol, temps,
            tabs, values, allowed, wtabs, weights, margin):  # type: ignore[no-untyped-def]
    """``chosen[:n_cards]``: the listener's cards of ``hands[seat]`` for ``clue``, in order."""
    for i in range(size):
        allowed[i] = True
    table, weight = pol[p, LISTEN], pol[p, LISTEN_WEIGHTS]
    for i in range(size):  # the values of the cards (their weights for a softmax)
        if rule == _SUBMIT_BEST:
            values[i] = tabs[table, clue, hands[seat, i]]
        elif rule == _SUBMIT_SOFTMAX:
            weights[i] = wtabs[weight, clue, hands[seat, i]]
    for j in range(n_cards):
        if rule == _SUBMIT_RANDOM:
            index = _nth_allowed(allowed, size,
                                 _below(_draw(bases, counters, seat), size - j))
        elif rule == _SUBMIT_BEST:
            index = _first_max(values, size, allowed)
        else:
            u = _draw(bases, counters, seat)
            index = _weighted(weights, size, u, allowed, margin)
            if index < 0:
                for i in range(size):
                    values[i] = tabs[table, clue, hands[seat, i]]
                index = _categorical(values, size, temps[p], u, allowed)
        chosen[j] = hands[seat, index]
        allowed[index] = False


@_helper
def _vote(rule, p, display, owner, k, seat, clue, bases, counters, pol, temps, tabs, values,
          allowed, wtabs, weights, margin):  # type: ignore[no-untyped-def]
    """The listener's display position: never one of its own cards."""
    count = 0
    for j in range(k):
        allowed[j] = owner[j] != seat
        count += allowed[j]
    if rule == _VOTE_RANDOM:
        return _nth_allowed(allowed, k, _below(_draw(bases, counters, seat), count))
    table, weight = pol[p, VOTE_TABLE], pol[p, VOTE_WEIGHTS]
    if rule == _VOTE_BEST:
        for j in range(k):
            values[j] = tabs[table, clue, display[j]]
        return _first_max(values, k, allowed)
    for j in range(k):
        weights[j] = wtabs[weight, clue, display[j]]
    u = _draw(bases, counters, seat)
    index = _weighted(weights, k, u, allowed, margin)
    if index < 0:
        for j in range(k):
            values[j] = tabs[table, clue, display[j]]
        index = _categorical(values, k, temps[p], u, allowed)
    return index


# -- the game ---------------------------------------------------------------------------------


@_hot
def _remove(hands, lengths, seat, card):  # type: ignore[no-untyped-def]
    """``hand.remove(card)``."""
    size = lengths[seat]
    i = 0
    while hands[seat, i] != card:
        i += 1
    for j in range(i, size - 1):
        hands[seat, j] = hands[seat, j + 1]
    lengths[seat] = size - 1


@_helper
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
            _order(_stream_base(k0, k1, _RESHUFFLE + reshuffles), 0, total, keys, spare,
                   counts, order)
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
    return mode == LAST_DRAWN and plen == 0, plen, dlen, reshuffles


@njit(cache=True)
def play_games(keys, seat_bases, seating, dims, rule_ints, search, bonus, pol, temps,
               tabs, vecs, ivecs, cdfs, near_keys, nbest, words, near_rows, wtabs, wvecs,
               margin, start, stop,
               round_start, end_round, end_reason, final, r_teller, r_clue, r_card,
               r_display, r_owner, r_votes, r_points, r_scores, r_hand
               ):  # type: ignore[no-untyped-def]
    """Play games ``start .. stop - 1`` (rounds from row ``round_start[start]``); return the
    first game not played: ``stop``, or earlier if the round arrays are full (the caller grows
    them and calls again). ``dims``: players, hand, cards per listener, displayed, deck;
    ``rule_ints``: deck_exhausted mode, target score (-1: none), max_rounds, random first
    storyteller, fixed hands; ``search``: points by finders (storyteller, finder, missed);
    ``bonus``: by votes received; ``seating``: each seat's policy (row of ``pol``);
    ``margin``: :data:`dixit_lab.engine.compiled.MARGIN`."""
    n, h, per, k, size = dims[0], dims[1], dims[2], dims[3], dims[4]
    target, max_rounds, first_random = rule_ints[1], rule_ints[2], rule_ints[3]
    capacity = r_teller.shape[0]
    # scratch (values, weights: and the running totals of _categorical, _weighted)
    hands, dealt = np.empty((n, h), np.int64), np.empty((n, h), np.int64)
    pile, discard, combined = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(
        size, np.int64)
    most = max(size, k, h)
    sort_keys, spare, counts = np.empty(most, np.uint64), np.empty(most, np.uint64), np.empty(
        2 * most, np.int64)
    order, chosen = np.empty(max(size, k), np.int64), np.empty(per, np.int64)
    lengths, counters, scores = np.empty(n, np.int64), np.zeros(n, np.int64), np.zeros(
        n, np.int64)
    votes, received, bases = np.empty(n, np.int64), np.zeros(n, np.int64), np.empty(
        n, np.uint64)
    table, owners = np.empty(k, np.int64), np.empty(k, np.int64)
    display, owner, allowed = np.empty(k, np.int64), np.empty(k, np.int64), np.empty(
        max(h, k), np.bool_)
    values, weights = np.empty(2 * max(h, k)), np.empty(2 * max(h, k))
    row = round_start[start]
    for g in range(start, stop):
        round_start[g] = row
        if row + max_rounds > capacity:
            return g
        k0, k1 = keys[g, 0], keys[g, 1]
        for s in range(n):
            bases[s] = seat_bases[g, s]
        _order(_stream_base(k0, k1, _DEAL), 0, size, sort_keys, spare, counts, order)
        for s in range(n):
            for i in range(h):
                hands[s, i] = dealt[s, i] = order[s * h + i]
            lengths[s] = h
        plen, dlen, reshuffles = size - n * h, 0, 0
        for i in range(plen):  # drawn from the end: the next card is order[n * h]
            pile[i] = order[size - 1 - i]
        teller = 0
        if first_random:
            teller = min(np.int64(_uniform(_stream_base(k0, k1, _FIRST), 0) * n), n - 1)
        counters[:] = 0
        scores[:] = 0
        display_base = _stream_base(k0, k1, _DISPLAY)
        reason, last = MAX_ROUNDS, max_rounds - 1
        for index in range(max_rounds):
            for i in range(lengths[teller]):
                r_hand[row, i] = hands[teller, i]
            p = seating[g, teller]
            card, clue = _tell(pol[p, TELL], p, hands, teller, lengths[teller], bases,
                               counters, pol, temps, vecs, ivecs, cdfs, near_keys, nbest,
                               words, near_rows, index, values, allowed, wvecs, weights,
                               margin)
            _remove(hands, lengths, teller, card)
            table[0], owners[0], column = card, teller, 1
            for offset in range(1, n):
                seat = (teller + offset) % n
                p = seating[g, seat]
                _submit(pol[p, SUBMIT], p, hands, seat, lengths[seat], clue, per, chosen,
                        bases, counters, pol, temps, tabs, values, allowed, wtabs,
                        weights, margin)
                for j in range(per):
                    _remove(hands, lengths, seat, chosen[j])
                    table[column], owners[column] = chosen[j], seat
                    column += 1
            _order(display_base, index * k, k, sort_keys, spare, counts, order)
            for j in range(k):
                display[j], owner[j] = table[order[j]], owners[order[j]]
            votes[teller], finders, received[:] = -1, 0, 0
            for offset in range(1, n):
                seat = (teller + offset) % n
                p = seating[g, seat]
                vote = _vote(pol[p, VOTE], p, display, owner, k, seat, clue, bases,
                             counters, pol, temps, tabs, values, allowed, wtabs,
                             weights, margin)
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
            ended, plen, dlen, reshuffles = _refill(hands, lengths, dealt, pile, plen,
                                                     discard, dlen, teller, dims, rule_ints,
                                                     k0, k1, reshuffles, sort_keys, spare,
                                                     counts, order, combined)
            if ended:
                reason, last = DECK_EXHAUSTED, index
                break
            teller = (teller + 1) % n
        end_round[g], end_reason[g] = last, reason
        for s in range(n):
            final[g, s] = scores[s]
    round_start[stop] = row
    return stop
