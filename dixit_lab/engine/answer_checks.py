"""The reference engine's checks of an agent's answers: what is wrong with a clue, a
submission or a vote (None when it is legal), and how an answer is read as an integer (a
bool is not one). The engine calls them on every answer that is not a recorded failure.

An answer may be anything (an untrusted child's is any JSON value: nested lists, dicts,
integers of thousands of digits, inf and nan, strings of a megabyte): every check reads it
by type first and never hashes, compares or prints more of it than its type allows, so a
bad answer is a problem (the seat's fault, the engine's substitute move), never an exception
of the engine. A problem's text shows at most :data:`SHOWN_CHARS` characters of the
answer."""

from __future__ import annotations

import operator
import reprlib
from collections.abc import Sequence
from typing import Any

from dixit_lab.core.agent import Clue
from dixit_lab.text_rule import CLUE_CHARS, text_problem

__all__ = ["SHOWN_CHARS", "as_int", "shown", "submit_problem", "tell_problem", "vote_problem"]

#: characters of an answer that a problem's text shows
SHOWN_CHARS = 120
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 8, 8, 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def as_int(value: Any) -> int | None:
    """``value`` as an integer (an int, or what ``operator.index`` takes: a NumPy integer),
    or None (a bool, a float, a string, anything else)."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except Exception:  # (an answer's __index__ may raise anything)
        return None


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value``'s repr for a problem's text: nested and long values abbreviated (``...``),
    an integer of thousands of digits too, at most ``limit`` characters."""
    try:
        text = _REPR.repr(value)
    except Exception:  # (a repr that raises: an int over Python's digit limit)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def tell_problem(clue: Any, hand: list[int]) -> str | None:
    if (type(clue) is Clue and type(told := clue.card) is int and told in hand
            and type(text := clue.text) is str and len(text) <= CLUE_CHARS
            and text.isprintable() and text.strip()):
        return None  # the common, legal case, checked fast (isprintable: text_problem's)
    if not isinstance(clue, Clue):
        return f"expected a Clue(card, text), got {shown(clue)}"
    card = as_int(clue.card)
    if card is None or card not in hand:
        return f"card {shown(clue.card)} is not in the storyteller's hand {hand}"
    text = clue.text
    if not isinstance(text, str) or not text.strip():
        return f"the clue text must be a non-empty string, got {shown(text)}"
    if len(text) > CLUE_CHARS:
        return f"the clue has {len(text)} characters; a clue has at most {CLUE_CHARS}"
    problem = text_problem(text)
    if problem:
        return f"the clue {shown(text)} is not one line of text: it holds {problem}"
    return None


def submit_problem(cards: Any, hand: list[int], expected: int) -> str | None:
    if expected == 1 and type(cards) is list and len(cards) == 1 and type(
            card := cards[0]) is int and card in hand:
        return None  # the common, legal case, checked fast
    if type(cards) is list and len(cards) == expected and all(
        type(card) is int and card in hand for card in cards
    ) and len(set(cards)) == expected:
        return None  # the common, legal case, checked fast
    if not isinstance(cards, list | tuple):
        return f"expected a list of {expected} card(s), got {shown(cards)}"
    if len(cards) != expected:
        return f"submitted {len(cards)} card(s), expected {expected}"
    values = [as_int(card) for card in cards]
    for card, value in zip(cards, values, strict=True):
        if value is None or value not in hand:
            return f"card {shown(card)} is not in the hand {hand}"
    if len(set(values)) != len(values):
        return f"submitted the same card twice: {shown(list(cards))}"
    return None


def vote_problem(vote: Any, n_displayed: int, own: Sequence[int]) -> str | None:
    if type(vote) is int and 0 <= vote < n_displayed and vote not in own:
        return None  # the common, legal case, checked fast
    value = as_int(vote)
    if value is None or not 0 <= value < n_displayed:
        return f"vote {shown(vote)} is out of range 0..{n_displayed - 1}"
    if value in own:
        return f"voted for its own card (displayed position {value})"
    return None
