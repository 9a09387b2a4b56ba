"""BLAKE2b (RFC 7693) of many short messages at once, in NumPy: the seats' stream bases of a
whole batch of games (:func:`dixit_lab.core.seeding.seat_bases_many`) without a ``hashlib``
call per game.

Only what the seat bases need: an unkeyed hash of a message of at most one block (128
bytes), with a personalisation string, returning the digest as little-endian 64-bit words
(``int.from_bytes(digest[8 * i:8 * i + 8], "little")``). ``tests/core/test_seeding.py``
checks it against ``hashlib.blake2b``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["G_COLUMNS", "IV", "SIGMA", "blake2b_words"]

#: BLAKE2b's initial words, message schedule and the state columns each G mixes (RFC 7693)
IV = (0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
      0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179)
SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)
_MASK = (1 << 64) - 1
G_COLUMNS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
             (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def _rotr(x: np.ndarray, bits: int) -> np.ndarray:
    return (x >> np.uint64(bits)) | (x << np.uint64(64 - bits))


def blake2b_words(message: list[np.ndarray | int], length: int, digest_words: int,
                  person: bytes = b"") -> list[np.ndarray]:
    """The BLAKE2b digest of ``digest_words * 8`` bytes of messages of ``length`` bytes
    (at most 128), given as their little-endian 64-bit words (arrays over the messages, or
    ints shared by all; missing words are zeros), as ``digest_words`` arrays of words."""
    if not 0 <= length <= 128 or not 1 <= digest_words <= 8 or len(person) > 16:
        raise ValueError("one block, a digest of 1 to 8 words, a person of at most 16 bytes")
    size = next((np.shape(word)[0] for word in message if np.ndim(word)), 1)
    words = [np.broadcast_to(np.asarray(w, dtype=np.uint64), (size,)) for w in message]
    words += [np.zeros(size, dtype=np.uint64)] * (16 - len(words))
    padded = person.ljust(16, b"\0")
    h = list(IV)
    h[0] ^= 0x01010000 ^ (digest_words * 8)
    h[6] ^= int.from_bytes(padded[:8], "little")
    h[7] ^= int.from_bytes(padded[8:], "little")
    v = [np.full(size, value, dtype=np.uint64) for value in (*h, *IV)]
    v[12] ^= np.uint64(length)
    v[14] ^= np.uint64(_MASK)  # the last block
    for round_index in range(12):
        sigma = SIGMA[round_index % 10]
        for column, (a, b, c, d) in enumerate(G_COLUMNS):
            x, y = words[sigma[2 * column]], words[sigma[2 * column + 1]]
            v[a] = v[a] + v[b] + x
            v[d] = _rotr(v[d] ^ v[a], 32)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 24)
            v[a] = v[a] + v[b] + y
            v[d] = _rotr(v[d] ^ v[a], 16)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 63)
    return [np.uint64(h[i]) ^ v[i] ^ v[i + 8] for i in range(digest_words)]
