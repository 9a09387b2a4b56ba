"""``ridge``: image features mapped to the sentence space, trained on the other deck only."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.cards import available_decks, load_deck
from dixit_lab.embeddings import load_shipped_cards, make_embedder
from dixit_lab.embeddings.ridge import training_cards
from dixit_lab.embeddings.shipped import shipped_folder

DECKS = [deck for deck in ("dreams", "dreams-quest") if deck in available_decks()]


@pytest.mark.skipif(len(DECKS) < 2, reason="needs both bundled decks")
def test_a_deck_never_trains_the_map_that_embeds_it():
    dreams, quest = load_deck("dreams"), load_deck("dreams-quest")
    train = training_cards(dreams.cards[:3])
    assert {card.id for card in train} == {card.id for card in quest.cards}
    assert {card.id for card in training_cards(quest.cards)} == {c.id for c in dreams.cards}
    both = training_cards([*dreams.cards[:1], *quest.cards[:1]])
    assert both == []  # nothing left to train on: embed_images refuses


def test_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        make_embedder("ridge(alpha=0)")


@pytest.mark.parametrize("deck_name", DECKS)
def test_shipped_ridge_finds_cards_from_independent_captions_better_than_conse(deck_name):
    """alt_caption -> card retrieval (the alt captions train nothing): recall@5 of the
    shipped ridge vectors above conse's."""
    pytest.importorskip("sentence_transformers")
    ridge, conse = make_embedder("ridge"), make_embedder("conse")
    if not (shipped_folder(ridge.id) / f"deck-{deck_name}.npz").is_file():
        pytest.skip("no shipped ridge vectors")
    deck = load_deck(deck_name)
    queries = ridge.embed_texts([card.alt_caption or "" for card in deck.cards])
    recall = {}
    for name, embedder in (("ridge", ridge), ("conse", conse)):
        cards = load_shipped_cards(embedder, deck)
        assert cards is not None
        scores = queries @ cards.T
        right = scores[np.arange(len(deck)), np.arange(len(deck))]
        ranks = 1 + np.sum(scores > right[:, None], axis=1)
        recall[name] = float(np.mean(ranks <= 5))
    assert recall["ridge"] > recall["conse"] + 0.1
