"""The seats' stream bases of a batch of games, compiled: :func:`dixit_lab.core.seeding.
seat_bases_many`'s BLAKE2b (RFC 7693), one game after another in Numba.

Imported only by :mod:`dixit_lab.engine.compiled` (the ``fast`` extra). The NumPy BLAKE2b
(:mod:`dixit_lab.core.blake2b`) computes a batch's hashes a round of the compression at a
time over arrays, some 1,300 NumPy operations a batch: 0.7 µs a game, 7 % of a compiled
softmax game. Here one game's hash runs on sixteen local words (0.26 µs a game; 0.50 with
the state in an array). The kernel (:mod:`dixit_lab.
engine.kernel`) does not call this file's function, so Numba's cache of one does not depend
on the other. ``tests/engine/test_kernel_bases.py`` checks it against ``seat_bases_many``.
"""

from __future__ import annotations

import numpy as np

from dixit_lab.core.blake2b import IV, SIGMA
from dixit_lab.core.seeding import SEAT_PERSON, SEATS_PER_HASH
from dixit_lab.engine.numba_cache import cached_njit

__all__ = ["seat_bases"]

_IV = np.array(IV, dtype=np.uint64)
_SIGMA = np.array(SIGMA, dtype=np.int64)
_PERSON = np.frombuffer(SEAT_PERSON.ljust(16, b"\0"), dtype="<u8").astype(np.uint64)
_LENGTH = np.uint64(20)  # bytes hashed: the game key's two words and the first seat's four
_LAST = np.uint64((1 << 64) - 1)
_R32, _R24, _R16, _R63 = np.uint64(32), np.uint64(24), np.uint64(16), np.uint64(63)
_64 = np.uint64(64)


def seat_bases(keys: np.ndarray, n_players: int) -> np.ndarray:
    """``seat_bases_many(keys, n_players)``: (B, 2) uint64 game keys -> (B, n_players)
    uint64 stream bases, the same numbers."""
    keys = np.ascontiguousarray(np.asarray(keys, dtype=np.uint64).reshape(-1, 2))
    out = np.empty((keys.shape[0], n_players), dtype=np.uint64)
    _hash_seats(keys, n_players, SEATS_PER_HASH, _IV, _SIGMA, _PERSON, out)
    return out


@cached_njit(inline="always")
def _rotate(x, bits):  # type: ignore[no-untyped-def]
    """``x`` rotated right by ``bits`` (uint64)."""
    return (x >> bits) | (x << (_64 - bits))


@cached_njit(inline="always")
def _g(a, b, c, d, x, y):  # type: ignore[no-untyped-def]
    """BLAKE2b's G (RFC 7693, 3.1) on four state words, with message words ``x`` and ``y``."""
    a = a + b + x
    d = _rotate(d ^ a, _R32)
    c = c + d
    b = _rotate(b ^ c, _R24)
    a = a + b + y
    d = _rotate(d ^ a, _R16)
    c = c + d
    b = _rotate(b ^ c, _R63)
    return a, b, c, d


@cached_njit()
def _hash_seats(keys, n, per_hash, iv, sigma, person, out):  # type: ignore[no-untyped-def]
    """One game's hashes after another, the state in sixteen locals (registers: an array's
    loads and stores were half the time), G on the columns then the diagonals."""
    m = np.zeros(16, dtype=np.uint64)
    for game in range(keys.shape[0]):
        m[0], m[1] = keys[game, 0], keys[game, 1]
        for first in range(0, n, per_hash):
            count = min(per_hash, n - first)
            m[2] = np.uint64(first)
            h0 = iv[0] ^ np.uint64(0x01010000) ^ np.uint64(count * 8)
            h1, h2, h3, h4, h5 = iv[1], iv[2], iv[3], iv[4], iv[5]
            h6, h7 = iv[6] ^ person[0], iv[7] ^ person[1]
            v0, v1, v2, v3, v4, v5, v6, v7 = h0, h1, h2, h3, h4, h5, h6, h7
            v8, v9, v10, v11 = iv[0], iv[1], iv[2], iv[3]
            v12, v13, v14, v15 = iv[4] ^ _LENGTH, iv[5], iv[6] ^ _LAST, iv[7]
            for round_index in range(12):
                s = round_index % 10
                v0, v4, v8, v12 = _g(v0, v4, v8, v12, m[sigma[s, 0]], m[sigma[s, 1]])
                v1, v5, v9, v13 = _g(v1, v5, v9, v13, m[sigma[s, 2]], m[sigma[s, 3]])
                v2, v6, v10, v14 = _g(v2, v6, v10, v14, m[sigma[s, 4]], m[sigma[s, 5]])
                v3, v7, v11, v15 = _g(v3, v7, v11, v15, m[sigma[s, 6]], m[sigma[s, 7]])
                v0, v5, v10, v15 = _g(v0, v5, v10, v15, m[sigma[s, 8]], m[sigma[s, 9]])
                v1, v6, v11, v12 = _g(v1, v6, v11, v12, m[sigma[s, 10]], m[sigma[s, 11]])
                v2, v7, v8, v13 = _g(v2, v7, v8, v13, m[sigma[s, 12]], m[sigma[s, 13]])
                v3, v4, v9, v14 = _g(v3, v4, v9, v14, m[sigma[s, 14]], m[sigma[s, 15]])
            words = (h0 ^ v0 ^ v8, h1 ^ v1 ^ v9, h2 ^ v2 ^ v10, h3 ^ v3 ^ v11,
                     h4 ^ v4 ^ v12, h5 ^ v5 ^ v13, h6 ^ v6 ^ v14, h7 ^ v7 ^ v15)
            for i in range(count):
                out[game, first + i] = words[i]
