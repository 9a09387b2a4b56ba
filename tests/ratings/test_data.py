"""Games reduced to patterns rate exactly as the games themselves: the batch fit's bootstrap
against the direct one (every game's draws counted), and OpenSkill against the library."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from dixit_lab.ratings import plackett_luce
from dixit_lab.ratings.data import _ranks, _sorted_codes, rating_data
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


def _few_patterns(n_games: int, seed: int) -> list:
    """Games of a fixed table of 4 whose scores take few values: few distinct patterns."""
    rng = np.random.default_rng(seed)
    strength = np.array([0.6, 0.2, -0.1, -0.7])
    games = []
    for _ in range(n_games):
        order = np.argsort(-(strength + rng.gumbel(size=4)))
        scores = np.empty(4)
        scores[order] = [3.0, 2.0, 1.0, 1.0]  # the last two always tie
        games.append((("a", "b", "c", "d"), tuple(scores)))
    return games


def test_few_patterns_draw_their_counts_from_the_multinomial_law(monkeypatch) -> None:
    """A replicate drawn by pattern (the multinomial law of G draws) and one drawn game by game
    are the same resample in law: the bootstrap strengths have the same spread either way, and
    the by-pattern path is the one taken when patterns are few."""
    data = rating_data(_few_patterns(3_000, seed=5))
    assert len(data.counts()) * plackett_luce._MULTINOMIAL_FROM <= data.games  # few patterns
    strength = _fit_all(data, 1 / 9)
    by_pattern = _bootstrap(data, strength, 1 / 9, 1_500, seed=3)
    monkeypatch.setattr(plackett_luce, "_MULTINOMIAL_FROM", 10**12)  # game by game
    by_game = _bootstrap(data, strength, 1 / 9, 1_500, seed=3)
    assert not np.array_equal(by_pattern, by_game)  # two paths, two sets of draws
    # the standard deviation of 1,500 replicates is known to about 2 % (1 / sqrt(2 * 1,500))
    ratio = by_pattern.std(axis=0) / by_game.std(axis=0)
    assert np.all(np.abs(ratio - 1) < 0.1), ratio
    spread = by_game.std(axis=0) / np.sqrt(1_500)
    assert np.all(np.abs(by_pattern.mean(axis=0) - by_game.mean(axis=0)) < 5 * spread)


def test_one_pattern_resamples_to_itself() -> None:
    """Games that are all one pattern: every replicate (by pattern: the multinomial of one
    share) is the games themselves, so every bootstrap strength is the fit's."""
    data = rating_data([(("a", "b", "c"), (3.0, 2.0, 1.0))] * 32)
    assert len(data.counts()) * plackett_luce._MULTINOMIAL_FROM <= data.games
    strength = _fit_all(data, 1 / 9)
    boot = _bootstrap(data, strength, 1 / 9, 6, seed=0)
    assert np.allclose(boot, strength[None, :], atol=1e-9)


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


def test_ranks_and_pattern_codes_are_the_direct_ones() -> None:
    """The ranks (one comparison per seat) and the keys' codes (hashed, then sorted) are
    what the direct definitions give: 1 + seats that scored more, np.unique's inverse."""
    rng = np.random.default_rng(7)
    for games, top in ((1_000, 3), (20_000, 40), (5, 1)):
        scores = rng.integers(0, top, size=(games, 5))
        direct = 1 + (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
        assert np.array_equal(_ranks(scores), direct)
        keys = rng.integers(-3, 400, size=games).astype(np.int64) * 104_729
        distinct, inverse = np.unique(keys, return_inverse=True)
        found, codes = _sorted_codes(keys)
        assert np.array_equal(found, distinct) and np.array_equal(codes, inverse.ravel())
