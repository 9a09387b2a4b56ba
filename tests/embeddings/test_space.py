"""EmbeddingSpace and shipped embeddings, with a fake embedder (no model needed)."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from dixit_lab.core.cards import Deck
from dixit_lab.core.clues import ClueBank
from dixit_lab.embeddings import (
    EmbeddingSpace,
    ModelUnavailableError,
    clear_spaces,
    get_space,
    load_shipped_cards,
    load_shipped_clues,
    regenerate_shipped,
    register_embedder,
)


@register_embedder("fake-space-test")
@dataclass(frozen=True)
class FakeEmbedder:
    """Vectors from content hashes; ``offline=True`` behaves like a machine without torch."""

    offline: bool = False
    calls: list = field(default_factory=list, compare=False, repr=False)

    @property
    def id(self) -> str:
        return "fake-space-test(v=1)"

    @property
    def dim(self) -> int:
        return 6

    def _vector(self, data: bytes) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(data).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def _check(self) -> None:
        if self.offline:
            raise ModelUnavailableError("fake model not installed")

    def embed_images(self, cards):
        self._check()
        self.calls.append(("images", len(cards)))
        return np.stack([self._vector(Path(card.image).read_bytes()) for card in cards])

    def embed_texts(self, texts):
        self._check()
        self.calls.append(("texts", len(texts)))
        return np.stack([self._vector(text.encode()) for text in texts])


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A data root with a 5-card deck folder and a clue file; an isolated cache."""
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DIXIT_LAB_DATA", str(tmp_path / "data"))
    folder = tmp_path / "data" / "decks" / "tiny"
    folder.mkdir(parents=True)
    from PIL import Image

    for i in range(5):
        Image.new("RGB", (8, 8), (40 * i, 10, 200 - 30 * i)).save(folder / f"card{i}.png")
    clue_file = tmp_path / "data" / "clues" / "few.txt"
    clue_file.parent.mkdir(parents=True)
    clue_file.write_text("the moon\nlonely\nA journey\nfire\n", encoding="utf-8")
    clear_spaces()
    yield {"deck": folder, "clues": clue_file}
    clear_spaces()


def _space(world, embedder=None, **kwargs) -> EmbeddingSpace:
    return EmbeddingSpace.load(embedder or FakeEmbedder(), Deck.from_folder(world["deck"]),
                               ClueBank.load(world["clues"]), **kwargs)


def test_shapes_and_similarity(world) -> None:
    space = _space(world)
    assert space.card_vectors.shape == (5, 6) and space.card_vectors.dtype == np.float32
    assert space.clue_vectors.shape == (4, 6) and space.clue_vectors.dtype == np.float32
    assert space.similarity.shape == (4, 5) and space.similarity.dtype == np.float32
    np.testing.assert_allclose(space.similarity, space.clue_vectors @ space.card_vectors.T,
                               atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(space.card_vectors, axis=1), 1, atol=1e-6)
    assert space.embedder_id == "fake-space-test(v=1)"
    with pytest.raises(ValueError):
        space.similarity[0, 0] = 1.0  # read-only: agents share it


def test_clue_index_and_text_similarity(world) -> None:
    space = _space(world)
    assert space.clue_index("lonely") == 1
    assert space.clue_index("  the Moon. ") == 0  # the bank's normalisation
    with pytest.raises(KeyError):
        space.clue_index("not a clue")
    np.testing.assert_array_equal(space.text_similarity("fire"), space.similarity[3])


def test_unknown_text_is_embedded_on_the_fly(world) -> None:
    embedder = FakeEmbedder()
    space = _space(world, embedder)
    before = len(embedder.calls)
    scores = space.text_similarity("a brand new clue")
    assert scores.shape == (5,)
    expected = space.card_vectors @ embedder._vector(b"a brand new clue")
    np.testing.assert_allclose(scores, expected, atol=1e-6)
    space.text_similarity("a brand new clue")
    assert len(embedder.calls) == before + 1  # memoised


def test_unknown_text_without_model_is_a_clear_error(world) -> None:
    _space(world)  # fill the cache
    offline = _space(world, FakeEmbedder(offline=True))  # served from the cache
    assert offline.similarity.shape == (4, 5)
    assert offline.text_similarity("lonely").shape == (5,)
    with pytest.raises(ModelUnavailableError, match="not in clue bank") as info:
        offline.text_similarity("never seen before")
    assert "pip install" in str(info.value)


def test_no_model_no_cache_no_shipped(world) -> None:
    with pytest.raises(ModelUnavailableError, match="not installed"):
        _space(world, FakeEmbedder(offline=True))


def test_cache_dir_argument(world, tmp_path) -> None:
    _space(world, cache_dir=tmp_path / "mine")
    assert list((tmp_path / "mine").rglob("*.npz"))
    assert not (tmp_path / "cache").exists()


def test_shipped_files_round_trip_and_are_used_first(world) -> None:
    paths = regenerate_shipped(str(world["deck"]), FakeEmbedder(), str(world["clues"]))
    assert [p.name for p in paths] == ["deck-tiny.npz", "clues-few.npz"]
    assert all(p.is_relative_to(world["deck"].parents[1] / "embeddings") for p in paths)
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            assert data["vectors"].dtype == np.float16
    reference = _space(world, use_shipped=False)
    offline = FakeEmbedder(offline=True)
    # No model, and an empty cache: everything must come from the shipped files.
    import shutil

    shutil.rmtree(world["deck"].parents[2] / "cache")
    space = _space(world, offline)
    np.testing.assert_allclose(space.card_vectors, reference.card_vectors, atol=2e-3)
    np.testing.assert_allclose(space.clue_vectors, reference.clue_vectors, atol=2e-3)
    np.testing.assert_allclose(np.linalg.norm(space.card_vectors, axis=1), 1, atol=1e-6)


def test_stale_shipped_files_are_ignored_with_a_warning(world) -> None:
    regenerate_shipped(str(world["deck"]), FakeEmbedder(), str(world["clues"]))
    from PIL import Image

    Image.new("RGB", (8, 8), (1, 2, 3)).save(world["deck"] / "card2.png")
    world["clues"].write_text("the moon\nlonely\nA journey\nwater\n", encoding="utf-8")
    embedder = FakeEmbedder()
    with pytest.warns(RuntimeWarning, match="stale") as record:
        space = _space(world, embedder)
    messages = " ".join(str(w.message) for w in record)
    assert "card2" in messages and "clue bank" in messages
    fresh = _space(world, use_shipped=False)
    np.testing.assert_array_equal(space.card_vectors, fresh.card_vectors)
    np.testing.assert_array_equal(space.clue_vectors, fresh.clue_vectors)


def test_shipped_file_for_another_embedder_is_ignored(world) -> None:
    (deck_path, _) = regenerate_shipped(str(world["deck"]), FakeEmbedder(),
                                        str(world["clues"]))
    with np.load(deck_path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["embedder_id"] = np.asarray("someone-else")
    np.savez(deck_path, **arrays)
    with pytest.warns(RuntimeWarning, match="someone-else"):
        assert load_shipped_cards(FakeEmbedder(), Deck.from_folder(world["deck"])) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_shipped_clues(FakeEmbedder(), "absent", ["x"]) is None  # silent: no file


def test_get_space_is_shared(world) -> None:
    first = get_space("fake-space-test", str(world["deck"]), str(world["clues"]))
    second = get_space({"kind": "fake-space-test"}, str(world["deck"]), str(world["clues"]))
    assert first is second



def test_regenerating_without_the_model_fails_even_with_a_full_cache(world) -> None:
    _space(world, use_shipped=False)  # fills the disk cache with every vector
    with pytest.raises(ModelUnavailableError, match="not installed"):
        regenerate_shipped(str(world["deck"]), FakeEmbedder(offline=True), str(world["clues"]))
    assert not list((world["deck"].parents[1] / "embeddings").rglob("*.npz"))


@dataclass(frozen=True)
class SharedTextEmbedder(FakeEmbedder):
    """Its texts are a shared text encoder's (as conse's, ridge's and text's are)."""

    @property
    def text_encoder_id(self) -> str:
        return "fake-encoder@1"


def test_clue_vectors_of_a_shared_text_encoder_are_written_and_read_once(world) -> None:
    from dixit_lab.embeddings.shipped import shipped_folder, text_encoder_folder

    paths = regenerate_shipped(str(world["deck"]), SharedTextEmbedder(), str(world["clues"]))
    root = world["deck"].parents[1] / "embeddings"
    assert paths[1] == text_encoder_folder("fake-encoder@1", root) / "clues-few.npz"
    assert (paths[1].parent / "encoder.txt").read_text() == "fake-encoder@1\n"
    assert not (shipped_folder(SharedTextEmbedder().id, root) / "clues-few.npz").exists()
    bank = ClueBank.load(str(world["clues"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shared = load_shipped_clues(SharedTextEmbedder(), bank.name, bank.texts)
        # an embedder of its own texts does not read another's
        assert load_shipped_clues(FakeEmbedder(), bank.name, bank.texts) is None
    assert shared is not None and shared.shape == (len(bank), 6)
