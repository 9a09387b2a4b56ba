"""What a server's reply body may be before it is read: bounded in size and depth, then turned
into an *outcome* whose every field has been checked.

A chat-completions body is refused before parsing when it holds more than
:data:`MAX_BODY_BYTES` bytes or nests more than :data:`MAX_DEPTH` levels of arrays and
objects (Python's JSON reader would recurse that deep); once parsed, only the fields the
harness reads are kept, each of the type it must be: the message's text (at most
:data:`MAX_CONTENT_CHARS` characters, the rest cut), the refusal, the finish reason, the model
id the server reports, and the token counts (whole numbers from 0 to :data:`MAX_TOKENS`, never
a boolean). Anything else is a ``backend`` outcome naming what was wrong, never an exception.
So an outcome is small enough to store and the same outcome is read on replay.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

__all__ = ["MAX_BODY_BYTES", "MAX_CONTENT_CHARS", "MAX_DEPTH", "MAX_TOKENS", "json_depth",
           "loads_bounded", "read_completion", "snippet"]

#: the largest reply body read (a chat completion with a short answer is about 1 KB)
MAX_BODY_BYTES = 4_000_000
#: the deepest nesting of arrays and objects parsed (a chat completion nests 4 levels)
MAX_DEPTH = 64
#: the longest message text kept (and parsed, and stored): longer text is cut
MAX_CONTENT_CHARS = 32_000
#: the longest reasoning text kept of a reply (``message.reasoning_content``/``reasoning``)
MAX_REASONING_CHARS = 32_000
#: the largest token count believed
MAX_TOKENS = 100_000_000
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def json_depth(text: str | bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped), computed without
    parsing it; a text that is not JSON gets a number too (its brackets' depth)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"[" not in data and b"{" not in data:
        return 0
    bare = np.frombuffer(_STRING.sub(b"", data), dtype=np.uint8)
    steps = (np.isin(bare, (ord("["), ord("{"))).astype(np.int64)
             - np.isin(bare, (ord("]"), ord("}"))))
    return int(np.cumsum(steps).max(initial=0))


def loads_bounded(text: str | bytes) -> Any:
    """``json.loads`` of a text no deeper than :data:`MAX_DEPTH`; raises ``ValueError`` for a
    text that is not JSON or nests deeper."""
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"nested {depth} levels deep (at most {MAX_DEPTH} are read)")
    try:
        return json.loads(text)
    except RecursionError:  # a belt: the depth was checked
        raise ValueError("nested too deep") from None


def snippet(text: str | bytes, limit: int = 200) -> str:
    """The start of a body, on one line, for a message."""
    if isinstance(text, bytes):
        text = text[:4 * limit].decode("utf-8", "replace")
    flat = " ".join(text.split())
    return flat[:limit] + ("..." if len(flat) > limit else "")


def _failure(message: str, body: bytes) -> dict[str, Any]:
    return {"error": {"kind": "backend",
                      "message": f"not a chat-completions reply ({message}): {snippet(body)}"}}


def _content(value: Any) -> tuple[str | None, str | None]:
    """(the text, what was wrong with it) of a message's content: a string, or a list of
    parts whose string texts are joined (a part whose text is not a string is left out and
    named); cut to :data:`MAX_CONTENT_CHARS`."""
    problem = None
    if isinstance(value, list):
        texts = [part.get("text") for part in value
                 if isinstance(part, dict) and part.get("type", "text") == "text"]
        odd = [text for text in texts if not isinstance(text, str)]
        if odd:
            problem = f"a text part of the content is a {type(odd[0]).__name__}, not text"
        value = "".join(text for text in texts if isinstance(text, str))
    elif value is not None and not isinstance(value, str):
        return None, f"the content is a {type(value).__name__}, not text"
    return (value[:MAX_CONTENT_CHARS] if value is not None else None), problem


def _usage(value: Any) -> tuple[dict[str, int], str | None]:
    """The token counts a server reported, and what was wrong with them (None if nothing)."""
    if value is None:
        return {}, "no usage reported"
    if not isinstance(value, dict):
        return {}, f"usage is a {type(value).__name__}, not token counts"
    counts: dict[str, int] = {}
    problems = []
    for key in ("prompt_tokens", "completion_tokens"):
        count = value.get(key)
        if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= MAX_TOKENS:
            counts[key] = count
        else:
            problems.append(f"{key} is {snippet(json.dumps(count), 40)}")
    details = value.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(reasoning, int) and not isinstance(reasoning, bool) and \
            0 <= reasoning <= MAX_TOKENS:
        counts["reasoning_tokens"] = reasoning  # of the completion's, counted apart
    return counts, "; ".join(problems) or None


def read_completion(body: bytes) -> dict[str, Any]:
    """The outcome of a 200 reply's ``body``: ``message`` (``content``, ``refusal``, and
    ``content_problem`` when the content was not all text),
    ``finish_reason``, ``model`` (the id the server reports), ``usage`` (the valid token
    counts) and, when the counts were missing or not counts, ``usage_problem``; or a
    ``backend`` error naming what the body lacks."""
    if len(body) > MAX_BODY_BYTES:
        return _failure(f"{len(body):,} bytes, more than the {MAX_BODY_BYTES:,} read", body)
    try:
        data = loads_bounded(body)
    except ValueError as error:  # UnicodeDecodeError included
        return _failure(f"not JSON: {error}", body)
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return _failure("no choices[0].message object", body)
    content, problem = _content(message.get("content"))
    refusal = message.get("refusal")
    kept: dict[str, Any] = {} if content is None and "content" not in message else {
        "content": content}
    if problem:  # a chat completion whose text is not text: the model's reply is unusable
        kept["content_problem"] = problem
    if refusal is not None:
        kept["refusal"] = snippet(refusal if isinstance(refusal, str) else json.dumps(refusal),
                                  1000)
    reasoning = next((message[key] for key in ("reasoning_content", "reasoning")
                      if isinstance(message.get(key), str)), None)
    if reasoning:  # a reasoning model's scratchpad, apart from its answer: kept, never parsed
        kept["reasoning"] = reasoning[:MAX_REASONING_CHARS]
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    model = data.get("model")
    usage, usage_problem = _usage(data.get("usage"))
    outcome: dict[str, Any] = {
        "message": kept,
        "finish_reason": finish if isinstance(finish, str) else None,
        "model": model[:200] if isinstance(model, str) else None,
        "usage": usage,
    }
    if usage_problem:
        outcome["usage_problem"] = usage_problem
    return outcome
