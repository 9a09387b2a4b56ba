"""Reading a results folder's games in tests, whichever format it keeps them in."""

from __future__ import annotations

from pathlib import Path

from dixit_lab.records.files import RECORD_NAMES, games_file, open_text


def games_path(folder: Path) -> Path:
    """The games file of a results folder (``games.jsonl.zst`` or ``games.jsonl``)."""
    return games_file(folder)


def games_text(folder: Path) -> str:
    """Its lines, decompressed: what byte-for-byte comparisons compare."""
    with open_text(games_file(folder)) as handle:
        return handle.read()


def games_text_of(path: Path) -> str:
    """The lines of one games file (or part), decompressed."""
    with open_text(path) as handle:
        return handle.read()


def games_lines(folder: Path) -> list[str]:
    return games_text(folder).splitlines()


def has_games(folder: Path) -> bool:
    return any((folder / name).is_file() for name in RECORD_NAMES)


def replace_games(folder: Path, text: str) -> Path:
    """Put ``text`` in the place of the folder's games, as a plain ``games.jsonl``, and
    remove the manifest (as in a folder written before manifests, whose lines are checked one
    by one: what the tests of edited lines test)."""
    (folder / "manifest.json").unlink(missing_ok=True)
    for name in RECORD_NAMES:
        (folder / name).unlink(missing_ok=True)
    path = folder / "games.jsonl"
    path.write_text(text, encoding="utf-8")
    return path
