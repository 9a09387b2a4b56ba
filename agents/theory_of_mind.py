"""``theory_of_mind``: a storyteller that learns, during the game, how its listeners see."""

from __future__ import annotations

import math

import numpy as np

from agents.model_storyteller import ModelStoryteller
from agents.softmax_agent import DEFAULT_TEMPERATURE
from dixit_lab.agent import GameContext, PublicRound, register_agent
from dixit_lab.embeddings import get_space
from dixit_lab.listener_model import listener_model


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
    """Keeps a posterior, per listener seat, over listener *types* and aims its clue under it.

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

    As storyteller, for every (card of its hand, clue) pair and every listener ``j`` it
    mixes the types' find probabilities (the exact listener model of each type's space, with
    softmax decoys) by ``j``'s posterior, and tells the pair with the most expected points
    under the rules, from the chances that none, some or all of the listeners find the card
    (treated as independent). It perceives its own card through ``embedder``; as a listener
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
    batch_policy = None
    #: the prediction depends on the game's history, which the find-rate analysis does not
    #: replay: none is reported
    predicted_find = None  # type: ignore[assignment]

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        n, rules = context.n_players, context.rules
        key = (context.deck.name, n, rules)
        if key != self._types_key:
            self._types_key = key
            finds, preferences, temperatures = [], [], []
            for spec in self.embedders:
                space = get_space(spec, context.deck.name, self.clues)
                if space.clues.texts != self.space.clues.texts:
                    raise ValueError(f"embedder {spec!r} has another clue bank")
                for t in self.temperatures:
                    model = listener_model(space, t, rules.hand_size_for(n),
                                           rules.cards_per_player(n), n - 2, t)
                    finds.append(model.find)
                    preferences.append(space.similarity)
                    temperatures.append(t)
            self.type_find = np.stack(finds)                 # (types, cards, clues)
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

    def listener_finds(self, hand: list[int]) -> np.ndarray:
        """(listeners, len(hand), clues): each listener's posterior-mixed find probability."""
        listeners = [s for s in range(self.context.n_players) if s != self.context.seat]
        weights = self.posterior[listeners]                              # (L, types)
        block = self.type_find[:, hand, :].astype(np.float64)           # (types, H, clues)
        return np.einsum("lt,thk->lhk", weights, block)

    def pair_scores(self, hand: list[int]) -> np.ndarray:
        p = self.listener_finds(hand)
        miss = 1.0 - p
        none = miss.prod(axis=0)
        every = p.prod(axis=0)
        rules = self.context.rules
        points = rules.storyteller_points * np.clip(1.0 - none - every, 0.0, 1.0)
        if rules.lone_finder_points is not None and len(p) >= 2:
            one = sum(p[j] * np.prod(np.delete(miss, j, axis=0), axis=0)
                      for j in range(len(p)))
            points = points + (rules.lone_finder_points - rules.storyteller_points) * one
        return points.astype(np.float32)
