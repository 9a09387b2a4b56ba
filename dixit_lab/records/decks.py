"""The deck a results folder's games were played with: the one way every reader of a folder
finds it.

A record names its deck by :attr:`~dixit_lab.core.cards.Deck.name` only, and a folder of
one's own images called ``dreams/`` is named like the bundled ``dreams``: looked up by that
name, its games would show the bundled deck's card ids and images. So ``config.yaml`` records
the deck played (:data:`DECK_PLAYED`: its absolute spec and content fingerprint), and the
readers of a folder (``show``, ``report``'s round table and find rates, the checks of a games
file, ``export-bench``, ``view``, ``replay``, ``fit-listener``) take their deck from
:func:`folder_decks`, which refuses a deck changed since in one line. A reader given records
alone (a library call) looks the deck up by name (:func:`by_name`).

Every problem is a :class:`~dixit_lab.errors.ConfigError` naming ``config.yaml``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from dixit_lab.core.cards import Deck, DeckError, absolute_deck_spec, load_deck
from dixit_lab.errors import ConfigError

__all__ = ["DECK_PLAYED", "DeckLookup", "by_name", "deck_played", "folder_deck",
           "folder_decks", "played_spec", "played_with"]

#: the key of config.yaml's header (next to the version) that records the deck played
DECK_PLAYED = "deck_played"

#: a record's deck name -> its deck, or None when it cannot be loaded here (readers then name
#: cards by their index in the deck)
DeckLookup = Callable[[str], Deck | None]


def deck_played(spec: str) -> dict[str, str]:
    """What config.yaml records of the deck ``spec``: its absolute spec (the same deck from
    any working directory) and its :attr:`~dixit_lab.core.cards.Deck.fingerprint`."""
    return {"spec": absolute_deck_spec(spec), "fingerprint": load_deck(spec).fingerprint}


def by_name(name: str) -> Deck | None:
    """The deck a record names, looked up by that name (for records without their folder)."""
    try:
        return load_deck(name)
    except (DeckError, OSError, ValueError):
        return None


def played_with(deck: Deck) -> DeckLookup:
    """The lookup of games known to be played with ``deck`` (a run's own chunks)."""
    return lambda _name: deck


def _header(folder: Path) -> Mapping[str, Any]:
    path = folder / "config.yaml"
    try:
        header = yaml.safe_load(path.read_text(encoding="utf-8"))  # written by yaml.safe_dump
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}); save it as "
                          f"UTF-8") from None
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"{path}: cannot be read ({' '.join(str(error).split())}); is "
                          f"{folder} a results folder?") from None
    if not isinstance(header, dict) or not isinstance(header.get("experiment"), dict):
        raise ConfigError(f"{path}: no 'experiment' section; is {folder} a results folder?")
    return header


def played_spec(folder: Path, header: Mapping[str, Any]) -> tuple[str, str | None]:
    """(deck spec, fingerprint or None) of the games in ``folder``."""
    played = header.get(DECK_PLAYED)
    if isinstance(played, dict) and isinstance(played.get("spec"), str):
        return played["spec"], played.get("fingerprint")
    deck = header["experiment"].get("deck")  # a folder written before decks were recorded
    if not isinstance(deck, str):
        raise ConfigError(f"{folder / 'config.yaml'}: experiment.deck is {deck!r}, not a deck")
    return deck, None


def _checked_deck(folder: Path, header: Mapping[str, Any], required: bool) -> Deck | None:
    spec, fingerprint = played_spec(folder, header)
    path = folder / "config.yaml"
    try:
        deck = load_deck(spec)
    except (DeckError, OSError, ValueError) as error:
        if not required:
            return None
        raise ConfigError(f"{path}: the deck these games were played with: {error}") from None
    if fingerprint is not None and deck.fingerprint != fingerprint:
        raise ConfigError(f"{path}: the deck {spec} has changed since these games were played "
                          f"(its cards' ids, images or captions differ); restore it, or play "
                          f"the games again")
    return deck


def folder_deck(folder: Path, header: Mapping[str, Any] | None = None) -> Deck:
    """The deck the games of ``folder`` were played with, checked to hold the same cards as
    then (a deck folder edited since is refused, not silently used; so is a deck that cannot
    be loaded here). ``header``: its config.yaml, when read already."""
    deck = _checked_deck(folder, header if header is not None else _header(folder), True)
    assert deck is not None  # required
    return deck


def folder_decks(path: str | Path) -> DeckLookup:
    """The deck lookup of the games of ``path`` (a results folder, or a games file in one):
    the deck config.yaml records, checked now (a deck changed since is refused in one line),
    for every record; None for each when it cannot be loaded here (a folder copied without
    its deck). A games file without a config.yaml beside it looks its decks up by name."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if not (folder / "config.yaml").is_file():
        return by_name
    deck = _checked_deck(folder, _header(folder), False)
    return lambda _name: deck
