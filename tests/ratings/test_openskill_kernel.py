"""The compiled OpenSkill walk gives the Python walk's floats, bit for bit, and the dispatch
uses it from its threshold only (skips, saying why, without the ``fast`` extra)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from dixit_lab.ratings import openskill
from dixit_lab.ratings.data import rating_data
from dixit_lab.ratings.openskill import _plackett_luce_python, _plans, openskill_data

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="the compiled walk needs Numba (the fast extra)")


def _games(seed: int, n_games: int) -> list:
    """Tables of 3 to 8 seats, ties, and players in several seats of one game (not rated
    when one player holds every seat)."""
    rng = np.random.default_rng(seed)
    names = [f"p{i}" for i in range(9)]
    games = []
    for _ in range(n_games):
        k = int(rng.integers(3, 9))
        pool = names[:int(rng.integers(1, 10))]
        players = tuple(str(x) for x in rng.choice(pool, size=k))
        games.append((players, tuple(float(x) for x in rng.integers(0, 6, size=k))))
    return games


def test_the_compiled_walk_is_the_python_walk_bit_for_bit() -> None:
    from dixit_lab.ratings.openskill_kernel import walk

    # 6,000 games of 3 to 8 seats, 5,670 patterns
    data = rating_data(_games(7, 6000))
    plans = _plans(data)
    python = _plackett_luce_python(plans, data.pattern)
    index = {name: i for i, name in enumerate(data.names)}
    mu, sigma, first_seen = walk([([index[n] for n in names], *rest) for names, *rest in plans],
                                 data.pattern, len(data.names), openskill._DEFAULTS)
    compiled = {data.names[i]: (float(mu[i]), float(sigma[i]))
                for _, i in sorted((int(first_seen[i]), i) for i in range(len(data.names))
                                   if first_seen[i] >= 0)}
    assert list(compiled) == list(python)  # the same names, first seen in the same order
    assert compiled == python  # the same floats


def test_the_dispatch_compiles_from_its_threshold_and_changes_nothing(monkeypatch) -> None:
    data = rating_data(_games(3, 800))
    monkeypatch.setattr(openskill, "_COMPILED_FROM_GAMES", 10**9)
    python = openskill_data(data)
    monkeypatch.setattr(openskill, "_COMPILED_FROM_GAMES", 1)
    import dixit_lab.ratings.openskill_kernel as kernel

    calls = []
    real = kernel.walk
    monkeypatch.setattr(kernel, "walk", lambda *args: calls.append(1) or real(*args))
    compiled = openskill_data(data)
    assert calls == [1]
    assert compiled.equals(python)


def test_a_numba_that_does_not_import_falls_back_to_python(monkeypatch) -> None:
    import builtins

    data = rating_data(_games(4, 300))
    monkeypatch.setattr(openskill, "_COMPILED_FROM_GAMES", 10**9)
    python = openskill_data(data)
    monkeypatch.setattr(openskill, "_COMPILED_FROM_GAMES", 1)
    real_import = builtins.__import__

    def broken(name, *args, **kwargs):
        if name == "dixit_lab.ratings.openskill_kernel":
            raise ImportError("numba: a broken install (test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", broken)
    assert openskill._compiled_walk() is None
    assert openskill_data(data).equals(python)
