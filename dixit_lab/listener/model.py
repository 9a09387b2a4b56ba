"""A model of how listeners respond to a clue: the maths behind the tuned storytellers.

The storyteller wants to know, for a card ``c`` of its hand and a clue ``k`` of the bank, the
probability ``p`` that one listener votes for ``c``. The model (all of it in similarities of
one :class:`~dixit_lab.embeddings.EmbeddingSpace`):

1. **Decoys.** Each of the other ``m`` listeners holds ``h`` cards drawn at random from the
   deck without ``c``, independently of the others, and submits 1 card (2 at three players):
   either its best match(es) for the clue (``decoy_temperature=None``) or, as the ``softmax``
   population does, a card drawn with probability ∝ exp(s_kd / T_d) over its hand.
2. **Votes.** A listener votes by a softmax with temperature ``T`` over the cards it may vote
   for: the storyteller's card and the other listeners' decoys (never its own card), so

       p = E[ a / (a + X) ],   a = exp(s_kc / T),   X = sum over decoys d of exp(s_kd / T).

``p`` is computed exactly by the Laplace transform, p = a ∫₀^∞ e^{−at} φ(t)^m dt with φ the
transform of one listener's decoy weight (:mod:`dixit_lab.listener.laplace`): for best-match decoys
φ is exact (order statistics of a random hand, the two decoys of one hand at three players
jointly); for softmax decoys the chance that a card is submitted is exact for a hand whose
other cards are drawn with replacement, renormalised, and at three players the two decoys of
a hand are taken as independent draws of it. ``find_variance`` is the exact variance of
a/(a+X) over the decoys drawn. Everything is computed once per (space, T, hand size, decoys,
decoy temperature) for every (clue, card) pair, so a storyteller's decision is a lookup.

Assumptions, on purpose (they keep the table independent of the storyteller's hand): the pool
of possible decoys is the whole deck without ``c`` (the storyteller's other cards, the other
listeners' cards and the discard are not removed), and listeners are independent given ``p``
when the outcome of a whole round is predicted (:func:`expected_storyteller_points` corrects
that to second order with ``find_variance``). ``tests/listener/test_model.py`` checks the
model against Monte Carlo simulations of the same model on the shipped similarity matrices.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dixit_lab.core.rules import RuleSet
from dixit_lab.listener.laplace import RatioIntegral, log_grid

__all__ = [
    "ListenerModel",
    "deck_rank_fraction",
    "decoy_rank_probability",
    "decoy_weights",
    "expected_storyteller_points",
    "listener_model",
    "outcome_probabilities",
    "softmax_submission",
]


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


def softmax_submission(similarity: np.ndarray, temperature: float, hand: int) -> np.ndarray:
    """(M, N): per clue, the chance that a listener holding a random ``hand`` of the deck
    submits each card when it draws one card ∝ exp(similarity / temperature) of its hand.

    P(d submitted) = P(d in hand) · E[e_d / (e_d + Y)], Y the weights of the hand's other
    cards, computed by :mod:`dixit_lab.listener.laplace` with those cards drawn with replacement
    from the rest of the deck (the only approximation), then renormalised to sum to 1."""
    sims = np.asarray(similarity, dtype=np.float64)
    n = sims.shape[1]
    log_e = (sims - sims.max(axis=1, keepdims=True)) / temperature
    e = np.exp(log_e)
    nodes = log_grid(float(log_e.min()))
    integral = RatioIntegral(log_e, nodes, moments=1)
    for tau in nodes:
        x = np.exp(-math.exp(tau) * e)
        rest = (x.sum(axis=1, keepdims=True) - x) / (n - 1)
        integral.add(_power(rest, hand - 1))
    q, _ = integral.result()
    return q / q.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class ListenerModel:
    """Find probabilities for every (card, clue) pair of a space, for one table shape.

    ``find[c, k]`` is the predicted probability that one listener votes for card ``c`` when it
    is the storyteller's card and ``k`` the clue (cards are rows so that a hand is a block of
    rows); ``find_variance[c, k]`` is how much that probability varies with the decoys that
    happen to be drawn (its exact variance under the model). ``decoy_probability[r - 1]`` is
    the chance that a card of ascending deck rank ``r`` for the clue is submitted by a
    best-matching listener who holds it (the ``pragmatic`` voter's model of decoys).
    """

    temperature: float
    hand_size: int
    decoys_per_listener: int
    other_listeners: int
    find: np.ndarray
    find_variance: np.ndarray
    decoy_probability: np.ndarray

    @classmethod
    def build(cls, similarity: np.ndarray, temperature: float, hand_size: int,
              decoys_per_listener: int, other_listeners: int,
              decoy_temperature: float | None = None) -> ListenerModel:
        """``similarity`` is the (clues, cards) matrix of a space; ``decoy_temperature`` None
        for best-match decoys, else the temperature of the listeners' softmax submissions."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if decoy_temperature is not None and decoy_temperature <= 0:
            raise ValueError(f"decoy_temperature must be positive, got {decoy_temperature}")
        if decoys_per_listener not in (1, 2):
            raise ValueError(f"decoys_per_listener must be 1 or 2, got {decoys_per_listener}")
        sims = np.asarray(similarity, dtype=np.float64)
        n_cards = sims.shape[1]
        if not decoys_per_listener <= hand_size <= n_cards - 1:
            raise ValueError(f"need {decoys_per_listener} <= hand ({hand_size}) <= "
                             f"{n_cards - 1} cards")
        order = np.argsort(sims, axis=1, kind="stable")
        sorted_sims = np.take_along_axis(sims, order, axis=1)
        log_v = (sorted_sims - sorted_sims[:, -1:]) / temperature
        v = np.exp(log_v)
        transform = _decoy_transform(sorted_sims, hand_size, decoys_per_listener,
                                     decoy_temperature)
        nodes = log_grid(float(log_v.min()))
        integral = RatioIntegral(log_v, nodes)
        for tau in nodes:
            phi = transform(np.exp(-math.exp(tau) * v))
            integral.add(_power(phi, other_listeners))
        first, second = integral.result()
        assert second is not None
        find = np.clip(first, 0.0, 1.0)
        variance = np.maximum(second - find * find, 0.0)
        rank_probability = decoy_rank_probability(n_cards, hand_size, decoys_per_listener)
        return cls(float(temperature), hand_size, decoys_per_listener, other_listeners,
                   _by_card(_unsort(find, order)), _by_card(_unsort(variance, order)),
                   rank_probability)


def _unsort(sorted_values: np.ndarray, order: np.ndarray) -> np.ndarray:
    out = np.empty_like(sorted_values)
    np.put_along_axis(out, order, sorted_values, axis=1)
    return out


def _decoy_transform(sorted_sims: np.ndarray, hand: int, slots: int,
                     decoy_temperature: float | None) -> Callable[[np.ndarray], np.ndarray]:
    """x -> (M, N): E[product of x over one listener's decoys] per removed sorted position,
    for x = exp(-t v) at one node (see :class:`ListenerModel`)."""
    n_cards = sorted_sims.shape[1]
    if decoy_temperature is None:
        if slots == 1:
            weights = decoy_weights(n_cards - 1, hand, 1)
            return lambda x: _leave_one_out(x, weights)
        return lambda x: _best_two(x, hand)
    q = softmax_submission(sorted_sims, decoy_temperature, hand)
    keep = 1.0 - q
    if slots == 1:
        # a listener's card other than c: as from the whole deck, given that it is not c
        return lambda x: ((q * x).sum(axis=1, keepdims=True) - q * x) / keep
    # two draws without replacement: the first as above, the second as a draw from a hand
    # of one card less, other than c and the first
    r = softmax_submission(sorted_sims, decoy_temperature, hand - 1)
    first = q / (1.0 - r)

    def unnormalised(x: np.ndarray) -> np.ndarray:
        second = (r * x).sum(axis=1, keepdims=True) - r * x          # without c
        pair = (first * x).sum(axis=1, keepdims=True) - first * x    # first draw not c
        square = (first * r * x * x).sum(axis=1, keepdims=True) - first * r * x * x
        return second * pair - square

    total = unnormalised(np.ones_like(q))
    return lambda x: unnormalised(x) / total


def _by_card(matrix: np.ndarray) -> np.ndarray:
    """(clues, cards) float64 -> read-only contiguous (cards, clues) float32."""
    out = np.ascontiguousarray(matrix.T, dtype=np.float32)
    out.flags.writeable = False
    return out


def deck_rank_fraction(similarity: np.ndarray) -> np.ndarray:
    """(cards, clues): the share of the other cards of the deck that are less similar to the
    clue than this card (1 = the card most similar to the clue, 0 = the least)."""
    sims = np.asarray(similarity)
    n_cards = sims.shape[1]
    ranks = np.argsort(np.argsort(sims, axis=1, kind="stable"), axis=1, kind="stable")
    return _by_card(ranks / max(n_cards - 1, 1))


def outcome_probabilities(p: np.ndarray | float, voters: int) -> dict[str, Any]:
    """Probabilities of none / exactly one / all of ``voters`` independent listeners finding
    the card, each with probability ``p``."""
    p = np.asarray(p, dtype=np.float64)
    none = (1.0 - p) ** voters
    every = p**voters
    one = voters * p * (1.0 - p) ** (voters - 1)
    return {"none_found": none, "all_found": every, "exactly_one": one,
            "some_found": 1.0 - none - every}


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


def expected_storyteller_points(p: np.ndarray | float, voters: int, rules: RuleSet,
                                variance: np.ndarray | float = 0.0) -> np.ndarray:
    """The storyteller's expected points when each of ``voters`` listeners finds with
    probability ``p``, independently given the table.

    The listeners share one table, so their find probability moves together with the decoys
    drawn; ``variance`` (the variance of that probability) corrects the expectation to second
    order: E[f(p)] ≈ f(p̄) + f''(p̄) Var(p) / 2 for each outcome's probability f.
    """
    p = np.asarray(p, dtype=np.float64)
    n = voters
    q = 1.0 - p
    p_low, q_low = _power(p, n - 2), _power(q, n - 2)
    all_found = p_low * p * p
    none_found = q_low * q * q
    has_variance = not (np.isscalar(variance) and variance == 0)
    if has_variance:
        v = np.asarray(variance, dtype=np.float64)
        all_found = all_found + 0.5 * n * (n - 1) * p_low * v
        none_found = none_found + 0.5 * n * (n - 1) * q_low * v
    some = np.clip(1.0 - all_found - none_found, 0.0, 1.0)
    points = rules.storyteller_points * some
    if rules.lone_finder_points is not None and n >= 2:
        one = n * p * q_low * q
        if has_variance:
            # d²/dp² of n p (1-p)^(n-1)
            curvature = n * (n - 1) * (-2.0 * q_low + (n - 2) * p * _power(q, n - 3)
                                       if n >= 3 else -2.0 * np.ones_like(p))
            one = one + 0.5 * curvature * v
        one = np.clip(one, 0.0, 1.0)
        points = points + (rules.lone_finder_points - rules.storyteller_points) * one
    return np.asarray(points)


_MODELS: weakref.WeakKeyDictionary[Any, dict[tuple, ListenerModel]] = weakref.WeakKeyDictionary()


def listener_model(space: Any, temperature: float, hand_size: int, decoys_per_listener: int,
                   other_listeners: int, decoy_temperature: float | None = None
                   ) -> ListenerModel:
    """The :class:`ListenerModel` of a space for one table shape, built once per process."""
    models = _MODELS.setdefault(space, {})
    key = (float(temperature), hand_size, decoys_per_listener, other_listeners,
           None if decoy_temperature is None else float(decoy_temperature))
    model = models.get(key)
    if model is None:
        model = models[key] = ListenerModel.build(space.similarity, temperature, hand_size,
                                                  decoys_per_listener, other_listeners,
                                                  decoy_temperature)
    return model
