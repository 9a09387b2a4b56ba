"""Hand-built embedding spaces for agent tests: the right decision is known by construction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dixit_lab.core.cards import Deck
from dixit_lab.core.clues import ClueBank
from dixit_lab.embeddings import EmbeddingSpace, ModelUnavailableError


@dataclass(frozen=True)
class FixedEmbedder:
    """An embedder whose vectors are given; it has no model for new texts."""

    dim: int
    id: str = "fixed-test"

    def embed_images(self, cards):
        raise ModelUnavailableError("the fixed test embedder has no model")

    def embed_texts(self, texts):
        raise ModelUnavailableError("the fixed test embedder has no model")


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def make_space(card_vectors: np.ndarray, clue_vectors: np.ndarray,
               clue_texts: list[str] | None = None) -> EmbeddingSpace:
    cards = unit(card_vectors)
    clues = unit(clue_vectors)
    texts = clue_texts or [f"clue {i}" for i in range(len(clues))]
    return EmbeddingSpace(FixedEmbedder(cards.shape[1]), Deck.numbered(len(cards)),
                          ClueBank.from_texts(texts), cards, clues)


def one_clue_per_card(n_cards: int = 60, seed: int = 0, strength: float = 3.0,
                      noise: float = 0.3) -> EmbeddingSpace:
    """Card i is a random direction; clue i points mostly at card i (``strength``), so clue i
    describes card i best."""
    rng = np.random.default_rng(seed)
    cards = unit(rng.standard_normal((n_cards, 16)))
    clues = strength * cards + noise * rng.standard_normal((n_cards, 16))
    return make_space(cards, clues)
