"""The two backends the built-in agents' decision kernels run on.

A batchable agent writes each decision once, as a method of its policy (a *kernel*) that
calls the primitives of a backend ``on``:

* :data:`ONE` decides one game's move from its view, in pure Python (a hand is a tuple of
  cards, a row of values a list, a set of choices a list of positions, a draw a float):
  faster than NumPy for the handful of cards of a hand or a table;
* :data:`MANY` decides the moves of many games at once, one row per game, in NumPy (a hand
  is an (R, h) array, a set of choices an (R, k) mask, a draw an (R,) array): the batched
  engine's :class:`~dixit_lab.engine.batched.BatchPolicy`.

Each primitive of :data:`ONE` gives, for one row, exactly what the primitive of the same name
of :data:`MANY` gives for each row (same float operations, same tie-breaking), and each
draw takes one number of the seat's stream in both, so one kernel makes the same choices in
both engines. ``tests/policy/test_backends.py`` checks every primitive of the two against each
other; ``dixit_lab.testing.check_batch_policy`` checks whole agents.

Tables a kernel reads are built for its backend with ``vector`` and ``table`` (Python lists
for :data:`ONE`, arrays for :data:`MANY`) and passed to it explicitly. A (clues, cards) table
is read with ``lookup``: ``table[clue]`` is the clue's row, so for :data:`ONE` any mapping
from the clue, as the view names it, to a list works (an embedding agent's ``clue_rows``,
by text, which perceives a clue outside the bank too).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from dixit_lab.policy.batch_tools import (
    categorical_rows,
    first_max,
    nth_allowed,
    searchsorted_rows,
)

__all__ = ["MANY", "ONE", "Backend", "ManyGames", "OneGame", "categorical_small",
           "without_replacement"]


def categorical_small(values: Sequence[float], temperature: float, uniform: float) -> int:
    """Index drawn from softmax(values / temperature) by inverting the CDF at ``uniform``.
    The sum is accumulated left to right (not with ``sum``, whose rounding changed in Python
    3.12), as :func:`~dixit_lab.policy.batch_tools.categorical_rows`' cumulative sum does."""
    top = max(values)
    cumulative = []
    total = 0.0
    for value in values:
        total += math.exp((value - top) / temperature)
        cumulative.append(total)
    threshold = uniform * total
    for index, bound in enumerate(cumulative):
        if threshold < bound:
            return index
    return len(values) - 1


class Backend(Protocol):
    """The contract of a backend: the primitives a kernel may call, which :class:`OneGame`
    and :class:`ManyGames` both implement (mypy checks both against it, see :data:`ONE` and
    :data:`MANY`). Values are ``Any`` because their form is the backend's (lists and floats
    for one game, arrays with one row per game for many); what each primitive gives is the
    same for every row (``tests/policy/test_backends.py``)."""

    name: str
    at: Callable[[Any, Any], Any]  # vector[cards]
    minimum: Callable[[Any, Any], Any]  # the element-wise smaller of two

    def vector(self, values: Any, /) -> Any: ...
    def table(self, matrix: np.ndarray, /) -> Any: ...
    def lookup(self, table: Any, clues: Any, cards: Any, /) -> Any: ...
    def gather(self, vector: Any, cards: Any, /) -> Any: ...
    def pick(self, hands: Any, positions: Any, /) -> Any: ...
    def columns(self, picked: list[Any], /) -> Any: ...
    def length(self, hands: Any, /) -> int: ...
    def everything(self, hands: Any, /) -> Any: ...
    def others(self, own: Any, display: Any, /) -> Any: ...
    def without(self, among: Any, positions: Any, /) -> Any: ...
    def count(self, among: Any, /) -> Any: ...
    def nth(self, allowed: Any, index: Any, /) -> Any: ...
    def below(self, uniform: Any, n: Any, /) -> Any: ...
    def uniform(self, among: Any, uniform: Any, /) -> Any: ...
    def best_card(self, vector: Any, hands: Any, /) -> Any: ...
    def best_cards(self, table: Any, clues: Any, hands: Any, count: int, /) -> Any: ...
    def best_other(self, table: Any, clues: Any, display: Any, own: Any, /) -> Any: ...
    def categorical(self, values: Any, temperature: float, uniform: Any,
                    allowed: Any = None, /) -> Any: ...
    def searchsorted(self, sorted_rows: np.ndarray, rows: Any, targets: Any, /) -> Any: ...
    def as_rows(self, hands: Any, /) -> np.ndarray: ...
    def from_rows(self, values: np.ndarray, /) -> Any: ...


class OneGame:
    """One game's decision, in pure Python. ``among``: the positions still allowed."""

    name = "one game"

    @staticmethod
    def vector(values: Any) -> list[Any]:
        return np.asarray(values).tolist()

    @staticmethod
    def table(matrix: np.ndarray) -> dict[int, list[Any]]:
        """A (clues, cards) table, read by :meth:`lookup`: each row a list on first use."""
        return _LazyRows(matrix)

    @staticmethod
    def lookup(table: Any, clue: Any, cards: Sequence[int]) -> list[Any]:
        row = table[clue]
        return [row[card] for card in cards]

    @staticmethod
    def gather(vector: Sequence[Any], cards: Sequence[int]) -> list[Any]:
        return [vector[card] for card in cards]

    # the plainest primitives are builtins: one game's decision is a handful of calls
    at: Callable[[Any, Any], Any] = staticmethod(operator.getitem)  # vector[index]
    pick = staticmethod(operator.getitem)  # hand[position]

    @staticmethod
    def columns(picked: list[int]) -> list[int]:
        return picked

    length = staticmethod(len)

    @staticmethod
    def everything(hand: Sequence[int]) -> Sequence[int]:
        return range(len(hand))

    @staticmethod
    def others(own: Sequence[int], display: Sequence[int]) -> list[int]:
        """The positions of ``display`` that are not in ``own`` (the view's own positions)."""
        return [i for i in range(len(display)) if i not in own]

    @staticmethod
    def without(among: Sequence[int], position: int) -> list[int]:
        return [i for i in among if i != position]

    count = staticmethod(len)
    nth = staticmethod(operator.getitem)  # among[index]

    minimum: Callable[[Any, Any], Any] = staticmethod(min)

    @staticmethod
    def below(uniform: float, n: int) -> int:
        """Item ``floor(uniform * n)`` of ``n`` (``uniform * n`` can round up to ``n``)."""
        return min(int(uniform * n), n - 1)

    @staticmethod
    def uniform(among: Sequence[int], uniform: float) -> int:
        """The position ``floor(uniform * n)`` of the ``n`` of ``among``."""
        n = len(among)
        return among[min(int(uniform * n), n - 1)]

    @staticmethod
    def best_card(vector: Sequence[Any], hand: Sequence[int]) -> int:
        """The card of ``hand`` with the highest ``vector[card]`` (ties: the earlier)."""
        return max(hand, key=vector.__getitem__)

    @staticmethod
    def best_cards(table: Any, clue: Any, hand: Sequence[int], count: int) -> list[int]:
        """The ``count`` cards of ``hand`` highest in the clue's row, best first (ties: the
        earlier)."""
        row = table[clue]
        if count == 1:
            return [max(hand, key=row.__getitem__)]
        return sorted(hand, key=lambda card: -row[card])[:count]

    @staticmethod
    def best_other(table: Any, clue: Any, display: Sequence[int], own: Sequence[int]) -> int:
        """The position of ``display``, not in ``own``, highest in the clue's row (ties: the
        earlier)."""
        row = table[clue]
        return max([i for i in range(len(display)) if i not in own],
                   key=lambda i: row[display[i]])

    @staticmethod
    def categorical(values: Sequence[float], temperature: float, uniform: float,
                    among: Sequence[int] | None = None) -> int:
        if among is None or len(among) == len(values):  # every position
            return categorical_small(values, temperature, uniform)
        return among[categorical_small([values[i] for i in among], temperature, uniform)]

    @staticmethod
    def searchsorted(sorted_rows: np.ndarray, row: int, target: float) -> int:
        """``np.searchsorted(sorted_rows[row], target, side="right")``."""
        return int(np.searchsorted(sorted_rows[row], target, side="right"))

    @staticmethod
    def as_rows(hand: Sequence[int]) -> np.ndarray:
        """The hand as a one-row array, for a kernel written in NumPy only."""
        return np.array([hand], dtype=np.int64)

    @staticmethod
    def from_rows(values: np.ndarray) -> Any:
        return values[0].tolist()


class _LazyRows(dict[int, list[Any]]):
    """The rows of a matrix as lists, each made on first use."""

    def __init__(self, matrix: np.ndarray) -> None:
        super().__init__()
        self.matrix = matrix

    def __missing__(self, row: int) -> list[Any]:
        values = self[row] = self.matrix[row].tolist()
        return values


class ManyGames:
    """Many games' decisions, one row per game, in NumPy. ``among``: an (R, k) mask."""

    name = "many games"

    @staticmethod
    def vector(values: Any) -> np.ndarray:
        return np.asarray(values)

    @staticmethod
    def table(matrix: np.ndarray) -> np.ndarray:
        return np.asarray(matrix)

    @staticmethod
    def lookup(table: np.ndarray, clues: np.ndarray, cards: np.ndarray) -> np.ndarray:
        return table[clues[:, None], cards]

    @staticmethod
    def gather(vector: np.ndarray, cards: np.ndarray) -> np.ndarray:
        return vector[cards]

    at: Callable[[Any, Any], Any] = gather

    @staticmethod
    def pick(hands: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return np.take_along_axis(hands, positions[:, None], axis=1)[:, 0]

    @staticmethod
    def columns(picked: list[np.ndarray]) -> np.ndarray:
        return np.stack(picked, axis=1)

    @staticmethod
    def length(hands: np.ndarray) -> int:
        return int(hands.shape[1])

    @staticmethod
    def everything(hands: np.ndarray) -> np.ndarray:
        return np.ones(hands.shape, dtype=bool)

    @staticmethod
    def others(own: np.ndarray, display: np.ndarray) -> np.ndarray:
        return ~own

    @staticmethod
    def without(among: np.ndarray, positions: np.ndarray) -> np.ndarray:
        among = among.copy()
        among[np.arange(among.shape[0]), positions] = False
        return among

    @staticmethod
    def count(among: np.ndarray) -> np.ndarray:
        return among.sum(axis=1)

    nth = staticmethod(nth_allowed)

    minimum: Callable[[Any, Any], Any] = staticmethod(np.minimum)

    @staticmethod
    def below(uniform: np.ndarray, n: np.ndarray | int) -> np.ndarray:
        return np.minimum((uniform * n).astype(np.int64), np.asarray(n) - 1)

    @classmethod
    def uniform(cls, among: np.ndarray, uniform: np.ndarray) -> np.ndarray:
        return nth_allowed(among, cls.below(uniform, among.sum(axis=1)))

    @classmethod
    def best_card(cls, vector: np.ndarray, hands: np.ndarray) -> np.ndarray:
        return cls.pick(hands, first_max(vector[hands]))

    @classmethod
    def best_cards(cls, table: np.ndarray, clues: np.ndarray, hands: np.ndarray,
                   count: int) -> np.ndarray:
        values = cls.lookup(table, clues, hands)
        if count == 1:
            order = first_max(values)[:, None]
        else:
            order = np.argsort(-values, axis=1, kind="stable")[:, :count]
        return np.take_along_axis(hands, order, axis=1)

    @classmethod
    def best_other(cls, table: np.ndarray, clues: np.ndarray, display: np.ndarray,
                   own: np.ndarray) -> np.ndarray:
        return first_max(cls.lookup(table, clues, display), ~own)

    categorical = staticmethod(categorical_rows)

    @staticmethod
    def searchsorted(sorted_rows: np.ndarray, rows: np.ndarray, targets: np.ndarray
                     ) -> np.ndarray:
        return searchsorted_rows(sorted_rows, rows, targets, side="right")

    @staticmethod
    def as_rows(hands: np.ndarray) -> np.ndarray:
        return hands

    @staticmethod
    def from_rows(values: np.ndarray) -> np.ndarray:
        return values


def without_replacement(on: Backend, hands: Any, n_cards: int, draws: Any,
                        choose: Callable[[Any, Any], Any]) -> Any:
    """``n_cards`` cards of ``hands``, in the order chosen, each at the position
    ``choose(remaining, draws.next())`` picks among the positions not chosen yet."""
    remaining: Any = on.everything(hands)
    if n_cards == 1:  # the usual case: no bookkeeping
        only: list[Any] = [on.pick(hands, choose(remaining, draws.next()))]
        return on.columns(only)
    chosen: list[Any] = []
    for i in range(n_cards):
        position = choose(remaining, draws.next())
        chosen.append(on.pick(hands, position))
        if i + 1 < n_cards:
            remaining = on.without(remaining, position)
    return on.columns(chosen)


#: one game, from its view
ONE: Backend = OneGame()
#: many games at once (the batched engine)
MANY: Backend = ManyGames()

