"""Random streams: one ``SeedSequence`` per game, and counter-based streams derived from it.

An experiment seed and a game's deal index give the game's ``SeedSequence`` (spawn key = the
deal index). It yields a 128-bit **game key**. Every random number of the game is then a pure
function of (game key, stream, counter)::

    uniform(key, stream, i) = SplitMix64(mix(key, stream) + (i + 1) * golden) / 2**64

Streams (see :class:`Streams`): the deal (the whole deck order, as the ranks of one uniform
per card, drawn before any agent acts), each reshuffle of the discard, each round's display
order and the first storyteller. Because a number depends only on its counter and not on what
was drawn before, the batched engine (:mod:`dixit_lab.engine.batched`) computes the same numbers for
thousands of games at once.

**Seats' streams are one-way.** SplitMix64 is invertible, so a seat stream derived like the
engine's would hand its owner the game key (and with it the deck order and every hand). A
seat's stream base is instead a keyed BLAKE2b hash of the game key and the seat
(:func:`seat_bases`): an agent learns its own base and nothing it could run backwards. Agents
get ``context.uniforms`` (the counter stream with that base: what the built-in agents draw
from, so that the batched engine can reproduce them) and ``context.rng``, a numpy
``Generator`` seeded from the same base. No module of the project uses global random state.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = [
    "SEATS_PER_HASH",
    "SEAT_PERSON",
    "CounterStream",
    "DealSeeds",
    "GameSeed",
    "Streams",
    "deal_seed",
    "first_numbers",
    "game_key",
    "game_keys",
    "game_seed",
    "permutation",
    "seat_bases",
    "seat_bases_many",
    "seat_generator",
    "seed_fields",
    "stream",
    "stream_base",
    "uniforms",
]

GameSeed = int | np.random.SeedSequence

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_STREAM = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 2.0**53


class Streams:
    """Stream numbers of a game (part of the seeding contract: changing them changes games)."""

    DEAL = 1
    DISPLAY = 2
    FIRST_STORYTELLER = 3
    RESHUFFLE = 1_000            # + the reshuffle's number (0, 1, ...)


def game_seed(experiment_seed: int, game_index: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of game (deal) ``game_index`` of an experiment."""
    return np.random.SeedSequence(experiment_seed, spawn_key=(game_index,))


_DEAL_PERSON = b"dixit_lab.deals"  # BLAKE2b personalisation of the secret deal keys
SECRET_BYTES = 16                  # a run's deal secret: 128 bits from the OS


def deal_seed(experiment_seed: int, deal: int, secret: bytes | None = None
              ) -> np.random.SeedSequence:
    """The ``SeedSequence`` of deal ``deal`` of a run. Without ``secret`` (a run whose seats
    are all trusted) it is :func:`game_seed`: the config's seed alone reproduces the games.
    With a run's 128-bit secret (:mod:`dixit_lab.run.deal_secret`) the spawn key is the deal and
    four 32-bit words of a BLAKE2b of (seed, deal) keyed by the secret: a seat that knows
    the seed and its hand cannot recompute the deal, and a record's words (which replay its
    game) say nothing of another deal's."""
    if secret is None:
        return game_seed(experiment_seed, deal)
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"a deal secret is {SECRET_BYTES} bytes, got {len(secret)}")
    digest = hashlib.blake2b(f"{experiment_seed}:{deal}".encode(), digest_size=16,
                             key=secret, person=_DEAL_PERSON).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence(experiment_seed, spawn_key=(deal, *words))


def as_seed_sequence(seed: GameSeed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"a game seed must be a non-negative int or a SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def game_key(seed: GameSeed) -> tuple[int, int]:
    """The 128-bit key of a game, as two 64-bit words: ``generate_state(2, np.uint64)``,
    made from its four 32-bit words (little-endian pairs: the same numbers, without the
    ``errstate`` NumPy wraps the 64-bit form in, a third of its time)."""
    w = as_seed_sequence(seed).generate_state(4).tolist()
    return w[0] | w[1] << 32, w[2] | w[3] << 32


# -- numpy's SeedSequence, vectorised over spawn keys (for the batched engine) -------------------
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _M32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF


def _words(value: int) -> list[int]:
    words = []
    while True:
        words.append(value & _M32)
        value >>= 32
        if not value:
            return words


def game_keys(experiment_seed: int, deals: np.ndarray) -> np.ndarray | None:
    """``game_key(game_seed(experiment_seed, deal))`` for many deals at once, as (B, 2) uint64:
    numpy's ``SeedSequence`` hashing written with array operations. None when the seed is too
    long for this shortcut (more than 4 words); ``tests/core/test_seeding.py`` checks it against
    numpy."""
    entropy = _words(int(experiment_seed))
    if len(entropy) > 4 or np.any(np.asarray(deals) > _M32) or np.any(np.asarray(deals) < 0):
        return None
    entropy += [0] * (4 - len(entropy))
    hash_a = _INIT_A

    def hashmix(value: Any, const: int) -> tuple[Any, int]:
        value = (value ^ const) & _M32 if isinstance(value, int) else value ^ np.uint32(const)
        const = (const * _MULT_A) & _M32
        value = (value * const) & _M32 if isinstance(value, int) else value * np.uint32(const)
        return value ^ (value >> 16), const

    def mix(x: Any, y: Any) -> Any:
        if isinstance(x, int) and isinstance(y, int):
            result = (_MIX_L * x - _MIX_R * y) & _M32
        else:
            result = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
        return result ^ (result >> 16)

    pool: list[Any] = []
    for word in entropy:
        value, hash_a = hashmix(word, hash_a)
        pool.append(value)
    for source in range(4):
        for target in range(4):
            if source != target:
                value, hash_a = hashmix(pool[source], hash_a)
                pool[target] = mix(pool[target], value)
    spawn = np.asarray(deals, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for target in range(4):
            value, hash_a = hashmix(spawn, hash_a)
            pool[target] = mix(np.uint32(pool[target]), value)
        hash_b = _INIT_B
        state = []
        for index in range(4):
            value = pool[index] ^ np.uint32(hash_b)
            hash_b = (hash_b * _MULT_B) & _M32
            value = value * np.uint32(hash_b)
            state.append(value ^ (value >> np.uint32(16)))
    low = state[0].astype(np.uint64) | (state[1].astype(np.uint64) << np.uint64(32))
    high = state[2].astype(np.uint64) | (state[3].astype(np.uint64) << np.uint64(32))
    return np.stack([low, high], axis=1)


def _mix(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser (bijective on 64-bit words)."""
    if isinstance(x, np.ndarray) and x.ndim:
        return _mix_in_place(np.array(x, dtype=np.uint64))
    return _mix_in_place(np.array(x, dtype=np.uint64, ndmin=1))[0]  # type: ignore[no-any-return]


def _mix_in_place(x: np.ndarray) -> np.ndarray:
    """:func:`_mix` of a uint64 array, written into it (no temporary array a step)."""
    t = x >> _S30
    x ^= t
    x *= _M1
    np.right_shift(x, _S27, out=t)
    x ^= t
    x *= _M2
    np.right_shift(x, _S31, out=t)
    x ^= t
    return x


_MASK = (1 << 64) - 1


def _mix_int(x: int) -> int:
    """:func:`_mix` on one Python int (cheaper than NumPy for a single value)."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def stream_base_int(key0: int, key1: int, stream: int) -> int:
    """:func:`stream_base` of one stream of one game, as a Python int (same value)."""
    return _mix_int(key0 ^ _mix_int(key1 ^ ((stream * 0xD1B54A32D192ED03) & _MASK)))


def stream_base(key0: np.ndarray | int, key1: np.ndarray | int,
                stream: np.ndarray | int) -> np.ndarray:
    """The SplitMix64 state of one stream of one game (vectorised over games)."""
    # at least 1-d: NumPy wraps array arithmetic modulo 2**64 silently, but warns on scalars
    k0 = np.atleast_1d(np.asarray(key0, dtype=np.uint64))
    k1 = np.atleast_1d(np.asarray(key1, dtype=np.uint64))
    s = np.atleast_1d(np.asarray(stream, dtype=np.uint64))
    return _mix(k0 ^ _mix(k1 ^ (s * _STREAM)))


def permutation(base: np.ndarray | np.uint64, size: int, offset: int = 0) -> np.ndarray:
    """The order that sorts ``size`` numbers of a stream from ``offset``: a uniformly random
    permutation of ``range(size)``."""
    counters = np.arange(offset, offset + size, dtype=np.uint64)
    return np.argsort(uniforms(base, counters), kind="stable")


def uniforms(base: np.ndarray | np.uint64, counters: np.ndarray | int) -> np.ndarray:
    """Uniform numbers in [0, 1) at ``counters`` of the streams with ``base`` (broadcast)."""
    c = np.atleast_1d(np.asarray(counters, dtype=np.uint64))
    x = _mix(np.asarray(base, dtype=np.uint64) + (c + np.uint64(1)) * _GOLDEN)
    return (x >> _S11).astype(np.float64) * _TO_UNIT


#: the seat bases' BLAKE2b personalisation (these hashes serve nothing else), and the bases
#: one hash gives (a 64-byte digest holds eight 64-bit words)
SEAT_PERSON = b"dixit_lab.seats"
SEATS_PER_HASH = 8


def seat_bases(key: tuple[int, int], n_players: int) -> list[int]:
    """The stream bases of a game's seats: BLAKE2b of the game key (and the group of eight
    seats), cut into 64-bit words. One-way: a base tells nothing of the key or of another
    seat's base."""
    material = key[0].to_bytes(8, "little") + key[1].to_bytes(8, "little")
    bases: list[int] = []
    for first in range(0, n_players, SEATS_PER_HASH):
        count = min(SEATS_PER_HASH, n_players - first)
        digest = hashlib.blake2b(material + first.to_bytes(4, "little"), digest_size=8 * count,
                                 person=SEAT_PERSON).digest()
        bases.extend(int.from_bytes(digest[8 * i:8 * i + 8], "little") for i in range(count))
    return bases


def seat_bases_many(keys: np.ndarray, n_players: int) -> np.ndarray:
    """:func:`seat_bases` of many games, (B, 2) uint64 keys -> (B, n_players) uint64: the
    same BLAKE2b, computed for the whole batch at once (:mod:`dixit_lab.core.blake2b`)."""
    from dixit_lab.core.blake2b import blake2b_words

    keys = np.asarray(keys, dtype=np.uint64).reshape(-1, 2)
    out = np.empty((keys.shape[0], n_players), dtype=np.uint64)
    for first in range(0, n_players, SEATS_PER_HASH):
        count = min(SEATS_PER_HASH, n_players - first)
        words = blake2b_words([keys[:, 0], keys[:, 1], first], 20, count, SEAT_PERSON)
        for i, word in enumerate(words):
            out[:, first + i] = word
    return out


def seat_generator(base: int) -> np.random.Generator:
    """A seat's numpy ``Generator`` (``context.rng``), seeded from its stream base alone."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(base, spawn_key=(1,))))


class CounterStream:
    """The uniform numbers of one stream, handed out in order.

    ``next()`` returns the stream's next number; numbers are computed in blocks, but the
    ``i``-th number handed out is always ``uniforms(base, i)``, whatever the block size.
    ``first`` may hand in the first block, computed elsewhere (the engine computes every seat's
    first block in one NumPy call). ``next`` is the C-level ``__next__`` of a chain of blocks,
    so a draw costs no Python call (agents draw a few dozen numbers a game).
    """

    __slots__ = ("_base", "_block", "_next", "next")

    next: Callable[[], float]

    def __init__(self, base: int, block: int = 32, first: list[float] | None = None) -> None:
        self._base = base
        self._block = block
        self._next = len(first) if first else 0
        later = itertools.chain.from_iterable(self._blocks())  # computed when first drawn
        self.next = (itertools.chain(first, later) if first else later).__next__

    def _blocks(self) -> Iterator[list[float]]:
        base = np.uint64(self._base)
        while True:
            counters = np.arange(self._next, self._next + self._block, dtype=np.uint64)
            self._next += self._block
            yield uniforms(base, counters).tolist()

    def take(self, count: int, offset: int = 0) -> np.ndarray:
        """Numbers ``offset .. offset + count - 1`` of the stream, without moving it."""
        return uniforms(np.uint64(self._base), np.arange(offset, offset + count, dtype=np.uint64))


_FIRST: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}  # first_numbers' layouts


def first_numbers(bases: Sequence[int], counts: tuple[int, ...]) -> np.ndarray:
    """The first ``counts[i]`` numbers of the stream with ``bases[i]``, for every ``i``, one
    after another in one array: ``uniforms`` of them all in one NumPy call (a game's deal, its
    display orders and every seat's first block cost one call, not one each)."""
    layout = _FIRST.get(counts)
    if layout is None:  # which stream each number is of, and its counter's step
        counters = np.concatenate([np.arange(count, dtype=np.uint64) for count in counts])
        layout = _FIRST[counts] = (np.repeat(np.arange(len(counts)), counts),
                                   (counters + np.uint64(1)) * _GOLDEN)
    which, steps = layout
    x = np.array(bases, dtype=np.uint64)[which]  # uniforms(bases, counters), in place
    x += steps
    x = _mix_in_place(x)
    x >>= _S11
    out = x.astype(np.float64)
    out *= _TO_UNIT
    return out


def stream(seed: GameSeed, *key: int) -> np.random.Generator:
    """A numpy ``Generator`` for the sub-stream ``key`` of a game's ``SeedSequence`` (the
    engine's fallback actions; never handed to an agent)."""
    parent = as_seed_sequence(seed)
    child = np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, *key))
    return np.random.Generator(np.random.PCG64(child))


class DealSeeds(Sequence[np.random.SeedSequence]):
    """The seeds of some deals of one experiment whose deals need no secret:
    ``game_seed(experiment_seed, deal)`` for each of ``deals``, kept as the deals. A
    ``SeedSequence`` is made only when one is asked for (making one is microseconds, the
    batched engine's whole game a few dozen); :meth:`keys` and :meth:`fields` give what the
    batched engines read of them all at once, the same numbers."""

    def __init__(self, experiment_seed: int, deals: Sequence[int]) -> None:
        self.experiment_seed = int(experiment_seed)
        self.deals = [int(deal) for deal in deals]

    def __len__(self) -> int:
        return len(self.deals)

    @overload
    def __getitem__(self, index: int) -> np.random.SeedSequence: ...

    @overload
    def __getitem__(self, index: slice) -> DealSeeds: ...

    def __getitem__(self, index: int | slice) -> np.random.SeedSequence | DealSeeds:
        if isinstance(index, slice):
            return DealSeeds(self.experiment_seed, self.deals[index])
        return game_seed(self.experiment_seed, self.deals[index])

    def keys(self) -> np.ndarray:
        """(B, 2) uint64: each deal's :func:`game_key`."""
        found = game_keys(self.experiment_seed, np.asarray(self.deals, dtype=np.int64))
        if found is None:  # a seed too long for the vectorised hash
            found = np.array([game_key(seed) for seed in self], dtype=np.uint64)
        return found.reshape(len(self), 2)

    def fields(self) -> list[tuple[int, tuple[int, ...]]]:
        """Each deal's :func:`seed_fields` (what its record stores): the experiment seed and
        the deal."""
        return [(self.experiment_seed, (deal,)) for deal in self.deals]


def seed_fields(seed: GameSeed) -> tuple[int, tuple[int, ...]]:
    """(entropy, spawn_key) of a seed, as stored in a game record."""
    seq = as_seed_sequence(seed)
    entropy = seq.entropy
    if not isinstance(entropy, int):
        raise ValueError("game seeds must have integer entropy to be recorded")
    return entropy, tuple(int(k) for k in seq.spawn_key)
