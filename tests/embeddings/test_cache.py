"""Disk cache: hits, misses, stale entries and corrupt files (with a counting fake embedder)."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from dixit_lab.core.cards import Card
from dixit_lab.embeddings import (
    EmbeddingCache,
    cache_root,
    cached_embed_cards,
    cached_embed_texts,
)


@dataclass
class CountingEmbedder:
    """Deterministic vectors from content hashes; counts items it was asked to embed."""

    version: int = 1
    dim: int = 8
    image_calls: list[int] = field(default_factory=list)
    text_calls: list[int] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"counting(version={self.version})"

    def _vector(self, data: bytes) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(data + bytes([self.version])).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_images(self, cards):
        self.image_calls.append(len(cards))
        return np.stack([self._vector(Path(card.image).read_bytes()) for card in cards])

    def embed_texts(self, texts):
        self.text_calls.append(len(texts))
        return np.stack([self._vector(text.encode()) for text in texts])


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


def _cards(tmp_path: Path, n: int = 3) -> list[Card]:
    cards = []
    for i in range(n):
        path = tmp_path / f"card{i}.png"
        path.write_bytes(f"image-{i}".encode())  # the fake never decodes images
        cards.append(Card(f"c{i}", path))
    return cards


def test_root_follows_environment(tmp_path) -> None:
    assert cache_root() == tmp_path / "cache"
    assert EmbeddingCache().root == tmp_path / "cache"


def test_miss_then_hit(tmp_path) -> None:
    embedder = CountingEmbedder()
    texts = ["a cat", "a dog", "a cat", "the sea"]
    first = cached_embed_texts(embedder, texts)
    assert embedder.text_calls == [3]  # duplicates computed once
    assert first.dtype == np.float32 and first.shape == (4, 8)
    np.testing.assert_array_equal(first[0], first[2])
    second = cached_embed_texts(CountingEmbedder(), texts)
    fresh = CountingEmbedder()
    cached_embed_texts(fresh, texts)
    assert fresh.text_calls == []
    np.testing.assert_array_equal(first, second)
    more = CountingEmbedder()
    mixed = cached_embed_texts(more, ["the sea", "a bird"])
    assert more.text_calls == [1]  # only the new text
    np.testing.assert_array_equal(mixed[0], first[3])
    assert list((tmp_path / "cache" / "embeddings").glob("*/id.txt"))


def test_empty_input() -> None:
    embedder = CountingEmbedder()
    assert cached_embed_texts(embedder, []).shape == (0, 8)
    assert embedder.text_calls == []


def test_cards_hit_and_changed_image_recomputes(tmp_path) -> None:
    cards = _cards(tmp_path)
    embedder = CountingEmbedder()
    before = cached_embed_cards(embedder, cards)
    cached_embed_cards(embedder, cards)
    assert embedder.image_calls == [3]
    cards[1].image.write_bytes(b"edited")
    after = cached_embed_cards(embedder, cards)
    assert embedder.image_calls == [3, 1]
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    assert not np.allclose(after[1], before[1])


def test_changed_embedder_id_recomputes(tmp_path) -> None:
    cached_embed_texts(CountingEmbedder(version=1), ["a", "b"])
    other = CountingEmbedder(version=2)
    cached_embed_texts(other, ["a", "b"])
    assert other.text_calls == [2]


def test_explicit_cache_folder(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path / "elsewhere")
    cached_embed_texts(CountingEmbedder(), ["x"], cache=cache)
    assert list((tmp_path / "elsewhere").rglob("*.npz"))
    assert not (tmp_path / "cache").exists()


def _pack(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "cache" / "embeddings").glob("*/*.npz")
    return path


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip_vector", "wrong_dtype", "nan"])
def test_corrupt_file_is_reported_and_recomputed(tmp_path, damage) -> None:
    texts = ["one", "two", "three"]
    good = cached_embed_texts(CountingEmbedder(), texts)
    path = _pack(tmp_path)
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    else:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        if damage == "flip_vector":
            arrays["vectors"][1, 0] += 0.25
        elif damage == "wrong_dtype":
            arrays["vectors"] = arrays["vectors"].astype(np.float64)
        else:
            arrays["vectors"][0, 0] = np.nan
        np.savez(path, **arrays)
    embedder = CountingEmbedder()
    with pytest.warns(RuntimeWarning, match="corrupt") as record:
        again = cached_embed_texts(embedder, texts)
    assert str(path) in str(record[0].message)
    assert embedder.text_calls == [3]
    np.testing.assert_array_equal(again, good)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cached_embed_texts(embedder, texts)  # repaired: no warning, no call
    assert embedder.text_calls == [3]


def test_no_pickle_in_files(tmp_path) -> None:
    cached_embed_texts(CountingEmbedder(), ["x", "y"])
    with np.load(_pack(tmp_path), allow_pickle=False) as data:
        assert all(data[key].dtype != object for key in data.files)


def test_bad_embedder_output_is_rejected() -> None:
    class Broken(CountingEmbedder):
        def embed_texts(self, texts):
            return np.zeros((len(texts), self.dim), dtype=np.float32)

    with pytest.raises(ValueError, match="zero or not finite"):
        cached_embed_texts(Broken(), ["x"])

    class WrongShape(CountingEmbedder):
        def embed_texts(self, texts):
            return np.ones((len(texts), 3), dtype=np.float32)

    with pytest.raises(ValueError, match="expected shape"):
        cached_embed_texts(WrongShape(), ["x"])


def test_many_batches_are_compacted(tmp_path) -> None:
    embedder = CountingEmbedder()
    for i in range(40):
        cached_embed_texts(embedder, [f"text {i}"])
    folder = _pack_folder(tmp_path)
    assert len(list(folder.glob("*.npz"))) <= 33
    fresh = CountingEmbedder()
    cached_embed_texts(fresh, [f"text {i}" for i in range(40)])
    assert fresh.text_calls == []


def _pack_folder(tmp_path: Path) -> Path:
    (folder,) = (tmp_path / "cache" / "embeddings").iterdir()
    return folder


def test_three_thousand_texts_are_fast(tmp_path) -> None:
    import time

    texts = [f"clue number {i}" for i in range(3000)]
    cached_embed_texts(CountingEmbedder(), texts)
    start = time.perf_counter()
    cached_embed_texts(CountingEmbedder(), texts)
    assert time.perf_counter() - start < 0.5


def test_a_process_with_no_home_directory_embeds_in_memory_without_a_word(monkeypatch):
    """A sandbox's game process has no $HOME and no passwd entry: Path.home() raised
    "Could not determine home directory" at a built-in softmax's decisions (faults); now the
    vectors are computed and kept in memory, with no warning and nothing written."""
    from dixit_lab.embeddings.cache import NO_HOME

    monkeypatch.delenv("DIXIT_LAB_CACHE")

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert cache_root() == NO_HOME
    embedder = CountingEmbedder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vectors = cached_embed_texts(embedder, ["a cat", "a dog"])
        again = cached_embed_texts(embedder, ["a cat"])
    assert vectors.shape == (2, 8) and embedder.text_calls == [2, 1]
    np.testing.assert_array_equal(again[0], vectors[0])
    assert not NO_HOME.exists()
