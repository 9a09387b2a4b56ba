"""The reference engine's checks of an agent's answers: what is wrong with a clue, a
submission or a vote (None when it is legal), and how an answer is read as an integer (a
bool is not one). The engine calls them on every answer that is not a recorded failure."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from dixit_lab.core.agent import Clue
from dixit_lab.text_rule import text_problem

__all__ = ["as_int", "submit_problem", "tell_problem", "vote_problem"]


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def tell_problem(clue: Any, hand: list[int]) -> str | None:
    if not isinstance(clue, Clue):
        return f"expected a Clue(card, text), got {clue!r}"
    card = as_int(clue.card)
    if card is None or card not in hand:
        return f"card {clue.card!r} is not in the storyteller's hand {hand}"
    if not isinstance(clue.text, str) or not clue.text.strip():
        return f"the clue text must be a non-empty string, got {clue.text!r}"
    problem = text_problem(clue.text)
    if problem:
        return f"the clue {clue.text!r} is not one line of text: it holds {problem}"
    return None


def submit_problem(cards: Any, hand: list[int], expected: int) -> str | None:
    if type(cards) is list and len(cards) == expected and len(set(cards)) == expected and all(
        type(card) is int and card in hand for card in cards
    ):
        return None  # the common, legal case, checked fast
    if not isinstance(cards, list | tuple):
        return f"expected a list of {expected} card(s), got {cards!r}"
    if len(cards) != expected:
        return f"submitted {len(cards)} card(s), expected {expected}"
    values = [as_int(card) for card in cards]
    for card, value in zip(cards, values, strict=True):
        if value is None or value not in hand:
            return f"card {card!r} is not in the hand {hand}"
    if len(set(values)) != len(values):
        return f"submitted the same card twice: {list(cards)}"
    return None


def vote_problem(vote: Any, n_displayed: int, own: Sequence[int]) -> str | None:
    value = as_int(vote)
    if value is None or not 0 <= value < n_displayed:
        return f"vote {vote!r} is out of range 0..{n_displayed - 1}"
    if value in own:
        return f"voted for its own card (displayed position {value})"
    return None
