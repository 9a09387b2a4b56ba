"""The shipped embeddings under data/embeddings match what the models compute today."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from dixit_lab.core.cards import available_decks, load_deck
from dixit_lab.core.clues import ClueBank
from dixit_lab.embeddings import load_shipped_cards, load_shipped_clues, make_embedder
from dixit_lab.embeddings.shipped import shipped_folder
from tests.optional import import_or_skip

DECKS = [deck for deck in ("dreams", "dreams-quest") if deck in available_decks()]
EMBEDDERS = [spec for spec in ("conse", "ridge", "text")
             if (shipped_folder(make_embedder(spec).id) / "deck-dreams.npz").is_file()]

pytestmark = pytest.mark.skipif(not DECKS or not EMBEDDERS,
                                reason="no bundled decks or shipped embeddings")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("spec", EMBEDDERS)
@pytest.mark.parametrize("deck_name", DECKS)
def test_shipped_files_load_fresh_and_unit(spec: str, deck_name: str) -> None:
    embedder = make_embedder(spec)
    deck = load_deck(deck_name)
    bank = ClueBank.load("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stale or unreadable file warns
        cards = load_shipped_cards(embedder, deck)
        clues = load_shipped_clues(embedder, bank.name, bank.texts)
    assert cards is not None and cards.shape == (len(deck), embedder.dim)
    assert clues is not None and clues.shape == (len(bank), embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(cards, axis=1), 1, atol=1e-5)


@pytest.mark.parametrize("spec", EMBEDDERS)
def test_sample_recomputed_with_the_real_models_matches(spec: str) -> None:
    import_or_skip("torch")
    import_or_skip("sentence_transformers")
    embedder = make_embedder(spec)
    rng = np.random.default_rng(7)
    deck = load_deck(DECKS[0])
    rows = sorted(rng.choice(len(deck), size=4, replace=False).tolist())
    fresh_cards = embedder.embed_images([deck.cards[i] for i in rows])
    shipped_cards = load_shipped_cards(embedder, deck)
    assert shipped_cards is not None
    cosines = np.sum(fresh_cards * shipped_cards[rows], axis=1)
    assert cosines.min() >= 0.999, (rows, cosines)

    bank = ClueBank.load("default")
    clue_rows = sorted(rng.choice(len(bank), size=20, replace=False).tolist())
    fresh_clues = embedder.embed_texts([bank.texts[i] for i in clue_rows])
    shipped_clues = load_shipped_clues(embedder, bank.name, bank.texts)
    assert shipped_clues is not None
    cosines = np.sum(fresh_clues * shipped_clues[clue_rows], axis=1)
    assert cosines.min() >= 0.999, cosines


def test_default_space_loads_without_torch() -> None:
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "from dixit_lab.embeddings import get_space\n"
        f"space = get_space({EMBEDDERS[0]!r}, {DECKS[0]!r}, 'default')\n"
        "assert space.similarity.shape[1] == 84, space.similarity.shape\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
