"""What made a results folder's records, as its ``config.yaml`` records it beside the
experiment: the package's version, a digest of its own code (:data:`CODE_DIGEST`) and its git
commit, the working folder its relative paths were read from (:data:`WORKING_DIRECTORY`), a
digest of every outside agent's code (:data:`AGENTS_PLAYED`) and, when a run resumed games
saved by another version, code or engine, what played them (:data:`PLAYED_BY`).

An outside agent is one whose code is not the package's (:data:`~dixit_lab.plugins.
code_files.OWN_PACKAGES`): a ``file.py:Class``'s file, a ``module:Class``'s top-level package,
the package of an entry point of another distribution, the module of a class registered in
code, code a parameter names (the ``policy`` agent's ``policy: file.py:name``), and a
sandboxed player's ``files:``. The engine reads those files itself, as bytes, for a trusted
seat and an untrusted one alike: nothing a child says enters a digest. A resumed run
(:mod:`dixit_lab.run.resume`) and ``replay`` (:mod:`dixit_lab.run.replay`) compare them.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from dixit_lab._version import __version__
from dixit_lab.bundled import source_checkout
from dixit_lab.core.agent import AGENTS
from dixit_lab.errors import ConfigError
from dixit_lab.plugins.code_files import (
    import_string_paths,
    is_own_module,
    module_paths,
    package_digest,
    tree_digest,
)
from dixit_lab.plugins.imports import is_import_string
from dixit_lab.plugins.spec import parse_spec
from dixit_lab.run.folder import ENGINE_PLAYED

__all__ = ["AGENTS_PLAYED", "CODE_DIGEST", "PLAYED_BY", "WORKING_DIRECTORY", "agent_code_change",
           "agents_played", "check_replayed_code", "code_note", "describe_code", "git_commit",
           "played_so_far", "plays_differently", "run_working_directory", "what_plays"]

#: the keys of config.yaml's header that record the code that played
CODE_DIGEST = "dixit_lab_code"
AGENTS_PLAYED = "agents_played"
PLAYED_BY = "played_by"
WORKING_DIRECTORY = "working_directory"

#: how each kind of code entry is named in a message
_WORDS = {"file": "agent file", "package": "package", "entry point": "package",
          "module": "module", "files": "files: entry"}


def git_commit() -> str | None:
    """The commit of the checkout the package runs from, with ``-dirty`` if it has changes
    (None for an installed wheel or sdist)."""
    root = source_checkout()
    if root is None:
        return None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain",
                                "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty.strip() else "")


def what_plays(engine: str) -> dict[str, Any]:
    """The version, code digest, commit and engine (``reference``, ``batched``, ``compiled``)
    of this process's games: one entry of :data:`PLAYED_BY`."""
    return {"dixit_lab_version": __version__, CODE_DIGEST: package_digest(),
            "git_commit": git_commit(), "engine": engine}


# -- the outside agents' code ---------------------------------------------------------------

def _registered_code(name: str) -> list[tuple[str, Path, dict[str, str]]]:
    """The code of a registry name: an entry point's top-level package (of another
    distribution than this one), or the module file of a class registered in code."""
    entry = AGENTS.entry_point(name)
    if entry is not None:
        module = entry.value.split(":")[0]
        if is_own_module(module):
            return []
        dist = getattr(entry, "dist", None)
        extra = {"distribution": f"{dist.name} {dist.version}"} if dist is not None else {}
        return [("entry point", path, extra) for path in module_paths(module)]
    origin = AGENTS.origin(name)
    if origin is None or is_own_module(origin):
        return []
    file = getattr(sys.modules.get(origin), "__file__", None)  # registered: imported already
    return [("module", Path(file).resolve(), {})] if isinstance(file, str) else []


def _code_paths(spec: str, files: Sequence[str]) -> list[tuple[str, Path, dict[str, str]]]:
    """(kind, absolute path, more to record) of every piece of outside code that ``spec``
    (with the player's ``files``) plays, found without importing anything."""
    try:
        name, params = parse_spec(spec)
    except ValueError:
        return []
    found: list[tuple[str, Path, dict[str, str]]] = []
    if is_import_string(name):
        kind, paths = import_string_paths(name) or ("", [])
        found += [(kind, path, {}) for path in paths]
    else:
        found += _registered_code(name)
    for key in sorted(params):
        named = import_string_paths(params[key]) if isinstance(params[key], str) else None
        found += [(f"parameter {key}", path, {}) for path in (named or ("", []))[1]]
    found += [("files", Path(item).expanduser().resolve(), {}) for item in files]
    return found


def plays_outside_code(spec: str) -> bool:
    """Whether ``spec`` plays code from outside this package (a ``file.py:Class``, a
    ``module:Class`` of another package, another distribution's entry point, a parameter
    naming code), found without importing anything."""
    return bool(_code_paths(spec, ()))


def agents_played(players: Sequence[Any]) -> list[dict[str, Any]]:
    """What config.yaml records of every player (entries of its ``experiment.players``: the
    ``name``, canonical ``spec`` and ``files``) whose agent plays outside code: ``player``,
    ``spec`` and ``code``, a list of {``kind``, ``path`` (absolute), ``sha256``
    (:func:`~dixit_lab.plugins.code_files.tree_digest`; null for a path with nothing at it)}.
    Relative paths are read from the current folder, as the run reads them."""
    played = []
    for player in players:
        if not isinstance(player, Mapping) or not isinstance(player.get("spec"), str):
            continue
        files = player.get("files") or []
        code = [{"kind": kind, "path": str(path), "sha256": tree_digest(path), **extra}
                for kind, path, extra in _code_paths(player["spec"], [str(f) for f in files])]
        if code:
            played.append({"player": str(player.get("name") or player["spec"]),
                           "spec": player["spec"], "code": code})
    return played


def _what(kind: str) -> str:
    return _WORDS.get(kind, f"{kind}'s code" if kind.startswith("parameter ") else kind)


def _entry_change(who: str, old: Any, new: Mapping[str, Any]) -> str | None:
    what, path = _what(str(new["kind"])), new["path"]
    if not isinstance(old, Mapping):
        return f"{who}: its {what} {path} was not recorded when those games were played"
    if old.get("sha256") == new["sha256"]:
        return None
    if new["sha256"] is None:
        return f"{who}: its {what} {path} is missing"
    if old.get("path") != path:
        return f"{who}: its {what} is now {path} (then {old.get('path')}), with other contents"
    return f"{who}: its {what} {path} has changed"


def agent_code_change(recorded: Any, now: Sequence[Mapping[str, Any]]) -> str | None:
    """How the outside agents' code ``now`` (:func:`agents_played`) differs from what
    config.yaml recorded, naming the player and the file (None: the same, or nothing
    recorded: a folder written before the digests)."""
    if not isinstance(recorded, list):
        return None
    before: dict[Any, list[Mapping[str, Any]]] = {}  # players of one name, in their order
    for entry in recorded:
        if isinstance(entry, Mapping):
            before.setdefault(entry.get("player"), []).append(entry)
    for entry in now:
        who = f"player {entry['player']!r} ({entry['spec']})"
        same_name = before.get(entry["player"])
        old = same_name.pop(0) if same_name else None
        old_code = old.get("code") if isinstance(old, Mapping) else None
        old_code = old_code if isinstance(old_code, list) else []
        for index, code in enumerate(entry["code"]):
            change = _entry_change(who, old_code[index] if index < len(old_code) else None,
                                   code)
            if change is not None:
                return change
        if len(old_code) > len(entry["code"]):
            gone = old_code[len(entry["code"])]
            path = gone.get("path") if isinstance(gone, Mapping) else gone
            return f"{who}: it no longer plays {path}"
    for name, left in before.items():
        if left:
            return f"player {name!r}: the code it played then is no longer found"
    return None


def check_replayed_code(folder: Path, header: Mapping[str, Any]) -> None:
    """Refuse, in one line naming the player and the file, to replay games whose outside
    agents' code has changed since they were played (the replay would play other games)."""
    recorded = header.get(AGENTS_PLAYED)
    if recorded is None:
        return  # a folder written before the digests
    experiment = header.get("experiment")
    players = experiment.get("players") if isinstance(experiment, Mapping) else None
    change = agent_code_change(recorded, agents_played(players or []))
    if change is not None:
        raise ConfigError(f"{folder / 'config.yaml'}: {change} since these games were played, "
                          f"so a replay would play other games; restore it, or run the "
                          f"config again into a new folder")


@contextlib.contextmanager
def run_working_directory(header: Mapping[str, Any]) -> Iterator[None]:
    """While inside, the current folder is the one the run read its relative paths from
    (agent files, ``files:``, clue banks), when config.yaml records it and it is there."""
    where = header.get(WORKING_DIRECTORY)
    if not isinstance(where, str) or not Path(where).is_dir() or Path(where) == Path.cwd():
        yield
        return
    with contextlib.chdir(where):
        yield


# -- the package's code and the engine ------------------------------------------------------

def played_so_far(header: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The versions, codes and engines that played a folder's saved games, oldest first:
    its :data:`PLAYED_BY`, else the one its header names."""
    history = header.get(PLAYED_BY)
    if isinstance(history, list) and history and all(isinstance(e, dict) for e in history):
        return [dict(entry) for entry in history]
    engine = header.get(ENGINE_PLAYED)
    return [{"dixit_lab_version": header.get("dixit_lab_version"),
             CODE_DIGEST: header.get(CODE_DIGEST), "git_commit": header.get("git_commit"),
             "engine": engine.get("engine") if isinstance(engine, dict) else None}]


def plays_differently(then: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """Whether ``now`` (:func:`what_plays`) might write other records than ``then``: another
    version, or another code digest or engine where ``then`` records one."""
    if then.get("dixit_lab_version") != now["dixit_lab_version"]:
        return True
    return any(then.get(key) is not None and then.get(key) != now[key]
               for key in (CODE_DIGEST, "engine"))


def describe_code(entry: Mapping[str, Any]) -> str:
    """``dixit_lab 0.1.0 (code 1a2b3c4d5e6f, batched engine)``."""
    details = [f"code {str(entry[CODE_DIGEST])[:12]}" if entry.get(CODE_DIGEST) is not None
               else "", f"{entry['engine']} engine" if entry.get("engine") else ""]
    inner = ", ".join(part for part in details if part)
    return f"dixit_lab {entry.get('dixit_lab_version')}" + (f" ({inner})" if inner else "")


def code_note(header: Mapping[str, Any]) -> str | None:
    """Why a replay by this process may differ besides the agents: the games were played by
    another version or package code (None: the same, as far as config.yaml says)."""
    now = what_plays("")
    others = [entry for entry in played_so_far(header)
              if entry.get("dixit_lab_version") != now["dixit_lab_version"]
              or entry.get(CODE_DIGEST) not in (None, now[CODE_DIGEST])]
    if not others:
        return None
    then = "; ".join(describe_code({**entry, "engine": None}) for entry in others)
    return (f"the games were played by {then}; this is "
            f"{describe_code({**now, 'engine': None})}")
