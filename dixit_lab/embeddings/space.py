"""``EmbeddingSpace``: one embedder's view of one deck and one clue bank, as matrices.

Agents decide with a lookup and a few NumPy operations: ``similarity[clue, card]`` is the
cosine between a clue and a card. Vectors come from, in order: the shipped files under
``data/embeddings`` (no torch needed), the disk cache, the model (whose results are cached).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.embeddings.base import Embedder, ModelUnavailableError, make_embedder
from dixit_lab.embeddings.cache import EmbeddingCache, cached_embed_cards, cached_embed_texts
from dixit_lab.embeddings.shipped import load_shipped_cards, load_shipped_clues
from dixit_lab.errors import install_hint

if TYPE_CHECKING:
    from dixit_lab.core.clues import ClueBank

__all__ = ["EmbeddingSpace", "clear_spaces", "get_space"]


@dataclass(frozen=True, eq=False)
class EmbeddingSpace:
    """Card and clue matrices of one (embedder, deck, clue bank). Arrays are read-only."""

    embedder: Embedder
    deck: Deck
    clues: ClueBank
    card_vectors: np.ndarray
    clue_vectors: np.ndarray
    cache_dir: Path | None = None
    similarity: np.ndarray = field(init=False, repr=False)
    _extra: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        cards = np.ascontiguousarray(self.card_vectors, dtype=np.float32)
        clues = np.ascontiguousarray(self.clue_vectors, dtype=np.float32)
        dim = self.embedder.dim
        if cards.shape != (len(self.deck), dim):
            raise ValueError(f"card_vectors: expected {(len(self.deck), dim)}, got {cards.shape}")
        if clues.shape != (len(self.clues), dim):
            raise ValueError(f"clue_vectors: expected {(len(self.clues), dim)}, "
                             f"got {clues.shape}")
        # float64 products rounded to float32: the same bits whatever BLAS kernel runs them,
        # so agents' decisions (and golden replays) do not depend on the CPU
        similarity = (clues.astype(np.float64) @ cards.astype(np.float64).T).astype(np.float32)
        for array in (cards, clues, similarity):
            array.flags.writeable = False
        object.__setattr__(self, "card_vectors", cards)
        object.__setattr__(self, "clue_vectors", clues)
        object.__setattr__(self, "similarity", similarity)

    @property
    def embedder_id(self) -> str:
        return self.embedder.id

    @property
    def dim(self) -> int:
        return int(self.card_vectors.shape[1])

    def clue_index(self, text: str) -> int:
        """Row of a clue of the bank (``KeyError`` if it is not in the bank)."""
        return self.clues.index(text)

    def text_vector(self, text: str) -> np.ndarray:
        """(dim,) vector of any text: a bank row, or embedded on the fly (needs the model)."""
        if text in self.clues:
            return self.clue_vectors[self.clue_index(text)]
        with self._lock:
            if text not in self._extra:
                self._extra[text] = self._embed_new(text)
            return self._extra[text]

    def text_similarity(self, text: str) -> np.ndarray:
        """(n_cards,) cosine of ``text`` with every card."""
        if text in self.clues:
            return self.similarity[self.clue_index(text)]
        vector = self.text_vector(text).astype(np.float64)
        return (self.card_vectors.astype(np.float64) @ vector).astype(np.float32)

    def _embed_new(self, text: str) -> np.ndarray:
        from dixit_lab.core.clues import normalize_clue

        cleaned = normalize_clue(text) or text
        cache = EmbeddingCache(self.cache_dir) if self.cache_dir is not None else None
        try:
            vector = cached_embed_texts(self.embedder, [cleaned], cache=cache, progress=False)[0]
        except (ImportError, ModelUnavailableError) as error:
            raise ModelUnavailableError(
                f"clue {text!r} is not in clue bank {self.clues.name!r}, so it must be "
                f"embedded, which needs the model of embedder {self.embedder_id}: {error}. "
                f"Install it: {install_hint('offline')} (conse, text), the extra 'clip' "
                "(clip) or 'hf' (hf), or use a clue from the bank."
            ) from error
        vector.flags.writeable = False
        return vector

    @classmethod
    def load(cls, embedder: str | Mapping[str, Any] | Embedder, deck: str | Deck,
             clues: str | ClueBank = "default", *, cache_dir: str | Path | None = None,
             use_shipped: bool = True) -> EmbeddingSpace:
        """Build the space; each matrix comes from shipped files, else the cache, else the
        model. ``cache_dir`` overrides ``$DIXIT_LAB_CACHE``."""
        from dixit_lab.core.clues import ClueBank

        model = make_embedder(embedder)
        deck_obj = load_deck(deck) if isinstance(deck, str) else deck
        bank = ClueBank.load(clues) if isinstance(clues, str) else clues
        cache_path = Path(cache_dir) if cache_dir is not None else None
        cache = EmbeddingCache(cache_path) if cache_path is not None else None
        card_vectors = load_shipped_cards(model, deck_obj) if use_shipped else None
        if card_vectors is None:
            card_vectors = cached_embed_cards(model, deck_obj.cards, cache=cache)
        clue_vectors = load_shipped_clues(model, bank.name, bank.texts) if use_shipped else None
        if clue_vectors is None:
            clue_vectors = cached_embed_texts(model, bank.texts, cache=cache)
        return cls(model, deck_obj, bank, card_vectors, clue_vectors, cache_path)


_SPACES: dict[tuple[str, str, str], EmbeddingSpace] = {}
_SPACES_LOCK = threading.Lock()


def get_space(embedder_spec: str | Mapping[str, Any] | Embedder, deck: str | Deck,
              clue_bank_name: str = "default") -> EmbeddingSpace:
    """A process-wide shared space: agents in one process that ask for the same
    (embedder, deck content, clue bank) get the same object. Pass the game's :class:`Deck`
    (``context.deck``): a deck is identified by its content, never by its name, so a folder
    that happens to be called ``dreams`` is not perceived as the bundled ``dreams``."""
    model = make_embedder(embedder_spec)
    deck_obj = load_deck(deck) if isinstance(deck, str) else deck
    key = (model.id, deck_obj.fingerprint, clue_bank_name)
    with _SPACES_LOCK:
        if key not in _SPACES:
            _SPACES[key] = EmbeddingSpace.load(model, deck_obj, clue_bank_name)
        return _SPACES[key]


def clear_spaces() -> None:
    """Forget the shared spaces (tests, or after regenerating embeddings)."""
    with _SPACES_LOCK:
        _SPACES.clear()
