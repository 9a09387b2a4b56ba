"""Games reduced to what the ratings need, in memory that does not grow with them much.

A game, for the ratings, is its seats' player names and the order of their final scores. Two
games with the same names in the same seats and the same ranks compare the same pairs the
same way, so :class:`RatingData` keeps each distinct **pattern** once (its pairwise win
counts) and, per game, only the number of its pattern (4 bytes): a million games of a fixed
table are a few hundred patterns. The batch fit and its game bootstrap
(:mod:`dixit_lab.ratings.plackett_luce`) work on pattern counts; OpenSkill walks the games in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

__all__ = ["RatingData", "rating_data", "rating_data_from_arrays"]


@dataclass(frozen=True)
class RatingData:
    """``names`` sorted; per pattern ``u``: ``wins[u, i * n_names + j]`` how often a seat of
    ``i`` finished above a seat of ``j`` (ties count one half each), ``present[u, i]``
    whether ``i`` sat, ``seats[u]`` its names by seat and ``ranks[u]`` the seats'
    competition ranks (1 = best, ties share); ``pattern[g]`` the pattern of game ``g``."""

    names: tuple[str, ...]
    wins: sparse.csr_matrix
    present: sparse.csr_matrix
    seats: list[np.ndarray]
    ranks: list[np.ndarray]
    pattern: np.ndarray

    @property
    def games(self) -> int:
        return len(self.pattern)

    def counts(self, games: np.ndarray | None = None) -> np.ndarray:
        """How often each pattern occurs among ``games`` (all games: None)."""
        chosen = self.pattern if games is None else self.pattern[games]
        return np.bincount(chosen, minlength=self.wins.shape[0]).astype(np.float64)

    def games_played(self) -> dict[str, int]:
        played = self.present.T @ self.counts()
        return {name: round(float(played[i])) for i, name in enumerate(self.names)}


def _ranks(scores: np.ndarray) -> np.ndarray:
    """(G, n) competition ranks of (G, n) scores: 1 + how many seats scored more (one
    comparison of columns per seat: a (G, n, n) array of a million games was most of the
    time)."""
    ranks = np.ones(scores.shape, dtype=np.int64)
    for seat in range(scores.shape[1]):
        ranks += scores[:, seat:seat + 1] > scores
    return ranks


def _sorted_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` of int64 keys with few distinct values, by
    hashing (no sort of every key): the distinct keys in increasing order, and each key's
    position among them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(pa.array(keys, pa.int64()))
    found = np.asarray(encoded.dictionary.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(found, kind="stable")
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return found[order], position[indices]


def rating_data_from_arrays(names: Sequence[str],
                            tables: Iterable[tuple[np.ndarray, np.ndarray]]) -> RatingData:
    """:class:`RatingData` of games given as ``(seat_names, scores)`` array pairs, each
    ``(G, n)``: indices into ``names`` and final scores, games in order. A game's pattern is
    the row of its seats' names then their ranks, padded with -1 to the widest table; rows
    are packed into one int64 key a game when they fit (a million games: 8 MB to sort)."""
    tables = [(s, r) for s, r in tables if len(s)]
    order = sorted(range(len(names)), key=lambda i: names[i])
    recode = np.empty(len(names), dtype=np.int64)
    recode[order] = np.arange(len(names))
    sorted_names = tuple(names[i] for i in order)
    n_max = max((seat_names.shape[1] for seat_names, _ in tables), default=0)
    bits = max(len(names), n_max).bit_length() + 1  # values -1..max, shifted by one
    packed = bits * 2 * n_max <= 62

    def rows(seat_names: np.ndarray, scores: np.ndarray) -> np.ndarray:
        w = seat_names.shape[1]
        pad = np.full((len(seat_names), n_max - w), -1)
        return np.concatenate([recode[seat_names], pad, _ranks(np.asarray(scores, float)),
                               pad], axis=1)

    if not tables:
        return _build(sorted_names, [], [], np.zeros(0, np.int32))
    if packed:
        weights = np.int64(1) << (bits * np.arange(2 * n_max - 1, -1, -1, dtype=np.int64))
        keys = np.concatenate([(rows(s, r) + 1) @ weights for s, r in tables])
        distinct, pattern = _sorted_codes(keys)
        unique = (distinct[:, None] // weights[None, :]) % (np.int64(1) << bits) - 1
    else:
        unique, pattern = np.unique(np.concatenate([rows(s, r) for s, r in tables]), axis=0,
                                    return_inverse=True)
    seats = [row[:n_max][row[:n_max] >= 0] for row in unique]
    ranks = [row[n_max:][row[:n_max] >= 0] for row in unique]
    return _build(sorted_names, seats, ranks, np.asarray(pattern, dtype=np.int32).ravel())


def _build(names: tuple[str, ...], seats: list[np.ndarray], ranks: list[np.ndarray],
           pattern: np.ndarray) -> RatingData:
    n_names = len(names)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    present_rows: list[int] = []
    present_cols: list[int] = []
    for u, (who, rank) in enumerate(zip(seats, ranks, strict=True)):
        for name in set(who.tolist()):
            present_rows.append(u)
            present_cols.append(name)
        for a in range(len(who)):
            for b in range(a + 1, len(who)):
                if who[a] == who[b]:  # a name compared with itself says nothing
                    continue
                a_share = 0.5 * (1.0 + np.sign(rank[b] - rank[a]))
                rows += [u, u]
                cols += [int(who[a] * n_names + who[b]), int(who[b] * n_names + who[a])]
                vals += [float(a_share), 1.0 - float(a_share)]
    shape = (len(seats), n_names * n_names)
    wins = sparse.coo_matrix((vals, (rows, cols)), shape=shape).tocsr()
    present = sparse.coo_matrix((np.ones(len(present_rows)), (present_rows, present_cols)),
                                shape=(len(seats), n_names)).tocsr()
    return RatingData(names, wins, present, seats, ranks, pattern)


def rating_data(games: Sequence[tuple[Sequence[str], Sequence[float]]]) -> RatingData:
    """:class:`RatingData` of ``(players, scores)`` games (checked by
    :func:`~dixit_lab.ratings.games.check_games`)."""
    names = sorted({name for players, _ in games for name in players})
    index = {name: i for i, name in enumerate(names)}
    by_size: dict[int, list[int]] = {}
    for g, (players, _) in enumerate(games):
        by_size.setdefault(len(players), []).append(g)
    if len(by_size) <= 1:
        seat_names = np.array([[index[name] for name in players] for players, _ in games],
                              dtype=np.int64).reshape(len(games), -1)
        scores = np.array([scores for _, scores in games], dtype=float).reshape(
            len(games), -1)
        return rating_data_from_arrays(names, [(seat_names, scores)])
    # mixed table sizes: one array pair per game keeps the games in order
    return rating_data_from_arrays(names, [
        (np.array([[index[n] for n in players]]), np.array([scores], dtype=float))
        for players, scores in games])
