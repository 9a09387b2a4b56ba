"""Cards and decks: numbered decks for rules-only runs, bundled image decks, user folders."""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dixit_lab.bundled import data_root
from dixit_lab.errors import UserError
from dixit_lab.text_rule import text_problem

__all__ = [
    "IMAGE_EXTENSIONS",
    "Card",
    "Deck",
    "DeckError",
    "absolute_deck_spec",
    "available_decks",
    "data_root",
    "load_deck",
]

IMAGE_EXTENSIONS = (".webp", ".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff")
#: the largest numbered deck (a bigger one is a typo, and would take minutes to build)
MAX_NUMBERED_CARDS = 100_000


class DeckError(UserError, ValueError):
    """A deck that cannot be built or cannot serve a game. The message names the culprit."""


@dataclass(frozen=True, slots=True)
class Card:
    """One card. ``image`` is None for numbered (rules-only) cards."""

    id: str
    image: Path | None = None
    caption: str | None = None
    alt_caption: str | None = None


@dataclass(frozen=True)
class Deck:
    """An ordered collection of cards. Games refer to a card by its index in the deck."""

    name: str
    cards: tuple[Card, ...]
    _index: Mapping[str, int] = field(default_factory=dict, init=False, repr=False,
                                      compare=False)

    def __post_init__(self) -> None:
        seen: dict[str, int] = {}
        for i, card in enumerate(self.cards):
            if card.id in seen:
                raise DeckError(f"deck {self.name!r}: duplicate card id {card.id!r} "
                                f"(cards {seen[card.id]} and {i})")
            seen[card.id] = i
        # read-only: every seat's copy of the deck shares it, and none may change it for others
        object.__setattr__(self, "_index", MappingProxyType(seen))

    def __len__(self) -> int:
        return len(self.cards)

    def __copy__(self) -> Deck:
        """Another deck object sharing the immutable cards and index (each seat's copy), and
        the fingerprint, computed once on this deck (else every copy of every game hashes
        every image again)."""
        return Deck.from_state(self.state())

    def state(self) -> tuple[tuple[str, Any], ...]:
        """Everything this deck holds, as a tuple of immutable values (made once): what a
        seat's context keeps until the seat reads its deck (:meth:`from_state`)."""
        state = self.__dict__.get("_state")
        if state is None:
            self.fingerprint  # noqa: B018 - cached in __dict__, which the state takes
            state = tuple((key, value) for key, value in self.__dict__.items()
                          if key != "_state")
            self.__dict__["_state"] = state
        return state  # type: ignore[no-any-return]

    @staticmethod
    def from_state(state: tuple[tuple[str, Any], ...]) -> Deck:
        """A deck object made of a :meth:`state` (a copy of the deck it came from)."""
        twin = object.__new__(Deck)
        twin.__dict__.update(state)
        return twin

    def __reduce__(self) -> tuple[type[Deck], tuple[str, tuple[Card, ...]]]:
        return (Deck, (self.name, self.cards))  # the index is rebuilt on the other side

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards)

    def __getitem__(self, index: int) -> Card:
        return self.cards[index]

    def index_of(self, card_id: str) -> int:
        """Position of the card with this id."""
        try:
            return self._index[card_id]
        except KeyError:
            raise KeyError(f"deck {self.name!r} has no card {card_id!r}") from None

    @property
    def has_images(self) -> bool:
        return all(card.image is not None for card in self.cards)

    @property
    def fingerprint(self) -> str:
        """sha256 of the deck's content: every card's id, image bytes and captions, in order.
        Two decks with the same fingerprint are perceived the same, whatever their names or
        folders; two folders with the same name but other images are told apart."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            digest = hashlib.sha256()
            for card in self.cards:
                image = (hashlib.sha256(card.image.read_bytes()).hexdigest()
                         if card.image is not None else "-")
                for part in (card.id, image, card.caption or "", card.alt_caption or ""):
                    digest.update(part.encode("utf-8") + b"\0")
            cached = self.__dict__["_fingerprint"] = digest.hexdigest()
        return str(cached)

    @classmethod
    def numbered(cls, n: int, name: str | None = None) -> Deck:
        """``n`` cards without images (``c000``, ``c001`` ...), for rules-only simulations."""
        if n < 1:
            raise DeckError(f"a numbered deck needs at least one card, got {n}")
        if n > MAX_NUMBERED_CARDS:
            raise DeckError(f"a numbered deck has at most {MAX_NUMBERED_CARDS:,} cards, "
                            f"got {n:,}")
        width = max(3, len(str(n - 1)))
        return cls(name or f"numbered-{n}", tuple(Card(f"c{i:0{width}d}") for i in range(n)))

    @classmethod
    def from_folder(cls, path: str | Path, name: str | None = None, *,
                    decode: bool = True) -> Deck:
        """A deck from a folder of images, with an optional ``cards.csv``.

        Without ``cards.csv`` every image file in the folder (sorted by name) is a card whose id
        is the file stem. With it, the columns ``id`` and ``file`` are required and ``caption``
        and ``alt_caption`` are optional; ``file`` is relative to the folder. Every image is
        decoded (``decode``) so that a truncated file is refused now, naming its card, not
        in the middle of a run; the bundled decks, tested as shipped, skip that second.
        """
        folder = Path(path)
        if not folder.is_dir():
            raise DeckError(f"deck folder {folder} does not exist or is not a folder")
        csv_path = folder / "cards.csv"
        if csv_path.exists():
            cards = _cards_from_csv(csv_path, folder)
        else:
            files = sorted(p for p in folder.iterdir()
                           if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
            if not files:
                raise DeckError(f"deck folder {folder} holds no image files "
                                f"({', '.join(IMAGE_EXTENSIONS)}) and no cards.csv")
            for file in files:
                _check_text(file.stem, f"deck folder {folder}: image {file.name}", "id")
            cards = [Card(p.stem, p) for p in files]
        _check_text(name or folder.name, f"deck folder {folder}", "name")
        for card in cards:
            _check_image(card, decode)
        return cls(name or folder.name, tuple(cards))

    def check_playable(self, n_players: int, hand_size: int, cards_per_round: int) -> None:
        """Raise :class:`DeckError` if the deck cannot deal a game plus one refill."""
        needed = n_players * hand_size + cards_per_round
        if len(self) < needed:
            raise DeckError(f"deck {self.name!r} has {len(self)} cards; {n_players} players "
                            f"with {hand_size}-card hands need at least {needed} "
                            f"({n_players}x{hand_size} dealt plus {cards_per_round} to refill "
                            f"after one round)")

    def mixed_with(self, other: Deck) -> Deck:
        """This deck followed by ``other`` (e.g. a base box shuffled with an expansion)."""
        return Deck(f"{self.name}+{other.name}", self.cards + other.cards)


def _cards_from_csv(csv_path: Path, folder: Path) -> list[Card]:
    try:  # utf-8-sig: spreadsheets start their CSV files with a byte-order mark
        text = csv_path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DeckError(f"{csv_path}: not UTF-8 text (byte {error.start}); save it as "
                        f"UTF-8") from None
    import io

    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        missing = [c for c in ("id", "file") if c not in columns]
        if missing:
            raise DeckError(f"{csv_path}: missing column(s) {', '.join(missing)}; "
                            f"found {', '.join(columns) or 'no header'}")
        cards: list[Card] = []
        seen: dict[str, int] = {}
        for line, row in enumerate(reader, start=2):
            card_id = (row.get("id") or "").strip()
            file_name = (row.get("file") or "").strip()
            if not card_id or not file_name:
                raise DeckError(f"{csv_path}, line {line}: empty id or file")
            if card_id in seen:
                raise DeckError(f"{csv_path}, line {line}: duplicate card id {card_id!r} "
                                f"(first on line {seen[card_id]})")
            seen[card_id] = line
            for column in ("id", "caption", "alt_caption"):
                _check_text((row.get(column) or "").strip(), f"{csv_path}, line {line}", column)
            cards.append(Card(
                card_id,
                folder / file_name,
                (row.get("caption") or "").strip() or None,
                (row.get("alt_caption") or "").strip() or None,
            ))
    if not cards:
        raise DeckError(f"{csv_path} lists no cards")
    return cards


def _check_text(text: str, where: str, what: str) -> None:
    """Refuse a card id, caption or deck name that breaks the text rule (one line of Unicode
    text: :mod:`dixit_lab.text_rule`): ids and names reach the records and the tables,
    captions the models' prompts."""
    problem = text_problem(text)
    if problem:
        raise DeckError(f"{where}: {what} {text!r} is not one line of text: it holds "
                        f"{problem}")


def _check_image(card: Card, decode: bool = True) -> None:
    path = card.image
    if path is None:
        return
    if not path.is_file():
        raise DeckError(f"card {card.id!r}: image file {path} is missing")
    if path.suffix.lower() not in IMAGE_EXTENSIONS:
        raise DeckError(f"card {card.id!r}: {path} is not an image file "
                        f"(expected one of {', '.join(IMAGE_EXTENSIONS)})")
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - pillow is a core dependency
        return
    try:
        with Image.open(path) as image:
            image.verify()
        if decode:
            with Image.open(path) as image:  # verify() misses a truncated file: decode it
                image.load()
    except Exception as error:
        raise DeckError(f"card {card.id!r}: cannot read image {path}: {error}") from None


def available_decks() -> list[str]:
    """Names of the bundled decks (folders under ``data/decks`` with a ``cards.csv``)."""
    root = data_root() / "decks"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "cards.csv").is_file())


_DECK_CACHE: dict[str, Deck] = {}


def load_deck(name: str) -> Deck:
    """A bundled deck by name (``dreams``, ``dreams-quest``), a mix (``dreams+dreams-quest``),
    ``numbered-N`` (N cards without images) or a path to a folder of images."""
    if name in _DECK_CACHE:
        return _DECK_CACHE[name]
    if "+" in name:
        parts = [load_deck(part.strip()) for part in name.split("+")]
        deck = parts[0]
        for part in parts[1:]:
            deck = deck.mixed_with(part)
    elif name.startswith("numbered-") and name.removeprefix("numbered-").isdigit():
        deck = Deck.numbered(int(name.removeprefix("numbered-")))
    elif name in available_decks():
        deck = Deck.from_folder(data_root() / "decks" / name, name, decode=False)
    elif Path(name).is_dir():
        deck = Deck.from_folder(name)
    else:
        from dixit_lab.suggest import did_you_mean

        raise DeckError(f"unknown deck {name!r}{did_you_mean(name, available_decks())}; "
                        f"bundled decks: "
                        f"{', '.join(available_decks()) or 'none found'}; also allowed: "
                        f"'numbered-N', 'a+b' to mix decks, or a path to a folder of images")
    _DECK_CACHE[name] = deck
    return deck


def absolute_deck_spec(name: str) -> str:
    """``name`` as :func:`load_deck` reads it, with every folder made absolute, so that it
    names the same deck from any working directory (a bundled name, ``numbered-N``, or a
    folder whose absolute path would hold a ``+`` or change the deck's name, stays as
    written)."""
    parts = [name] if "+" not in name else [part.strip() for part in name.split("+")]
    absolute = []
    for part in parts:
        bundled = part in available_decks() or (part.startswith("numbered-")
                                                and part.removeprefix("numbered-").isdigit())
        path = Path(part).resolve()  # the deck keeps its name, the folder's own (not ".")
        usable = (not bundled and Path(part).is_dir() and "+" not in str(path)
                  and path.name == Path(part).name)
        absolute.append(str(path) if usable else part)
    return "+".join(absolute)


def card_ids(deck: Deck, indices: Sequence[int]) -> list[str]:
    """Card ids for a sequence of deck indices (for people reading records)."""
    return [deck.cards[i].id for i in indices]
