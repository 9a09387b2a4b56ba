"""The manifest of a results folder's games: how many games the run completed and the digest
of the file that holds them, so that a games file that is short, long or altered is refused
by every reader instead of being read as fewer or other games.

``manifest.json``, written by the runner once every game is in the games file (and by
``dixit-lab play`` with each game it saves)::

    {"games_file": "games.jsonl.zst", "games": 20000, "bytes": 9188123, "sha256": "..."}

``bytes`` and ``sha256`` are the file's as stored (``sha256sum games.jsonl.zst`` prints the
same digest). :func:`check_games_file` compares a games file with them before it is read
(:func:`dixit_lab.record_files.open_records` calls it, so every reader does: ``report``,
``replay``, ``show``, ``view``, a resumed run or play, ``read_jsonl``), and
:func:`check_game_count` compares the games read with the count.

A folder written before the manifest existed (or whose manifest was deleted) is still read:
its lines are checked one by one (games 0..N-1 once each, in order, consistent scores: see
:mod:`dixit_lab.results_integrity`), the compressed frames must be whole, and ``report``
compares the number of games with the experiment's ``games`` in ``config.yaml``; what it
cannot see is a self-consistent edit. A run over such a finished folder writes its manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dixit_lab.atomic import atomic_write_text, file_sha256
from dixit_lab.errors import ConfigError

__all__ = ["MANIFEST_NAME", "check_game_count", "check_games_file", "expected_games",
           "remove_manifest", "write_manifest"]

MANIFEST_NAME = "manifest.json"
#: files already checked in this process: (path, size, mtime, inode) -> digest
_CHECKED: dict[tuple[str, int, int, int], str] = {}


def write_manifest(folder: Path, games_path: Path, games: int, digest: str | None = None
                   ) -> None:
    """Record that ``games_path`` (in ``folder``) holds ``games`` games, with its size and
    digest (its sha256, read from the file unless the writer of the file computed it on the
    way: ``digest``)."""
    digest = digest or file_sha256(games_path)
    manifest = {"games_file": games_path.name, "games": games,
                "bytes": games_path.stat().st_size, "sha256": digest}
    atomic_write_text(folder / MANIFEST_NAME, json.dumps(manifest, indent=2) + "\n")
    _CHECKED[_identity(games_path)] = digest


def remove_manifest(folder: Path) -> None:
    """Remove the manifest before its games file is rewritten (a run killed in between leaves
    an old folder, checked line by line, never a manifest that contradicts its file)."""
    (folder / MANIFEST_NAME).unlink(missing_ok=True)


def _identity(path: Path) -> tuple[str, int, int, int]:
    status = path.stat()
    return (str(path.resolve()), status.st_size, status.st_mtime_ns, status.st_ino)


def _manifest(folder: Path) -> dict[str, Any] | None:
    path = folder / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(key in data for key in (
                "games_file", "games", "bytes", "sha256")):
            raise ValueError("it lacks games_file, games, bytes or sha256")
    except (UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{path}: not a manifest of the games ({error}); restore it, or "
                          f"delete it to read the folder as an old one (checked line by "
                          f"line)") from None
    return data


def check_games_file(path: Path) -> dict[str, Any] | None:
    """Refuse ``path`` (a :class:`~dixit_lab.errors.ConfigError` naming it) if the manifest
    next to it describes it otherwise: another size or another digest (the message gives
    both, as observed and as recorded). Returns the manifest (None when the folder has none,
    or it describes another file)."""
    path = Path(path)
    manifest = _manifest(path.parent)
    if manifest is None:
        return None
    named = path.parent / str(manifest["games_file"])
    if named.name != path.name:
        if named.is_file():
            return None  # the manifest vouches for the folder's other games file
        raise ConfigError(f"{path}: {MANIFEST_NAME} describes {named.name}, which is missing; "
                          f"restore it, or delete {MANIFEST_NAME} to read {path.name} as an "
                          f"old folder's (checked line by line)")
    identity = _identity(path)
    if _CHECKED.get(identity) == manifest["sha256"]:
        return manifest
    size = identity[1]
    digest = file_sha256(path)
    if size == manifest["bytes"] and digest == manifest["sha256"]:
        _CHECKED[identity] = digest
        return manifest
    # what was observed, not a guess at what happened (a file recompressed is smaller and
    # whole, an edit may be longer without a game added)
    observed = (f"{size:,} bytes as recorded, but" if size == manifest["bytes"] else
                f"{size:,} bytes (recorded {manifest['bytes']:,}),")
    remedy = (f"delete {MANIFEST_NAME} to read it as an old folder's (checked line by line)"
              if size == manifest["bytes"] else
              "run the experiment again into a new folder")
    raise ConfigError(f"{path}: differs from what the run recorded in {MANIFEST_NAME}: "
                      f"{observed} sha256 {digest[:16]}... (recorded "
                      f"{str(manifest['sha256'])[:16]}...); restore it, or {remedy}")


def expected_games(path: Path) -> int | None:
    """How many games ``path`` should hold: its manifest's count, else (an old folder) the
    experiment's ``games`` in the ``config.yaml`` next to it; None for a bare games file."""
    path = Path(path)
    manifest = _manifest(path.parent)
    if manifest is not None and manifest["games_file"] == path.name:
        return int(manifest["games"])
    config = path.parent / "config.yaml"
    if not config.is_file():
        return None
    import yaml

    try:
        header = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        games = header["experiment"]["games"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        return None
    return games if isinstance(games, int) and not isinstance(games, bool) else None


def check_game_count(path: Path, games: int) -> None:
    """Refuse ``path`` if it held ``games`` games where :func:`expected_games` says
    otherwise."""
    expected = expected_games(path)
    if expected is not None and games != expected:
        where = (f"{MANIFEST_NAME} records" if (Path(path).parent / MANIFEST_NAME).is_file()
                 else "the experiment in config.yaml has")
        hint = ("an unfinished run? the same dixit-lab run resumes it" if games < expected
                else "restore it, or run the experiment again into a new folder")
        raise ConfigError(f"{path}: {games:,} games where {where} {expected:,} ({hint})")
