"""Disk cache of vectors, keyed by embedder id + the sha256 of each item's content.

Layout under ``$DIXIT_LAB_CACHE`` (default ``~/.cache/dixit_lab``)::

    embeddings/<sha256(embedder id)[:20]>/id.txt          the embedder id, for people
    embeddings/<sha256(embedder id)[:20]>/<pack>.npz      one file per computed batch

A pack holds ``embedder_id`` (0-d str), ``keys`` (n,) sha256 hex of each item's content,
``vectors`` (n, dim) float32 and ``checksum`` (sha256 of the other three). Loading uses
``allow_pickle=False`` and checks all of it; a file that fails is reported with
``warnings.warn`` naming it, deleted, and its items recomputed — never silently used. Packs are
written to a temporary file and moved into place with ``os.replace``, so a reader never sees a
half-written pack and concurrent processes at worst compute the same batch twice. Packs make a
lookup of ~3,000 clue texts a handful of file reads instead of thousands.

A cache folder that cannot hold packs (``$DIXIT_LAB_CACHE`` naming a file, a read-only folder,
a parent that cannot be created) is found before anything is computed: one warning per
folder and process names it and the reason, and the run goes on with the vectors in memory
(the same vectors, so the same games, as with a cache). A pack that cannot be saved later (a
full disk) is the same warning; computed vectors are never thrown away.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import dixit_lab.atomic as atomic
from dixit_lab.core.cards import Card
from dixit_lab.embeddings.base import Embedder, card_content_hash, check_output, text_hash
from dixit_lab.progress import progress

__all__ = [
    "EmbeddingCache",
    "atomic_write",
    "cache_root",
    "cached_embed_cards",
    "cached_embed_texts",
]

_CHUNK = 256
_PROGRESS_MIN_ITEMS = 64
_MAX_PACKS = 32


#: cache folders found unable to hold packs in this process (warned about once each)
_UNUSABLE: set[Path] = set()


#: the cache root of a process with no home directory ($HOME unset and no passwd entry: a
#: sandbox's game process, whose uid has none): nothing is read or saved there, and the
#: vectors computed stay in memory without a warning (a sandbox can write nowhere anyway)
NO_HOME = Path("/nonexistent/dixit_lab-cache")


def cache_root() -> Path:
    """``$DIXIT_LAB_CACHE`` or ``~/.cache/dixit_lab`` (:data:`NO_HOME` when there is no home
    directory)."""
    env = os.environ.get("DIXIT_LAB_CACHE")
    if env:
        return Path(env).expanduser()
    try:
        return Path.home() / ".cache" / "dixit_lab"
    except RuntimeError:  # "Could not determine home directory": it raised at decisions
        return NO_HOME


def _checksum(embedder_id: str, keys: np.ndarray, vectors: np.ndarray) -> str:
    digest = hashlib.sha256(embedder_id.encode("utf-8"))
    digest.update(np.ascontiguousarray(keys).tobytes())
    digest.update(np.ascontiguousarray(vectors).tobytes())
    return digest.hexdigest()


class EmbeddingCache:
    """Vectors on disk for any number of embedders (see module docstring)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self._from_environment = root is None
        self._checked = False

    def usable(self) -> bool:
        """Whether packs can be saved under :attr:`root` (checked once, by creating the
        folder and a file in it); if not, :meth:`give_up` warns."""
        if self.root in _UNUSABLE or self.root == NO_HOME:
            return False
        if not self._checked:
            problem = _folder_problem(self.root / "embeddings")
            if problem:
                self.give_up(problem)
                return False
            self._checked = True
        return True

    def give_up(self, problem: str) -> None:
        """Stop saving packs under :attr:`root` in this process, with one warning naming
        the folder (and ``$DIXIT_LAB_CACHE`` when it comes from there) and ``problem``."""
        if self.root in _UNUSABLE:
            return
        _UNUSABLE.add(self.root)
        if self._from_environment and os.environ.get("DIXIT_LAB_CACHE"):
            where = f"$DIXIT_LAB_CACHE={self.root}"
        elif self._from_environment:
            where = f"the embedding cache {self.root} (the default; $DIXIT_LAB_CACHE is unset)"
        else:
            where = f"the embedding cache {self.root}"
        # one line: no source line under it (the problem is the folder, not the code)
        warnings.warn_explicit(f"{where} cannot hold embeddings: {problem}; the vectors "
                               f"computed now are kept in memory for this run only (point "
                               f"$DIXIT_LAB_CACHE at a writable folder to keep them)",
                               RuntimeWarning, "dixit_lab embedding cache", 0)

    def folder(self, embedder_id: str) -> Path:
        digest = hashlib.sha256(embedder_id.encode("utf-8")).hexdigest()[:20]
        return self.root / "embeddings" / digest

    def lookup(self, embedder_id: str, keys: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (a dict key -> (dim,) float32)."""
        wanted = set(keys)
        found: dict[str, np.ndarray] = {}
        folder = self.folder(embedder_id)
        if not wanted or not folder.is_dir():
            return found
        for path in sorted(folder.glob("*.npz")):
            pack = self._read(path, embedder_id, dim)
            if pack is None:
                continue
            pack_keys, vectors = pack
            for i, key in enumerate(pack_keys.tolist()):
                if key in wanted and key not in found:
                    found[key] = vectors[i]
            if len(found) == len(wanted):
                break
        return found

    def store(self, embedder_id: str, keys: Sequence[str], vectors: np.ndarray) -> Path | None:
        """Write one pack (atomically); returns its path, or None if there was nothing."""
        if not keys:
            return None
        key_array = np.asarray(list(keys), dtype="<U64")
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape[0] != len(key_array) or not np.all(np.isfinite(matrix)):
            raise ValueError("refusing to cache vectors with a wrong shape or non-finite values")
        folder = self.folder(embedder_id)
        folder.mkdir(parents=True, exist_ok=True)
        id_file = folder / "id.txt"
        if not id_file.exists():
            atomic_write(id_file, lambda handle: handle.write(embedder_id.encode("utf-8")))
        name = hashlib.sha256(key_array.tobytes()).hexdigest()[:20]
        path = folder / f"{name}.npz"
        checksum = _checksum(embedder_id, key_array, matrix)
        atomic_write(path, lambda handle: np.savez(
            handle, embedder_id=np.asarray(embedder_id), keys=key_array, vectors=matrix,
            checksum=np.asarray(checksum)))
        self._compact(folder, embedder_id, matrix.shape[1])
        return path

    def _read(self, path: Path, embedder_id: str,
              dim: int) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            with np.load(path, allow_pickle=False) as data:
                stored_id = str(data["embedder_id"])
                keys = data["keys"]
                vectors = data["vectors"]
                checksum = str(data["checksum"])
            problem = _pack_problem(stored_id, keys, vectors, checksum, embedder_id, dim)
        except FileNotFoundError:
            return None  # removed by a concurrent compaction
        except Exception as error:
            problem = f"unreadable ({type(error).__name__}: {error})"
        if problem:
            warnings.warn(f"dixit_lab embedding cache: ignoring corrupt file {path}: {problem}; "
                          "its vectors will be recomputed", RuntimeWarning, stacklevel=3)
            path.unlink(missing_ok=True)
            return None
        return keys, vectors

    def _compact(self, folder: Path, embedder_id: str, dim: int) -> None:
        """Merge the packs into one when there are many, so lookups stay a few reads."""
        packs = sorted(folder.glob("*.npz"))
        if len(packs) <= _MAX_PACKS:
            return
        merged: dict[str, np.ndarray] = {}
        for path in packs:
            pack = self._read(path, embedder_id, dim)
            if pack is not None:
                merged.update(zip(pack[0].tolist(), pack[1], strict=True))
        keys = sorted(merged)
        key_array = np.asarray(keys, dtype="<U64")
        matrix = np.stack([merged[key] for key in keys]).astype(np.float32)
        name = "merged-" + hashlib.sha256(key_array.tobytes()).hexdigest()[:20]
        checksum = _checksum(embedder_id, key_array, matrix)
        target = folder / f"{name}.npz"
        atomic_write(target, lambda handle: np.savez(
            handle, embedder_id=np.asarray(embedder_id), keys=key_array, vectors=matrix,
            checksum=np.asarray(checksum)))
        for path in packs:
            if path != target:
                path.unlink(missing_ok=True)


def _folder_problem(folder: Path) -> str | None:
    """Why no file can be written in ``folder`` (created if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        for parent in (folder, *folder.parents):
            if parent.exists() and not parent.is_dir():
                return f"{parent} is a file, not a folder"
        return f"{error.strerror or error} ({error.filename or folder})"
    return None


def _pack_problem(stored_id: str, keys: np.ndarray, vectors: np.ndarray, checksum: str,
                  embedder_id: str, dim: int) -> str | None:
    if stored_id != embedder_id:
        return f"written for embedder {stored_id!r}"
    if keys.ndim != 1 or keys.dtype.kind != "U":
        return f"bad keys array ({keys.dtype}, shape {keys.shape})"
    if vectors.dtype != np.float32 or vectors.shape != (len(keys), dim):
        return f"vectors are {vectors.dtype} {vectors.shape}, expected float32 {(len(keys), dim)}"
    if not np.all(np.isfinite(vectors)):
        return "non-finite values"
    if _checksum(stored_id, keys.astype("<U64"), vectors) != checksum:
        return "checksum mismatch"
    return None


def atomic_write(path: Path, write: Callable[..., object]) -> None:
    """Call ``write(binary_handle)`` and move the file into place atomically
    (:func:`dixit_lab.atomic.atomic_write`: readers see the old file or the new one)."""

    def to(temporary: Path) -> None:
        with open(temporary, "wb") as handle:
            write(handle)

    atomic.atomic_write(path, to)


def _progress(total: int, description: str, enabled: bool | None) -> Any:
    if enabled is None:
        enabled = total >= _PROGRESS_MIN_ITEMS
        return progress(total, description, "item", leave=False, disable_all=not enabled)
    return progress(total, description, "item", leave=False, disable_all=not enabled,
                    force=enabled)


def _cached_embed(embedder: Embedder, items: Sequence, keys: list[str],
                  compute: Callable[[Sequence], np.ndarray], what: str,
                  cache: EmbeddingCache | None, progress: bool | None) -> np.ndarray:
    cache = cache if cache is not None else EmbeddingCache()
    embedder_id, dim = embedder.id, embedder.dim
    found = cache.lookup(embedder_id, keys, dim)
    missing: dict[str, object] = {}
    for key, item in zip(keys, items, strict=True):
        if key not in found and key not in missing:
            missing[key] = item
    if missing:
        keep = cache.usable()  # known before any work: a cache that cannot hold them warns
        todo_keys = list(missing)
        todo = list(missing.values())
        parts: list[np.ndarray] = []
        with _progress(len(todo), f"embedding {what}", progress) as bar:
            for start in range(0, len(todo), _CHUNK):
                chunk = todo[start:start + _CHUNK]
                parts.append(check_output(compute(chunk), len(chunk), dim, embedder_id))
                bar.update(len(chunk))
        computed = np.concatenate(parts)
        if keep:
            try:
                cache.store(embedder_id, todo_keys, computed)
            except OSError as error:  # e.g. a full disk: the vectors stay in memory
                cache.give_up(f"saving them failed: {error}")
        found.update(zip(todo_keys, computed, strict=True))
    if not keys:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([found[key] for key in keys]).astype(np.float32)


def cached_embed_texts(embedder: Embedder, texts: Sequence[str], *,
                       cache: EmbeddingCache | None = None,
                       progress: bool | None = None) -> np.ndarray:
    """``embedder.embed_texts(texts)`` through the disk cache (computes only what is missing).
    ``progress``: None shows a bar on a terminal for jobs of 64 items or more."""
    keys = [text_hash(text) for text in texts]
    return _cached_embed(embedder, list(texts), keys, embedder.embed_texts, "texts", cache,
                         progress)


def cached_embed_cards(embedder: Embedder, cards: Sequence[Card], *,
                       cache: EmbeddingCache | None = None,
                       progress: bool | None = None) -> np.ndarray:
    """``embedder.embed_images(cards)`` through the disk cache, keyed by each card's content
    (image bytes, or the caption for the ``text`` backend)."""
    keys = [card_content_hash(embedder, card) for card in cards]
    return _cached_embed(embedder, list(cards), keys, embedder.embed_images, "cards", cache,
                         progress)
