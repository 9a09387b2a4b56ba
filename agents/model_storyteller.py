"""Shared machinery of the storytellers that plan with a model of their listeners."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dixit_lab.core.agent import Clue, GameContext, TellView
from dixit_lab.core.rules import RuleSet
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.listener.model import ListenerModel, listener_model, listener_model_problem
from dixit_lab.policy import kernel
from dixit_lab.policy.backends import MANY, ONE, Backend
from dixit_lab.policy.batch_tools import orderable, searchsorted_rows
from dixit_lab_agents.literal import LiteralAgent, LiteralPolicy
from dixit_lab_agents.softmax_agent import DEFAULT_TEMPERATURE

__all__ = ["DECOY_MODELS", "ModelStoryteller", "NearBest", "near_best"]

#: how a model storyteller assumes the other listeners choose their decoys
DECOY_MODELS = ("softmax", "best")


class ModelStoryteller(LiteralAgent):
    """A storyteller that scores every (card of its hand, clue of the bank) pair and tells the
    best one; among pairs whose score is within ``tolerance`` of the best it prefers the clue
    most similar to its card. As a listener it plays like ``literal``.

    ``temperature`` is the softmax temperature it assumes its listeners vote with (see
    :mod:`dixit_lab.listener.model`); give it the population's temperature. ``decoys`` is how
    it assumes the other listeners choose the cards they submit: ``"softmax"`` (drawn by a
    softmax of similarities with the same temperature, as the ``softmax`` population does)
    or ``"best"`` (their best match, as ``literal`` does).

    The listener model depends on the round (the hands lose the cards that match clues
    well): its scores are per (pair, round). When they depend on the (card, clue) pair and
    the round alone (:meth:`score_matrix`), its tell is :class:`ModelStorytellerPolicy`'s,
    for one game here and for many in the batched engine (one policy per table of rounds,
    :meth:`ModelStorytellerPolicy.at_round`); scores that depend on the hand or the game
    (:meth:`pair_scores`) are searched pair by pair, and such an agent has no batched policy.
    """

    tolerance: float = 0.01

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default", decoys: str = "softmax") -> None:
        super().__init__(embedder, clues)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if decoys not in DECOY_MODELS:
            raise ValueError(f"decoys must be one of {', '.join(DECOY_MODELS)}, got {decoys!r}")
        self.temperature = temperature
        self.decoys = decoys
        self.model: ListenerModel
        self._shape: tuple[Any, ...] | None = None

    def prepare(self, space: EmbeddingSpace) -> None:
        super().prepare(space)
        self._shape = None  # a new space: new tables at the next begin_game
        self._clue_rows: dict[str, int] = {}  # a clue text's row in the bank (-1: not in it)

    @classmethod
    def table_problem(cls, rules: RuleSet, n_players: int) -> str | None:
        return listener_model_problem(rules, n_players)

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        n, rules = context.n_players, context.rules
        shape = (id(self.space), n, rules)
        if shape == self._shape:
            return
        self._shape = shape
        self.voters = n - 1
        self.model = listener_model(self.space, self.temperature, rules, n,
                                    self.temperature if self.decoys == "softmax" else None)
        self.similarity_by_card = np.ascontiguousarray(self.space.similarity.T)
        self.new_table(context)
        self._near_best: dict[int, NearBest] = {}
        self._policies: dict[tuple[int, str], ModelStorytellerPolicy] = {}
        self.table_based = self.score_matrix(self.model.find_at(0),
                                             self.model.variance_at(0)) is not None
        if self.table_based:
            self.decide = self.policy_at(0, ONE)

    def new_table(self, context: GameContext) -> None:
        """Precompute what depends on the table shape (players, rules) and the space."""

    def score_matrix(self, find: np.ndarray, variance: np.ndarray) -> np.ndarray | None:
        """(n_cards, n_clues) scores to maximise in a round whose listener model is ``find``
        and ``variance`` (:meth:`ListenerModel.find_at`), when they do not depend on the rest
        of the hand; else None and :meth:`pair_scores` is used."""
        return None

    def near_best_at(self, round_index: int) -> NearBest:
        """The indexed score table of round ``round_index`` (one per table of the model)."""
        key = self.model.position_key(round_index)
        near = self._near_best.get(key)
        if near is None:
            scores = self.score_matrix(self.model.find_at(round_index),
                                       self.model.variance_at(round_index))
            if scores is None:
                raise ValueError(f"{type(self).__name__} has no score table")
            near = self._near_best[key] = NearBest(scores, self.similarity_by_card,
                                                   self.tolerance)
        return near

    def pair_scores(self, hand: list[int], round_index: int) -> np.ndarray:
        """(len(hand), n_clues) scores of the pairs of this hand in round ``round_index``."""
        scores = self.score_matrix(self.model.find_at(round_index),
                                   self.model.variance_at(round_index))
        if scores is None:
            raise NotImplementedError(f"{type(self).__name__} must define score_matrix or "
                                      f"pair_scores")
        return scores[hand]

    def tell(self, view: TellView) -> Clue:
        if self.table_based:
            card, clue = self.policy_at(view.round, ONE).tell(view.hand, None)
            return Clue(card, self.space.clues.texts[clue])
        hand = list(view.hand)  # scores that depend on the hand: every pair of it
        row, clue = near_best(self.pair_scores(hand, view.round), self.similarity_by_card[hand],
                              self.tolerance)
        return Clue(hand[row], self.space.clues.texts[clue])

    def predicted_find(self, hand: list[int], card: int, clue_text: str,
                       round_index: int) -> float:
        """The model's probability that one listener finds ``card`` of ``hand`` after
        ``clue_text`` in round ``round_index`` (call after ``begin_game``, which fixes the
        table shape)."""
        return float(self.model.find_at(round_index)[card, self.space.clue_index(clue_text)])

    def predicted_finds(self, cards: np.ndarray, clue_texts: list[str],
                        rounds: np.ndarray) -> np.ndarray:
        """:meth:`predicted_find` of many turns at once (the hand does not matter to this
        model): NaN for a clue outside the bank (a fallback clue)."""
        distinct = list(dict.fromkeys(clue_texts))
        position = {text: code for code, text in enumerate(distinct)}
        codes = np.fromiter((position[text] for text in clue_texts), dtype=np.int64,
                            count=len(clue_texts))
        return self.predicted_finds_coded(cards, codes, distinct, rounds)

    def predicted_finds_coded(self, cards: np.ndarray, clue_codes: np.ndarray,
                              clue_texts: list[str], rounds: np.ndarray) -> np.ndarray:
        """:meth:`predicted_finds` of turns whose clues are given as ``clue_texts[code]``
        (a batch's clues dictionary-encoded: each text looked up in the bank once)."""
        clue_codes = np.asarray(clue_codes, dtype=np.int64)
        rows = np.full(len(clue_texts), -1, dtype=np.int64)
        known = self._clue_rows
        for code in np.unique(clue_codes).tolist():  # only the clues these turns told
            text = clue_texts[code]
            row = known.get(text)
            if row is None:
                try:
                    row = known[text] = self.space.clue_index(text)
                except KeyError:
                    row = known[text] = -1
            rows[code] = row
        clues = rows[clue_codes]
        cards = np.asarray(cards, dtype=np.int64)
        rounds = np.asarray(rounds, dtype=np.int64)
        found = np.full(len(clues), np.nan)
        # each round's table key, asked once per distinct round (a chunk has a few dozen)
        distinct, which = np.unique(rounds, return_inverse=True)
        keys = np.array([self.model.position_key(int(r)) for r in distinct],
                        dtype=np.int64)[which.reshape(-1)]
        for key in np.unique(keys):
            at = np.flatnonzero(keys == key)
            table = self.model.find_at(int(rounds[at[0]]))
            found[at] = table[cards[at], np.maximum(clues[at], 0)]
        return np.where(clues >= 0, found, np.nan)

    def policy(self, on: Backend, round_index: int = 0) -> ModelStorytellerPolicy:
        """Its decisions on backend ``on`` in round ``round_index`` (after ``begin_game``)."""
        return ModelStorytellerPolicy(self, on, round_index)

    def policy_at(self, round_index: int, on: Backend) -> ModelStorytellerPolicy:
        """:meth:`policy`, made once per table of the model and backend."""
        key = (self.model.position_key(round_index), on.name)
        policy = self._policies.get(key)
        if policy is None:
            policy = self._policies[key] = self.policy(on, round_index)
        return policy

    def batch_policy(self) -> ModelStorytellerPolicy:
        """The same decisions over many games at once (dixit_lab.engine.batched)."""
        if not self.table_based:
            raise ValueError(f"{self.name} has no batched policy")
        return self.policy_at(0, MANY)


def near_best(scores: np.ndarray, similarity: np.ndarray, tolerance: float) -> tuple[int, int]:
    """The tie-break of every model storyteller, on one hand's (h, n_clues) pair scores and
    similarities: among the pairs whose score is within ``tolerance`` of the best, the most
    similar; among equally similar pairs, the first card of the hand, then the lowest clue row.
    Compared in float32, as :class:`NearBest` (its index for a fixed table) compares them.
    Returns the (position in the hand, clue row)."""
    scores = np.asarray(scores, dtype=np.float32)
    threshold = scores.max() - np.float32(tolerance)
    near = np.where(scores >= threshold, np.asarray(similarity, dtype=np.float32),
                    np.float32(-np.inf))
    row, clue = divmod(int(np.argmax(near)), near.shape[1])
    return row, clue


class NearBest:
    """A fixed score table, indexed for the tell: :func:`near_best`'s choice for many hands at
    once. Among the (card of the hand, clue) pairs whose score is within ``tolerance`` of the
    hand's best, the clue most similar to its card.

    Each card's clues are sorted by score once, with a running best (similarity, then lowest
    clue row) along that order, so a tell is a binary search per card of the hand and a
    lookup.
    """

    def __init__(self, scores: np.ndarray, similarity_by_card: np.ndarray,
                 tolerance: float) -> None:
        scores = np.asarray(scores, dtype=np.float32)
        similarity = np.asarray(similarity_by_card, dtype=np.float32)
        self.n_clues = scores.shape[1]
        self.tolerance = np.float32(tolerance)
        self.card_best = scores.max(axis=1)
        self.ascending = np.sort(scores, axis=1)
        order = np.argsort(-scores, axis=1, kind="stable")
        sims = np.take_along_axis(similarity, order, axis=1)
        keys = (orderable(sims) << np.uint64(32)) | (np.uint64(0xFFFFFFFF)
                                                     - order.astype(np.uint64))
        self.prefix = np.maximum.accumulate(keys, axis=1)

    def keys_by_best_card(self) -> np.ndarray:
        """The (cards, cards) table of :meth:`tell`'s lookups, for the compiled kernel: at row
        ``t``, column ``c``, the running best key of card ``c`` among its clues within
        ``tolerance`` of card ``t``'s best score (0: none), which is what :meth:`tell` finds
        for card ``c`` of a hand whose best card is ``t``. ``cards² × 8`` bytes: smaller
        than :attr:`ascending` and :attr:`prefix` together while there are fewer cards
        than 1.5 × the clues."""
        cards, n_clues = self.ascending.shape
        thresholds = self.card_best - self.tolerance  # float32, as in tell
        table = np.zeros((cards, cards), dtype=np.uint64)
        for card in range(cards):
            near = n_clues - np.searchsorted(self.ascending[card], thresholds, side="left")
            found = near > 0
            table[found, card] = self.prefix[card, near[found] - 1]
        return table

    def tell(self, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R, h) hands -> the (R,) cards and clue rows told."""
        threshold = self.card_best[hands].max(axis=1) - self.tolerance   # float32, as scores
        size, h = hands.shape
        flat = hands.ravel()
        near = self.n_clues - searchsorted_rows(self.ascending, flat, np.repeat(threshold, h))
        best = np.where(near > 0, self.prefix[flat, np.maximum(near - 1, 0)], np.uint64(0))
        best = best.reshape(size, h)
        position = np.argmax(best >> np.uint64(32), axis=1)
        chosen = best[np.arange(size), position]
        clues = (np.uint64(0xFFFFFFFF) - (chosen & np.uint64(0xFFFFFFFF))).astype(np.int64)
        return hands[np.arange(size), position], clues


class ModelStorytellerPolicy(LiteralPolicy):
    """A model storyteller's decisions on a backend (:mod:`.backends`) in one round: its tell
    is :class:`NearBest`'s for that round, in NumPy on one row for ``ONE``; it listens like
    ``literal``. The batched engine asks :meth:`at_round` for each round's policy."""

    def __init__(self, agent: ModelStoryteller, on: Backend = MANY,
                 round_index: int = 0) -> None:
        super().__init__(agent, on)
        self.agent = agent
        self.near_best = agent.near_best_at(round_index)

    def at_round(self, round_index: int) -> ModelStorytellerPolicy:
        """The policy of round ``round_index`` (the same object for rounds that share the
        listener model's table)."""
        return self.agent.policy_at(round_index, self.on)

    def tell(self, hands: Any, draws: Any) -> tuple[Any, Any]:
        on = self.on
        cards, clues = self.near_best.tell(on.as_rows(hands))
        return on.from_rows(cards), on.from_rows(clues)

    def kernel_policy(self) -> kernel.KernelPolicy:
        """The same decisions for the compiled engine (:mod:`dixit_lab.policy.kernel`): its
        tell is ``NearBest``'s, it listens like ``literal``."""
        return dataclasses.replace(super().kernel_policy(), tell=kernel.TELL_NEAR_BEST,
                                   near_best=self.near_best)
