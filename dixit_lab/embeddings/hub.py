"""Model files on disk: Hugging Face Hub snapshots and local folders, and the ids they give.

The ``clip`` (``hf-hub:`` / ``local-dir:`` models) and ``hf`` backends both load a model from
a folder. A Hub repository is resolved to its snapshot folder in the Hugging Face cache
(``$HF_HUB_CACHE``, default ``~/.cache/huggingface/hub``, or the backend's ``cache_dir``),
downloading it first only when that is allowed (not ``local_files_only``, not
``HF_HUB_OFFLINE=1``). The embedder id then names the snapshot's commit hash, so that a moved
branch (``main``) never reuses vectors of older weights; a local folder is named by the
sha256 of its files instead. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from dixit_lab.embeddings.base import ModelUnavailableError
from dixit_lab.errors import install_hint

__all__ = ["files_sha256", "resolve_snapshot"]


def files_sha256(folder: Path, patterns: Sequence[str]) -> str:
    """sha256 (hex) of the files of ``folder`` matching ``patterns``: names and bytes, sorted."""
    files = sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()})
    if not files:
        raise ModelUnavailableError(f"{folder} holds no model files ({', '.join(patterns)})")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def resolve_snapshot(repo_id: str, *, revision: str | None, cache_dir: str | None,
                     local_files_only: bool, patterns: Sequence[str]) -> tuple[Path, str]:
    """The snapshot folder of a Hub repository and its commit hash.

    Downloads the files matching ``patterns`` unless ``local_files_only`` (or
    ``HF_HUB_OFFLINE=1``) forbids it; then only the cache is read.
    """
    try:
        import huggingface_hub
    except ImportError as error:  # installed with open_clip and transformers
        raise ModelUnavailableError(
            f"loading {repo_id!r} from the Hugging Face Hub needs huggingface_hub: "
            f"{install_hint('hf', torch=True)}") from error
    try:
        folder = huggingface_hub.snapshot_download(
            repo_id, revision=revision, cache_dir=cache_dir, allow_patterns=list(patterns),
            local_files_only=local_files_only)
    except Exception as error:  # offline and not cached, unknown repo, network failure
        where = cache_dir or huggingface_hub.constants.HF_HUB_CACHE
        raise ModelUnavailableError(
            f"cannot find the files of {repo_id!r} (revision {revision or 'main'}) in the "
            f"Hugging Face cache {where}: {type(error).__name__}: {error}\nDownload them once "
            f"on a machine with internet (`hf download {repo_id}`, then copy the cache folder), "
            "or point the embedder at a local folder of model files") from error
    path = Path(folder)
    return path, path.name  # snapshots/<commit hash>
