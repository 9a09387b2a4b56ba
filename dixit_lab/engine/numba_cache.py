"""Numba's on-disk cache of the package's compiled functions, and what a damaged one does.

Every function of the package that Numba caches on disk is made by :func:`cached_njit`
(``njit(cache=True)``): the compiled kernel's ``play_games`` (:mod:`dixit_lab.engine.kernel`),
the seats' stream bases (:mod:`dixit_lab.engine.kernel_bases`) and OpenSkill's walk
(:mod:`dixit_lab.ratings.openskill_kernel`). Numba keeps a function's cache in
``$NUMBA_CACHE_DIR`` when it is set, else in the ``__pycache__`` folder beside its module when
that folder can be written, else in the user's cache folder (``~/.cache/numba``): an index
(``NAME-LINE.pyXY.nbi``) and one data file per compiled version (``NAME-LINE.pyXY.N.nbc``).

Numba reads both with pickle and lets any failure through, so a file cut short (a full disk, a
killed copy) or emptied made every later call fail (``EOFError: Ran out of input``,
``UnpicklingError``) until a person found and deleted it. Here a cached version that cannot be
loaded has its function's cache files removed, one warning line names the folder and the
function, and the function is compiled again (seconds) and cached anew: the next process loads
it without a word. Where the files cannot be removed, the function is compiled without its
cache in this process, and the line says which files to delete.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numba import njit

__all__ = ["cached_njit", "heal_cache"]

_WARNING_MODULE = "dixit_lab numba cache"  # the warning's "file": no source line under it


def cached_njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, **options)``, whose cache heals when damaged
    (:func:`heal_cache`)."""

    def decorate(function: Callable[..., Any]) -> Any:
        return heal_cache(njit(cache=True, **options)(function))

    return decorate


def heal_cache(dispatcher: Any) -> Any:
    """``dispatcher`` (a Numba function with ``cache=True``), made to treat a cached version
    it cannot load as a damaged cache: its files removed, one warning, a fresh compile."""
    cache = dispatcher._cache  # Numba's FunctionCache: the one place it loads from disk
    load = cache.load_overload

    def load_overload(signature: Any, target_context: Any) -> Any:
        try:
            return load(signature, target_context)
        except Exception as error:  # any failure to read what is cached: the files are bad
            function = dispatcher.py_func
            _discard(cache, f"{function.__module__}.{function.__name__}", error)
            return None  # Numba compiles, then saves a fresh index and data file

    cache.load_overload = load_overload
    return dispatcher


def _discard(cache: Any, function: str, error: Exception) -> None:
    """Remove the cache files of ``function`` that ``error`` came from (or, when they cannot
    be removed, stop this process from using them), saying so in one line."""
    index = Path(cache._cache_file._index_path)
    stem = index.name.removesuffix(".nbi")
    folder = index.parent
    try:
        data = [path for path in folder.iterdir()
                if path.name.startswith(f"{stem}.") and path.name.endswith(".nbc")]
    except OSError:
        data = []
    removed, kept = [], []
    for path in [index, *sorted(data)]:
        try:
            path.unlink()
            removed.append(path.name)
        except FileNotFoundError:
            pass  # another process removed it first
        except OSError:
            kept.append(path.name)
    reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
    if kept:
        cache.disable()  # Numba would read the damaged index again when it saves
        what = (f"its files could not be removed, so it is compiled without its cache in this "
                f"process; delete {', '.join(kept)} there (or set NUMBA_CACHE_DIR to a "
                f"writable folder)")
    else:
        what = (f"removed {', '.join(removed) or 'its files'}; it is compiled again (seconds) "
                f"and cached anew")
    warnings.warn_explicit(f"Numba's cache of {function} in {folder} could not be read "
                           f"({reason}): {what}", RuntimeWarning, _WARNING_MODULE, 0)
