"""The open_clip backend with a real, randomly initialised model (no weights needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.optional import import_or_skip

torch = import_or_skip("torch")
open_clip = import_or_skip("open_clip")

from PIL import Image  # noqa: E402

from dixit_lab.core.cards import Card  # noqa: E402
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
    loaded = make_embedder(f"clip(model={MODEL}, pretrained={path}, preprocess=default)")
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
        make_embedder({"kind": "clip", "model": MODEL, "pretrained": str(path),
                       "preprocess": "default"}).embed_texts(["x"])


def test_checkpoint_gets_the_preprocessing_it_names(random_clip, tmp_path) -> None:
    model, _, _ = random_clip._load()
    path = tmp_path / "rn50.pt"
    torch.save(model.state_dict(), path)
    tagged = make_embedder(f"clip(model={MODEL}, pretrained={path}, preprocess=yfcc15m)")
    expected = open_clip.get_pretrained_cfg(MODEL, "yfcc15m")
    normalize = tagged._load()[1].transforms[-1]
    assert tuple(normalize.mean) == tuple(expected.get("mean", open_clip.OPENAI_DATASET_MEAN))
    with pytest.raises(ModelUnavailableError, match="not an open_clip tag"):
        make_embedder(f"clip(model={MODEL}, pretrained={path}, preprocess=nope)").embed_texts(["x"])


# A tiny open_clip model folder, as open_clip's save_for_hf / push_to_hf_hub lays it out.
TINY = {"model_cfg": {"embed_dim": 16,
                      "vision_cfg": {"image_size": 32, "layers": 1, "width": 32,
                                     "patch_size": 16, "head_width": 16},
                      "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32,
                                   "heads": 2, "layers": 1}},
        "preprocess_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25],
                           "interpolation": "bilinear", "resize_mode": "squash"}}


def _tiny_folder(folder: Path, seed: int) -> Any:
    folder.mkdir(parents=True)
    (folder / "open_clip_config.json").write_text(json.dumps(TINY), encoding="utf-8")
    torch.manual_seed(seed)
    model = open_clip.create_model_and_transforms(f"local-dir:{folder}")[0]  # random weights
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    return model.eval()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Any]:
    folder = tmp_path_factory.mktemp("tiny") / "model"
    return folder, _tiny_folder(folder, seed=0)


def test_local_dir_model_uses_its_weights_config_and_preprocessing(tiny, cards) -> None:
    folder, model = tiny
    embedder = make_embedder(f"clip(model=local-dir:{folder})")
    assert embedder.dim == 16
    assert "weights=sha256:" in embedder.id and str(folder) not in embedder.id
    images = embedder.embed_images(cards)
    _, preprocess, _ = embedder._load()
    assert list(preprocess.transforms[-1].std) == [0.25, 0.25, 0.25]
    with torch.inference_mode():
        pixels = torch.stack([preprocess(Image.open(c.image).convert("RGB")) for c in cards])
        expected = model.encode_image(pixels).numpy()
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(images, expected, atol=1e-5)
    assert embedder.embed_texts(TEXTS).shape == (3, 16)


def test_local_dir_without_weights_is_an_error(tmp_path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "open_clip_config.json").write_text(json.dumps(TINY), encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="no weights"):
        _ = make_embedder(f"clip(model=local-dir:{folder})").id


def test_hf_hub_model_from_the_cache_offline(tiny, cards, tmp_path) -> None:
    """A Hub repository in a Hugging Face cache (the layout `hf download` leaves) loads with
    local_files_only; the id names the snapshot's commit."""
    folder, _ = tiny
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-clip"
    shutil.copytree(folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    spec = {"kind": "clip", "model": "hf-hub:someone/tiny-clip", "local_files_only": True,
            "cache_dir": str(tmp_path / "hub")}
    embedder = make_embedder(spec)
    assert f"hf-commit:{commit}" in embedder.id
    local = make_embedder(f"clip(model=local-dir:{folder})")
    np.testing.assert_allclose(embedder.embed_images(cards), local.embed_images(cards), atol=1e-6)
    missing = make_embedder(spec | {"model": "hf-hub:someone/absent"})
    with pytest.raises(ModelUnavailableError, match="hf download someone/absent"):
        _ = missing.id
