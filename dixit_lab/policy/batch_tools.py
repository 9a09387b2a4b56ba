"""Vectorised building blocks of the ``MANY`` backend (:mod:`dixit_lab.policy.backends`).

Each function gives, row by row, what the pure-Python primitive of the ``ONE`` backend gives
for one game, including its tie-breaking, so that both engines make the same choices.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "categorical_rows",
    "check_same_bank",
    "first_max",
    "nth_allowed",
    "orderable",
    "searchsorted_rows",
]


def first_max(values: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """Per row, the index of the first maximum (``max(..., key=...)`` in Python), over the
    ``allowed`` columns only if given."""
    if allowed is not None:
        values = np.where(allowed, values, -np.inf)
    return np.argmax(values, axis=1)


def categorical_rows(values: np.ndarray, temperature: float, uniform: np.ndarray,
                     allowed: np.ndarray | None = None) -> np.ndarray:
    """Per row, the index drawn from softmax(values / temperature) at ``uniform``: the first
    column whose left-to-right cumulative weight exceeds ``uniform * total`` (as
    ``backends.categorical_small``). Columns not ``allowed`` weigh nothing and
    are skipped, as if they were not in the list."""
    values = np.asarray(values, dtype=np.float64)
    if allowed is None:
        allowed = np.ones(values.shape, dtype=bool)
    top = np.where(allowed, values, -np.inf).max(axis=1, keepdims=True)
    weights = np.where(allowed, np.exp((np.where(allowed, values, top) - top) / temperature),
                       0.0)
    cumulative = np.cumsum(weights, axis=1)
    threshold = uniform * cumulative[:, -1]
    above = (cumulative > threshold[:, None]) & allowed
    index = np.argmax(above, axis=1)
    last_allowed = allowed.shape[1] - 1 - np.argmax(allowed[:, ::-1], axis=1)
    return np.where(above.any(axis=1), index, last_allowed)


_FEW = 16


def searchsorted_rows(sorted_rows: np.ndarray, rows: np.ndarray, targets: np.ndarray,
                      side: str = "left") -> np.ndarray:
    """``np.searchsorted(sorted_rows[r], t, side)`` for each (row index r, target t) pair,
    by a vectorised binary search with exact comparisons (a loop of ``np.searchsorted`` for
    a few pairs, as one game's decision has)."""
    if rows.size <= _FEW:
        found = [np.searchsorted(sorted_rows[r], t, side=side)  # type: ignore[call-overload]
                 for r, t in zip(rows.tolist(), targets.ravel(), strict=True)]
        return np.array(found, dtype=np.int64).reshape(rows.shape)
    low = np.zeros(rows.shape, dtype=np.int64)
    high = np.full(rows.shape, sorted_rows.shape[1], dtype=np.int64)
    while True:
        open_ = low < high
        if not open_.any():
            return low
        middle = (low + high) // 2
        values = sorted_rows[rows, np.minimum(middle, sorted_rows.shape[1] - 1)]
        go_right = values <= targets if side == "right" else values < targets
        low = np.where(open_ & go_right, middle + 1, low)
        high = np.where(open_ & ~go_right, middle, high)


def nth_allowed(allowed: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Per row, the column of the ``index``-th (0-based) True of ``allowed``."""
    ranks = np.cumsum(allowed, axis=1) - 1
    return np.argmax(allowed & (ranks == index[:, None]), axis=1)


def orderable(values: np.ndarray) -> np.ndarray:
    """float32 -> uint64 keys in the same order (finite values)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    negative = bits >= np.uint64(0x80000000)
    return np.where(negative, np.uint64(0xFFFFFFFF) - bits, bits | np.uint64(0x80000000))



def check_same_bank(own: tuple[str, ...], shared: tuple[str, ...]) -> None:
    """Batched tables use one clue list; an agent with another bank cannot join one."""
    if tuple(own) != tuple(shared):
        raise ValueError("the agents of a batched table must perceive through one clue bank")
