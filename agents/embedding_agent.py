"""Shared machinery of the agents that perceive through an embedding space.

An :class:`EmbeddingAgent` gets its space in ``begin_game`` (one shared space per embedder,
deck and clue bank in a process) and turns clue texts into rows of the space's similarity
matrix. Decisions are lookups and a few NumPy operations; no model runs on the hot path.
"""

from __future__ import annotations

import functools

import numpy as np

from dixit_lab.core.agent import Agent, GameContext
from dixit_lab.embeddings import EmbeddingSpace, ModelUnavailableError, get_space

__all__ = ["EmbeddingAgent"]

@functools.lru_cache(maxsize=64)
def _check_perception(embedder: str, clues: str) -> None:
    """Raise (naming it) for an unknown embedder, embedder parameter or clue bank."""
    from dixit_lab.core.clues import ClueBank
    from dixit_lab.embeddings import make_embedder

    make_embedder(embedder)
    ClueBank.load(clues)


class EmbeddingAgent(Agent):
    """Base class: ``embedder`` (a spec, default the offline ``conse``) and ``clues`` (a clue
    bank name or path) choose the space the agent perceives through; ``noise`` > 0 distorts
    every similarity it perceives by an independent N(0, noise²) draw, fixed for one game
    and redrawn the next (:class:`~dixit_lab.embeddings.perception.NoisyView`). A noisy agent
    has no batched policy: the batched engine's tables are per space, not per game."""

    def __init__(self, embedder: str = "conse", clues: str = "default",
                 noise: float = 0.0) -> None:
        if not noise >= 0:
            raise ValueError(f"noise must be >= 0, got {noise}")
        check = _check_perception if isinstance(embedder, str) and isinstance(clues, str) \
            else _check_perception.__wrapped__  # when the config is checked, not mid-run
        check(embedder, clues)
        self.embedder = embedder
        self.clues = clues
        self.noise = float(noise)
        if self.noise > 0:  # per-game perception: no batched policy (see batch_supported)
            vars(self)["batch_policy"] = None
        self._space_override: EmbeddingSpace | None = None
        self.space: EmbeddingSpace
        self._rows = _ClueRows(self)
        self._clue_ids: dict[str, int | None] = {}
        self._space_key: tuple[str, int] | None = None

    def use_space(self, space: EmbeddingSpace) -> EmbeddingAgent:
        """Perceive through ``space`` instead of loading one (tests, notebooks)."""
        self._space_override = space
        return self

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        key = (context.deck.fingerprint, len(context.deck))
        if self.noise > 0:
            self._perceive(context)
            return
        if self._space_override is None and key == self._space_key:
            return  # same deck as the last game: keep the space and everything derived
        space = self._base_space(context)
        if getattr(self, "space", None) is not space:
            self.space = space
            self._rows = _ClueRows(self)
            self._clue_ids = {}
            self.prepare(space)
        self._space_key = key if self._space_override is None else None

    def _perceive(self, context: GameContext) -> None:
        """This game's noisy view of the space, and everything derived from it."""
        from dixit_lab.embeddings.perception import NoisyView

        space = NoisyView(self._base_space(context), self.noise, context.rng)
        self.space = space  # type: ignore[assignment]
        self._rows = _ClueRows(self)
        self._clue_ids = {}
        self.prepare(space)  # type: ignore[arg-type]

    def needs_card_images(self) -> bool:
        """Whether this agent perceives the cards' images (it cannot play a deck without):
        checked when a config is read, before anything is played."""
        return self._space_override is None

    def _base_space(self, context: GameContext) -> EmbeddingSpace:
        space = self._space_override
        if space is None:
            if not context.deck.has_images:
                raise ValueError(f"agent {self.name!r} perceives card images, but deck "
                                 f"{context.deck.name!r} has none; use an image deck such as "
                                 f"'dreams'")
            space = get_space(self.embedder, context.deck, self.clues)
        if len(space.deck) != len(context.deck):
            raise ValueError(f"agent {self.name!r}: its space has {len(space.deck)} cards but "
                             f"the game's deck {context.deck.name!r} has {len(context.deck)}")
        return space

    def prepare(self, space: EmbeddingSpace) -> None:
        """Precompute whatever depends only on the space (called when the space changes)."""

    def clue_id(self, text: str) -> int | None:
        """Row of ``text`` in the clue bank, or None if it is not in the bank."""
        try:
            return self._clue_ids[text]
        except KeyError:
            index = self.space.clue_index(text) if text in self.space.clues else None
            self._clue_ids[text] = index
            return index

    def clue_row(self, text: str) -> list[float]:
        """Similarity of ``text`` with every card of the deck, as a list indexed by card.

        A clue outside the bank is embedded on the fly when the model is installed. Without
        the model the agent cannot perceive it: it says so to its context
        (:meth:`~dixit_lab.core.agent.GameContext.cannot_perceive`, so the round records it and
        ``agents.csv`` counts it) and decides as if every card were equally similar."""
        return self._rows[text]

    @property
    def clue_rows(self) -> dict[str, list[float]]:
        """``clue_row`` as a mapping from the clue's text (computed on first use)."""
        return self._rows

    def clue_perception_problem(self) -> tuple[str, str] | None:
        """Why this agent could not perceive a clue outside its clue bank here (its
        embedder's text model is not installed): (what is missing, the extra that installs
        it), or None. Checked when a config seats it with players who write free text
        (people, model agents)."""
        if self._space_override is not None:
            return None
        from dixit_lab.embeddings import text_model_problem

        return text_model_problem(self.embedder)

    def _perceive_clue(self, text: str) -> list[float] | None:
        """The clue's row, or None (said to the context) if it cannot be perceived here."""
        try:
            vector = self.space.text_similarity(text)
        except (KeyError, ModelUnavailableError):
            self.context.cannot_perceive(text)
            return None
        return np.asarray(vector).tolist()  # Python floats, as float(x) gives


class _ClueRows(dict[str, list[float]]):
    """An agent's clue rows by text, each perceived on first use. A clue it cannot perceive
    is not kept: every later use says so to the game's context again (a later round, or a
    later game, with the same clue is counted too) and reads a row of zeros."""

    def __init__(self, agent: EmbeddingAgent) -> None:
        super().__init__()
        self.agent = agent
        self.unheard: set[str] = set()
        self.zeros = [0.0] * len(agent.space.deck) if hasattr(agent, "space") else []

    def __missing__(self, text: str) -> list[float]:
        if text in self.unheard:
            self.agent.context.cannot_perceive(text)
            return self.zeros
        row = self.agent._perceive_clue(text)
        if row is None:
            self.unheard.add(text)
            return self.zeros
        self[text] = row
        return row
