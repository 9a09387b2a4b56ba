"""make_embedder: specs, dicts, validation errors; ids are stable and torch-free."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest

from dixit_lab.embeddings import (
    EmbedderSpecError,
    available_embedders,
    embedder_parameters,
    make_embedder,
    register_embedder,
)
from dixit_lab.embeddings.clip import ClipEmbedder
from dixit_lab.embeddings.conse import ConseEmbedder
from dixit_lab.embeddings.text import TextEmbedder

# The clip specs read open_clip's bundled model configs (without importing open_clip).
needs_open_clip = pytest.mark.skipif(importlib.util.find_spec("open_clip") is None,
                                     reason="open_clip is not installed (the [clip] extra)")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


def test_available() -> None:
    assert {"clip", "conse", "text"} <= set(available_embedders())


@needs_open_clip
def test_spec_strings_and_dicts() -> None:
    assert make_embedder("conse") == ConseEmbedder()
    assert make_embedder("conse(top_k=5)").top_k == 5
    clip = make_embedder("clip(model=ViT-B-32, pretrained=laion2b_s34b_b79k)")
    assert isinstance(clip, ClipEmbedder)
    assert (clip.model, clip.pretrained) == ("ViT-B-32", "laion2b_s34b_b79k")
    same = make_embedder({"kind": "clip", "model": "ViT-B-32", "pretrained": "laion2b_s34b_b79k"})
    assert same.id == clip.id
    assert make_embedder({"kind": "clip", "pretrained": None}).pretrained is None
    assert make_embedder("clip(pretrained=None)").pretrained is None
    assert isinstance(make_embedder("text"), TextEmbedder)
    embedder = ConseEmbedder(top_k=3)
    assert make_embedder(embedder) is embedder


@needs_open_clip
def test_ids_name_every_vector_relevant_parameter() -> None:
    ids = {make_embedder(spec).id for spec in (
        "conse", "conse(top_k=5)", "text", "clip", "clip(model=RN50)",
        "clip(pretrained=openai)", "clip(pretrained=None)", "clip(pretrained=None, seed=1)")}
    assert len(ids) == 8
    assert make_embedder("conse(batch_size=3)").id == make_embedder("conse").id
    conse_id = make_embedder("conse").id
    for part in ("efficientnet-lite0@57934424", "all-MiniLM-L6-v2@53aa5117", "top_k=10",
                 "mean127-std128"):
        assert part in conse_id
    assert "random-init" in make_embedder("clip(pretrained=None)").id
    assert make_embedder("clip").dim == 512
    assert make_embedder("clip(model=RN50)").dim == 1024
    assert make_embedder("conse").dim == make_embedder("text").dim == 384


@needs_open_clip
def test_checkpoint_id_uses_file_hash(tmp_path) -> None:
    path = tmp_path / "weights.pt"
    path.write_bytes(b"one")
    with pytest.raises(EmbedderSpecError, match="preprocess=default"):
        make_embedder({"kind": "clip", "pretrained": str(path)})  # which preprocessing?
    first = make_embedder({"kind": "clip", "pretrained": str(path), "preprocess": "openai"}).id
    path.write_bytes(b"two")
    second = make_embedder({"kind": "clip", "pretrained": str(path), "preprocess": "openai"}).id
    assert "sha256:" in first and first != second and "preprocess=openai" in first
    with pytest.raises(EmbedderSpecError, match="does not exist"):
        make_embedder(f"clip(pretrained={tmp_path / 'missing.pt'}, preprocess=default)")


@pytest.mark.parametrize(("spec", "fragments"), [
    ("nope", ["unknown embedder 'nope'", "clip", "conse", "text"]),
    ({"kind": "nope"}, ["unknown embedder", "conse"]),
    ({"model": "RN50"}, ["needs a 'kind'"]),
    ("conse(k=3)", ["no parameter 'k'", "top_k", "batch_size"]),
    ("conse(top_k=many)", ["'top_k' must be int", "many"]),
    ("conse(top_k=0.5)", ["'top_k' must be int"]),
    ("conse(top_k=true)", ["'top_k' must be int"]),
    ("conse(top_k=0)", ["top_k must be in 1..1000"]),
    ("conse(batch_size=0)", ["batch_size must be >= 1"]),
    pytest.param("clip(model=NoSuchModel)", ["unknown open_clip model", "ViT-B-32"],
                 marks=needs_open_clip),
    ("clip(model=None)", ["'model' must be str"]),
    pytest.param("clip(model=local-dir:/no/such/folder)", ["does not exist"],
                 marks=needs_open_clip),
    pytest.param("clip(model=hf-hub:org/name, pretrained=openai)", ["leave out pretrained"],
                 marks=needs_open_clip),
    pytest.param("clip(revision=abc)", ["hf-hub: models only"], marks=needs_open_clip),
    pytest.param("clip(pretrained=openai, preprocess=openai)", ["checkpoint file only"],
                 marks=needs_open_clip),
    ("conse(top_k=", ["bad embedder spec"]),
    ("conse(top_k=inf)", ["parameter 'top_k' must be a finite number, got inf"]),
    (3, ["expected an embedder spec"]),
])
def test_errors(spec, fragments) -> None:
    with pytest.raises(EmbedderSpecError) as info:
        make_embedder(spec)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_parameters_are_listed() -> None:
    params = embedder_parameters("conse")
    assert params["top_k"] == (int, 10)
    assert "_state" not in params


def test_register_custom_backend() -> None:
    @register_embedder("constant-test")
    @dataclass(frozen=True)
    class Constant:
        scale: float = 1.0

        @property
        def id(self) -> str:
            return f"constant(scale={self.scale})"

        @property
        def dim(self) -> int:
            return 2

        def embed_images(self, cards):
            return np.tile(np.float32([1, 0]), (len(cards), 1))

        def embed_texts(self, texts):
            return np.tile(np.float32([0, 1]), (len(texts), 1))

    assert make_embedder("constant-test(scale=2)").scale == 2.0  # int accepted for float
    assert "constant-test" in available_embedders()
    with pytest.raises(TypeError):
        register_embedder("bad")(object)


@needs_open_clip
def test_constructing_and_reading_ids_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from dixit_lab.embeddings import make_embedder, EmbeddingSpace\n"
        "for spec in ('conse', 'text', 'clip', 'clip(pretrained=None)'):\n"
        "    e = make_embedder(spec); e.id; e.dim\n"
        "heavy = [m for m in ('torch', 'open_clip', 'sentence_transformers', 'transformers')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_hf_ids_of_a_folder_need_neither_torch_nor_transformers(tmp_path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "clip", "projection_dim": 8}')
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    code = (
        "import sys\n"
        "from dixit_lab.embeddings import make_embedder\n"
        f"e = make_embedder({{'kind': 'hf', 'model': {str(tmp_path)!r}}})\n"
        "assert e.dim == 8 and 'weights=sha256:' in e.id, e.id\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    first = make_embedder({"kind": "hf", "model": str(tmp_path)}).id
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert make_embedder({"kind": "hf", "model": str(tmp_path)}).id != first


def _fake_stack(folder, torchvision_error: str | None) -> None:
    """Packages named torch, torchvision and sentence_transformers, first on the path: the
    torchvision (if ``torchvision_error``) fails as one built for another torch does, and
    sentence_transformers wraps what it meets the way transformers' lazy imports do."""
    (folder / "torch").mkdir()
    (folder / "torch" / "__init__.py").write_text("")
    (folder / "torchvision").mkdir()
    (folder / "torchvision" / "__init__.py").write_text(
        f"raise RuntimeError({torchvision_error!r})\n" if torchvision_error else "")
    (folder / "sentence_transformers").mkdir()
    (folder / "sentence_transformers" / "__init__.py").write_text(
        "try:\n    raise RuntimeError('deep down: libfoo.so missing')\n"
        "except RuntimeError as error:\n"
        "    raise ImportError(\"Could not import module 'PreTrainedModel'\") from error\n")


@pytest.mark.parametrize("broken_torchvision", [True, False])
def test_a_failed_import_names_the_first_failure(broken_torchvision, tmp_path) -> None:
    _fake_stack(tmp_path, "operator torchvision::nms does not exist"
                if broken_torchvision else None)
    code = ("from dixit_lab.embeddings.base import require, ModelUnavailableError\n"
            "try:\n    require('sentence_transformers', 'offline')\n"
            "except ModelUnavailableError as error:\n    print(error)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    message = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=60).stdout
    if broken_torchvision:
        assert "(it imports 'torchvision' first): torchvision failed with RuntimeError: " \
               "operator torchvision::nms does not exist" in message
    else:  # the package's own failure, by its first error, not the wrapper's
        assert "sentence_transformers failed with RuntimeError: deep down: libfoo.so" in message
    assert "PreTrainedModel" not in message
    assert "pip install 'dixit-lab[offline]'" in message
    assert "pip install torch==2.14.1 torchvision==0.29.1 --index-url" in message
