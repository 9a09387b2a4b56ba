"""``theory_of_mind``: a storyteller that learns, during the game, how its listeners see."""

from __future__ import annotations

import math

import numpy as np

from dixit_lab.core.agent import GameContext, PublicRound, register_agent
from dixit_lab.embeddings import get_space
from dixit_lab.listener.model import expected_storyteller_points, listener_model
from dixit_lab_agents.model_storyteller import ModelStoryteller
from dixit_lab_agents.softmax_agent import DEFAULT_TEMPERATURE


def _numbers(text: str, name: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers, got {text!r}") from None
    if not values or min(values) <= 0:
        raise ValueError(f"{name} must be positive numbers, got {text!r}")
    return values


@register_agent("theory_of_mind")
class TheoryOfMindAgent(ModelStoryteller):
    """Keeps a posterior over listener *types*, updated from the public votes, and aims its
    clue under it.

    A type is an embedder (one of ``embedders``, comma-separated specs) and a softmax
    temperature (one of ``temperatures``): a listener that perceives through that space and
    votes by a softmax of its similarities. The prior is uniform; after every round it
    observes, each listener's public vote updates that listener's posterior by Bayes' rule,
    with the likelihood of the vote under each type (the softmax over the displayed cards it
    could vote for; a ``lapse`` share of votes is taken as random, so one odd vote does not
    rule a type out). Perception noise is not a separate type: a noisy listener looks like a
    warmer one. The posterior starts afresh every game (carrying it over would make results
    depend on which games a worker happens to play), and it never reads the table's agent
    names.

    As storyteller it assumes the table is of one type (the listeners' evidence pooled: the
    table posterior is the product of the seats' likelihoods): for every (card of its hand,
    clue) pair, each type's expected points under the rules (the listener model of that
    type's space with softmax decoys, corrected like ``pragmatic``'s for listeners who share a
    table), averaged over the table posterior. Averaging points rather than find
    probabilities keeps the correlation that an unknown shared type induces (if the type is
    "obvious", everyone finds the card). It tells the best pair; among near ties, the clue
    most similar to its card. It perceives its own card through ``embedder``; as a listener
    it plays like ``literal``. Reference engine only (its decisions depend on the game).
    """

    def __init__(self, embedders: str = "conse,text",
                 temperatures: str = "0.03,0.05,0.1", lapse: float = 0.05,
                 temperature: float = DEFAULT_TEMPERATURE, embedder: str = "conse",
                 clues: str = "default") -> None:
        super().__init__(temperature, embedder, clues)
        self.embedders = tuple(e.strip() for e in str(embedders).split(",") if e.strip())
        if not self.embedders:
            raise ValueError("embedders must name at least one embedder")
        self.temperatures = _numbers(temperatures, "temperatures")
        if not 0.0 <= lapse < 1.0:
            raise ValueError(f"lapse must be in [0, 1), got {lapse}")
        self.lapse = lapse
        self._types_key: tuple[object, ...] | None = None

    #: decisions depend on the votes seen in this game: no batched policy
    batch_policy = None  # type: ignore[assignment]
    #: the prediction depends on the game's history, which the find-rate analysis does not
    #: replay: none is reported
    predicted_find = None  # type: ignore[assignment]

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        n, rules = context.n_players, context.rules
        key = (context.deck.fingerprint, n, rules)
        if key != self._types_key:
            self._types_key = key
            models, preferences, temperatures = [], [], []
            for spec in self.embedders:
                space = get_space(spec, context.deck, self.clues)
                if space.clues.texts != self.space.clues.texts:
                    raise ValueError(f"embedder {spec!r} has another clue bank")
                for t in self.temperatures:
                    models.append(listener_model(space, t, rules, n, t))
                    preferences.append(space.similarity)
                    temperatures.append(t)
            self.type_models = models                        # per type, by round
            self.type_similarity = preferences               # per type (clues, cards)
            self.type_temperature = np.array(temperatures)
        self.log_posterior = np.zeros((n, len(self.type_temperature)))

    @property
    def posterior(self) -> np.ndarray:
        """(seats, types) posterior probabilities (the storyteller's own row is the prior)."""
        weights = np.exp(self.log_posterior - self.log_posterior.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)

    def observe(self, result: PublicRound) -> None:
        clue = self.clue_id(result.clue)
        if clue is None:
            return
        display = list(result.display)
        for seat, vote in enumerate(result.votes):
            if vote is None or seat == self.context.seat:
                continue
            allowed = [i for i, owner in enumerate(result.card_owner) if owner != seat]
            if vote not in allowed:
                continue
            cards = [display[i] for i in allowed]
            chosen = allowed.index(vote)
            for h, t in enumerate(self.type_temperature):
                logits = np.asarray(self.type_similarity[h][clue, cards], dtype=np.float64) / t
                logits -= logits.max()
                softmax = math.exp(logits[chosen]) / float(np.exp(logits).sum())
                likelihood = (1 - self.lapse) * softmax + self.lapse / len(allowed)
                self.log_posterior[seat, h] += math.log(likelihood)

    @property
    def table_posterior(self) -> np.ndarray:
        """(types,) posterior of the table's one type, from every listener's votes."""
        listeners = [s for s in range(self.context.n_players) if s != self.context.seat]
        total = self.log_posterior[listeners].sum(axis=0)
        weights = np.exp(total - total.max())
        return weights / weights.sum()

    def type_points(self, hand: list[int], round_index: int) -> np.ndarray:
        """(types, len(hand), clues): each type's expected points of the hand's pairs in
        that round."""
        rules, voters = self.context.rules, self.context.n_players - 1
        return np.stack([expected_storyteller_points(
            model.find_at(round_index)[hand], voters, rules,
            model.variance_at(round_index)[hand]) for model in self.type_models])

    def pair_scores(self, hand: list[int], round_index: int) -> np.ndarray:
        weights = self.table_posterior
        return np.einsum("t,thk->hk", weights,
                         self.type_points(hand, round_index)).astype(np.float32)
