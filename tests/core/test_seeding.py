"""Random streams: explicit, independent, and free of global state."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import (
    CounterStream,
    DealSeeds,
    Streams,
    first_numbers,
    game_key,
    game_seed,
    permutation,
    seat_bases,
    seat_bases_many,
    seed_fields,
    stream,
    stream_base,
    uniforms,
)
from dixit_lab.engine.game import play_game


def test_a_game_key_is_numpys_two_64_bit_words_of_its_seed_sequence():
    for seed, game in [(0, 0), (1, 5), (2**63 + 11, 2**40), (7, 123_456)]:
        words = game_seed(seed, game).generate_state(2, np.uint64)
        assert game_key(game_seed(seed, game)) == (int(words[0]), int(words[1]))
    words = np.random.SeedSequence(99).generate_state(2, np.uint64)
    assert game_key(99) == (int(words[0]), int(words[1]))


def test_streams_are_reproducible_and_distinct():
    key = game_key(game_seed(1, 0))
    assert key == game_key(game_seed(1, 0)) != game_key(game_seed(1, 1))
    ids = [Streams.DEAL, Streams.DISPLAY, Streams.FIRST_STORYTELLER, Streams.RESHUFFLE,
           Streams.RESHUFFLE + 1]
    bases = [int(stream_base(*key, i)[0]) for i in ids] + seat_bases(key, 8)
    firsts = {float(uniforms(np.uint64(base), 0)[0]) for base in bases}
    assert len(firsts) == len(bases)


def test_seat_bases_are_one_way_and_match_in_batches():
    key = game_key(game_seed(1, 0))
    bases = seat_bases(key, 12)  # two hashes: seats 0-7 and 8-11
    assert len(set(bases)) == 12
    assert bases[:5] != seat_bases(game_key(game_seed(1, 1)), 5)
    # a seat's base is not a SplitMix64 stream of the key (which its owner could invert)
    assert not set(bases) & {int(stream_base(*key, s)[0]) for s in range(2_000_000, 2_000_012)}
    keys = np.array([game_key(game_seed(4, g)) for g in range(6)], dtype=np.uint64)
    many = seat_bases_many(keys, 5)
    for g in range(6):
        assert many[g].tolist() == seat_bases((int(keys[g, 0]), int(keys[g, 1])), 5)


def test_a_number_depends_only_on_its_counter():
    key = game_key(7)
    base = seat_bases(key, 5)[4]
    small, large = CounterStream(base, block=3), CounterStream(base, block=64)
    first = [small.next() for _ in range(10)]
    assert first == [large.next() for _ in range(10)]
    assert np.array_equal(small.take(4, offset=6), first[6:10])
    # vectorised over games: each row equals the one-game computation
    keys = [game_key(game_seed(3, g)) for g in range(5)]
    k0 = np.array([k[0] for k in keys], dtype=np.uint64)[:, None]
    k1 = np.array([k[1] for k in keys], dtype=np.uint64)[:, None]
    batch = uniforms(stream_base(k0, k1, Streams.DEAL), np.arange(84, dtype=np.uint64))
    for g, k in enumerate(keys):
        assert np.array_equal(batch[g], uniforms(stream_base(*k, Streams.DEAL),
                                                 np.arange(84, dtype=np.uint64)))


def test_first_numbers_are_each_streams_first_uniforms():
    """The engine's one call for a game's first numbers (written in place) gives each
    stream's uniforms, bit for bit, whatever the bases (the top bit set too)."""
    bases = [0, 1, 2**63 + 5, 2**64 - 1, *seat_bases(game_key(11), 6)]
    counts = (84, 80, 1, 0, 32, 32, 7, 32, 3, 32)
    for _ in range(2):  # the layout made, then reused
        numbers = first_numbers(bases, counts)
        assert numbers.dtype == np.float64 and len(numbers) == sum(counts)
        assert np.array_equal(numbers, np.concatenate([
            uniforms(np.uint64(base), np.arange(count, dtype=np.uint64))
            for base, count in zip(bases, counts, strict=True)]))


def test_uniforms_look_uniform_and_permutations_are_permutations():
    values = uniforms(stream_base(*game_key(11), 9), np.arange(200_000, dtype=np.uint64))
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.005 and abs(values.var() - 1 / 12) < 0.002
    counts = np.histogram(values, bins=20, range=(0, 1))[0]
    assert counts.min() > 0.9 * 10_000 and counts.max() < 1.1 * 10_000
    base = stream_base(*game_key(12), Streams.DEAL)
    assert sorted(permutation(base, 84).tolist()) == list(range(84))
    # position of card 0 over many games is uniform
    spots = [int(np.argmax(permutation(stream_base(*game_key(g), 1), 6) == 0))
             for g in range(3000)]
    assert max(np.bincount(spots)) < 560 and min(np.bincount(spots)) > 440


def test_game_seeds_differ_by_index_and_experiment():
    values = {stream(game_seed(e, i), 0).random() for e in range(3) for i in range(3)}
    assert len(values) == 9


def test_seed_fields_round_trip():
    assert seed_fields(game_seed(7, 12)) == (7, (12,))
    assert seed_fields(3) == (3, ())


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
def test_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed"):
        stream(bad, 0)


def test_no_global_random_state_is_used():
    random.seed(0)
    np.random.seed(0)  # noqa: NPY002 - the point is to watch the global state
    before = (random.getstate(), np.random.get_state()[1].copy())  # noqa: NPY002
    agents = [make_agent("random") for _ in range(4)]
    play_game(agents, get_rules("refresh"), Deck.numbered(84), 3)
    assert random.getstate() == before[0]
    assert (np.random.get_state()[1] == before[1]).all()  # noqa: NPY002


def test_same_seed_as_int_or_sequence():
    deck = Deck.numbered(84)
    agents = [make_agent("random") for _ in range(4)]
    by_int = play_game(agents, get_rules("classic"), deck, 5)
    by_seq = play_game(agents, get_rules("classic"), deck, np.random.SeedSequence(5))
    assert by_int == by_seq


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1, 2**32, 2**64 + 99, 2**127 + 5])
def test_vectorised_game_keys_equal_numpy_seed_sequences(seed):
    from dixit_lab.core.seeding import game_keys

    deals = np.array([0, 1, 2, 99, 12345, 2**31, 2**32 - 1])
    expected = np.array([game_key(game_seed(seed, int(d))) for d in deals], dtype=np.uint64)
    assert np.array_equal(game_keys(seed, deals), expected)
    assert game_keys(2**200, deals) is None  # too long for the shortcut: callers fall back


def test_the_batch_blake2b_is_hashlibs():
    import hashlib

    from dixit_lab.core.blake2b import blake2b_words

    rng = np.random.default_rng(3)
    words = rng.integers(0, 2**63, size=(6, 3), dtype=np.uint64)
    words[:, 2] >>= np.uint64(32)  # a message of 20 bytes: the third word's high half is zero
    for length, digest_words, person in [(24, 8, b"dixit seats"), (20, 5, b""), (20, 1, b"p")]:
        got = blake2b_words([words[:, 0], words[:, 1], words[:, 2]], length, digest_words,
                            person)
        for g in range(6):
            message = b"".join(int(w).to_bytes(8, "little") for w in words[g])[:length]
            digest = hashlib.blake2b(message, digest_size=8 * digest_words,
                                     person=person).digest()
            assert [int(word[g]) for word in got] == [
                int.from_bytes(digest[8 * i:8 * i + 8], "little") for i in range(digest_words)]


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3, 2**200 + 1])
def test_deal_seeds_are_each_deals_game_seed(seed):
    """DealSeeds (the batched engines' seeds, no object a game) give the keys and record
    fields of game_seed(seed, deal) for each deal, slice as a list does, and make the
    SeedSequence itself when one is asked for (a seed too long for the vectorised hash
    included)."""
    deals = [5, 0, 3, 2**31 + 9, 5]
    seeds = DealSeeds(seed, deals)
    direct = [game_seed(seed, deal) for deal in deals]
    assert len(seeds) == 5
    assert seeds.keys().tolist() == [list(game_key(s)) for s in direct]
    assert seeds.fields() == [seed_fields(s) for s in direct]
    assert [s.generate_state(4).tolist() for s in seeds] == \
        [s.generate_state(4).tolist() for s in direct]
    part = seeds[1:3]
    assert isinstance(part, DealSeeds) and part.deals == [0, 3]
