"""A damaged Numba cache heals (:mod:`dixit_lab.engine.numba_cache`): its files are removed,
one line says so, the function is compiled again, and the next process is silent. Each test
runs Python in a subprocess with a cache folder of its own (``NUMBA_CACHE_DIR``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from dixit_lab.engine.compiled import kernel_problem

pytestmark = pytest.mark.skipif(kernel_problem() is not None, reason=kernel_problem() or "")

PACKAGE = Path(__file__).resolve().parents[2] / "dixit_lab"
WARNING = "RuntimeWarning: Numba's cache of "

SMALL = textwrap.dedent("""
    import os
    import pathlib

    from dixit_lab.engine.numba_cache import cached_njit

    if os.environ.get("READ_ONLY_CACHE"):  # no file can be removed (as a read-only folder)
        def unlink(self, missing_ok=False):
            raise PermissionError(13, "Permission denied", str(self))
        pathlib.Path.unlink = unlink

    @cached_njit()
    def twice(x):
        return 2 * x

    print(twice(21))
    """)


SMALL_RUN = ("-c", "import small")


def _run(cwd: Path, cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache), **env}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=900)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if WARNING in line]


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:path.stat().st_size // 2])


def _zeros(path: Path) -> None:
    path.write_bytes(b"\0" * path.stat().st_size)


@pytest.mark.parametrize(("suffix", "damage"), [
    (".nbi", _empty), (".nbi", _cut), (".nbc", _empty), (".nbc", _cut), (".nbc", _zeros)],
    ids=["index-empty", "index-cut", "data-empty", "data-cut", "data-zeros"])
def test_a_damaged_cache_file_is_removed_and_compiled_again(
        tmp_path: Path, suffix: str, damage: Callable[[Path], None]) -> None:
    (tmp_path / "small.py").write_text(SMALL, encoding="utf-8")
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache, *SMALL_RUN)
    assert first.returncode == 0 and first.stdout.split() == ["42"], first.stderr
    assert not _warnings(first.stderr)
    [target] = cache.rglob(f"small.twice-*{suffix}")
    damage(target)
    healed = _run(tmp_path, cache, *SMALL_RUN)  # it failed: EOFError, UnpicklingError
    assert healed.returncode == 0 and healed.stdout.split() == ["42"], healed.stderr
    [line] = _warnings(healed.stderr)
    assert "small.twice" in line and str(target.parent) in line and "removed" in line
    assert "compiled again" in line
    again = _run(tmp_path, cache, *SMALL_RUN)
    assert again.returncode == 0 and again.stdout.split() == ["42"]
    assert not _warnings(again.stderr)  # the fresh cache loads without a word
    assert len(list(cache.rglob("small.twice-*.nbi"))) == 1


def test_a_cache_whose_files_cannot_be_removed_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text(SMALL, encoding="utf-8")
    cache = tmp_path / "cache"
    assert _run(tmp_path, cache, *SMALL_RUN).returncode == 0
    [index] = cache.rglob("small.twice-*.nbi")
    _empty(index)
    kept = _run(tmp_path, cache, *SMALL_RUN, READ_ONLY_CACHE="1")
    assert kept.returncode == 0 and kept.stdout.split() == ["42"], kept.stderr
    [line] = _warnings(kept.stderr)
    assert "could not be removed" in line and index.name in line and "NUMBA_CACHE_DIR" in line
    assert index.stat().st_size == 0  # still there, and still damaged: the next run heals it
    healed = _run(tmp_path, cache, *SMALL_RUN)
    assert healed.returncode == 0 and "removed" in _warnings(healed.stderr)[0]


PACKAGE_RUN = textwrap.dedent("""
    import sys

    from dixit_lab.ratings.openskill import prepare_walk
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    config = parse_config({"name": "cached", "seed": 1, "rules": "classic",
                           "engine": "compiled", "deck": "numbered-84",
                           "players": ["random", "random", "random"], "games": 4,
                           "executor": {"kind": "local"}})
    result = run_experiment(config, sys.argv[1], show_progress=False, write_outputs=False)
    prepare_walk(10 ** 6)  # the compiled OpenSkill walk, as a long run's tables use it
    print(result.played)
    """)


def test_every_cached_function_of_the_package_heals(tmp_path: Path) -> None:
    """The compiled kernel, the seats' stream bases and OpenSkill's walk: each family's cache
    damaged a different way, a compiled run and the walk still succeed, one line for each."""
    script = tmp_path / "package_run.py"
    script.write_text(PACKAGE_RUN, encoding="utf-8")
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache, str(script), str(tmp_path / "run-1"))
    assert first.returncode == 0 and first.stdout.split() == ["4"], first.stderr
    assert not _warnings(first.stderr)
    [kernel] = cache.rglob("kernel._compiled.locals.play_games-*.nbi")
    [bases] = cache.rglob("kernel_bases._hash_seats-*.nbc")
    [walk] = cache.rglob("openskill_kernel._walk-*.nbc")
    _empty(kernel)
    _cut(bases)
    _zeros(walk)
    healed = _run(tmp_path, cache, str(script), str(tmp_path / "run-2"))
    assert healed.returncode == 0 and healed.stdout.split() == ["4"], healed.stderr
    lines = _warnings(healed.stderr)
    assert len(lines) == 3, healed.stderr
    for name, path in [("kernel.play_games", kernel), ("kernel_bases._hash_seats", bases),
                       ("openskill_kernel._walk", walk)]:
        assert any(name in line and str(path.parent) in line for line in lines), name
    again = _run(tmp_path, cache, str(script), str(tmp_path / "run-3"))
    assert again.returncode == 0 and again.stdout.split() == ["4"]
    assert not _warnings(again.stderr)
    games = [(tmp_path / f"run-{k}" / "games.jsonl.zst").read_bytes() for k in (1, 2, 3)]
    assert games[0] == games[1] == games[2]


def test_every_function_the_package_caches_is_made_by_cached_njit() -> None:
    """Numba's ``cache=True`` is written in one place: a new cached function that bypassed
    :func:`cached_njit` would fail for good on a damaged cache."""
    trees = {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
             for path in sorted(PACKAGE.rglob("*.py"))}
    found = [name for name, tree in trees.items() if any(
        isinstance(node, ast.keyword) and node.arg == "cache"
        and isinstance(node.value, ast.Constant) and node.value.value is True
        for node in ast.walk(tree))]
    assert found == ["engine/numba_cache.py"]
    users = [name for name, tree in trees.items() if any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id == "cached_njit" for node in ast.walk(tree))]
    assert users == ["engine/kernel.py", "engine/kernel_bases.py",
                     "ratings/openskill_kernel.py"]
