"""A person's move, checked against the rules before it reaches the engine.

Each check names the rule a move breaks (``rule``) in words a player understands, so that the
page (or a program taking a seat through the API) can say what was wrong; the engine never
sees an illegal human move, so a person's game has no faults.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from dixit_lab.core.agent import Clue, SubmitView, TellView, VoteView
from dixit_lab.core.rules import RuleSet
from dixit_lab.text_rule import CLUE_CHARS, text_problem

__all__ = ["CLUE_LIMIT", "DEPTH_LIMIT", "IllegalMove", "check_move", "read_move"]

CLUE_LIMIT = CLUE_CHARS  # characters of a clue (the one cap: dixit_lab.text_rule)
DEPTH_LIMIT = 8  # levels of nesting of a move's JSON (a move has 2)


class IllegalMove(Exception):
    """A move the seat may not make now: ``status`` is the HTTP status (400 a malformed move,
    409 not this seat's turn or not this action, 422 a move that breaks a rule)."""

    def __init__(self, rule: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.status = status


def read_move(body: bytes) -> Any:
    """The JSON value of a request's body, or :class:`IllegalMove` (400 ``malformed``) for a
    body that is not UTF-8 JSON, nests deeper than :data:`DEPTH_LIMIT` (found before parsing:
    a parser would recurse once a level) or holds a lone surrogate (an escape such as
    ``\\ud800`` makes one; it is not Unicode, and no file or answer could hold it)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise IllegalMove("malformed", "the body must be JSON (UTF-8)", 400) from None
    depth = _depth(text)
    if depth > DEPTH_LIMIT:
        raise IllegalMove("malformed", f"the body nests {depth} levels deep; a move nests at "
                                       f"most {DEPTH_LIMIT}", 400)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer of 4,300+ digits
        raise IllegalMove("malformed", "the body must be JSON", 400) from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        char = error.object[error.start]
        raise IllegalMove("malformed", f"the body holds a lone surrogate \\u{ord(char):04x}: "
                                       f"not Unicode text", 400) from None
    return value


def _depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings are not
    counted)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IllegalMove("malformed", f"{what} must be an integer, got {value!r}", 400)
    return value


def check_clue(text: Any) -> str:
    """The clue as recorded: stripped, at most CLUE_LIMIT characters, and what the project's
    one rule lets a clue hold (:func:`dixit_lab.text_rule.text_problem`: valid Unicode, no line
    or paragraph separator, no control or format character)."""
    if not isinstance(text, str):
        raise IllegalMove("malformed", f"the clue must be a string, got {text!r}", 400)
    text = text.strip()
    if not text:
        raise IllegalMove("clue-empty", "the storyteller must say a clue: it is empty")
    if len(text) > CLUE_LIMIT:
        raise IllegalMove("clue-length", f"a clue has at most {CLUE_LIMIT} characters; this "
                                         f"one has {len(text)}")
    problem = text_problem(text)
    if problem:
        raise IllegalMove("clue-characters", f"a clue is one line of text; this one holds "
                                             f"{problem}")
    return text


def _tell(view: TellView, move: Any) -> Clue:
    if not isinstance(move, dict) or set(move) != {"card", "clue"}:
        raise IllegalMove("malformed", 'tell takes {"card": ID, "clue": TEXT}', 400)
    card = _integer(move["card"], "card")
    text = check_clue(move["clue"])
    if card not in view.hand:
        raise IllegalMove("own-hand", f"the storyteller tells one card of their own hand; card "
                                      f"{card} is not in it")
    return Clue(card, text)


def _submit(view: SubmitView, move: Any) -> list[int]:
    if not isinstance(move, list):
        raise IllegalMove("malformed", "submit takes a list of card IDs", 400)
    cards = [_integer(card, "a card") for card in move]
    if len(cards) != view.n_cards:
        raise IllegalMove("card-count", f"each listener submits exactly {view.n_cards} "
                                        f"card(s); this move has {len(cards)}")
    if len(set(cards)) != len(cards):
        raise IllegalMove("distinct-cards", "the same card cannot be submitted twice")
    for card in cards:
        if card not in view.hand:
            raise IllegalMove("own-hand", f"a listener submits cards of their own hand; card "
                                          f"{card} is not in it")
    return cards


def _vote(view: VoteView, move: Any, barred: Sequence[int]) -> int:
    position = _integer(move, "the vote")
    if not 0 <= position < len(view.display):
        raise IllegalMove("position", f"vote for a displayed position 0..{len(view.display) - 1}"
                                      f"; {position} is not one")
    if position in barred:
        raise IllegalMove("own-card", "a player may never vote for their own card")
    return position


_CHECKS: dict[str, Callable[[Any, Any], Any]] = {"tell": _tell, "submit": _submit}
_KINDS = ("tell", "submit", "vote")


def check_move(action: str, view: Any, body: Any, rules: RuleSet) -> Any:
    """The engine's answer for ``body`` (``{"tell": ...}``, ``{"submit": ...}`` or
    ``{"vote": ...}``) when the seat's pending decision is ``action`` on ``view``, under
    ``rules`` (whose :meth:`~dixit_lab.core.rules.RuleSet.barred_votes` says which displayed
    cards a vote may not take)."""
    if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in _KINDS:
        raise IllegalMove("malformed", 'a move is one of {"tell": {"card": ID, "clue": TEXT}}, '
                                       '{"submit": [IDS]} or {"vote": POSITION}', 400)
    kind, move = next(iter(body.items()))
    if kind != action:
        raise IllegalMove("turn", f"the game waits for this seat to {action}, not to {kind}",
                          409)
    if kind == "vote":
        return _vote(view, move, rules.barred_votes(view.own_positions))
    return _CHECKS[kind](view, move)
