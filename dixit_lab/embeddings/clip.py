"""``clip`` backend: an open_clip model, its own preprocessing transform and tokenizer.

``pretrained`` is an open_clip tag (``laion2b_s34b_b79k``), a local checkpoint file, or None for
random initialisation (tests and speed measurements only; ``seed`` makes it deterministic).
No weights ship with dixit_lab: tags come from the user's open_clip / Hugging Face cache or the
hub. The id names the model and the tag, or the checkpoint's sha256 prefix, or
``random-init`` with the seed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.cards import Card
from dixit_lab.embeddings.base import (
    ModelUnavailableError,
    check_output,
    image_path,
    register_embedder,
    require,
    spec_id,
)

__all__ = ["ClipEmbedder"]

_lock = threading.Lock()


def _model_config(model: str) -> dict[str, Any]:
    """open_clip's JSON config of ``model``, read without importing open_clip (or torch)."""
    spec = importlib.util.find_spec("open_clip")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError("the 'clip' embedder needs open_clip: "
                                    "`pip install 'dixit-lab[clip]'`")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model_configs"
    path = folder / f"{model}.json"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise ValueError(f"unknown open_clip model {model!r}; the {len(known)} known models: "
                         f"{', '.join(known)}")
    return json.loads(path.read_text(encoding="utf-8"))


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _looks_like_path(pretrained: str) -> bool:
    return "/" in pretrained or "\\" in pretrained or pretrained.endswith(
        (".pt", ".pth", ".bin", ".safetensors", ".ckpt"))


@register_embedder("clip")
@dataclass(frozen=True)
class ClipEmbedder:
    """An open_clip model. ``device``, ``batch_size`` and ``cache_dir`` (where open_clip looks
    for downloaded tags) change only speed or location, not the vectors, and are not in the id."""

    model: str = "ViT-B-32"
    pretrained: str | None = "laion2b_s34b_b79k"
    seed: int = 0
    device: str = "cpu"
    batch_size: int = 32
    cache_dir: str | None = None
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        _model_config(self.model)  # fail early on an unknown model name
        if self.pretrained is not None and self.is_checkpoint and \
                not Path(self.pretrained).expanduser().is_file():
            raise ValueError(f"checkpoint file {self.pretrained} does not exist")

    @property
    def is_checkpoint(self) -> bool:
        return self.pretrained is not None and (
            _looks_like_path(self.pretrained) or Path(self.pretrained).expanduser().is_file())

    @property
    def weights_id(self) -> str:
        """The tag, ``sha256:<prefix>`` of a checkpoint file, or ``random-init``."""
        if self.pretrained is None:
            return "random-init"
        if not self.is_checkpoint:
            return self.pretrained
        if "weights_id" not in self._state:
            path = Path(self.pretrained).expanduser()
            self._state["weights_id"] = "sha256:" + _file_sha256(path)[:16]
        return self._state["weights_id"]

    @property
    def id(self) -> str:
        params: dict[str, Any] = {"v": 1, "model": self.model, "weights": self.weights_id}
        if self.pretrained is None:
            params["seed"] = self.seed
        params["preprocess"] = "open_clip-default"
        return spec_id("clip", params)

    @property
    def dim(self) -> int:
        return int(_model_config(self.model)["embed_dim"])

    def _load(self) -> tuple[Any, Any, Any]:
        with _lock:
            if "model" not in self._state:
                self._state["model"] = self._create()
        return self._state["model"]

    def _create(self) -> tuple[Any, Any, Any]:
        torch = require("torch", "clip")
        open_clip = require("open_clip", "clip")
        pretrained = None
        if self.pretrained is not None:
            pretrained = str(Path(self.pretrained).expanduser()) if self.is_checkpoint \
                else self.pretrained
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(self.seed)
                model, _, preprocess = open_clip.create_model_and_transforms(
                    self.model, pretrained=pretrained, device=self.device,
                    cache_dir=self.cache_dir)
        except Exception as error:
            if self.is_checkpoint:
                raise ModelUnavailableError(
                    f"cannot load open_clip checkpoint {pretrained} into {self.model}: "
                    f"{error}") from error
            raise ModelUnavailableError(
                f"cannot load open_clip weights {self.model!r} / {self.pretrained!r}: {error}\n"
                "Without internet, point the embedder at weights on disk: "
                f"clip(model={self.model}, pretrained=/path/to/checkpoint.pt) with a local "
                "checkpoint file, or put the tag's files in the open_clip cache dir "
                "(clip(..., cache_dir=/path/to/open_clip_cache); by default the Hugging Face "
                "cache, ~/.cache/huggingface/hub or $HF_HOME) and set HF_HUB_OFFLINE=1. "
                f"Known tags for {self.model}: "
                f"{', '.join(open_clip.list_pretrained_tags_by_model(self.model)) or 'none'}"
            ) from error
        model.eval()
        return model, preprocess, open_clip.get_tokenizer(self.model)

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        if not cards:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch
        from PIL import Image

        model, preprocess, _ = self._load()
        rows: list[np.ndarray] = []
        for start in range(0, len(cards), self.batch_size):
            tensors = []
            for card in cards[start:start + self.batch_size]:
                with Image.open(image_path(card)) as image:
                    tensors.append(preprocess(image.convert("RGB")))
            with torch.inference_mode():
                features = model.encode_image(torch.stack(tensors).to(self.device))
            rows.append(features.float().cpu().numpy())
        return check_output(np.concatenate(rows), len(cards), self.dim, self.id)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        model, _, tokenizer = self._load()
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            tokens = tokenizer(list(texts[start:start + self.batch_size])).to(self.device)
            with torch.inference_mode():
                rows.append(model.encode_text(tokens).float().cpu().numpy())
        return check_output(np.concatenate(rows), len(texts), self.dim, self.id)
