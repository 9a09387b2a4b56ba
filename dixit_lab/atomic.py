"""Files: atomic writes (a file is either the old one or the whole new one, never half: the one
home of this for results, caches and shipped files), folders replaced whole, and content
digests.

A write that fails (a full disk, a quota, a read-only file system) raises an ``OSError`` that
names the file being written, ``FILE: reason`` (the system gives a failed ``write`` or
``fsync`` no file name), and leaves the old file, if any, as it was.

A folder (``rounds.parquet``, a Parquet dataset) is written whole under a hidden name beside
it (:func:`folder_staging`) and then put in its place (:func:`replace_folder`): in one step
where the system can exchange two paths (Linux's ``renameat2`` with ``RENAME_EXCHANGE``), else
in two renames, the old version first moved aside; a kill between them leaves both versions
whole, and the next writer's :func:`folder_staging` puts the new one in place. Either way a
kill at any moment leaves the old version or the new one, never a mix or neither (once the
next writer has looked, for the two renames)."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text", "file_sha256",
           "folder_staging", "named", "replace_folder", "restore_folder"]


def atomic_write(path: str | Path, write: Callable[[Path], object], mode: int | None = None
                 ) -> Path:
    """Call ``write(temporary_path)``, then rename the temporary file over ``path`` (with
    ``mode``, else the umask's, as ``open`` would make it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                    suffix=".tmp")
    os.close(handle)
    temporary = Path(name)
    try:
        write(temporary)
        with open(temporary, "rb+") as stream:
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask() if mode is None else mode)  # mkstemp: 0600
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise named(error, target) from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


def named(error: OSError, target: str | Path) -> OSError:
    """``error`` naming ``target`` when it names no file, or only a temporary one (of
    :func:`atomic_write`): an ``OSError`` of the same kind whose message is ``FILE:
    reason``."""
    names = {str(name) for name in (error.filename, error.filename2) if name is not None}
    if names and not all(Path(name).name.endswith(".tmp") for name in names):
        return error
    reason = error.strerror or str(error) or type(error).__name__
    try:
        return type(error)(error.errno, reason, str(target))
    except TypeError:  # a subclass with a constructor of its own
        return OSError(error.errno, reason, str(target))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_bytes(data))


def file_sha256(path: str | Path) -> str:
    """The sha256 hex digest of a file's bytes, read in blocks (``hashlib.file_digest``)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _aside(target: Path, role: str) -> Path:
    """Where the next version of the folder ``target`` is written (``new``), or its last one
    waits to be removed (``old``): hidden names beside it, which no reader of it opens."""
    return target.with_name(f".{target.name}.{role}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def restore_folder(target: Path) -> None:
    """Finish a :func:`replace_folder` that a kill stopped between its two renames: the
    folder ``target`` is missing, its new version whole under the ``new`` name (moved aside
    only once it is complete) and its old one under ``old``; the new one is put in place (an
    ``old`` alone goes back). A ``new`` or ``old`` left beside a folder in place (a kill while
    the new one was written, or after the swap) is removed. For a writer that holds the
    results folder's lock (:class:`~dixit_lab.records.integrity.FolderLock`)."""
    new, old = _aside(target, "new"), _aside(target, "old")
    if not target.exists() and old.exists():
        os.replace(new if new.is_dir() else old, target)
    _remove(old)
    if target.exists():
        _remove(new)


def folder_staging(target: Path) -> Path:
    """An empty folder to write the next version of the folder ``target`` in, for
    :func:`replace_folder` (a replacement a kill stopped is finished first:
    :func:`restore_folder`)."""
    restore_folder(target)
    staging = _aside(target, "new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    return staging


def replace_folder(staging: Path, target: Path) -> None:
    """Put the whole folder ``staging`` (of :func:`folder_staging`) in the place of
    ``target`` (a folder, a file, or nothing yet) and remove the old version."""
    if target.is_dir() and not target.is_symlink() and _exchange(staging, target):
        _remove(staging)  # the old version, now under the staging name
        return
    old = _aside(target, "old")
    _remove(old)
    if target.exists() or target.is_symlink():
        os.replace(target, old)
    os.replace(staging, target)
    _remove(old)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (``renameat2(..., RENAME_EXCHANGE)``); False where this
    system or file system cannot (not Linux, an old C library or kernel, a file system
    without it)."""
    import ctypes

    rename = _renameat2()
    if rename is None:
        return False
    if rename(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
              _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))


@functools.cache
def _renameat2() -> Any:
    """The C library's ``renameat2`` (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        rename = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
    return rename


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
