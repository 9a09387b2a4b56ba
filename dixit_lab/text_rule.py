"""What a clue or a name may hold: the one rule, applied wherever text enters (a person's clue,
a model's, an agent's, a config's names, a clue bank, a deck's captions and card ids) before
anything is written.

A clue or a name is one line of Unicode text:

- valid Unicode only: no lone surrogate (``"\\ud800"``: JSON and YAML escapes can make one,
  but no UTF-8 file can hold it, so saving it fails);
- no line or paragraph separator: none of what ``str.splitlines()`` splits on (``\\n``,
  ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, NEL ``\\x85``, U+2028, U+2029);
- no other control character (Unicode category Cc: C0, DEL, C1) and no format character
  (Cf: right-to-left overrides that make a clue read backwards, invisible marks), except the
  zero-width joiner and non-joiner, which emoji and several scripts need.

Everything else is allowed: accents, any script, emoji, spaces of any width.
:func:`text_problem` says why a text breaks the rule (or None); each boundary raises its own
error with it (the web's ``IllegalMove``, a model's ``ReplyProblem``, a ``ConfigError``, ...).
A clue has at most :data:`CLUE_CHARS` characters, whoever says it (a person, a model, any
agent the engine plays, a clue bank): the one home of that cap.
:func:`safe_message` makes free text that cannot be refused (an agent's error message) safe to
record, cut to :data:`RECORD_MESSAGE_CHARS`; :func:`shown_message` safe to show on a terminal
or in a report.
"""

from __future__ import annotations

import unicodedata

__all__ = ["CLUE_CHARS", "MESSAGE_CHARS", "RECORD_MESSAGE_CHARS", "SURROGATE_NOTE",
           "describe_character", "escaped", "safe_message", "shown_message", "text_problem"]

#: the longest clue, in characters (a word, a phrase, a sentence: not an essay), for every
#: agent: a longer one is illegal (a person is told; an agent's or a model's is a fault, the
#: engine's substitute clue in its place)
CLUE_CHARS = 200
#: the characters of an agent's fault message (its exception's text, a problem with its
#: answer) that a game's record keeps; the rest is cut, the last kept one ``…``
RECORD_MESSAGE_CHARS = 1000

#: Unicode categories a clue or a name may not hold
_REFUSED = {"Cc": "a control character", "Cf": "a format character", "Cs": "a lone surrogate",
            "Zl": "a line separator", "Zp": "a paragraph separator"}
#: format characters that text needs: the zero-width non-joiner and joiner
_JOINERS = frozenset("\u200c\u200d")
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85")
#: why a lone surrogate is refused, said once
SURROGATE_NOTE = ("not Unicode: no file can hold it; an escape such as \\ud800 in JSON or "
                  "YAML makes one")


def text_problem(text: object, allow: str = "") -> str | None:
    """Why ``text`` cannot be a clue or a name (``"a line separator U+2028 (LINE SEPARATOR)
    at character 5"``), or None. ``allow``: characters a boundary accepts because it
    normalises them away (a clue bank collapses the line breaks inside a quoted CSV clue to
    a space)."""
    if not isinstance(text, str):
        return f"not text but {type(text).__name__}"
    if text.isprintable():  # the common case, checked in C: none of the refused categories
        return None
    for position, char in enumerate(text, start=1):
        category = unicodedata.category(char)
        if category in _REFUSED and char not in _JOINERS and char not in allow:
            note = f" ({SURROGATE_NOTE})" if category == "Cs" else ""
            return f"{describe_character(char)} at character {position}{note}"
    return None


def _refused(char: str) -> bool:
    """Whether the rule refuses ``char`` anywhere (every line break is a control character
    or a separator)."""
    return unicodedata.category(char) in _REFUSED and char not in _JOINERS


def describe_character(char: str) -> str:
    """``char`` for a message: ``"a line break U+000A"``, ``"a format character U+202E
    (RIGHT-TO-LEFT OVERRIDE)"``."""
    category = unicodedata.category(char)
    kind = "a line break" if char in _LINE_BREAKS else _REFUSED.get(category, "the character")
    name = unicodedata.name(char, "")
    return f"{kind} U+{ord(char):04X}" + (f" ({name})" if name else "")


def safe_message(text: str, limit: int = RECORD_MESSAGE_CHARS) -> str:
    """``text`` with any lone surrogate written as its escape (``\\ud800``), so that it can be
    saved, cut to ``limit`` characters (the last one ``…``); for messages, which are
    recorded rather than refused."""
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


#: the characters of a message (an agent's error) that a summary keeps and a terminal or a
#: report shows
MESSAGE_CHARS = 200


def shown_message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` for a terminal or a report: each character the rule refuses in a clue (a
    line break, a control or format character, a lone surrogate) written as its escape
    (``\\n``, ``\\x1b``, ``\\u202e``), so that no message moves the cursor, colours the
    terminal or reads backwards; cut to ``limit`` characters, the last one ``…``. The same
    text again gives the same text."""
    text = escaped(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def escaped(text: str) -> str:
    """``text`` with each character the rule refuses in a clue written as its escape
    (``\\n``, ``\\x1b``, ``\\u202e``): nothing in it moves a terminal's cursor, colours it,
    sets its title or its clipboard, or reads backwards."""
    if text.isprintable():  # nothing to escape, checked in C
        return text
    return "".join(repr(char)[1:-1] if _refused(char) else char for char in text)
