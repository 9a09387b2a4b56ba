"""The open_clip backend with a real, randomly initialised model (no weights needed)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("open_clip")

from PIL import Image  # noqa: E402

from dixit_lab.cards import Card  # noqa: E402
from dixit_lab.embeddings import ModelUnavailableError, make_embedder  # noqa: E402

MODEL = "RN50"  # the fastest small open_clip config to build on CPU


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def cards(tmp_path_factory) -> list[Card]:
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    out = []
    for i in range(3):
        pixels = rng.integers(0, 256, size=(96, 64, 3), dtype=np.uint8)
        path = folder / f"img{i}.png"
        Image.fromarray(pixels).save(path)
        out.append(Card(f"c{i}", path))
    return out


@pytest.fixture(scope="module")
def random_clip():
    return make_embedder({"kind": "clip", "model": MODEL, "pretrained": None, "seed": 3})


TEXTS = ["a red balloon", "a lonely tower", "the end of the world"]


def test_shapes_dtype_norm(random_clip, cards) -> None:
    images = random_clip.embed_images(cards)
    texts = random_clip.embed_texts(TEXTS)
    assert images.shape == (3, random_clip.dim) == (3, 1024)
    assert texts.shape == (3, 1024)
    assert images.dtype == texts.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(images, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1, atol=1e-5)
    assert not np.allclose(images[0], images[1])


def test_random_init_is_deterministic_and_leaks_no_global_state(random_clip, cards) -> None:
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    again = make_embedder({"kind": "clip", "model": MODEL, "pretrained": None, "seed": 3})
    np.testing.assert_allclose(again.embed_images(cards[:1]), random_clip.embed_images(cards[:1]),
                               atol=1e-6)
    assert torch.equal(torch.rand(1), expected_next)  # global torch RNG untouched
    other = make_embedder({"kind": "clip", "model": MODEL, "pretrained": None, "seed": 4})
    assert other.id != random_clip.id
    assert not np.allclose(other.embed_texts(TEXTS[:1]), random_clip.embed_texts(TEXTS[:1]))


def test_local_checkpoint_gives_identical_vectors(random_clip, cards, tmp_path) -> None:
    model, _, _ = random_clip._load()
    path = tmp_path / "rn50-random.pt"
    torch.save(model.state_dict(), path)
    loaded = make_embedder(f"clip(model={MODEL}, pretrained={path})")
    assert "sha256:" in loaded.id and loaded.id != random_clip.id
    np.testing.assert_allclose(loaded.embed_images(cards), random_clip.embed_images(cards),
                               atol=1e-5)
    np.testing.assert_allclose(loaded.embed_texts(TEXTS), random_clip.embed_texts(TEXTS),
                               atol=1e-5)


def test_missing_tag_explains_how_to_use_local_weights() -> None:
    embedder = make_embedder(f"clip(model={MODEL}, pretrained=no-such-tag)")
    with pytest.raises(ModelUnavailableError) as info:
        embedder.embed_texts(["x"])
    message = str(info.value)
    assert "pretrained=/path/to/checkpoint.pt" in message
    assert "cache_dir" in message
    assert "openai" in message  # lists the known tags


def test_bad_checkpoint_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "broken.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelUnavailableError, match="broken.pt"):
        make_embedder({"kind": "clip", "model": MODEL, "pretrained": str(path)}).embed_texts(["x"])
