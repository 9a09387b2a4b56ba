"""Where the code an import string names lives, found without running it, and the sha256
digests of files and folders: what a results folder records of an outside agent's code and
of the package's own (:mod:`dixit_lab.run.provenance`).

A module is found as Python would import it (:func:`importlib.util.find_spec` of its
top-level name, which asks the import system's finders and runs no code of the module), so an
untrusted agent's package is read here as bytes, never imported. A file is read from the
current folder when its path is relative, as :mod:`dixit_lab.plugins.imports` reads it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from dixit_lab.errors import UserError

__all__ = ["OWN_PACKAGES", "import_string_paths", "is_own_module", "module_paths",
           "package_digest", "tree_digest"]

#: the package's own top-level modules: code the package version (and :func:`package_digest`)
#: accounts for, never digested as an outside agent's
OWN_PACKAGES = ("dixit_lab", "dixit_lab_agents")

#: folders a digest walks past: Python's byte-code caches, made from the sources beside them
_SKIPPED_FOLDERS = frozenset({"__pycache__"})
_WHOLE_FILE = 1 << 20  # bytes under which a file is hashed from one read


def is_own_module(module: str) -> bool:
    """Whether ``module`` (``a.b.c``) is one of :data:`OWN_PACKAGES` or inside one."""
    return module.split(".")[0] in OWN_PACKAGES


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def module_paths(module: str) -> list[Path]:
    """The files of ``module``'s top-level package, absolute: its folder (each folder of a
    namespace package) or its one file; empty when it is not found or is built in."""
    top = module.split(".")[0]
    if not top.isidentifier():
        return []
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: no module is imported
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p).resolve() for p in spec.submodule_search_locations]
    if spec.origin and spec.has_location and Path(spec.origin).is_file():
        return [Path(spec.origin).resolve()]
    return []


def import_string_paths(target: str) -> tuple[str, list[Path]] | None:
    """The code that ``target`` names: ``("file", [its path])`` for ``path/to/file.py:name``
    (resolved from the current folder, present or not), ``("package", its top-level
    package's paths)`` for ``package.module:name`` (:func:`module_paths`). None when
    ``target`` is not an import string, or names the package's own code."""
    where, colon, attribute = target.rpartition(":")
    if not colon or not where or not attribute.isidentifier():
        return None
    if _is_path(where):
        return "file", [Path(where).expanduser().resolve()]
    if not all(part.isidentifier() for part in where.split(".")) or is_own_module(where):
        return None
    return "package", module_paths(where)


def _file_sha256(path: str, size: int) -> str:
    """A file's sha256: read whole when small (a source file: ``hashlib.file_digest`` gives
    each file a quarter-megabyte buffer), in blocks when large (weights)."""
    with open(path, "rb") as handle:
        if size < _WHOLE_FILE:
            return hashlib.sha256(handle.read()).hexdigest()
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _walk(folder: str, prefix: str, suffix: str | None, found: list[tuple[str, str, int]]
          ) -> None:
    """Add (relative POSIX path, path, size) of every file under ``folder`` to ``found``:
    :data:`_SKIPPED_FOLDERS` left out, symbolic links to folders not followed (os.scandir:
    no object a file beyond its entry)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIPPED_FOLDERS:
                    _walk(entry.path, f"{prefix}{entry.name}/", suffix, found)
            elif (suffix is None or entry.name.endswith(suffix)) and entry.is_file():
                found.append((prefix + entry.name, entry.path, entry.stat().st_size))


def tree_digest(path: Path, suffix: str | None = None) -> str | None:
    """The sha256 hex digest of ``path``: a file's bytes (``sha256sum`` prints the same), or
    for a folder the digest of the lines ``<relative path> NUL <sha256 of the file>`` of
    every file beneath it (those ending with ``suffix`` only, if given), in sorted order,
    ``__pycache__`` folders left out. None when nothing is at ``path``."""
    try:
        if path.is_file():
            return _file_sha256(str(path), path.stat().st_size)
        if not path.is_dir():
            return None
        found: list[tuple[str, str, int]] = []
        _walk(str(path), "", suffix, found)
        digest = hashlib.sha256()
        for relative, file, size in sorted(found):
            digest.update(f"{relative}\0{_file_sha256(file, size)}\n".encode())
        return digest.hexdigest()
    except OSError as error:
        raise UserError(f"{path}: cannot be read to record the digest of the code that "
                        f"plays ({error.strerror or error})") from None


@functools.cache
def package_digest() -> str:
    """The sha256 digest of the package's own Python sources: the lines ``<package> NUL
    <tree_digest of its .py files>`` of each of :data:`OWN_PACKAGES` found here. A checkout's
    code can change without its version; this changes with any of its ``.py`` files."""
    digest = hashlib.sha256()
    for package in OWN_PACKAGES:
        for folder in module_paths(package):
            digest.update(f"{package}\0{tree_digest(folder, '.py')}\n".encode())
    return digest.hexdigest()
