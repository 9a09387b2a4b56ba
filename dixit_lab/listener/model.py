"""A model of how listeners respond to a clue: the maths behind the tuned storytellers.

The storyteller wants to know, for a card ``c`` of its hand and a clue ``k`` of the bank, the
probability ``p`` that one listener votes for ``c``, in the round it is about to play. The
model (all of it in similarities of one :class:`~dixit_lab.embeddings.EmbeddingSpace`):

1. **Hands.** Each of the other ``m`` listeners holds ``h`` cards other than ``c`` (7 at
   three players in the classic rules); a slot of a hand holds a card by the round's **pool
   law** (:mod:`dixit_lab.listener.hand_survival`): uniform at the deal, then fewer of the
   cards that match many clues, since those are submitted first.
2. **Decoys.** Each submits 1 card (2 at three players): drawn with probability
   ∝ exp(s_kd / T_d) over its hand, as the ``softmax`` population does, or its best
   match(es) (``decoy_temperature=None``).
3. **Votes.** A listener votes by a softmax with temperature ``T`` over the cards it may vote
   for: the storyteller's card and the other listeners' decoys (never its own cards), so

       p = E[a / (a + X)],   a = exp(s_kc / T),   X = sum over decoys d of exp(s_kd / T),

   computed by the Laplace transform (:mod:`dixit_lab.listener.laplace`,
   :mod:`dixit_lab.listener.tables`, whose docstring says what is exact and what is
   approximated). ``find_variance`` is the
   variance of a/(a+X) over the decoys drawn.

The tables are computed once per (space, T, table shape, decoy temperature): at the deal's
law and at the laws of two later rounds of the path the pool law takes during a game; a
round's table is the quadratic interpolation along that path (:class:`ListenerModel`), so a
storyteller's decision stays a lookup. Best-match decoys use the deal's hands at every round.

Still assumed: the listeners' hands are independent of each other and of the storyteller's
hand, and listeners are independent given ``p`` when the outcome of a whole round is
predicted (:func:`expected_storyteller_points` corrects that to second order with
``find_variance``). ``tests/listener/test_model.py`` checks the model against Monte Carlo
simulations of the same hands and against the votes of engine games at 3 to 6 players.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dixit_lab.core import rules as core_rules
from dixit_lab.core.rules import RuleSet
from dixit_lab.listener.hand_survival import HandDynamics, pool_laws, softmax_teller
from dixit_lab.listener.tables import (
    _power,
    best_match_tables,
    decoy_rank_probability,
    decoy_weights,
    softmax_submission,
    softmax_tables,
)

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

#: a round's place on the pool law's path is rounded to this step (at most 0.001 of find
#: probability), so a game's rounds share a few tables
POSITION_STEP = 1 / 32
#: the anchors: the rounds whose place on the path is nearest these
ANCHORS = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class ListenerModel:
    """Find probabilities for every (card, clue) pair of a space, for one table shape, round
    by round.

    :meth:`find_at` ``(r)[c, k]`` is the predicted probability that one listener votes for
    card ``c`` when it is the storyteller's card, ``k`` the clue and ``r`` the round (0-based;
    cards are rows so that a hand is a block of rows); :meth:`variance_at` is how much that
    probability varies with the decoys that happen to be drawn (its variance under the
    model). ``decoy_probability[r - 1]`` is the chance that a card of ascending deck rank
    ``r`` for the clue is submitted by a best-matching listener who holds it (the
    ``pragmatic`` voter's model of decoys).

    A round's place on the pool law's path is ``u_r``, the projection of ``π_r − π_0`` on
    ``Δ``, the step from the deal's law to the law farthest from it in the game (0 at the
    deal, 1 at that round). ``anchor_find`` holds the tables at the laws of the rounds whose
    ``u`` is nearest 0, ½ and 1 (``anchor_position``; one table when the hands never change),
    and a round's table is their quadratic interpolation in ``u_r`` (rounded to
    :data:`POSITION_STEP`): within 0.004 of the table of its own law at 3 and 6 players.
    """

    temperature: float
    hand_size: int
    decoys_per_listener: int
    other_listeners: int
    anchor_find: np.ndarray          # (anchors, cards, clues) float32
    anchor_variance: np.ndarray      # (anchors, cards, clues) float32
    anchor_position: np.ndarray      # (anchors,) u of each anchor
    pool_law: np.ndarray             # (rounds, cards) π_r of every round a game can reach
    round_position: np.ndarray       # (rounds,) u_r: π_r ≈ π_0 + u_r Δ
    decoy_probability: np.ndarray
    _tables: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, similarity: np.ndarray, temperature: float, hand_size: int,
              decoys_per_listener: int, other_listeners: int,
              decoy_temperature: float | None = None,
              dynamics: HandDynamics | None = None) -> ListenerModel:
        """``similarity`` is the (clues, cards) matrix of a space; ``decoy_temperature`` None
        for best-match decoys, else the temperature of the listeners' softmax submissions;
        ``dynamics`` the table's rules (None: every round is played from dealt hands)."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if decoy_temperature is not None and decoy_temperature <= 0:
            raise ValueError(f"decoy_temperature must be positive, got {decoy_temperature}")
        if decoys_per_listener not in DECOYS_PER_LISTENER:
            raise ValueError(f"decoys_per_listener must be 1 or 2, got {decoys_per_listener}")
        sims = np.asarray(similarity, dtype=np.float64)
        n_cards = sims.shape[1]
        if not decoys_per_listener <= hand_size <= n_cards - 1:
            raise ValueError(f"need {decoys_per_listener} <= hand ({hand_size}) <= "
                             f"{n_cards - 1} cards")
        if dynamics is not None and dynamics.deck_size != n_cards:
            raise ValueError(f"dynamics for {dynamics.deck_size} cards, the space has "
                             f"{n_cards}")
        rank_probability = decoy_rank_probability(n_cards, hand_size, decoys_per_listener)
        shape = (float(temperature), hand_size, decoys_per_listener, other_listeners)
        uniform = np.full((1, n_cards), 1.0 / n_cards)
        if decoy_temperature is None:
            find, second = best_match_tables(sims, temperature, hand_size,
                                             decoys_per_listener, other_listeners)
            return cls(*shape, *_stack([(find, second)]), np.zeros(1), uniform, np.zeros(1),
                       rank_probability)
        clue_law, told = softmax_teller(sims, decoy_temperature, hand_size)
        tables, hazard = softmax_tables(sims, temperature, decoy_temperature, hand_size,
                                        decoys_per_listener, other_listeners, uniform, clue_law)
        laws = uniform if dynamics is None else pool_laws(hazard[0], dynamics, told)
        step = laws[np.argmax(np.abs(laws - laws[0]).sum(axis=1))] - laws[0]
        size = float(step @ step)
        if size < 1e-12:
            return cls(*shape, *_stack(tables), np.zeros(1), laws, np.zeros(len(laws)),
                       rank_probability)
        positions = np.clip((laws - laws[0]) @ step / size, 0.0, 1.0)
        anchors = sorted({int(np.argmin(np.abs(positions - u))) for u in ANCHORS} - {0},
                         key=lambda r: positions[r])
        more, _ = softmax_tables(sims, temperature, decoy_temperature, hand_size,
                                 decoys_per_listener, other_listeners, laws[anchors])
        return cls(*shape, *_stack(tables + more), np.concatenate([[0.0], positions[anchors]]),
                   laws, positions, rank_probability)

    @property
    def rounds(self) -> int:
        """Rounds with their own pool law (later rounds use the last one's)."""
        return len(self.round_position)

    def position_key(self, round_index: int) -> int:
        """The rounded place of round ``round_index`` on the pool law's path: rounds with the
        same key share their tables."""
        if round_index < 0:
            raise ValueError(f"round_index must be >= 0, got {round_index}")
        u = self.round_position[min(round_index, self.rounds - 1)]
        return round(float(u) / POSITION_STEP)

    def find_at(self, round_index: int) -> np.ndarray:
        """(cards, clues) float32: the find probability of every pair in that round."""
        return self._table(self.position_key(round_index))[0]

    def variance_at(self, round_index: int) -> np.ndarray:
        """(cards, clues) float32: the variance of the find probability in that round."""
        return self._table(self.position_key(round_index))[1]

    def rows_at(self, round_index: int, cards: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(find, variance) of those cards' rows in that round, each (len(cards), clues)
        float32: the rows of :meth:`find_at` and :meth:`variance_at`, the same values, but
        without building (and keeping) the whole tables of a round that has none yet, which
        is what a storyteller that weighs many listener types at once needs (36 types' whole
        tables held 1.6 GB at one 6-player table)."""
        key = self.position_key(round_index)
        table = self._tables.get(key)
        rows = list(cards)
        if table is not None:
            return table[0][rows], table[1][rows]
        if len(self.anchor_find) == 1:
            return self.anchor_find[0][rows], self.anchor_variance[0][rows]
        weights = _lagrange(key * POSITION_STEP, self.anchor_position)
        find = np.clip(np.tensordot(weights, self.anchor_find[:, rows], axes=1), 0.0, 1.0)
        variance = np.maximum(np.tensordot(weights, self.anchor_variance[:, rows], axes=1), 0.0)
        return (np.ascontiguousarray(find, dtype=np.float32),
                np.ascontiguousarray(variance, dtype=np.float32))

    def _table(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        table = self._tables.get(key)
        if table is None:
            if len(self.anchor_find) == 1:
                table = (self.anchor_find[0], self.anchor_variance[0])
            else:
                weights = _lagrange(key * POSITION_STEP, self.anchor_position)
                find = np.clip(np.tensordot(weights, self.anchor_find, axes=1), 0.0, 1.0)
                variance = np.maximum(np.tensordot(weights, self.anchor_variance, axes=1),
                                      0.0)
                table = (_read_only(find), _read_only(variance))
            self._tables[key] = table
        return table


def _lagrange(u: float, nodes: np.ndarray) -> np.ndarray:
    """Weights of the anchors' values (at ``nodes``) for the polynomial through them, at
    ``u``."""
    weights = np.ones(len(nodes))
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            if i != j:
                weights[i] *= (u - b) / (a - b)
    return weights


def _stack(tables: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(clues, cards) (find, second moment) per anchor -> (anchors, cards, clues) float32
    find and variance, read-only."""
    finds = np.stack([np.clip(f, 0.0, 1.0).T for f, _ in tables])
    variances = np.stack([np.maximum(s - f * f, 0.0).T for f, s in tables])
    return (_read_only(np.ascontiguousarray(finds, dtype=np.float32)),
            _read_only(np.ascontiguousarray(variances, dtype=np.float32)))


def _read_only(array: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(array, dtype=np.float32)
    out.flags.writeable = False
    return out


def _by_card(matrix: np.ndarray) -> np.ndarray:
    """(clues, cards) -> read-only contiguous (cards, clues) float32."""
    return _read_only(matrix.T)


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
    # the points by number of finders are the rules' (search_points): 0 .. n finders
    table = core_rules.search_points(rules, n + 1)[0]
    # some found it but not one alone (read at 4 players when this table has no such case)
    usual = core_rules.search_points(rules, max(n + 1, 4))[0][2]
    lone = table[1] if n >= 2 else usual
    if any(table[finders] != usual for finders in range(2, n)):  # a rule this form cannot hold
        return _binomial_points(p, n, table, variance if has_variance else None)
    points = usual * some
    if lone != usual and n >= 2:
        one = n * p * q_low * q
        if has_variance:
            # d²/dp² of n p (1-p)^(n-1)
            curvature = n * (n - 1) * (-2.0 * q_low + (n - 2) * p * _power(q, n - 3)
                                       if n >= 3 else -2.0 * np.ones_like(p))
            one = one + 0.5 * curvature * v
        one = np.clip(one, 0.0, 1.0)
        points = points + (lone - usual) * one
    if table[0]:  # (0 under every rule so far: nothing added, the same floats)
        points = points + table[0] * none_found
    if table[n]:
        points = points + table[n] * all_found
    return np.asarray(points)


def _binomial_points(p: np.ndarray, n: int, table: Sequence[int],
                     variance: np.ndarray | float | None) -> np.ndarray:
    """The expected points of ``table`` (points by number of finders) over the binomial law
    of ``n`` listeners finding with probability ``p``, to second order in ``variance``."""
    from math import comb

    points = np.zeros_like(p)
    for finders, value in enumerate(table):
        if not value:
            continue
        law = comb(n, finders) * _power(p, finders) * _power(1.0 - p, n - finders)
        if variance is not None:  # d²/dp² of C p^k q^(n-k), by finite differences of p
            h = 1e-4
            up = comb(n, finders) * _power(p + h, finders) * _power(1.0 - p - h, n - finders)
            down = comb(n, finders) * _power(p - h, finders) * _power(1.0 - p + h, n - finders)
            law = law + 0.5 * (up - 2.0 * law + down) / (h * h) * variance
        points = points + value * np.clip(law, 0.0, 1.0)
    return np.asarray(points)


_MODELS: weakref.WeakKeyDictionary[Any, dict[tuple, ListenerModel]] = weakref.WeakKeyDictionary()


#: the cards each listener puts on the table that the model follows
DECOYS_PER_LISTENER = (1, 2)


def listener_model_problem(rules: RuleSet, n_players: int) -> str | None:
    """Why there is no :class:`ListenerModel` for a table of ``n_players`` under ``rules``
    (None: there is): each listener must put 1 or 2 cards on the table."""
    per = rules.cards_per_player(n_players)
    if per not in DECOYS_PER_LISTENER:
        return (f"its listener model follows tables where each listener puts 1 or 2 cards "
                f"on the table; these rules have {per} at {n_players} players")
    return None


def listener_model(space: Any, temperature: float, rules: RuleSet, n_players: int,
                   decoy_temperature: float | None = None) -> ListenerModel:
    """The :class:`ListenerModel` of a space for a table of ``n_players`` under ``rules``
    (softmax decoys at ``decoy_temperature``, None for best-match), built once per process
    and shape."""
    n_cards = np.shape(space.similarity)[1]
    dynamics = HandDynamics.of(rules, n_players, n_cards)
    models = _MODELS.setdefault(space, {})
    key = (float(temperature), dynamics,
           None if decoy_temperature is None else float(decoy_temperature))
    model = models.get(key)
    if model is None:
        model = models[key] = ListenerModel.build(
            space.similarity, temperature, dynamics.hand_size, dynamics.per_player,
            n_players - 2, decoy_temperature, dynamics)
    return model
