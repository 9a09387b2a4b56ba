"""Embeddings: the :class:`Embedder` protocol, the ``clip``, ``conse``, ``hf`` and ``text``
backends, the disk cache, shipped precomputed vectors and :class:`EmbeddingSpace`.

Importing this package does not import torch; models load on the first ``embed_*`` call.
"""

from __future__ import annotations

from dixit_lab.embeddings.base import (
    Embedder,
    EmbedderSpecError,
    MissingCaptionError,
    ModelUnavailableError,
    available_embedders,
    card_content_hash,
    embedder_parameters,
    make_embedder,
    register_embedder,
    text_hash,
    text_model_problem,
)
from dixit_lab.embeddings.cache import (
    EmbeddingCache,
    cache_root,
    cached_embed_cards,
    cached_embed_texts,
)
from dixit_lab.embeddings.shipped import (
    load_shipped_cards,
    load_shipped_clues,
    regenerate_shipped,
    shipped_root,
)
from dixit_lab.embeddings.space import EmbeddingSpace, clear_spaces, get_space

__all__ = [
    "Embedder",
    "EmbedderSpecError",
    "EmbeddingCache",
    "EmbeddingSpace",
    "MissingCaptionError",
    "ModelUnavailableError",
    "available_embedders",
    "cache_root",
    "cached_embed_cards",
    "cached_embed_texts",
    "card_content_hash",
    "clear_spaces",
    "embedder_parameters",
    "get_space",
    "load_shipped_cards",
    "load_shipped_clues",
    "make_embedder",
    "regenerate_shipped",
    "register_embedder",
    "shipped_root",
    "text_hash",
    "text_model_problem",
]
