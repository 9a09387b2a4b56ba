"""``pragmatic``: a storyteller that maximises its expected points, and a listener that knows
why decoys look like the clue."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dixit_lab.core.agent import GameContext, VoteView, register_agent
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.listener.model import expected_storyteller_points
from dixit_lab.policy import kernel
from dixit_lab.policy.backends import MANY, Backend
from dixit_lab_agents.literal import LiteralPolicy
from dixit_lab_agents.model_storyteller import ModelStoryteller, ModelStorytellerPolicy
from dixit_lab_agents.softmax_agent import DEFAULT_TEMPERATURE


@register_agent("pragmatic")
class PragmaticAgent(ModelStoryteller):
    """Plays for points under a model of its listeners.

    * As storyteller: for every (card, clue) pair it predicts the probability ``p`` that one
      listener finds the card (the same listener model as ``ambiguity``, with ``temperature``)
      and how much ``p`` varies with the decoys drawn; from them the probability that none,
      one, some or all of the actual number of voters find it, and so its expected points
      under the rules in force (lone-finder bonus included). It tells the pair with the most
      expected points.
    * As voter: a decoy is on the table *because* it matched the clue best in someone's hand,
      so a displayed card that matches the clue very well is not, for that reason alone, the
      storyteller's. It weighs each displayed card ``x`` (not its own) by Bayes' rule,

          P(x is the storyteller's) ∝ exp(s(k, x) / T) / P(x submitted as a decoy | k) ** λ,

      where the numerator is the softmax listener's own preference and P(x submitted) is the
      chance that ``x`` is the best match of a random hand, from its rank among the deck's
      cards for the clue (with 10% of submitters assumed to pick at random). λ =
      ``decoy_discount``: 1 is Bayes' rule under the model; the default 0.5 trusts it half,
      since real submitters are looser than "best match". Measured on ``dreams`` against four
      kinds of storyteller (150 games each), λ = 0.5 found the card as often as ``literal`` or
      more (e.g. 0.88 vs 0.86 after ``softmax`` clues, 0.45 vs 0.42 after
      ``ambiguity(target=0.3)``), while λ = 1 fell far below it (0.38 vs 0.79 after
      ``ambiguity``).
    * It submits like ``literal``.
    """

    def __init__(self, temperature: float = DEFAULT_TEMPERATURE, decoy_discount: float = 0.5,
                 embedder: str = "conse", clues: str = "default", decoys: str = "softmax"
                 ) -> None:
        super().__init__(temperature, embedder, clues, decoys)
        if not 0.0 <= decoy_discount <= 1.0:
            raise ValueError(f"decoy_discount must be in [0, 1], got {decoy_discount}")
        self.decoy_discount = decoy_discount

    def prepare(self, space: EmbeddingSpace) -> None:
        super().prepare(space)
        self.preference = np.asarray(space.similarity, dtype=np.float64) / self.temperature
        self.rank = np.argsort(np.argsort(space.similarity, axis=1, kind="stable"), axis=1,
                               kind="stable")  # 0-based ascending rank of each card per clue

    #: the share of listeners assumed to submit a random card rather than their best match;
    #: without it a card that cannot be anyone's best match would be certain to be the
    #: storyteller's
    loose_submitters = 0.1

    def new_table(self, context: GameContext) -> None:
        hand = context.rules.hand_size_for(context.n_players)
        per_player = context.rules.cards_per_player(context.n_players)
        loose = self.loose_submitters
        self.log_decoy = self.decoy_discount * np.log(
            (1 - loose) * self.model.decoy_probability + loose * per_player / hand)
        # the vote's score of every (clue, card): log preference - log P(decoy) ** λ
        self.vote_scores = self.preference - self.log_decoy[self.rank]

    def score_matrix(self) -> np.ndarray:
        points = expected_storyteller_points(self.model.find, self.voters, self.context.rules,
                                             self.model.find_variance)
        return points.astype(np.float32)

    def policy(self, on: Backend) -> PragmaticPolicy:
        return PragmaticPolicy(self, on)

    def batch_policy(self) -> PragmaticPolicy:
        """The same decisions over many games at once (dixit_lab.engine.batched): its own, for it
        overrides ``vote``."""
        return PragmaticPolicy(self, MANY)

    def vote(self, view: VoteView) -> int:
        clue = self.clue_id(view.clue)
        if clue is None:  # a clue outside the bank: vote on similarity, like literal
            return LiteralPolicy.vote(self.decide, view.display, view.own_positions, view.clue,
                                      None)
        return self.decide.vote(view.display, view.own_positions, clue, None)


class PragmaticPolicy(ModelStorytellerPolicy):
    """``pragmatic``'s decisions on a backend (:mod:`.backends`): its Bayesian vote (a clue
    is its row of the clue bank for both)."""

    def __init__(self, agent: PragmaticAgent, on: Backend = MANY) -> None:
        super().__init__(agent, on)
        self.vote_scores = on.table(agent.vote_scores)

    def vote(self, display: Any, own: Any, clues: Any, draws: Any) -> Any:
        """The displayed card (not its own) with the highest exp(s / T) / P(decoy) ** λ."""
        return self.on.best_other(self.vote_scores, clues, display, own)

    def kernel_policy(self) -> kernel.KernelPolicy:
        """The same decisions for the compiled engine (:mod:`dixit_lab.policy.kernel`): its
        own, for it overrides ``vote``."""
        return dataclasses.replace(super().kernel_policy(), vote_table=self.vote_scores)
