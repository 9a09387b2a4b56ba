"""``hf`` backend: a transformers image-text model (``AutoModel``: CLIP, SigLIP) with the
image processor and tokenizer saved beside it.

``model`` is a Hugging Face repository (``openai/clip-vit-base-patch32``,
``google/siglip-base-patch16-224``; optionally ``revision``) read from the Hugging Face cache
and downloaded first unless ``local_files_only`` or ``HF_HUB_OFFLINE=1`` forbids it, or a
local folder as ``save_pretrained`` writes it. The id names the repository and the commit of
its snapshot, or the sha256 prefix of the folder's files. Images go through the folder's own
image processor; texts through its tokenizer, padded as the model was trained (SigLIP:
``max_length``).
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
    embed_in_batches,
    missing_packages,
    open_rgb,
    register_embedder,
    require,
    spec_id,
)
from dixit_lab.embeddings.hub import files_sha256, resolve_snapshot

__all__ = ["HfEmbedder", "features"]

_lock = threading.Lock()
# What a transformers model folder needs (safetensors weights; a model with only
# pytorch_model.bin: give its local folder).
FILES = ("*.json", "*.safetensors", "*.txt", "*.model")
SUPPORTED = ("clip", "siglip", "siglip2")


def features(output: Any) -> Any:
    """The embedding tensor of ``get_image_features`` / ``get_text_features``.

    transformers 4 returns the projected features as a tensor; transformers 5 returns a
    ``BaseModelOutputWithPooling`` whose ``pooler_output`` holds them (a tuple with
    ``return_dict=False``: its second item).
    """
    pooled = getattr(output, "pooler_output", None)
    if pooled is not None:
        return pooled
    if isinstance(output, tuple):
        return output[1]
    return output


@register_embedder("hf")
@dataclass(frozen=True)
class HfEmbedder:
    """A transformers CLIP/SigLIP model. ``device``, ``batch_size`` and ``cache_dir`` (the
    Hugging Face cache to read) change only speed or location and are not in the id."""

    model: str = "openai/clip-vit-base-patch32"
    revision: str | None = None
    local_files_only: bool = False
    device: str = "cpu"
    batch_size: int = 32
    cache_dir: str | None = None
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.is_folder and self.revision is not None:
            raise ValueError("revision applies to a Hub repository, not a local folder")
        if not self.is_folder and self.model.count("/") != 1:
            raise ValueError(f"model {self.model!r}: neither a local folder nor a Hugging Face "
                             "repository name (org/name)")

    @property
    def is_folder(self) -> bool:
        return Path(self.model).expanduser().is_dir()

    def _folder(self) -> tuple[Path, str]:
        """(model folder, weights id)."""
        if "folder" not in self._state:
            if self.is_folder:
                folder = Path(self.model).expanduser()
                weights = f"sha256:{files_sha256(folder, FILES)[:16]}"
            else:
                folder, commit = resolve_snapshot(
                    self.model, revision=self.revision, cache_dir=self.cache_dir,
                    local_files_only=self.local_files_only, patterns=FILES)
                weights = f"hf-commit:{commit}"
            self._config_of(folder)  # a clear error for an unsupported folder, before any use
            self._state["folder"] = (folder, weights)
        return self._state["folder"]

    @staticmethod
    def _config_of(folder: Path) -> dict[str, Any]:
        path = folder / "config.json"
        if not path.is_file():
            raise ModelUnavailableError(f"{folder} has no config.json: not a transformers "
                                        "model folder (save_pretrained writes one)")
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("model_type") not in SUPPORTED:
            raise ModelUnavailableError(
                f"{folder}: model_type {config.get('model_type')!r} is not an image-text model "
                f"the hf embedder knows ({', '.join(SUPPORTED)})")
        return config

    @property
    def id(self) -> str:
        name = "local-folder" if self.is_folder else self.model  # a moved folder keeps its id
        return spec_id("hf", {"v": 1, "model": name, "weights": self._folder()[1]})

    @property
    def dim(self) -> int:
        config = self._config_of(self._folder()[0])
        if config["model_type"] == "clip":
            return int(config.get("projection_dim", 512))
        text = config.get("text_config", {})
        return int(text.get("projection_size") or text.get("hidden_size", 768))

    def _load(self) -> tuple[Any, Any, Any]:
        with _lock:
            if "model" not in self._state:
                self._state["model"] = self._create()
        return self._state["model"]

    def _create(self) -> tuple[Any, Any, Any]:
        torch = require("torch", "hf")
        transformers = require("transformers", "hf")
        folder = str(self._folder()[0])
        try:
            with torch.random.fork_rng(devices=[]):  # loading must not move the global RNG
                model = transformers.AutoModel.from_pretrained(folder, local_files_only=True)
            images = transformers.AutoImageProcessor.from_pretrained(folder,
                                                                     local_files_only=True)
            tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except Exception as error:
            raise ModelUnavailableError(f"cannot load transformers model {self.model!r} from "
                                        f"{folder}: {type(error).__name__}: {error}") from error
        return model.to(self.device).eval(), images, tokenizer

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        def encode(batch: Sequence[Card]) -> np.ndarray:
            import torch

            model, processor, _ = self._load()
            inputs = processor(images=[open_rgb(card) for card in batch],
                               return_tensors="pt").to(self.device)
            with torch.inference_mode():
                output = features(model.get_image_features(**inputs))
            return output.float().cpu().numpy()

        return embed_in_batches(cards, self.batch_size, encode, self.dim, self.id)

    def text_model_problem(self) -> tuple[str, str] | None:
        """Why a new text cannot be embedded here (its packages are missing), or None. (Its
        weights are checked when the model loads; a text it then fails to embed is
        counted.)"""
        missing = missing_packages([("torch", "torch"), ("transformers", "transformers")])
        return (f"the hf embedder's text model needs {', '.join(missing)}, not "
                f"installed here", "hf") if missing else None

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        def encode(batch: Sequence[str]) -> np.ndarray:
            import torch

            model, _, tokenizer = self._load()
            text_config = model.config.text_config
            # SigLIP was trained on texts padded to max_length and pools the last position.
            padding = True if model.config.model_type == "clip" else "max_length"
            inputs = tokenizer(list(batch), padding=padding, truncation=True,
                               max_length=text_config.max_position_embeddings,
                               return_tensors="pt").to(self.device)
            if model.config.model_type != "clip":
                inputs.pop("attention_mask", None)  # SigLIP's text tower takes no mask
            inputs.pop("token_type_ids", None)
            with torch.inference_mode():
                output = features(model.get_text_features(**inputs))
            return output.float().cpu().numpy()

        return embed_in_batches(texts, self.batch_size, encode, self.dim, self.id)
