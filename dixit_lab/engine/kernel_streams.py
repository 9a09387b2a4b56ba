"""The compiled kernel's random numbers: :mod:`dixit_lab.core.seeding`'s counter-based
streams one number at a time, and the stable argsort of a run of them (a deal, a display, a
reshuffle), in Numba. Part of :func:`dixit_lab.engine.kernel.play_games` (whose on-disk cache
follows this file: see there).

**How the kernel's helpers are compiled** (:data:`HELPER`, :data:`HOT`): without Numba's
runtime (``_nrt=False``), which counts references to every array a function receives or
slices with an atomic add and subtract: 58 % of the kernel's time, with a dozen arrays handed
to each decision. Only ``play_games`` (which allocates the scratch arrays) has it; no helper
takes a view of an array. ``_nrt`` is an underscored option of Numba's ``jit``: were a
release to drop it, or a helper to allocate, the kernel would fail to compile, not run wrong.
The small helpers every decision calls are inlined by Numba (:data:`HOT`): LLVM does not
inline across Numba's functions, and their calls were a tenth of a game. None is cached on
its own: ``play_games`` is, with all it calls.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["HELPER", "HOT", "STREAM_DEAL", "STREAM_DISPLAY", "STREAM_FIRST", "STREAM_RESHUFFLE",
           "bits", "mix", "stream_argsort", "stream_base", "uniform"]

#: how the kernel's helpers are compiled, and the small ones inlined (the docstring says why)
HELPER = njit(_nrt=False)  # type: ignore[call-overload]
HOT = njit(_nrt=False, inline="always")  # type: ignore[call-overload]

_GOLDEN, _STREAM = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_LOW11 = np.uint64(2047)
_TO_UNIT = 1.0 / 2.0**53
#: a game's streams (``seeding``'s stream numbers: the deal, the displays, the first
#: storyteller, the n-th reshuffle at STREAM_RESHUFFLE + n)
STREAM_DEAL, STREAM_DISPLAY, STREAM_FIRST, STREAM_RESHUFFLE = 1, 2, 3, 1000


@HOT
def mix(x: np.uint64) -> np.uint64:
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@HOT
def bits(base: np.uint64, counter: int) -> np.uint64:
    """The 53 bits of number ``counter`` of a stream (``uniforms`` is them over 2**53)."""
    return mix(base + np.uint64(counter + 1) * _GOLDEN) >> _S11


@HOT
def uniform(base: np.uint64, counter: int) -> float:
    return np.float64(bits(base, counter)) * _TO_UNIT


@HELPER
def stream_base(k0: np.uint64, k1: np.uint64, stream: int) -> np.uint64:
    return mix(k0 ^ mix(k1 ^ (np.uint64(stream) * _STREAM)))


@HELPER
def stream_argsort(base, offset, size, keys, spare, counts, out):  # type: ignore[no-untyped-def]
    """``out[:size]`` = the stable argsort of numbers ``offset ..`` of a stream
    (``seeding.permutation``): each number's 53 bits above its index (distinct keys, so any
    sort gives this order). A few (a display) by counting, for each key, the keys below it
    (no branch to mispredict); many (a deal) first into buckets by their top bits, then an
    insertion sort (a comparison sort's mispredictions were a third of a game)."""
    for i in range(size):
        keys[i] = (bits(base, offset + i) << _S11) | np.uint64(i)
    if size <= 24:
        for i in range(size):
            rank = 0
            for j in range(size):
                rank += keys[j] < keys[i]
            out[rank] = i
        return
    width = 1
    while (1 << width) < size:
        width += 1
    shift = np.uint64(64 - width)
    for bucket in range(1 << width):
        counts[bucket] = 0
    for i in range(size):
        counts[np.int64(keys[i] >> shift)] += 1
    total = 0
    for bucket in range(1 << width):
        count = counts[bucket]
        counts[bucket] = total
        total += count
    for i in range(size):
        bucket = np.int64(keys[i] >> shift)
        spare[counts[bucket]] = keys[i]
        counts[bucket] += 1
    _insertion_sort(spare, size)
    for i in range(size):
        out[i] = np.int64(spare[i] & _LOW11)


@HOT
def _insertion_sort(keys, size):  # type: ignore[no-untyped-def]
    for i in range(1, size):
        key = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key
