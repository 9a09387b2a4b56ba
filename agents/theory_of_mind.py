"""``theory_of_mind``: a storyteller that infers, from the public votes, which of a broad family
of listener types the table is, and aims its clue under that posterior."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dixit_lab.core.agent import GameContext, PublicRound, register_agent
from dixit_lab.embeddings import get_space
from dixit_lab.embeddings.perception import effective_temperature
from dixit_lab.listener.model import ListenerModel, expected_storyteller_points, listener_model
from dixit_lab_agents.model_storyteller import ModelStoryteller

__all__ = ["DEFAULT_EMBEDDERS", "DEFAULT_NOISE_LEVELS", "DEFAULT_TEMPERATURES", "ListenerType",
           "TheoryOfMindAgent"]

#: every registered embedder whose vectors ship for the bundled decks (usable offline);
#: ``tests/agents/test_theory_of_mind.py`` checks the list against the registry and data/embeddings
DEFAULT_EMBEDDERS = "conse,ridge,text"
#: a decade of softmax temperatures, 1-2-5 steps (0.05 is the shipped listeners')
DEFAULT_TEMPERATURES = "0.02,0.05,0.1,0.2"
#: perception noise σ of dixit_lab.embeddings.perception: none, blurred, scrambled
DEFAULT_NOISE_LEVELS = "0,0.05,0.1"


@dataclass(frozen=True)
class ListenerType:
    """One hypothesis about how the listeners see: they perceive through ``embedder``, with
    perception noise ``noise``, and vote and submit by a softmax of ``temperature``; modelled
    as the noiseless softmax at ``effective`` (see :func:`effective_temperature`)."""

    embedder: str
    temperature: float
    noise: float
    effective: float

    @property
    def label(self) -> str:
        return f"{self.embedder} T={self.temperature:g} noise={self.noise:g}"


def _numbers(text: str, name: str, allow_zero: bool = False) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers, got {text!r}") from None
    low = min(values, default=-1.0)
    if not values or low < 0 or (low == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {kind} numbers, got {text!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} lists a value twice: {text!r}")
    return values


@register_agent("theory_of_mind")
class TheoryOfMindAgent(ModelStoryteller):
    """Infers from the public votes which type of a fixed family the listeners are, and tells
    the pair with the most expected points under that posterior; it cannot learn a listener
    outside the family.

    A type (:class:`ListenerType`) is an embedder of ``embedders``, a softmax temperature of
    ``temperatures`` and a perception noise of ``noise_levels`` (comma-separated lists): a
    listener that perceives through that space with that noise and votes and submits by that
    softmax.
    The default family is every embedder that ships for the bundled decks (``conse``,
    ``ridge``, ``text``) × temperatures 0.02, 0.05, 0.1, 0.2 × noise 0, 0.05, 0.1: 36 types,
    of which the shipped listener population (``softmax``: conse, 0.05, no noise) is one.
    Noise is modelled as the warmer temperature it amounts to,
    ``T_eff = sqrt(T² + 6σ²/π²)`` (:func:`~dixit_lab.embeddings.perception.effective_temperature`):
    votes cannot tell a noisy listener from a noiseless one at ``T_eff``, so the posterior
    separates types by embedder and ``T_eff`` only.

    The prior is uniform over the types. After every round it observes, each listener's public
    vote updates that seat's log-likelihood of every type by Bayes' rule (the softmax at
    ``T_eff`` over the displayed cards it could vote for; a ``lapse`` share of votes is taken
    as random, so one odd vote does not rule a type out). The posterior starts afresh every
    game and never reads the table's agent names.

    As storyteller it assumes the table is of one type (the listeners' evidence pooled): for
    every (card of its hand, clue) pair, each type's expected points under the rules in that
    round (the listener model of that type's space at ``T_eff``, decoys by the same softmax,
    corrected like ``pragmatic``'s for listeners who share a table), averaged over the table
    posterior. Averaging points rather than find probabilities keeps the correlation that an
    unknown shared type induces (if the type is "obvious", everyone finds the card).
    A table of mixed listeners is outside the family. It tells the best pair; among near
    ties, the clue most similar to its card. It perceives its own card through ``embedder``;
    as a listener it plays like ``literal``. Reference engine only (its decisions depend on
    the game). The types' listener models are built at its first tell at a table shape and
    kept for the process (the listener model's cost, once per type and table shape).
    """

    def __init__(self, embedders: str = DEFAULT_EMBEDDERS,
                 temperatures: str = DEFAULT_TEMPERATURES,
                 noise_levels: str = DEFAULT_NOISE_LEVELS,
                 lapse: float = 0.05, embedder: str = "conse", clues: str = "default") -> None:
        super().__init__(embedder=embedder, clues=clues)
        names = tuple(e.strip() for e in str(embedders).split(",") if e.strip())
        if not names:
            raise ValueError("embedders must name at least one embedder")
        if len(set(names)) != len(names):
            raise ValueError(f"embedders lists an embedder twice: {embedders!r}")
        self.embedders = names
        self.temperatures = _numbers(temperatures, "temperatures")
        self.noise_levels = _numbers(noise_levels, "noise_levels", allow_zero=True)
        if not 0.0 <= lapse < 1.0:
            raise ValueError(f"lapse must be in [0, 1), got {lapse}")
        self.lapse = lapse
        self.types = tuple(
            ListenerType(e, t, s, effective_temperature(t, s))
            for e, t, s in itertools.product(self.embedders, self.temperatures,
                                             self.noise_levels))
        self.type_space = np.array([self.embedders.index(t.embedder) for t in self.types])
        self.type_temperature = np.array([t.effective for t in self.types])
        self._deck: tuple[str, int] | None = None
        self._models_key: tuple[object, ...] | None = None
        self._models: list[ListenerModel] = []

    #: decisions depend on the votes seen in this game: no batched policy
    batch_policy = None  # type: ignore[assignment]
    #: the prediction depends on the game's history, which the find-rate analysis does not
    #: replay: none is reported
    predicted_find = None  # type: ignore[assignment]

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        if (context.deck.fingerprint, id(self.space)) != self._deck:
            self._deck = (context.deck.fingerprint, id(self.space))
            self.spaces = []
            for spec in self.embedders:
                space = get_space(spec, context.deck, self.clues)
                if space.clues.texts != self.space.clues.texts:
                    raise ValueError(f"embedder {spec!r} has another clue bank")
                self.spaces.append(space)
            #: (spaces, clues, cards) float64: what the vote likelihoods read
            self.type_similarity = np.stack([np.asarray(s.similarity, dtype=np.float64)
                                             for s in self.spaces])
        self.log_posterior = np.zeros((context.n_players, len(self.types)))

    @property
    def type_models(self) -> list[ListenerModel]:
        """Each type's listener model at this table (built at the first tell of a table
        shape, then kept)."""
        context = self.context
        n, rules = context.n_players, context.rules
        key = (context.deck.fingerprint, n, rules)
        if key != self._models_key:
            self._models = [listener_model(self.spaces[self.type_space[h]], kind.effective,
                                           rules, n, kind.effective)
                            for h, kind in enumerate(self.types)]
            self._models_key = key
        return self._models

    def _points(self, h: int, hand: list[int], round_index: int) -> np.ndarray:
        find, variance = self.type_models[h].rows_at(round_index, hand)
        return expected_storyteller_points(
            find, self.context.n_players - 1, self.context.rules, variance).astype(np.float32)

    def type_points(self, hand: list[int], round_index: int) -> np.ndarray:
        """(types, len(hand), clues) float32: each type's expected points of the hand's pairs
        in round ``round_index``."""
        return np.stack([self._points(h, hand, round_index) for h in range(len(self.types))])

    @property
    def posterior(self) -> np.ndarray:
        """(seats, types) posterior probabilities (the storyteller's own row is the prior)."""
        weights = np.exp(self.log_posterior - self.log_posterior.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)

    def observe(self, result: PublicRound) -> None:
        clue = self.clue_id(result.clue)
        if clue is None:
            return
        seats, chosen, allowed = [], [], []
        for seat, vote in enumerate(result.votes):
            if vote is None or seat == self.context.seat:
                continue
            may = [owner != seat for owner in result.card_owner]
            if not 0 <= vote < len(may) or not may[vote]:
                continue
            seats.append(seat)
            chosen.append(vote)
            allowed.append(may)
        if not seats:
            return
        display = list(result.display)
        # (types, displayed cards): each type's softmax logits, shifted for stability
        rows = self.type_similarity[:, clue, display]                 # (spaces, displayed)
        logits = rows[self.type_space] / self.type_temperature[:, None]
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        mask = np.array(allowed)                                      # (voters, displayed)
        total = (weights[None, :, :] * mask[:, None, :]).sum(axis=2)  # (voters, types)
        softmax = weights[:, chosen].T / total
        options = mask.sum(axis=1, keepdims=True)
        likelihood = (1 - self.lapse) * softmax + self.lapse / options
        self.log_posterior[seats] += np.log(likelihood)

    @property
    def table_posterior(self) -> np.ndarray:
        """(types,) posterior of the table's one type, from every listener's votes."""
        listeners = [s for s in range(self.context.n_players) if s != self.context.seat]
        total = self.log_posterior[listeners].sum(axis=0)
        weights = np.exp(total - total.max())
        return weights / weights.sum()

    #: types whose table posterior is below this are left out of the average (their points,
    #: at most a few, weigh less than 1e-9 of them)
    negligible = 1e-9

    def pair_scores(self, hand: list[int], round_index: int) -> np.ndarray:
        weights = self.table_posterior
        scores = np.zeros((len(hand), len(self.space.clues.texts)), dtype=np.float32)
        for h in np.flatnonzero(weights >= self.negligible):
            scores += np.float32(weights[h]) * self._points(int(h), hand, round_index)
        return scores
