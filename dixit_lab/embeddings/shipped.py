"""Precomputed embeddings that ship with the project, under ``data/embeddings/``.

For each embedder a folder ``<backend>-<sha256(id)[:12]>/`` holds ``embedder.txt`` (its id)
and, as float16 ``.npz`` files written without pickle:

* ``deck-<deck>.npz``: ``embedder_id``, ``card_ids``, ``card_hashes`` (n, 32) uint8 sha256 of
  each card's content (image bytes, or caption for ``text``), ``vectors`` (n, dim) float16;
* ``clues-<bank>.npz``: ``embedder_id``, ``text_hashes`` (m, 32) uint8, ``vectors`` (m, dim).

Embedders whose texts go through one shared text encoder (``conse``, ``ridge`` and ``text`` all
use the packaged sentence encoder: their ``text_encoder_id``) share its clue vectors, stored
once in ``texts-<sha256(encoder id)[:12]>/`` (``encoder.txt``, and ``clues-<bank>.npz`` whose
``embedder_id`` is the encoder's id). An embedder's own ``clues-<bank>.npz``, if there is one,
comes first.

Loading checks the id and every hash; a file that does not match (a deck image or a clue was
edited since) is ignored with a warning, and the caller falls back to the cache or the model.
Rows are re-normalised to unit length in float32 (float16 storage costs < 1e-3 in cosine).

Regenerate with ``regenerate_shipped("dreams", "conse")`` or
``python -m dixit_lab.embeddings.shipped --deck dreams --embedder conse``.
"""

from __future__ import annotations

import argparse
import hashlib
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dixit_lab.bundled import data_root
from dixit_lab.core.cards import Card, Deck, load_deck
from dixit_lab.embeddings.base import (
    Embedder,
    card_content,
    check_output,
    make_embedder,
    normalize_rows,
)

__all__ = [
    "load_shipped_cards",
    "load_shipped_clues",
    "regenerate_shipped",
    "shipped_folder",
    "shipped_root",
    "text_encoder_folder",
]


def shipped_root() -> Path:
    """``<data root>/embeddings``."""
    return data_root() / "embeddings"


def shipped_folder(embedder_id: str, root: Path | None = None) -> Path:
    """The folder of one embedder's shipped files."""
    backend = embedder_id.split("(", 1)[0]
    digest = hashlib.sha256(embedder_id.encode("utf-8")).hexdigest()[:12]
    return (root if root is not None else shipped_root()) / f"{backend}-{digest}"


def text_encoder_folder(encoder_id: str, root: Path | None = None) -> Path:
    """The folder of the clue vectors shared by the embedders of one text encoder."""
    digest = hashlib.sha256(encoder_id.encode("utf-8")).hexdigest()[:12]
    return (root if root is not None else shipped_root()) / f"texts-{digest}"


def _text_encoder(embedder: Embedder) -> str | None:
    """The id of the text encoder an embedder's ``embed_texts`` is (None: its own)."""
    encoder = getattr(embedder, "text_encoder_id", None)
    return encoder if isinstance(encoder, str) and encoder else None


def _clues_file(embedder: Embedder, bank_name: str, root: Path | None) -> tuple[Path, str]:
    """Where the clue vectors of ``bank_name`` for ``embedder`` are, and the id they carry:
    the embedder's own file, else its text encoder's shared one."""
    own = shipped_folder(embedder.id, root) / f"clues-{bank_name}.npz"
    encoder = _text_encoder(embedder)
    if own.is_file() or encoder is None:
        return own, embedder.id
    return text_encoder_folder(encoder, root) / f"clues-{bank_name}.npz", encoder


def _digests(chunks: Sequence[bytes]) -> np.ndarray:
    out = np.empty((len(chunks), 32), dtype=np.uint8)
    for i, chunk in enumerate(chunks):
        out[i] = np.frombuffer(hashlib.sha256(chunk).digest(), dtype=np.uint8)
    return out


def _read(path: Path, embedder_id: str, dim: int) -> dict[str, np.ndarray] | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except Exception as error:
        warnings.warn(f"dixit_lab: ignoring unreadable shipped embeddings {path}: {error}",
                      RuntimeWarning, stacklevel=3)
        return None
    stored_id = str(arrays.get("embedder_id", ""))
    vectors = arrays.get("vectors")
    if stored_id != embedder_id:
        problem = f"written for embedder {stored_id!r}, not {embedder_id!r}"
    elif vectors is None or vectors.ndim != 2 or vectors.shape[1] != dim:
        problem = f"vectors have shape {None if vectors is None else vectors.shape}, dim {dim}"
    elif not np.all(np.isfinite(vectors)):
        problem = "non-finite values"
    else:
        return arrays
    warnings.warn(f"dixit_lab: ignoring shipped embeddings {path}: {problem}", RuntimeWarning,
                  stacklevel=3)
    return None


def _deck_parts(deck: Deck) -> list[str]:
    return [part.strip() for part in deck.name.split("+")]


def load_shipped_cards(embedder: Embedder, deck: Deck,
                       root: Path | None = None) -> np.ndarray | None:
    """The shipped (len(deck), dim) float32 card matrix, or None if there is none or it is
    stale (with a warning). A mixed deck ``a+b`` is assembled from the files of ``a`` and ``b``."""
    embedder_id, dim = embedder.id, embedder.dim
    folder = shipped_folder(embedder_id, root)
    rows: dict[str, tuple[bytes, np.ndarray]] = {}
    paths = []
    for part in _deck_parts(deck):
        path = folder / f"deck-{part}.npz"
        arrays = _read(path, embedder_id, dim)
        if arrays is None:
            return None
        paths.append(path)
        for card_id, digest, vector in zip(arrays["card_ids"].tolist(), arrays["card_hashes"],
                                           arrays["vectors"], strict=True):
            rows[str(card_id)] = (digest.tobytes(), vector)
    try:
        digests = _digests([card_content(embedder, card) for card in deck.cards])
    except (OSError, ValueError):
        return None
    matrix = np.empty((len(deck), dim), dtype=np.float32)
    for i, card in enumerate(deck.cards):
        found = rows.get(card.id)
        if found is None or found[0] != digests[i].tobytes():
            reason = "is not in them" if found is None else "has changed since"
            warnings.warn(f"dixit_lab: ignoring stale shipped embeddings "
                          f"{', '.join(map(str, paths))}: card {card.id!r} {reason}; "
                          "falling back to the cache or the model (regenerate with "
                          f"`dixit-lab embed --deck {deck.name} ...`)", RuntimeWarning,
                          stacklevel=2)
            return None
        matrix[i] = found[1]
    return normalize_rows(matrix)


def load_shipped_clues(embedder: Embedder, bank_name: str, texts: Sequence[str],
                       root: Path | None = None) -> np.ndarray | None:
    """The shipped (len(texts), dim) float32 clue matrix of bank ``bank_name``, or None if
    there is none or it does not match ``texts`` exactly (with a warning)."""
    path, stored_id = _clues_file(embedder, bank_name, root)
    arrays = _read(path, stored_id, embedder.dim)
    if arrays is None:
        return None
    digests = _digests([text.encode("utf-8") for text in texts])
    stored = arrays.get("text_hashes")
    if stored is None or stored.shape != digests.shape or not np.array_equal(stored, digests):
        warnings.warn(f"dixit_lab: ignoring stale shipped embeddings {path}: the clue bank "
                      f"{bank_name!r} has changed since; falling back to the cache or the model",
                      RuntimeWarning, stacklevel=2)
        return None
    return normalize_rows(arrays["vectors"])


def _write(path: Path, **arrays: np.ndarray) -> None:
    from dixit_lab.embeddings.cache import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda handle: np.savez(handle, **arrays))  # type: ignore[arg-type]


def regenerate_shipped(deck: str, embedder: str | Embedder, clue_bank: str = "default",
                       out_dir: Path | None = None) -> list[Path]:
    """Compute with the model and write the shipped files of one embedder for one bundled
    deck and one clue bank. Returns the written paths.

    The vectors are recomputed, never read from the disk cache or earlier shipped files: a
    machine without the model gets :class:`ModelUnavailableError`, not copies."""
    from dixit_lab.atomic import atomic_write_text
    from dixit_lab.core.clues import ClueBank

    model = make_embedder(embedder)
    deck_obj = load_deck(deck)
    bank = ClueBank.load(clue_bank)
    cards: tuple[Card, ...] = deck_obj.cards
    # Compute everything before writing anything: a failure leaves the old files alone.
    card_vectors = check_output(model.embed_images(cards), len(cards), model.dim, model.id)
    clue_vectors = check_output(model.embed_texts(bank.texts), len(bank.texts), model.dim,
                                model.id)
    folder = shipped_folder(model.id, out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "embedder.txt", model.id + "\n")
    deck_path = folder / f"deck-{deck_obj.name}.npz"
    _write(deck_path, embedder_id=np.asarray(model.id),
           card_ids=np.asarray([card.id for card in cards]),
           card_hashes=_digests([card_content(model, card) for card in cards]),
           vectors=card_vectors.astype(np.float16))
    # clue vectors of a shared text encoder are written once, for all its embedders
    encoder = _text_encoder(model)
    clues_folder = folder if encoder is None else text_encoder_folder(encoder, out_dir)
    clues_folder.mkdir(parents=True, exist_ok=True)
    if encoder is not None:
        (clues_folder / "encoder.txt").write_text(encoder + "\n", encoding="utf-8")
    clues_path = clues_folder / f"clues-{bank.name}.npz"
    _write(clues_path, embedder_id=np.asarray(encoder or model.id),
           text_hashes=_digests([text.encode("utf-8") for text in bank.texts]),
           vectors=clue_vectors.astype(np.float16))
    written = [deck_path, clues_path]
    return written


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Regenerate shipped embeddings.")
    parser.add_argument("--deck", required=True, action="append",
                        help="bundled deck name (repeatable)")
    parser.add_argument("--embedder", required=True, help="embedder spec, e.g. conse")
    parser.add_argument("--clues", default="default", help="clue bank name")
    parser.add_argument("--out", type=Path, default=None, help="default: data/embeddings")
    args = parser.parse_args(argv)
    for deck in args.deck:
        for path in regenerate_shipped(deck, args.embedder, args.clues, args.out):
            print(path)


if __name__ == "__main__":
    main()
