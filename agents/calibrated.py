"""``calibrated``: a storyteller whose listener model was learned from logged games."""

from __future__ import annotations

import numpy as np

from dixit_lab.core.agent import GameContext, register_agent
from dixit_lab.listener.fit import FeatureTable, FittedListener, pair_features
from dixit_lab.listener.model import expected_storyteller_points
from dixit_lab_agents.model_storyteller import ModelStoryteller

DEFAULT_MODEL = "softmax-conse"


@register_agent("calibrated")
class CalibratedAgent(ModelStoryteller):
    """Like ``pragmatic``, but the probability that one listener finds its card comes from a
    classifier fitted on logged rounds (``dixit-lab fit-listener``; see
    :mod:`dixit_lab.listener.fit`) instead of from the analytic model.

    For every (card of its hand, clue) pair it computes the features a storyteller can know
    before telling — the clue–card similarity, its margin over the rest of its hand, the card's
    rank among the deck for the clue, the analytic model's prediction and the number of
    listeners — turns them into a find probability with the fitted logistic regression, and
    tells the pair with the most expected points under the rules in force. The listeners of
    one round share a table, so their finds are correlated: like ``pragmatic``, it corrects
    the outcome probabilities with the analytic model's variance of the find probability
    across decoy draws. (Without that correction the fitted model is calibrated on average
    but scores fewer points: 2.22 vs 2.60 per turn in 600 duel games, with 11% vs 7% of its
    clues found by nobody.) ``model`` is the
    path of the JSON model, or the name of one shipped under ``data/listener_models``. As a
    listener it plays like ``literal``.
    """

    def __init__(self, model: str = DEFAULT_MODEL, embedder: str = "conse",
                 clues: str = "default") -> None:
        self.fitted = FittedListener.load(model)
        super().__init__(self.fitted.temperature, embedder, clues)
        self.model_path = model
        self._table_key: tuple[int, int, object] | None = None

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        if self.space.embedder_id != self.fitted.embedder:
            raise ValueError(f"listener model {self.model_path!r} was fitted in the space of "
                             f"{self.fitted.embedder}, but this agent perceives through "
                             f"{self.space.embedder_id}")
        n, rules = context.n_players, context.rules
        key = (id(self.space), n, rules)
        if key != self._table_key:
            self._table_key = key
            self.table = FeatureTable(self.space, self.fitted.temperature, rules, n)
            self._base_logits: dict[int, np.ndarray] = {}
            index = self.fitted.features.index("margin")
            self.margin_weight = self.fitted.coef[index] / self.fitted.scale[index]

    def base_logit(self, round_index: int) -> np.ndarray:
        """The part of the fitted logit that depends on the (card, clue) pair and the round
        alone, for every pair (once per table of the listener model); the margin term, which
        depends on the hand, is added per tell."""
        key = self.table.model.position_key(round_index)
        base = self._base_logits.get(key)
        if base is None:
            every = pair_features(self.table, range(len(self.space.deck)), round_index)
            every["margin"] = np.zeros_like(every["similarity"])
            base = self._base_logits[key] = np.ascontiguousarray(self.fitted.logits(every))
        return base

    def pair_scores(self, hand: list[int], round_index: int) -> np.ndarray:
        similarity = self.table.similarity_by_card[hand]
        best_row = similarity.argmax(axis=0)
        columns = np.arange(similarity.shape[1])
        best = similarity[best_row, columns]
        masked = similarity.copy()
        masked[best_row, columns] = -np.inf
        second = masked.max(axis=0)
        margin = similarity - np.where(similarity >= best, second, best)
        logits = self.base_logit(round_index)[hand] + self.margin_weight * margin
        p = 1.0 / (1.0 + np.exp(-logits))
        return expected_storyteller_points(p, self.voters, self.context.rules,
                                           self.model.variance_at(round_index)[hand])

    #: the fitted listener depends on the whole hand (the margin feature): no batched policy,
    #: and no prediction of many turns from their cards alone
    batch_policy = None
    predicted_finds = None  # type: ignore[assignment]
    predicted_finds_coded = None  # type: ignore[assignment]

    def predicted_find(self, hand: list[int], card: int, clue_text: str,
                       round_index: int) -> float:
        clue = self.space.clue_index(clue_text)
        features = pair_features(self.table, hand, round_index, clue)
        return float(self.fitted.probability(features)[list(hand).index(card)])
