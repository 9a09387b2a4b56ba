"""The seats' stream bases of a batch of games, compiled: :func:`dixit_lab.core.seeding.
seat_bases_many`'s BLAKE2b (RFC 7693), one game after another in Numba.

Imported only by :mod:`dixit_lab.engine.compiled` (the ``fast`` extra). The NumPy BLAKE2b
(:mod:`dixit_lab.core.blake2b`) computes a batch's hashes a round of the compression at a
time over arrays, some 1,300 NumPy operations a batch: 0.7 µs a game, 7 % of a compiled
softmax game. Here one game's hash is a loop over 16 words. The kernel (:mod:`dixit_lab.
engine.kernel`) does not call this file's function, so Numba's cache of one does not depend
on the other. ``tests/engine/test_kernel_bases.py`` checks it against ``seat_bases_many``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dixit_lab.core.blake2b import G_COLUMNS, IV, SIGMA
from dixit_lab.core.seeding import SEAT_PERSON, SEATS_PER_HASH

__all__ = ["seat_bases"]

_IV = np.array(IV, dtype=np.uint64)
_SIGMA = np.array(SIGMA, dtype=np.int64)
_G = np.array(G_COLUMNS, dtype=np.int64)
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
    _hash_seats(keys, n_players, SEATS_PER_HASH, _IV, _SIGMA, _G, _PERSON, out)
    return out


@njit(cache=True, inline="always")
def _rotate(x, bits):  # type: ignore[no-untyped-def]
    """``x`` rotated right by ``bits`` (uint64)."""
    return (x >> bits) | (x << (_64 - bits))


@njit(cache=True, inline="always")
def _half_mix(v, a, b, c, d, word, first, second):  # type: ignore[no-untyped-def]
    """One half of BLAKE2b's G on the state ``v`` (RFC 7693, 3.1): add ``word``, rotate by
    ``first`` and ``second`` (32 and 24 in the first half, 16 and 63 in the second)."""
    v[a] = v[a] + v[b] + word
    v[d] = _rotate(v[d] ^ v[a], first)
    v[c] = v[c] + v[d]
    v[b] = _rotate(v[b] ^ v[c], second)


@njit(cache=True)
def _hash_seats(keys, n, per_hash, iv, sigma, g_columns, person, out):  # type: ignore[no-untyped-def]
    h = np.empty(8, dtype=np.uint64)
    v = np.empty(16, dtype=np.uint64)
    m = np.zeros(16, dtype=np.uint64)
    for game in range(keys.shape[0]):
        m[0], m[1] = keys[game, 0], keys[game, 1]
        for first in range(0, n, per_hash):
            count = min(per_hash, n - first)
            m[2] = np.uint64(first)
            for i in range(8):
                h[i] = iv[i]
            h[0] ^= np.uint64(0x01010000) ^ np.uint64(count * 8)
            h[6] ^= person[0]
            h[7] ^= person[1]
            for i in range(8):
                v[i], v[i + 8] = h[i], iv[i]
            v[12] ^= _LENGTH
            v[14] ^= _LAST  # the one block is the last
            for round_index in range(12):
                row = round_index % 10
                for column in range(8):
                    a, b = g_columns[column, 0], g_columns[column, 1]
                    c, d = g_columns[column, 2], g_columns[column, 3]
                    # G: two half-mixes, each with its message word and rotations
                    _half_mix(v, a, b, c, d, m[sigma[row, 2 * column]], _R32, _R24)
                    _half_mix(v, a, b, c, d, m[sigma[row, 2 * column + 1]], _R16, _R63)
            for i in range(count):
                out[game, first + i] = h[i] ^ v[i] ^ v[i + 8]
