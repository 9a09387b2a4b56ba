"""``text`` backend: each card's written caption through the packaged sentence encoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dixit_lab.core.cards import Card
from dixit_lab.embeddings.base import (
    MissingCaptionError,
    check_output,
    register_embedder,
    spec_id,
)
from dixit_lab.embeddings.encoder import (
    ENCODER_DIM,
    ENCODER_ID,
    encode_texts,
    sentence_encoder_problem,
)

__all__ = ["TextEmbedder"]


@register_embedder("text")
@dataclass(frozen=True)
class TextEmbedder:
    """Cards by their ``caption``; clues by their text; both with all-MiniLM-L6-v2.

    ``batch_size`` only changes speed and is not part of the id.
    """

    batch_size: int = 64

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    @property
    def id(self) -> str:
        return spec_id("text", {"v": 1, "field": "caption", "encoder": ENCODER_ID})

    @property
    def dim(self) -> int:
        return ENCODER_DIM

    def card_content(self, card: Card) -> bytes:
        """The caption (the only input of a card's vector)."""
        return _caption(card).encode("utf-8")

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        captions = [_caption(card) for card in cards]
        return check_output(encode_texts(captions, self.batch_size), len(cards), self.dim,
                            "text embedder")

    @property
    def text_encoder_id(self) -> str:
        """Its texts are the sentence encoder's vectors (shipped once for every such
        embedder: :mod:`dixit_lab.embeddings.shipped`)."""
        return ENCODER_ID

    def text_model_problem(self) -> tuple[str, str] | None:
        """Why a new text cannot be embedded here (the sentence encoder), or None."""
        return sentence_encoder_problem()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return check_output(encode_texts(list(texts), self.batch_size), len(texts), self.dim,
                            "text embedder")


def _caption(card: Card) -> str:
    if card.caption is None or not card.caption.strip():
        where = f" (image {card.image}; fill the 'caption' column of the deck's cards.csv)" \
            if card.image is not None else ""
        raise MissingCaptionError(f"card {card.id!r} has no caption{where}; the 'text' "
                                  "embedder needs a caption for every card")
    return card.caption
