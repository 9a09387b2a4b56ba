"""The compiled kernel's decision rules (:mod:`dixit_lab.policy.kernel`: the built-in
policies' tell, submit and vote), with the float operations and tie-breaking of
:mod:`dixit_lab.policy.backends` and one number of the seat's stream per ``draws.next()``.
Part of :func:`dixit_lab.engine.kernel.play_games` (whose on-disk cache follows this file);
compiled as :mod:`dixit_lab.engine.kernel_streams` says.

A policy is a row of ``pol`` (its columns below: its rules, and the rows of the stacked tables
it reads, made by :func:`dixit_lab.engine.compiled.play_keys`).
"""

from __future__ import annotations

import math

import numpy as np

from dixit_lab.engine.kernel_streams import HELPER, HOT, uniform
from dixit_lab.policy.kernel import (
    SUBMIT_BEST,
    SUBMIT_RANDOM,
    SUBMIT_SOFTMAX,
    TELL_BEST,
    TELL_RANDOM,
    TELL_SOFTMAX,
    VOTE_BEST,
    VOTE_RANDOM,
)

__all__ = ["CARD_CLUE", "CARD_VALUE", "CARD_WEIGHTS", "CDF", "CLUE_TOTAL", "COLUMNS",
           "LAST_CLUE", "LISTEN", "LISTEN_WEIGHTS", "SUBMIT", "TELL", "VOTE", "VOTE_TABLE",
           "VOTE_WEIGHTS", "WORDS", "WORD_COUNT", "categorical", "play_submit", "play_tell",
           "play_vote", "weighted"]

#: the columns of a policy's row of ``pol``
(TELL, SUBMIT, VOTE, LISTEN, VOTE_TABLE, CARD_VALUE, CARD_CLUE, CDF, CLUE_TOTAL, WORDS,
 WORD_COUNT, LAST_CLUE, LISTEN_WEIGHTS, VOTE_WEIGHTS, CARD_WEIGHTS, COLUMNS) = range(16)
_LOW32, _S32 = np.uint64(0xFFFFFFFF), np.uint64(32)


@HOT
def _draw(bases, counters, seat):  # type: ignore[no-untyped-def]
    """The seat's next number (``draws.next()``)."""
    value = uniform(bases[seat], counters[seat])
    counters[seat] += 1
    return value


@HOT
def _below(u, count):  # type: ignore[no-untyped-def]
    return min(np.int64(u * count), count - 1)


@HOT
def _nth_allowed(allowed, count, index):  # type: ignore[no-untyped-def]
    seen = 0
    for i in range(count):
        if allowed[i]:
            if seen == index:
                return i
            seen += 1
    return -1


@HOT
def _first_max(values, count, allowed):  # type: ignore[no-untyped-def]
    best, top = -1, -np.inf
    for i in range(count):
        if allowed[i] and (best < 0 or values[i] > top):
            best, top = i, values[i]
    return best


@HELPER
def categorical(values, count, temperature, u, allowed):  # type: ignore[no-untyped-def]
    """``categorical_small`` over the allowed entries: the first whose left-to-right
    cumulative weight exp((v - top) / T) exceeds ``u * total``, else the last allowed (the
    running totals are kept in the second half of ``values``). The softmax rules' draw where
    :func:`weighted` cannot vouch for its own."""
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


@HOT
def weighted(weights, count, u, allowed, margin):  # type: ignore[no-untyped-def]
    """``categorical``'s draw from weights made once per table, exp((v - row max) / T)
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


@HOT
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


@HELPER
def play_tell(rule, p, hands, seat, size, bases, counters, pol, temps, vecs, ivecs, cdfs,
              near_keys, nbest, words, near_rows, index, values, allowed, wvecs, weights,
              margin):  # type: ignore[no-untyped-def]
    """(card, clue row) of the storyteller's rule in round ``index`` for ``hands[seat, :size]``
    (``near_rows[p, r]``: the ``NearBest`` of round ``r``, the last one for every later)."""
    if rule == TELL_RANDOM:
        card = hands[seat, _below(_draw(bases, counters, seat), size)]
        word = _below(_draw(bases, counters, seat), pol[p, WORD_COUNT])
        return card, words[pol[p, WORDS], word]
    if rule == TELL_BEST:
        value = pol[p, CARD_VALUE]
        for i in range(size):
            values[i] = vecs[value, hands[seat, i]]
            allowed[i] = True
        card = hands[seat, _first_max(values, size, allowed)]
        return card, ivecs[pol[p, CARD_CLUE], card]
    if rule == TELL_SOFTMAX:
        value, weight = pol[p, CARD_VALUE], pol[p, CARD_WEIGHTS]
        u = _draw(bases, counters, seat)
        for i in range(size):
            weights[i] = wvecs[weight, hands[seat, i]]
            allowed[i] = True
        chosen = weighted(weights, size, u, allowed, margin)
        if chosen < 0:  # the values themselves, only now (one table's rows are not read twice)
            for i in range(size):
                values[i] = vecs[value, hands[seat, i]]
            chosen = categorical(values, size, temps[p], u, allowed)
        card = hands[seat, chosen]
        target = _draw(bases, counters, seat) * vecs[pol[p, CLUE_TOTAL], card]
        clue = _search_right(cdfs, pol[p, CDF], card, target)
        return card, min(clue, pol[p, LAST_CLUE])
    # TELL_NEAR_BEST: NearBest.tell, on its keys_by_best_card table
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


@HELPER
def play_submit(rule, p, hands, seat, size, clue, n_cards, chosen, bases, counters, pol,
                temps, tabs, values, allowed, wtabs, weights, margin):  # type: ignore[no-untyped-def]
    """``chosen[:n_cards]``: the listener's cards of ``hands[seat]`` for ``clue``, in order."""
    for i in range(size):
        allowed[i] = True
    table, weight = pol[p, LISTEN], pol[p, LISTEN_WEIGHTS]
    for i in range(size):  # the values of the cards (their weights for a softmax)
        if rule == SUBMIT_BEST:
            values[i] = tabs[table, clue, hands[seat, i]]
        elif rule == SUBMIT_SOFTMAX:
            weights[i] = wtabs[weight, clue, hands[seat, i]]
    for j in range(n_cards):
        if rule == SUBMIT_RANDOM:
            index = _nth_allowed(allowed, size,
                                 _below(_draw(bases, counters, seat), size - j))
        elif rule == SUBMIT_BEST:
            index = _first_max(values, size, allowed)
        else:
            u = _draw(bases, counters, seat)
            index = weighted(weights, size, u, allowed, margin)
            if index < 0:
                for i in range(size):
                    values[i] = tabs[table, clue, hands[seat, i]]
                index = categorical(values, size, temps[p], u, allowed)
        chosen[j] = hands[seat, index]
        allowed[index] = False


@HELPER
def play_vote(rule, p, display, owner, k, seat, clue, bases, counters, pol, temps, tabs,
              values, allowed, wtabs, weights, margin):  # type: ignore[no-untyped-def]
    """The listener's display position: never one of its own cards."""
    count = 0
    for j in range(k):
        allowed[j] = owner[j] != seat
        count += allowed[j]
    if rule == VOTE_RANDOM:
        return _nth_allowed(allowed, k, _below(_draw(bases, counters, seat), count))
    table, weight = pol[p, VOTE_TABLE], pol[p, VOTE_WEIGHTS]
    if rule == VOTE_BEST:
        for j in range(k):
            values[j] = tabs[table, clue, display[j]]
        return _first_max(values, k, allowed)
    for j in range(k):
        weights[j] = wtabs[weight, clue, display[j]]
    u = _draw(bases, counters, seat)
    index = weighted(weights, k, u, allowed, margin)
    if index < 0:
        for j in range(k):
            values[j] = tabs[table, clue, display[j]]
        index = categorical(values, k, temps[p], u, allowed)
    return index
