"""A model of how listeners respond to a clue: the maths behind the tuned storytellers.

The storyteller wants to know, for a card ``c`` of its hand and a clue ``k`` of the bank, the
probability ``p`` that one listener votes for ``c``. The model (all of it in similarities of
one :class:`~dixit_lab.embeddings.EmbeddingSpace`):

1. **Decoys.** Every other listener holds ``h`` cards drawn at random from the deck without
   ``c`` and submits its best match(es) for the clue (1 card, or 2 at three players).
2. **Votes.** A listener votes by a softmax with temperature ``T`` over the cards it may vote
   for: the storyteller's card and the other listeners' decoys (never its own card), so

       p = E[ a / (a + X) ],   a = exp(s_kc / T),   X = sum over decoys d of exp(s_kd / T).

The decoy similarities are order statistics of a random hand, whose distribution is exact and
shared by every clue once the deck's similarities to that clue are sorted. ``X`` is a sum of
independent decoy terms (we ignore the correlation between the two decoys of one hand at three
players); the expectation of the ratio is taken to second order in ``X`` (the delta method):

       p ≈ a / (a + μ) + a σ² / (a + μ)³,   μ = E[X],  σ² = Var[X].

Everything is computed once per (space, T, hand size, decoys) for every (clue, card) pair, so
a storyteller's decision is a lookup over its hand. Listeners are treated as independent given
``p`` when the outcome of a whole round is predicted (:func:`outcome_probabilities`).

Approximations, on purpose: the pool of possible decoys is the whole deck without ``c`` (the
storyteller's other cards and the discard are not removed), and decoys are best matches
although a real population may choose more loosely. ``tests/test_listener_model.py`` checks
the formulas against Monte Carlo simulations of the same model.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from dixit_lab.rules import RuleSet

__all__ = [
    "ListenerModel",
    "deck_rank_fraction",
    "decoy_rank_probability",
    "decoy_weights",
    "expected_storyteller_points",
    "listener_model",
    "outcome_probabilities",
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


def _leave_one_out_moments(
    sorted_values: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """E[g] and E[g²] of one decoy slot when the card at each sorted position is removed.

    ``sorted_values`` is (M, N) ascending exp-similarities; ``weights`` (N-1,) the slot's
    order-statistic weights over a pool of N-1. Returns two (M, N) arrays indexed by the
    sorted position of the removed card.
    """
    m, n = sorted_values.shape
    out = []
    for values in (sorted_values, sorted_values * sorted_values):
        # removed position r (0-based): positions t < r keep pool index t; t > r move to t-1
        below = np.zeros((m, n))
        below[:, 1:] = np.cumsum(values[:, :-1] * weights, axis=1)
        above = np.zeros((m, n))
        shifted = values[:, 1:] * weights  # position t >= 1 at pool index t-1
        above[:, :-1] = np.cumsum(shifted[:, ::-1], axis=1)[:, ::-1]
        out.append(below + above)
    return out[0], out[1]


@dataclass(frozen=True)
class ListenerModel:
    """Find probabilities for every (card, clue) pair of a space, for one table shape.

    ``find[c, k]`` is the predicted probability that one listener votes for card ``c`` when it
    is the storyteller's card and ``k`` the clue (cards are rows so that a hand is a block of
    rows); ``find_variance[c, k]`` is how much that probability varies with the decoys that
    happen to be drawn (to first order). ``decoy_probability[r - 1]`` is the chance that a card
    of ascending deck rank ``r`` for the clue is submitted by a listener who holds it.
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
              decoys_per_listener: int, other_listeners: int) -> ListenerModel:
        """``similarity`` is the (clues, cards) matrix of a space."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        sims = np.asarray(similarity, dtype=np.float64)
        n_clues, n_cards = sims.shape
        order = np.argsort(sims, axis=1, kind="stable")
        sorted_sims = np.take_along_axis(sims, order, axis=1)
        top = sorted_sims[:, -1:]
        sorted_exp = np.exp((sorted_sims - top) / temperature)
        mean = np.zeros((n_clues, n_cards))
        var = np.zeros((n_clues, n_cards))
        for slot in range(1, decoys_per_listener + 1):
            weights = decoy_weights(n_cards - 1, hand_size, slot)
            first, second = _leave_one_out_moments(sorted_exp, weights)
            mean += first
            var += np.maximum(second - first * first, 0.0)
        # back from sorted positions to card columns
        mean_by_card = np.empty_like(mean)
        var_by_card = np.empty_like(var)
        np.put_along_axis(mean_by_card, order, mean, axis=1)
        np.put_along_axis(var_by_card, order, var, axis=1)
        mu = other_listeners * mean_by_card
        sigma2 = other_listeners * var_by_card
        a = np.exp((sims - top) / temperature)
        denominator = a + mu
        find = a / denominator + a * sigma2 / denominator**3
        find = np.clip(find, 0.0, 1.0)
        find_variance = a * a * sigma2 / denominator**4
        rank_probability = decoy_rank_probability(n_cards, hand_size, decoys_per_listener)
        return cls(float(temperature), hand_size, decoys_per_listener, other_listeners,
                   _by_card(find), _by_card(find_variance), rank_probability)


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
                   other_listeners: int) -> ListenerModel:
    """The :class:`ListenerModel` of a space for one table shape, built once per process."""
    models = _MODELS.setdefault(space, {})
    key = (float(temperature), hand_size, decoys_per_listener, other_listeners)
    model = models.get(key)
    if model is None:
        model = models[key] = ListenerModel.build(space.similarity, temperature, hand_size,
                                                  decoys_per_listener, other_listeners)
    return model
