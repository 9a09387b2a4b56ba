"""The listener model's tables: the find probability of every (card, clue) pair for one law of
the cards in the other listeners' hands.

A **pool law** ``π`` is a distribution over the deck: the chance that a slot of another
listener's hand holds each card (uniform at the deal; :mod:`dixit_lab.listener.hand_survival`
gives it round by round). For a clue ``k`` and the storyteller's card ``c``, each of the ``m``
other listeners holds a hand of ``h`` cards, other than ``c``, and submits 1 card (2 at three
players); a listener votes by a softmax with temperature ``T`` over ``c`` and those decoys:

    p = E[a / (a + X)],   a = exp(s_kc / T),   X = Σ_decoys exp(s_kd / T)
      = E[φ(G / a)^m],    G ~ Exponential(1)           (:mod:`dixit_lab.listener.laplace`)

with ``φ`` the Laplace transform of one listener's decoy weight.

**Softmax decoys** (the ``softmax`` population: a card drawn ∝ exp(s_kd / T_d) of its hand,
two without replacement at three players). Sequential softmax draws without replacement are
an exponential race: each card of the hand rings at an independent Exponential(e_d) time,
``e_d = exp(s_kd / T_d)``, and the first (two) to ring are submitted. So, with ``y_d(θ) =
exp(−θ e_d)`` and ``ψ(θ) = Σ π_l y_l(θ)``,

    P(d submitted)            ∝ π_d ∫ e_d y_d(θ) ψ₋d(θ)^{h−1} dθ
    P(i first, j second)      ∝ π_i π_j ∫ (1 − y_i(θ)) e_j y_j(θ) ψ₋ij(θ)^{h−2} dθ

(``j`` rings at ``θ``, ``i`` before, the hand's other cards after), where the hand's other
cards are drawn independently from the pool without the submitted card(s) (``ψ₋d = (ψ −
π_d y_d) / (1 − π_d)``, and ``ψ₋ij^{h−2}`` as ``ψ^{h−2}`` times each card's own ratio, which
keeps the pair law a sum of products). That is the one approximation of a hand drawn without
replacement; both laws are renormalised, and a listener's decoys are those of a hand
conditioned on not being ``c``. ``tests/listener/test_model.py`` checks it against Monte Carlo
of real hands (within 0.004) and of engine games. The θ integrals use the trapezoid rule in
``ln θ`` of :mod:`dixit_lab.listener.laplace`; at two decoys the vote's transform needs, per
clue, the products of the θ and t grids, done as matrix products over a batch of clues.

**Best-match decoys** (``literal``: its best card(s)): exact order statistics of a hand drawn
without replacement from the uniform pool (the deck without ``c``); this mode has no pool law.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dixit_lab.listener.laplace import STEP, RatioIntegral, log_grid

__all__ = ["TablePair", "best_match_tables", "decoy_rank_probability", "decoy_weights",
           "softmax_submission", "softmax_tables"]

#: (find, second moment) per (clue, card): E[a/(a+X)] and E[(a/(a+X))²]
TablePair = tuple[np.ndarray, np.ndarray]

#: clues per group of the one-decoy build, and per batch of the two-decoy build (arrays of
#: batch × nodes × nodes × cards)
_GROUP = 512
_BATCH = 48


def softmax_tables(similarity: np.ndarray, temperature: float, decoy_temperature: float,
                   hand: int, decoys: int, others: int, pools: np.ndarray,
                   clue_weights: np.ndarray | None = None
                   ) -> tuple[list[TablePair], np.ndarray]:
    """For each pool law (row of ``pools``, (P, cards)): the find probability and its second
    moment per (clue, card), and (P, cards) the chance that a card in a slot of a listener's
    hand is submitted, averaged over the clues with ``clue_weights`` (default: alike; its
    hazard in :mod:`dixit_lab.listener.hand_survival`).

    Clues are taken in groups of similar spread (the grid in ``ln t`` a clue needs reaches
    ``4 − ln a`` of its least similar card), each group on its own grid."""
    sims = np.asarray(similarity, dtype=np.float64)
    top = sims.max(axis=1, keepdims=True)
    log_e, log_v = (sims - top) / decoy_temperature, (sims - top) / temperature
    pools = np.atleast_2d(np.asarray(pools, dtype=np.float64))
    clues, n = sims.shape
    weights = (np.full(clues, 1.0 / clues) if clue_weights is None
               else np.asarray(clue_weights, dtype=np.float64) / np.sum(clue_weights))
    first = np.empty((len(pools), clues, n))
    second = np.empty_like(first)
    hazard = np.zeros((len(pools), n))
    spread = np.minimum(log_e.min(axis=1), log_v.min(axis=1))
    order = np.argsort(spread, kind="stable")
    size = _GROUP if decoys == 1 else _BATCH
    for rows in np.array_split(order, max(1, math.ceil(clues / size))):
        build = _single_tables if decoys == 1 else _pair_tables
        first[:, rows], second[:, rows], submitted = build(log_e[rows], log_v[rows], hand,
                                                           others, pools)
        hazard += np.einsum("k,pkn->pn", weights[rows], submitted)
    return [(first[i], second[i]) for i in range(len(pools))], hazard / (hand * pools)


def softmax_submission(similarity: np.ndarray, temperature: float, hand: int,
                       pool: np.ndarray | None = None) -> np.ndarray:
    """(clues, cards): the chance that a listener whose hand slots follow ``pool`` (default
    uniform) submits each card when it draws one card ∝ exp(similarity / temperature)."""
    sims = np.asarray(similarity, dtype=np.float64)
    n = sims.shape[1]
    law = np.full((1, n), 1.0 / n) if pool is None else np.asarray(pool, np.float64)[None]
    return _single_submission((sims - sims.max(axis=1, keepdims=True)) / temperature, hand,
                              law)[0]


def _single_submission(log_e: np.ndarray, hand: int, pools: np.ndarray) -> np.ndarray:
    """(P, clues, cards) P(d submitted), one decoy, normalised per clue."""
    e = np.exp(log_e)
    nodes = log_grid(float(log_e.min()))
    integral = RatioIntegral(log_e, nodes, moments=1)
    law = pools[:, None, :]
    keep = 1.0 / (1.0 - law)
    for tau in nodes:
        y = np.exp(-math.exp(tau) * e)
        weighted = y * law
        psi = weighted.sum(axis=2, keepdims=True)
        integral.add(_power((psi - weighted) * keep, hand - 1), decay=y)
    first, _ = integral.result()
    q = first * law
    return q / q.sum(axis=2, keepdims=True)


def _single_tables(log_e: np.ndarray, log_v: np.ndarray, hand: int, others: int,
                   pools: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One decoy per listener: (P, clues, cards) find, second moment and each card's chance
    to be submitted. A decoy is drawn from the submission law conditioned on not being the
    storyteller's card."""
    q = _single_submission(log_e, hand, pools)
    v = np.exp(log_v)
    nodes = log_grid(float(log_v.min()))
    integral = RatioIntegral(log_v, nodes)
    keep = 1.0 / (1.0 - q)
    for tau in nodes:
        x = np.exp(-math.exp(tau) * v)
        qx = q * x
        phi = (qx.sum(axis=2, keepdims=True) - qx) * keep
        integral.add(_power(phi, others), decay=x)
    first, second = _moments(integral)
    return first, second, q


def _moments(integral: RatioIntegral) -> TablePair:
    first, second = integral.result()
    assert second is not None
    return np.clip(first, 0.0, 1.0), second


def _pair_tables(log_e: np.ndarray, log_v: np.ndarray, hand: int, others: int,
                 pools: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two softmax decoys per listener (see the module docstring) for a batch of clues:
    (P, clues, cards) find, second moment and each card's chance to be submitted."""
    e, v = np.exp(log_e), np.exp(log_v)                     # (B, N)
    theta = np.exp(log_grid(float(log_e.min())))            # (S,) θ nodes
    lt = log_grid(float(log_v.min()))
    x = np.exp(-v[:, :, None] * np.exp(lt))                 # (B, N, T)
    y = np.exp(-theta[None, :, None] * e[:, None, :])       # (B, S, N)
    firsts, seconds, submitted = [], [], []
    for pool in pools:
        weighted = y * pool
        psi = weighted.sum(axis=2)                          # (B, S)
        # beyond the last θ where ψ^{h-2} counts, every term below is negligible
        alive = np.flatnonzero(_power(psi, hand - 2).max(axis=0) > 1e-14)
        cut = slice(0, int(alive[-1]) + 1 if alive.size else 1)
        weighted, psi = weighted[:, cut], psi[:, cut]
        safe = np.where(psi > 0, psi, 1.0)
        rho = _power(np.clip(1.0 - weighted / safe[:, :, None], 0.0, None)
                     / (1.0 - pool), hand - 2)
        w = STEP * theta[cut] * _power(psi, hand - 2)       # (B, S): dθ = θ d(ln θ)
        alpha = weighted * e[:, None, :] * rho              # rings second, at θ
        beta = (pool - weighted) * rho                      # rang before θ
        a_sum = alpha @ x                                   # (B, S, T): Σ_j α_j x_j
        b_sum = beta @ x
        total = np.einsum("bs,bst->bt", w, a_sum * b_sum)   # all pairs, c included
        w_alpha = np.ascontiguousarray((w[:, :, None] * alpha).transpose(0, 2, 1))
        w_beta = np.ascontiguousarray((w[:, :, None] * beta).transpose(0, 2, 1))
        with_c = w_alpha @ b_sum + w_beta @ a_sum           # (B, N, T): pairs holding c
        both = np.einsum("bns,bsn->bn", w_alpha, beta)      # pairs holding c twice
        phi = total[:, None, :] - x * with_c + x * x * both[:, :, None]
        # the same at t = 0: the chance that the pair avoids c, and the pair law's total
        a_all, b_all = alpha.sum(axis=2), beta.sum(axis=2)  # (B, S)
        norm = np.einsum("bs,bs->b", w, a_all * b_all)[:, None]
        second_of = np.einsum("bns,bs->bn", w_alpha, b_all)  # c rings second
        first_of = np.einsum("bns,bs->bn", w_beta, a_all)    # c rings first
        avoid = norm - second_of - first_of + both
        phi = _power(np.clip(phi / avoid[:, :, None], 0.0, 1.0), others)
        integral = RatioIntegral(log_v, lt)                 # the vote: E[φ(G/a)^m]
        integral.add_all(phi, x)
        first, second = _moments(integral)
        firsts.append(first)
        seconds.append(second)
        submitted.append((second_of + first_of) / norm)
    return np.stack(firsts), np.stack(seconds), np.stack(submitted)


def best_match_tables(similarity: np.ndarray, temperature: float, hand: int, decoys: int,
                      others: int) -> TablePair:
    """(find, second moment) per (clue, card) when every listener submits its best card(s)
    of a hand drawn without replacement from the deck without the storyteller's card: exact
    order statistics (at two decoys, the joint law of a hand's two best cards)."""
    sims = np.asarray(similarity, dtype=np.float64)
    n_cards = sims.shape[1]
    order = np.argsort(sims, axis=1, kind="stable")
    sorted_sims = np.take_along_axis(sims, order, axis=1)
    log_v = (sorted_sims - sorted_sims[:, -1:]) / temperature
    v = np.exp(log_v)
    transform: Callable[[np.ndarray], np.ndarray]
    if decoys == 1:
        weights = decoy_weights(n_cards - 1, hand, 1)
        transform = lambda x: _leave_one_out(x, weights)  # noqa: E731
    else:
        transform = lambda x: _best_two(x, hand)  # noqa: E731
    nodes = log_grid(float(log_v.min()))
    integral = RatioIntegral(log_v, nodes)
    for tau in nodes:
        x = np.exp(-math.exp(tau) * v)
        integral.add(_power(transform(x), others), decay=x)
    first, second = _moments(integral)
    return _unsort(first, order), _unsort(second, order)


def _unsort(sorted_values: np.ndarray, order: np.ndarray) -> np.ndarray:
    out = np.empty_like(sorted_values)
    np.put_along_axis(out, order, sorted_values, axis=1)
    return out


def decoy_weights(pool: int, hand: int, slot: int) -> np.ndarray:
    """Probability that the ``slot``-th best card (1 = best) of a random ``hand`` drawn from a
    pool of ``pool`` cards is the pool's ``i``-th smallest, for ``i = 1..pool`` (index 0..)."""
    if not 1 <= slot <= hand <= pool:
        raise ValueError(f"need 1 <= slot ({slot}) <= hand ({hand}) <= pool ({pool})")
    i = np.arange(1, pool + 1)
    below = np.array([math.comb(int(k) - 1, hand - slot) for k in i], dtype=np.float64)
    above = np.array([math.comb(pool - int(k), slot - 1) for k in i], dtype=np.float64)
    return below * above / math.comb(pool, hand)


def decoy_rank_probability(n_cards: int, hand: int, slots: int) -> np.ndarray:
    """For a card of ascending rank ``r`` (1..n_cards) among the deck for a clue: the
    probability that a listener holding it submits it (it is among the ``slots`` best of its
    hand, whose other ``hand - 1`` cards are random). Index ``r - 1``."""
    ranks = np.arange(1, n_cards + 1)
    total = math.comb(n_cards - 1, hand - 1)
    probability = np.zeros(n_cards)
    for slot in range(1, slots + 1):
        # slot - 1 of the other cards rank above it, the rest below
        probability += np.array([math.comb(int(r) - 1, hand - slot)
                                 * math.comb(n_cards - int(r), slot - 1) for r in ranks]) / total
    return probability


def _leave_one_out(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per removed card: ``sum_i weights[pool index of i] * values[i]`` over the other cards.

    ``values`` is (M, N) in ascending order of similarity; ``weights`` (N-1,) over the pool of
    the N-1 cards left when the card at a sorted position is removed (cards below it keep
    their index, cards above it move down one). Returns (M, N) by removed sorted position.
    """
    m, n = values.shape
    below = np.zeros((m, n))
    below[:, 1:] = np.cumsum(values[:, :-1] * weights, axis=1)
    above = np.zeros((m, n))
    above[:, :-1] = np.cumsum((values[:, 1:] * weights)[:, ::-1], axis=1)[:, ::-1]
    return below + above


def _exclusive_cumsum(values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(values)
    np.cumsum(values[:, :-1], axis=1, out=out[:, 1:])
    return out


def _exclusive_suffix(values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(values)
    out[:, :-1] = np.cumsum(values[:, :0:-1], axis=1)[:, ::-1]
    return out


def _best_two(values: np.ndarray, hand: int) -> np.ndarray:
    """Per removed card: E[values[best] * values[second best]] of a random ``hand`` of the
    other cards (sorted ascending, as :func:`_leave_one_out`), with the joint law of the two
    order statistics: P(best = pool rank i, second = j < i) = C(j - 1, hand - 2) / C(P, hand)."""
    n = values.shape[1]
    pool = n - 1
    # c[j] for pool rank j = 0..n (ranks 0 and n do not exist)
    c = np.array([math.comb(j - 1, hand - 2) if 1 <= j <= pool else 0 for j in range(n + 1)],
                 dtype=np.float64) / math.comb(pool, hand)
    low_weight, high_weight = c[1:], c[:n]  # a second best below / above the removed card
    below = _exclusive_cumsum(values * low_weight)            # sum_{q<p} x_q c[q+1]
    suffix = _exclusive_suffix(values)                        # sum_{p>r} x_p
    both_below = _exclusive_cumsum(values * below)            # best and second below r
    straddle = suffix * below                                 # best above r, second below
    high = _exclusive_cumsum(values * high_weight)            # sum_{q<p} x_q c[q]
    both_above = _exclusive_suffix(values * high) - (high + values * high_weight) * suffix
    return both_below + straddle + both_above


def _power(x: np.ndarray, k: int) -> np.ndarray:
    """x ** k for a small non-negative integer k, by multiplication (faster than pow)."""
    if k < 0:
        raise ValueError(f"_power needs k >= 0, got {k}")
    result = np.ones_like(x)
    base = x
    while k:
        if k & 1:
            result = result * base
        k >>= 1
        if k:
            base = base * base
    return result
