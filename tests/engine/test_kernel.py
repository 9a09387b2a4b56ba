"""The compiled kernel's on-disk cache follows every file it compiles in
(:mod:`dixit_lab.engine.kernel`). Its games: ``tests/engine/test_compiled.py``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from dixit_lab.engine.compiled import kernel_problem

pytestmark = pytest.mark.skipif(kernel_problem() is not None, reason=kernel_problem() or "")


def _dispatchers(function: types.FunctionType, seen: dict[str, str]) -> None:
    """Every compiled function ``function`` calls, directly or not: name -> its module."""
    from numba.core.registry import CPUDispatcher

    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        for name in code.co_names:
            value = function.__globals__.get(name)
            if isinstance(value, CPUDispatcher) and value.py_func.__qualname__ not in seen:
                seen[value.py_func.__qualname__] = value.py_func.__module__
                _dispatchers(value.py_func, seen)


def test_play_games_is_keyed_by_every_file_it_compiles_in() -> None:
    """Its closure holds the digest of :data:`SOURCES`, and every compiled function it calls
    is defined in one of them (a helper in a new file fails here until the file is added)."""
    from dixit_lab.engine import kernel

    closure = [cell.cell_contents for cell in kernel.play_games.py_func.__closure__ or ()]
    assert closure == [kernel.sources_digest()]
    called: dict[str, str] = {}
    _dispatchers(kernel.play_games.py_func, called)
    assert {"play_tell", "weighted", "stream_argsort", "_refill"} <= set(called)
    assert set(called.values()) <= {kernel.__name__, *(m.__name__ for m in kernel.SOURCES)}


def test_numba_still_keys_a_cache_by_the_contents_of_a_closure(tmp_path: Path) -> None:
    """What the kernel relies on: a cached function closed over a digest of the file of a
    function it calls is compiled again when that file changes (Numba alone would load the
    stale version: numba/numba#1833)."""
    (tmp_path / "helper.py").write_text(textwrap.dedent("""
        from numba import njit

        @njit(inline="always")
        def step(x):
            return x + 1
        """), encoding="utf-8")
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import hashlib
        import pathlib

        from numba import njit

        from helper import step

        def make(digest):
            @njit(cache=True)
            def play(x):
                if not digest:
                    return -1
                return step(x)
            return play

        source = pathlib.Path(__file__).with_name("helper.py").read_bytes()
        print(make(hashlib.sha256(source).hexdigest())(1))
        """), encoding="utf-8")

    def run() -> str:
        return subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True,
                              text=True, check=True).stdout.strip()

    assert run() == "2"
    assert run() == "2"  # from the cache
    assert list((tmp_path / "__pycache__").glob("main.*.nbi"))
    helper = tmp_path / "helper.py"
    helper.write_text(helper.read_text(encoding="utf-8").replace("x + 1", "x + 2"),
                      encoding="utf-8")
    assert run() == "3"
