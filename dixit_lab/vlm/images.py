"""Card images as ``data:`` URLs for chat messages, downscaled once per card and size.

The exchange key of a request names an image by :func:`image_ref` (a hash of the card's
image file and the requested size), never by the encoded bytes, so recorded games replay on
any machine whatever its Pillow version encodes.
"""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path

from dixit_lab.atomic import file_sha256
from dixit_lab.core.cards import Card

__all__ = ["data_url", "file_hash", "image_ref"]

_URLS: dict[tuple[str, int], str] = {}
_HASHES: dict[str, str] = {}
_LOCK = threading.Lock()


def file_hash(path: Path) -> str:
    """sha256 hex digest of a file's bytes (cached per path)."""
    key = str(path)
    digest = _HASHES.get(key)
    if digest is None:
        digest = file_sha256(path)
        with _LOCK:
            _HASHES[key] = digest
    return digest


def image_ref(card: Card, size: int) -> str:
    """What stands for a card's image in an exchange key: ``sha256:<file hash>@<size>``."""
    if card.image is None:
        raise ValueError(f"card {card.id!r} has no image")
    return f"sha256:{file_hash(card.image)}@{size}"


def data_url(card: Card, size: int) -> str:
    """The card's image as a JPEG ``data:`` URL whose longer side is at most ``size`` pixels."""
    if card.image is None:
        raise ValueError(f"card {card.id!r} has no image: a vision agent needs an image deck "
                         f"(such as 'dreams'), or use the text-only 'llm' agent")
    key = (str(card.image), size)
    url = _URLS.get(key)
    if url is None:
        from PIL import Image

        with Image.open(card.image) as image:
            picture = image.convert("RGB")
        picture.thumbnail((size, size))
        buffer = io.BytesIO()
        picture.save(buffer, format="JPEG", quality=90)
        url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
        with _LOCK:
            _URLS[key] = url
    return url
