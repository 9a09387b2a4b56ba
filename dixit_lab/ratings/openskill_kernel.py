"""OpenSkill's Plackett-Luce walk over the games, compiled (the ``fast`` extra: Numba).

:func:`dixit_lab.ratings.openskill._plackett_luce_python` walks the games in order in Python,
about 50 µs a game: 50 s of a million-game run's end, after its games. This is the same walk in
machine code, the same operations in the same order, so the same floats (about 1 µs a game;
``tests/ratings/test_openskill_kernel.py`` compares the two on games with ties and players in
several seats). Two details keep the floats the same:

- ``x ** 2`` is libm's ``pow(x, 2.0)`` in Python, which differs from ``x * x`` in the last bit
  for about 1 value in 1,200; the compiler turns a ``pow`` by a constant 2 into ``x * x``, so
  the exponent arrives as an argument (``two``) it cannot see.
- ``np.mean`` of a player's few seats (at most 7 a game: one player in every seat is not rated)
  adds them left to right from 0.0 and divides, as here.

Imported only by :mod:`dixit_lab.ratings.openskill` when Numba is installed and the run is long
enough to repay its start (50,000 games: ``openskill._COMPILED_FROM_GAMES``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dixit_lab.engine.numba_cache import cached_njit

__all__ = ["walk"]


def walk(plans: list[tuple[list[int], list[int], list[tuple[int, int]], list[list[int]], bool]],
         pattern: np.ndarray, n_names: int, constants: tuple[float, ...]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mu, sigma, first_seen) of every name after the games: ``plans[u]`` the seats' name
    indices by rank order, the seats sharing each rank, the (i, q) pairs with rank i >= rank
    q, the seats ranked at or above each seat, whether the game is rated; ``first_seen[n]``
    the order in which names first appeared (-1: never)."""
    k_max = max(1, *(len(plan[0]) for plan in plans))
    count = len(plans)
    ids = np.zeros((count, k_max), np.int64)
    shares = np.ones((count, k_max), np.int64)
    above = np.zeros((count, k_max, k_max), np.bool_)
    sizes = np.zeros(count, np.int64)
    rated = np.zeros(count, np.bool_)
    for u, (names, a, below, _ahead, is_rated) in enumerate(plans):
        sizes[u], rated[u] = len(names), is_rated
        ids[u, :len(names)] = names
        shares[u, :len(a)] = a
        for i, q in below:
            above[u, i, q] = True
    mu0, sigma0, beta, tau, kappa = constants
    return _walk(np.ascontiguousarray(pattern, dtype=np.int64), ids, shares, above, sizes,
                 rated, n_names, mu0, sigma0, beta, tau, kappa, 2.0)


@cached_njit()
def _walk(pattern: Any, ids: Any, shares: Any, above: Any, sizes: Any, rated: Any,
          n_names: int, mu0: float, sigma0: float, beta: float, tau: float, kappa: float,
          two: float) -> Any:  # pragma: no cover - compiled
    """``_plackett_luce_python``'s loop, line for line (``above[u, i, q]``: rank i >= rank
    q, both its ``below`` pairs in i-major order and its ``ahead`` lists)."""
    tau_squared, beta_squared = tau * tau, math.pow(beta, two)
    mu = np.full(n_names, mu0)
    sigma = np.full(n_names, sigma0)
    first_seen = np.full(n_names, -1, np.int64)
    seen = 0
    k_max = ids.shape[1]
    mus, sigmas, squares = np.empty(k_max), np.empty(k_max), np.empty(k_max)
    exps, sum_q = np.empty(k_max), np.empty(k_max)
    new_mu, new_sigma = np.empty(k_max), np.empty(k_max)
    total_mu, total_sigma = np.zeros(n_names), np.zeros(n_names)
    seats_of = np.zeros(n_names, np.int64)
    for g in range(pattern.shape[0]):
        u = pattern[g]
        k = sizes[u]
        for i in range(k):
            name = ids[u, i]
            if first_seen[name] < 0:
                first_seen[name] = seen
                seen += 1
        if not rated[u]:
            continue
        for i in range(k):
            name = ids[u, i]
            mus[i] = mu[name]
            sigmas[i] = math.sqrt(sigma[name] * sigma[name] + tau_squared)
            squares[i] = math.pow(sigmas[i] * 1.0, two)
        collective = 0.0
        for i in range(k):
            collective += squares[i] + beta_squared
        c = math.sqrt(collective)
        for i in range(k):
            exps[i] = math.exp(mus[i] / c)
            sum_q[i] = 0.0
        for i in range(k):
            for q in range(k):
                if above[u, i, q]:
                    sum_q[q] += exps[i]
        for i in range(k):
            omega = 0.0
            delta = 0.0
            e = exps[i]
            for q in range(k):
                if above[u, i, q]:
                    share = e / sum_q[q]
                    delta += share * (1 - share) / shares[u, q]
                    if q == i:
                        omega += (1 - share) / shares[u, q]
                    else:
                        omega -= share / shares[u, q]
            square = squares[i]
            omega *= square / c
            delta *= square / math.pow(c, two)
            delta *= math.sqrt(square) / c
            s = sigmas[i]
            ratio = math.pow(s, two) / square
            if omega >= 0:
                new_mu[i] = mus[i] + ratio * omega * 1.0
            else:
                new_mu[i] = mus[i] + ratio * omega / 1.0
            new_sigma[i] = s * math.sqrt(max(1 - ratio * delta * 1.0, kappa))
        # a player in several seats: np.mean of its seats (from 0.0, left to right, then
        # divided: checked against np.mean in the tests)
        for i in range(k):
            name = ids[u, i]
            total_mu[name], total_sigma[name], seats_of[name] = 0.0, 0.0, 0
        for i in range(k):
            name = ids[u, i]
            total_mu[name] += new_mu[i]
            total_sigma[name] += new_sigma[i]
            seats_of[name] += 1
        for i in range(k):
            name = ids[u, i]
            if seats_of[name] == 1:
                mu[name], sigma[name] = new_mu[i], new_sigma[i]
            elif seats_of[name] > 1:
                mu[name] = total_mu[name] / seats_of[name]
                sigma[name] = total_sigma[name] / seats_of[name]
                seats_of[name] = 0  # done: its later seats keep the mean
    return mu, sigma, first_seen
