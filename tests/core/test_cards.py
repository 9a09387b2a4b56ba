"""Decks: numbered decks, folders of images, bundled decks and their errors."""

from __future__ import annotations

import pytest
from PIL import Image

from dixit_lab.core.cards import Card, Deck, DeckError, load_deck


def _image(path, color=(200, 100, 50)):
    Image.new("RGB", (16, 12), color).save(path)
    return path


def test_numbered_deck():
    deck = Deck.numbered(84)
    assert len(deck) == 84 and deck[0].id == "c000" and deck[83].id == "c083"
    assert deck.index_of("c010") == 10 and not deck.has_images
    assert load_deck("numbered-84") == deck


def test_folder_without_csv(tmp_path):
    for name in ("b.png", "a.jpg"):
        _image(tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a card")
    deck = Deck.from_folder(tmp_path)
    assert [c.id for c in deck] == ["a", "b"]
    assert deck.has_images and deck.name == tmp_path.name


def test_folder_with_csv(tmp_path):
    _image(tmp_path / "one.png")
    _image(tmp_path / "two.png")
    (tmp_path / "cards.csv").write_text(
        "id,file,caption\nk1,one.png,a red square\nk2,two.png,\n")
    deck = Deck.from_folder(tmp_path, name="mine")
    assert deck.name == "mine" and deck[0].caption == "a red square" and deck[1].caption is None


@pytest.mark.parametrize(
    ("csv_text", "message"),
    [
        ("id,caption\nk1,x\n", "missing column.*file"),
        ("id,file\nk1,one.png\nk1,one.png\n", "line 3: duplicate card id 'k1'"),
        ("id,file\nk1,missing.png\n", "k1.*missing.png is missing"),
        ("id,file\nk1,bad.png\n", "k1.*cannot read image.*bad.png"),
        ("id,file\nk1,notes.txt\n", "not an image file"),
        ("id,file\n", "lists no cards"),
    ],
)
def test_folder_errors_name_the_file(tmp_path, csv_text, message):
    _image(tmp_path / "one.png")
    (tmp_path / "bad.png").write_bytes(b"this is not a png")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "cards.csv").write_text(csv_text)
    with pytest.raises(DeckError, match=message):
        Deck.from_folder(tmp_path)


def test_empty_or_missing_folder(tmp_path):
    with pytest.raises(DeckError, match="no image files"):
        Deck.from_folder(tmp_path)
    with pytest.raises(DeckError, match="does not exist"):
        Deck.from_folder(tmp_path / "nowhere")


def test_unknown_deck_lists_choices():
    with pytest.raises(DeckError, match="unknown deck 'nope'.*numbered-N"):
        load_deck("nope")


def test_mixing_decks():
    extra = Deck("extra", tuple(Card(f"x{i}") for i in range(10)))
    mixed = load_deck("numbered-84").mixed_with(extra)
    assert len(mixed) == 94 and mixed.name == "numbered-84+extra"
    assert mixed.index_of("x0") == 84


def test_duplicate_ids_across_a_mix_are_refused():
    with pytest.raises(DeckError, match="duplicate card id 'c000'"):
        Deck.numbered(84).mixed_with(Deck.numbered(10))


def test_deck_too_small():
    with pytest.raises(DeckError, match="has 20 cards; 4 players with 6-card hands need at "
                                        "least 28"):
        Deck.numbered(20).check_playable(4, 6, 4)
