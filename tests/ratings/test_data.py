"""Games reduced to patterns rate exactly as the games themselves: the batch fit's bootstrap
against the direct one (every game's draws counted), and OpenSkill against the library."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from dixit_lab.ratings.data import rating_data
from dixit_lab.ratings.openskill import _plackett_luce_defaults, openskill_data
from dixit_lab.ratings.plackett_luce import _bootstrap, _fit_all


def _games(seed: int, fixed: bool, n_games: int = 400) -> list:
    rng = np.random.default_rng(seed)
    names = ["a", "b", "c", "d", "e", "f"]
    games = []
    for _ in range(n_games):
        k = 5 if fixed else int(rng.integers(3, 6))
        players = tuple(names[:5]) if fixed else tuple(rng.choice(names, size=k))
        games.append((players, tuple(float(x) for x in rng.integers(0, 8, size=k))))
    return games


def _direct_bootstrap(games: list, names: tuple, bootstrap: int, seed: int) -> np.ndarray:
    """(bootstrap, names * names) win counts of resampled games, game by game."""
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    wins = np.zeros((len(games), n * n))
    for g, (players, scores) in enumerate(games):
        for a in range(len(players)):
            for b in range(len(players)):
                if a != b and players[a] != players[b]:
                    share = 0.5 * (1 + np.sign(scores[a] - scores[b]))
                    wins[g, index[players[a]] * n + index[players[b]]] += share
    draws = np.random.default_rng(seed).integers(0, len(games), size=(bootstrap, len(games)))
    counts = np.stack([np.bincount(row, minlength=len(games)) for row in draws])
    return counts @ wins


def test_patterns_give_the_bootstrap_of_the_games() -> None:
    for fixed in (True, False):
        games = _games(1, fixed)
        data = rating_data(games)
        assert data.games == len(games) and data.wins.shape[0] < len(games)
        direct = _direct_bootstrap(games, data.names, 7, seed=11)
        rng = np.random.default_rng(11)
        for replicate in direct:
            counts = data.counts(rng.integers(0, data.games, size=data.games))
            assert np.array_equal(sparse.csr_matrix(data.wins).T @ counts, replicate)
        strength = _fit_all(data, 1 / 9)
        boot = _bootstrap(data, strength, 1 / 9, 7, 11)
        assert boot.shape == (7, len(data.names)) and np.isfinite(boot).any()


def test_openskill_without_the_library_objects_is_the_library() -> None:
    fixed = rating_data(_games(2, True))
    fast = _plackett_luce_defaults(fixed)
    library = openskill_data(fixed, model="PlackettLuce", mu=25.0)  # the library's own path
    for row in library.itertuples():
        assert fast[row.player] == (row.mu, row.sigma)  # the same floats
    mixed = rating_data(_games(3, False))
    fast = _plackett_luce_defaults(mixed)
    for row in openskill_data(mixed, model="PlackettLuce", mu=25.0).itertuples():
        assert np.allclose(fast[row.player], (row.mu, row.sigma), rtol=1e-12)
