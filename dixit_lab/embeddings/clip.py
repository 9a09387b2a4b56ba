"""``clip`` backend: an open_clip model, its own preprocessing transform and tokenizer.

``model`` takes the three forms of open_clip (>= 3.0):

- a bundled config name (``ViT-B-32``) with ``pretrained`` = an open_clip tag
  (``laion2b_s34b_b79k``: weights and preprocessing of that tag), a checkpoint file with
  ``preprocess`` naming its preprocessing (a tag of the model whose image mean/std, resize
  and interpolation it was trained with, or ``default``), or None for random initialisation
  (tests and speed measurements only; ``seed`` makes it deterministic);
- ``hf-hub:org/name`` (optionally ``revision``): a Hugging Face repository holding
  ``open_clip_config.json`` and the weights, read from the Hugging Face cache (downloaded
  first unless ``local_files_only`` or ``HF_HUB_OFFLINE=1``);
- ``local-dir:/folder``: a folder with ``open_clip_config.json`` and the weights.

No weights ship with dixit_lab. The id names the model and the tag, the checkpoint's or
folder's sha256 prefix, the Hub commit, or ``random-init`` with the seed, and the
preprocessing.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.atomic import file_sha256
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
from dixit_lab.errors import install_hint

__all__ = ["ClipEmbedder"]

_lock = threading.Lock()
HF_HUB, LOCAL_DIR = "hf-hub:", "local-dir:"
# The files of an open_clip model folder (as open_clip's push_to_hf_hub writes them).
FOLDER_FILES = ("open_clip_config.json", "*.safetensors", "*.bin", "*.pth", "*.txt",
                "tokenizer*", "vocab*", "merges*", "special_tokens_map.json")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pth")
_DEFAULT_TAG = "laion2b_s34b_b79k"
_INSTALL = install_hint("clip", torch=True)


def _open_clip_folder() -> Path:
    spec = importlib.util.find_spec("open_clip")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(f"the 'clip' embedder needs open_clip: {_INSTALL}")
    return Path(next(iter(spec.submodule_search_locations)))


def _model_config(model: str) -> dict[str, Any]:
    """open_clip's JSON config of a bundled ``model``, read without importing open_clip."""
    folder = _open_clip_folder() / "model_configs"
    path = folder / f"{model}.json"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise ValueError(f"unknown open_clip model {model!r} (or give hf-hub:org/name or "
                         f"local-dir:/folder); the {len(known)} bundled models: "
                         f"{', '.join(known)}")
    return json.loads(path.read_text(encoding="utf-8"))


def _folder_config(folder: Path) -> dict[str, Any]:
    path = folder / "open_clip_config.json"
    if not path.is_file():
        raise ModelUnavailableError(f"{folder} has no open_clip_config.json (an open_clip model "
                                    "folder holds it next to the weights)")
    config = json.loads(path.read_text(encoding="utf-8"))
    return dict(config.get("model_cfg", config))


def _pretrained_tags(model: str) -> dict[str, dict[str, Any]]:
    """The tags open_clip knows for a bundled model, with their preprocessing (imports open_clip
    and so torch: only called to load a model)."""
    open_clip = require("open_clip", "clip")
    return {tag: open_clip.get_pretrained_cfg(model, tag)
            for tag in open_clip.list_pretrained_tags_by_model(model)}


def _looks_like_path(pretrained: str) -> bool:
    return "/" in pretrained or "\\" in pretrained or pretrained.endswith(
        (".pt", ".pth", ".bin", ".safetensors", ".ckpt"))


@register_embedder("clip")
@dataclass(frozen=True)
class ClipEmbedder:
    """An open_clip model. ``device``, ``batch_size`` and ``cache_dir`` (where open_clip and
    the Hugging Face Hub look for downloaded files) change only speed or location, not the
    vectors, and are not in the id."""

    model: str = "ViT-B-32"
    pretrained: str | None = _DEFAULT_TAG
    preprocess: str | None = None
    revision: str | None = None
    local_files_only: bool = False
    seed: int = 0
    device: str = "cpu"
    batch_size: int = 32
    cache_dir: str | None = None
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.schema:
            if not self.model[len(self.schema):].strip():
                raise ValueError(f"model {self.model!r}: nothing after {self.schema!r}")
            if self.schema == LOCAL_DIR and not self.local_folder.is_dir():
                raise ValueError(f"model {self.model!r}: folder {self.local_folder} does not "
                                 "exist")
            if self.schema == LOCAL_DIR and self.revision is not None:
                raise ValueError("revision applies to hf-hub: models, not local-dir:")
            # open_clip ignores `pretrained` for these forms: say so rather than ignore it.
            if self.pretrained not in (None, _DEFAULT_TAG) or self.preprocess is not None:
                raise ValueError(f"model {self.model!r} brings its weights and preprocessing "
                                 "(open_clip_config.json); leave out pretrained and preprocess")
            return
        if self.revision is not None:
            raise ValueError("revision applies to hf-hub: models only")
        _model_config(self.model)  # fail early on an unknown model name
        if self.pretrained is not None and self.is_checkpoint:
            if not Path(self.pretrained).expanduser().is_file():
                raise ValueError(f"checkpoint file {self.pretrained} does not exist")
            if self.preprocess is None:
                raise ValueError(
                    f"checkpoint {self.pretrained}: say which preprocessing its weights were "
                    f"trained with: preprocess=<an open_clip tag of {self.model} whose image "
                    "mean/std and resize it shares, e.g. openai> or preprocess=default "
                    "(open_clip's defaults); or save the model as a local-dir: folder with "
                    "its open_clip_config.json")
        elif self.preprocess is not None:
            raise ValueError("preprocess applies to a checkpoint file only (a tag brings its "
                             "own, random-init uses open_clip's defaults)")

    @property
    def schema(self) -> str | None:
        """``hf-hub:``, ``local-dir:`` or None (a bundled config name)."""
        return next((s for s in (HF_HUB, LOCAL_DIR) if self.model.startswith(s)), None)

    @property
    def local_folder(self) -> Path:
        return Path(self.model[len(LOCAL_DIR):]).expanduser()

    @property
    def is_checkpoint(self) -> bool:
        return self.schema is None and self.pretrained is not None and (
            _looks_like_path(self.pretrained) or Path(self.pretrained).expanduser().is_file())

    def _folder(self) -> tuple[Path, str]:
        """(model folder, weights id) of an hf-hub: or local-dir: model."""
        if "folder" not in self._state:
            if self.schema == HF_HUB:
                folder, commit = resolve_snapshot(
                    self.model[len(HF_HUB):], revision=self.revision, cache_dir=self.cache_dir,
                    local_files_only=self.local_files_only, patterns=FOLDER_FILES)
                weights = f"hf-commit:{commit}"
            else:
                folder = self.local_folder
                weights = f"sha256:{files_sha256(folder, FOLDER_FILES)[:16]}"
            _folder_config(folder)
            if not any(path.suffix in WEIGHT_SUFFIXES for path in folder.iterdir()):
                # open_clip would initialise the model randomly and only log a warning
                raise ModelUnavailableError(
                    f"{self.model}: no weights ({', '.join(WEIGHT_SUFFIXES)}) in {folder}")
            self._state["folder"] = (folder, weights)
        return self._state["folder"]

    @property
    def weights_id(self) -> str:
        """The tag, ``sha256:<prefix>`` of a checkpoint file or model folder, ``hf-commit:<hash>``
        of a Hub snapshot, or ``random-init``."""
        if self.schema:
            return self._folder()[1]
        if self.pretrained is None:
            return "random-init"
        if not self.is_checkpoint:
            return self.pretrained
        if "weights_id" not in self._state:
            path = Path(self.pretrained).expanduser()
            self._state["weights_id"] = "sha256:" + file_sha256(path)[:16]
        return self._state["weights_id"]

    @property
    def id(self) -> str:
        # A folder is named by its files' hash, not its path: moving it keeps the cache.
        model = "local-dir" if self.schema == LOCAL_DIR else self.model
        params: dict[str, Any] = {"v": 1, "model": model, "weights": self.weights_id}
        if self.schema is None and self.pretrained is None:
            params["seed"] = self.seed
        if self.schema:
            params["preprocess"] = "open_clip_config"
        elif self.is_checkpoint:
            params["preprocess"] = self.preprocess
        elif self.pretrained is not None:
            params["preprocess"] = "tag"
        else:
            params["preprocess"] = "open_clip-default"
        return spec_id("clip", params)

    @property
    def dim(self) -> int:
        config = _folder_config(self._folder()[0]) if self.schema else _model_config(self.model)
        return int(config["embed_dim"])

    def _load(self) -> tuple[Any, Any, Any]:
        with _lock:
            if "model" not in self._state:
                self._state["model"] = self._create()
        return self._state["model"]

    def _preprocess_options(self) -> dict[str, Any]:
        """Image mean/std/resize of the tag named by ``preprocess`` (checkpoint files)."""
        if not self.is_checkpoint or self.preprocess == "default":
            return {}
        tags = _pretrained_tags(self.model)
        if self.preprocess not in tags:
            raise ModelUnavailableError(
                f"preprocess={self.preprocess!r}: not an open_clip tag of {self.model}; "
                f"tags: {', '.join(tags) or 'none'}, or preprocess=default")
        cfg = tags[self.preprocess]
        keys = {"mean": "image_mean", "std": "image_std",
                "interpolation": "image_interpolation", "resize_mode": "image_resize_mode"}
        return {option: cfg[key] for key, option in keys.items() if key in cfg}

    def _create(self) -> tuple[Any, Any, Any]:
        torch = require("torch", "clip")
        open_clip = require("open_clip", "clip")
        name, pretrained = self.model, None
        if self.schema:
            name = LOCAL_DIR + str(self._folder()[0])  # a Hub snapshot is a local folder too
        elif self.pretrained is not None:
            pretrained = str(Path(self.pretrained).expanduser()) if self.is_checkpoint \
                else self.pretrained
        options = self._preprocess_options()
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(self.seed)
                model, _, preprocess = open_clip.create_model_and_transforms(
                    name, pretrained=pretrained, device=self.device,
                    cache_dir=self.cache_dir, **options)
        except Exception as error:
            if self.schema or self.is_checkpoint:
                raise ModelUnavailableError(
                    f"cannot load open_clip model {self.model} ({pretrained or 'folder'}): "
                    f"{error}") from error
            raise ModelUnavailableError(
                f"cannot load open_clip weights {self.model!r} / {self.pretrained!r}: {error}\n"
                "Without internet, point the embedder at weights on disk: "
                f"clip(model={self.model}, pretrained=/path/to/checkpoint.pt, preprocess=TAG) "
                "with a local checkpoint file, clip(model=local-dir:/folder) with an open_clip "
                "model folder, or put the tag's files in the open_clip cache dir "
                "(clip(..., cache_dir=/path/to/open_clip_cache); by default the Hugging Face "
                "cache, ~/.cache/huggingface/hub or $HF_HOME) and set HF_HUB_OFFLINE=1. "
                f"Known tags for {self.model}: "
                f"{', '.join(open_clip.list_pretrained_tags_by_model(self.model)) or 'none'}"
            ) from error
        model.eval()
        tokenizer = open_clip.get_tokenizer(name, cache_dir=self.cache_dir) if self.schema \
            else open_clip.get_tokenizer(self.model)
        return model, preprocess, tokenizer

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        def encode(batch: Sequence[Card]) -> np.ndarray:
            import torch

            model, preprocess, _ = self._load()
            tensors = torch.stack([preprocess(open_rgb(card)) for card in batch])
            with torch.inference_mode():
                return model.encode_image(tensors.to(self.device)).float().cpu().numpy()

        return embed_in_batches(cards, self.batch_size, encode, self.dim, self.id)

    def text_model_problem(self) -> tuple[str, str] | None:
        """Why a new text cannot be embedded here (its packages are missing), or None. (Its
        weights are checked when the model loads; a text it then fails to embed is
        counted.)"""
        missing = missing_packages([("torch", "torch"), ("open_clip", "open_clip_torch")])
        return (f"the clip embedder's text model needs {', '.join(missing)}, not "
                f"installed here", "clip") if missing else None

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        def encode(batch: Sequence[str]) -> np.ndarray:
            import torch

            model, _, tokenizer = self._load()
            tokens = tokenizer(list(batch)).to(self.device)
            with torch.inference_mode():
                return model.encode_text(tokens).float().cpu().numpy()

        return embed_in_batches(texts, self.batch_size, encode, self.dim, self.id)
