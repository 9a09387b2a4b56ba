"""Files: atomic writes (a file is either the old one or the whole new one, never half: the one
home of this for results, caches and shipped files) and content digests.

A write that fails (a full disk, a quota, a read-only file system) raises an ``OSError`` that
names the file being written, ``FILE: reason`` (the system gives a failed ``write`` or
``fsync`` no file name), and leaves the old file, if any, as it was."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text", "file_sha256", "named"]


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
