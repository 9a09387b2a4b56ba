"""Reading a model's reply: strict JSON first, then JSON inside prose or a code fence, then
the legality of the answer. Every problem is a :class:`ReplyProblem` with its fault class:
``unparsable`` (no JSON object with the fields asked for), ``illegal`` (a card that is not
allowed, an empty clue or one that breaks the text rule of :mod:`dixit_lab.text_rule`, the
wrong number of cards) or ``refused`` (the model or the server declined to answer)."""

from __future__ import annotations

import re
from typing import Any

from dixit_lab.text_rule import CLUE_CHARS, text_problem
from dixit_lab.vlm.replies import MAX_CONTENT_CHARS, loads_bounded

__all__ = ["MAX_CLUE", "ReplyProblem", "read_reply"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)  # reasoning models' scratchpad
#: the longest clue accepted (a word, a phrase, a sentence: not an essay; the one cap of
#: every agent, dixit_lab.text_rule.CLUE_CHARS)
MAX_CLUE = CLUE_CHARS
_REFUSAL = re.compile(r"^\W*(i'?m sorry|i am sorry|sorry\b|i can ?not|i can'?t|i won'?t|"
                      r"i am unable|i'm unable|as an ai)", re.I)


class ReplyProblem(ValueError):
    """A reply that cannot be played; ``kind`` is the fault class."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in ``text``: the whole text, code fences, then each balanced ``{...}``."""
    candidates = [text, *_FENCE.findall(text)]
    depth, start = 0, -1
    for index, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                candidates.append(text[start:index + 1])
    found = []
    for candidate in candidates:
        try:  # no deeper than the reply limits allow (a deep text would exhaust the stack)
            value = loads_bounded(candidate.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):  # "3", not "²" or "٣" (digits to Python, not to a reader)
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= 9:
            return int(text)
    return None


def read_reply(outcome: dict[str, Any], action: str, labels: list[int], n_cards: int = 1
               ) -> dict[str, Any]:
    """The answer of a successful exchange as ``{"card": n, "clue": text}`` (tell),
    ``{"cards": [n, ...]}`` (submit) or ``{"card": n}`` (vote), card numbers among
    ``labels``; raises :class:`ReplyProblem`."""
    message = outcome.get("message") or {}
    refusal = message.get("refusal")
    if refusal:
        raise ReplyProblem("refused", f"the model refused: {str(refusal)[:200]}")
    if outcome.get("finish_reason") == "content_filter":
        raise ReplyProblem("refused", "the server's content filter stopped the reply")
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        texts = [part.get("text") for part in content if isinstance(part, dict)]
        content = "".join(text for text in texts if isinstance(text, str))
    if not isinstance(content, str) or not content.strip():
        problem = message.get("content_problem") or (
            "the reply was empty" if content is None or isinstance(content, str)
            else f"the reply's content is a {type(content).__name__}, not text")
        raise ReplyProblem("unparsable", str(problem))
    content = content[:MAX_CONTENT_CHARS]
    content = _THINKING.sub("", content)
    want = "cards" if action == "submit" and n_cards > 1 else "card"
    objects = [o for o in _objects(content) if want in o]
    if not objects:
        if _REFUSAL.match(content):
            raise ReplyProblem("refused", f"the model declined: {content.strip()[:200]!r}")
        cut = (" (cut off at max_tokens: raise it, or ask for a shorter answer)"
               if outcome.get("finish_reason") == "length" else "")
        raise ReplyProblem("unparsable", f"no JSON object with a {want!r} field in the reply "
                                         f"{content.strip()[:200]!r}{cut}")
    answer = objects[0]
    allowed = ", ".join(map(str, labels))
    if want == "cards":
        raw = answer["cards"]
        cards = [_number(c) for c in raw] if isinstance(raw, list) else None
        if cards is None or None in cards:
            raise ReplyProblem("unparsable", f"'cards' must be a list of card numbers, got "
                                             f"{raw!r}")
        if len(cards) != n_cards or len(set(cards)) != n_cards:
            raise ReplyProblem("illegal", f"choose exactly {n_cards} different cards, got "
                                          f"{raw!r}")
        bad = [c for c in cards if c not in labels]
        if bad:
            raise ReplyProblem("illegal", f"card(s) {bad} cannot be chosen; allowed: {allowed}")
        return {"cards": cards}
    card = _number(answer["card"])
    if card is None:
        raise ReplyProblem("unparsable", f"'card' must be a card number, got "
                                         f"{answer['card']!r}")
    if card not in labels:
        raise ReplyProblem("illegal", f"card {card} cannot be chosen; allowed: {allowed}")
    result: dict[str, Any] = {"card": card}
    if action == "tell":
        clue = answer.get("clue")
        if not isinstance(clue, str) or not clue.strip():
            raise ReplyProblem("illegal" if isinstance(clue, str) else "unparsable",
                               f"the clue must be a non-empty string, got {clue!r}")
        result["clue"] = " ".join(clue.split())  # line breaks too: a model's layout
        problem = text_problem(result["clue"])
        if problem:
            raise ReplyProblem("illegal", f"the clue must be one line of text; it holds "
                                          f"{problem}")
        if len(result["clue"]) > MAX_CLUE:
            raise ReplyProblem("illegal", f"the clue has {len(result['clue'])} characters; "
                                          f"give a word, a phrase or a sentence of at most "
                                          f"{MAX_CLUE}")
    return result
