"""The ``hf`` backend (transformers CLIP and SigLIP) on tiny randomly initialised models that
the test builds and saves; loaded offline from a folder and from a Hugging Face cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.optional import import_or_skip

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")
tokenizers = import_or_skip("tokenizers")

from PIL import Image  # noqa: E402

from dixit_lab.core.cards import Card  # noqa: E402
from dixit_lab.embeddings import ModelUnavailableError, make_embedder  # noqa: E402
from dixit_lab.embeddings.hf import features  # noqa: E402

WORDS = ["a", "red", "balloon", "lonely", "tower", "the", "end", "of", "world"]
TEXTS = ["a red balloon", "a lonely tower", "the end of the world"]
TEXT = {"vocab_size": 32, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 2, "max_position_embeddings": 8}
VISION = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
          "num_attention_heads": 2, "image_size": 32, "patch_size": 16}


def _tokenizer() -> object:
    vocab = {w: i for i, w in enumerate(["<pad>", "<unk>", "<s>", "</s>", *WORDS])}
    raw = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    raw.post_processor = tokenizers.processors.TemplateProcessing(  # CLIP pools at </s>
        single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)])
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
        eos_token="</s>", model_max_length=8)


def _save_tiny(kind: str, folder: Path) -> object:
    torch.manual_seed(0)
    if kind == "clip":
        config = transformers.CLIPConfig(text_config=TEXT | {"bos_token_id": 2, "eos_token_id": 3,
                                                                 "pad_token_id": 0},
                                         vision_config=VISION, projection_dim=12)
        model = transformers.CLIPModel(config)
    else:
        config = transformers.SiglipConfig(text_config=TEXT, vision_config=VISION)
        model = transformers.SiglipModel(config)
    model.save_pretrained(folder)
    _tokenizer().save_pretrained(folder)
    processor = transformers.CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
        image_mean=[0.5, 0.5, 0.5], image_std=[0.25, 0.25, 0.25])
    processor.save_pretrained(folder)
    return model.eval()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def cards(tmp_path_factory) -> list[Card]:
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    out = []
    for i in range(3):
        path = folder / f"img{i}.png"
        Image.fromarray(rng.integers(0, 256, size=(40, 48, 3), dtype=np.uint8)).save(path)
        out.append(Card(f"c{i}", path))
    return out


@pytest.fixture(scope="module", params=["clip", "siglip"])
def tiny(request, tmp_path_factory) -> tuple[str, Path, object]:
    folder = tmp_path_factory.mktemp(request.param) / "model"
    return request.param, folder, _save_tiny(request.param, folder)


def test_folder_model_embeds_like_transformers(tiny, cards) -> None:
    kind, folder, model = tiny
    embedder = make_embedder({"kind": "hf", "model": str(folder)})
    assert embedder.dim == (12 if kind == "clip" else 16)
    assert "weights=sha256:" in embedder.id and str(folder) not in embedder.id
    images, texts = embedder.embed_images(cards), embedder.embed_texts(TEXTS)
    assert images.shape == (3, embedder.dim) and texts.shape == (3, embedder.dim)
    assert images.dtype == texts.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1, atol=1e-5)
    assert not np.allclose(texts[0], texts[1])
    # the same numbers as transformers itself, with the folder's own processor
    processor = transformers.AutoImageProcessor.from_pretrained(folder)
    pixels = processor(images=[Image.open(c.image).convert("RGB") for c in cards],
                       return_tensors="pt")
    with torch.inference_mode():
        expected = features(model.get_image_features(**pixels)).numpy()
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(images, expected, atol=1e-5)


def test_loading_leaves_the_global_torch_rng_alone(tiny) -> None:
    _, folder, _ = tiny
    torch.manual_seed(5)
    expected = torch.rand(1)
    torch.manual_seed(5)
    make_embedder({"kind": "hf", "model": str(folder)}).embed_texts(["a"])
    assert torch.equal(torch.rand(1), expected)


def test_hub_repository_from_the_cache_with_local_files_only(tiny, cards, tmp_path) -> None:
    kind, folder, _ = tiny
    commit = "89abcdef0123456789abcdef0123456789abcdef"
    repo = tmp_path / "hub" / f"models--someone--tiny-{kind}"
    shutil.copytree(folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    spec = {"kind": "hf", "model": f"someone/tiny-{kind}", "local_files_only": True,
            "cache_dir": str(tmp_path / "hub")}
    embedder = make_embedder(spec)
    assert f"hf-commit:{commit}" in embedder.id and f"someone/tiny-{kind}" in embedder.id
    local = make_embedder({"kind": "hf", "model": str(folder)})
    np.testing.assert_allclose(embedder.embed_texts(TEXTS), local.embed_texts(TEXTS), atol=1e-6)
    with pytest.raises(ModelUnavailableError, match="hf download someone/absent"):
        _ = make_embedder(spec | {"model": "someone/absent"}).id


def test_features_reads_the_output_of_transformers_4_and_5() -> None:
    tensor = torch.ones(2, 3)
    output = transformers.modeling_outputs.BaseModelOutputWithPooling(
        last_hidden_state=torch.zeros(2, 4, 3), pooler_output=tensor)
    assert features(tensor) is tensor  # transformers 4: the projected features
    assert features(output) is tensor  # transformers 5: pooler_output holds them
    assert features((torch.zeros(2, 4, 3), tensor)) is tensor  # return_dict=False


def test_bad_folders_are_clear_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="neither a local folder"):
        make_embedder("hf(model=no-such-thing)")
    (tmp_path / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="'bert' is not an image-text model"):
        _ = make_embedder({"kind": "hf", "model": str(tmp_path)}).id
