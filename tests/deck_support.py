"""Folder decks for tests: small image decks built with PIL, and decks loaded afresh."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from dixit_lab.core import cards as cards_module

#: more cards than the bundled dreams (84): games of such a deck hold indices it does not have
CARDS = 90


def image_deck(folder: Path, shade: int = 0, cards: int = CARDS) -> Path:
    """A deck folder of ``cards`` small images, ids ``mine-00``... (none of the bundled
    ids); name the folder ``dreams`` to have it named like the bundled deck."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    rows = ["id,file,caption"]
    for number in range(cards):
        Image.new("RGB", (8, 8), (number, shade, 200)).save(folder / "images" / f"{number}.png")
        rows.append(f"mine-{number:02d},images/{number}.png,card {number}")
    (folder / "cards.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def new_process(monkeypatch) -> None:
    """Forget the decks loaded so far: they are read again, as by a new process."""
    monkeypatch.setattr(cards_module, "_DECK_CACHE", {})
