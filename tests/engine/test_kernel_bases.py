"""The compiled seat bases are ``seat_bases_many``'s numbers (itself checked against
``hashlib.blake2b`` in ``tests/core/test_seeding.py``). Skips without the ``fast`` extra."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.seeding import seat_bases, seat_bases_many
from dixit_lab.engine.compiled import kernel_problem

pytestmark = pytest.mark.skipif(kernel_problem() is not None, reason=kernel_problem() or "")


@pytest.mark.parametrize("n_players", [1, 3, 5, 8, 9, 17])
def test_the_compiled_bases_are_the_numpy_ones(n_players: int) -> None:
    from dixit_lab.engine.kernel_bases import seat_bases as compiled_bases

    keys = np.random.default_rng(n_players).integers(0, 2**64, size=(300, 2), dtype=np.uint64)
    keys[0] = (0, 0)
    keys[1] = (2**64 - 1, 2**64 - 1)
    expected = seat_bases_many(keys, n_players)
    found = compiled_bases(keys, n_players)
    assert found.dtype == np.uint64 and found.shape == (300, n_players)
    assert np.array_equal(found, expected)
    key = (int(keys[7, 0]), int(keys[7, 1]))
    assert found[7].tolist() == seat_bases(key, n_players)


def test_no_game_gives_an_empty_table() -> None:
    from dixit_lab.engine.kernel_bases import seat_bases as compiled_bases

    assert compiled_bases(np.empty((0, 2), np.uint64), 5).shape == (0, 5)
