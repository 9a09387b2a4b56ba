"""Spec strings: ``name(key=value, ...)`` for agents, embedders and anything else in a registry.

Grammar (whitespace around tokens is ignored)::

    spec   := NAME [ "(" [ param ("," param)* [","] ] ")" ]
    param  := KEY "=" value
    value  := QUOTED | "[" [ value ("," value)* [","] ] "]" | BARE
    NAME   := letter, "_", "." or "/", then letters, digits, "_", "-", ".", ":", "/" or "~"
              (so that an import string such as ``path/to/file.py:Class`` is a name)
    KEY    := a Python identifier

A ``BARE`` word is read as ``None`` (``None``/``none``/``null``), a bool (``true``/``false`` in
any case), an int (``5``, ``-3``, ``1_000``), a float (``0.5``, ``1e-3``, ``inf``, ``nan``) or,
failing those, a string; bare strings may hold ``/``, ``-``, ``.``, ``:``, ``+``, ``@``, ``~``
(``ViT-B-32``, ``hf-hub:org/model``, ``/path/to/ckpt.pt``). Quote a string that holds spaces,
commas, brackets or ``=``, or that would otherwise read as a number/bool/None (``"5"``). Quoted
strings accept Python escapes (``\\"``, ``\\\\``, ``\\n``).

:func:`format_spec` writes the canonical form back; ``parse_spec(format_spec(n, p)) == (n, p)``.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from dixit_lab.errors import UserError

__all__ = ["SpecError", "check_value", "format_spec", "format_value", "parse_assignment",
           "parse_spec", "read_bare", "split_specs", "type_name"]

_NAME = re.compile(r"[A-Za-z_./~][\w\-.:/~]*")
_KEY = re.compile(r"[A-Za-z_]\w*")
_BARE = re.compile(r"[^\s,()\[\]=\"']+")
_INT = re.compile(r"[+-]?\d+(?:_\d+)*")
_FLOAT = re.compile(r"[+-]?(?:(?:\d+(?:_\d+)*)?\.\d+(?:_\d+)*|\d+(?:_\d+)*\.?)(?:[eE][+-]?\d+)?"
                    r"|[+-]?(?:inf|nan)", re.IGNORECASE)
_QUOTED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""", re.S)


class SpecError(UserError, ValueError):
    """A spec string that cannot be parsed. The message shows where."""


#: one thread at a time in ast.literal_eval: model seats are made in a chunk's threads, and
#: CPython 3.11 raised "SystemError: AST constructor recursion depth mismatch" when two
#: parsed quoted spec values at once (seen in CI: the DixitWorld arena's prompt strings)
_AST_LOCK = threading.Lock()

def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name(a=1, b=0.5, c=None, d=true, e=ViT-B/32, f='x y')"`` into a name and a dict
    of Python values (see the module docstring for the grammar)."""
    if not isinstance(text, str):
        raise SpecError(f"a spec must be a string, got {type(text).__name__}")
    return _Parser(text).spec()


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs, keeping the commas inside parentheses:
    ``"softmax(temperature=0.1), literal"`` -> ``["softmax(temperature=0.1)", "literal"]``."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p for p in parts if p]


def parse_assignment(text: str, option: str = "--set") -> tuple[str, Any]:
    """``"key=value"`` as a key and a value read as a spec parameter (``"lone_finder_points=4"``
    -> ``("lone_finder_points", 4)``); ``option`` names what gave it, for the error."""
    if "=" not in text:
        raise SpecError(f"{option} expects key=value, got {text!r}")
    _, values = parse_spec(f"x({text})")
    return next(iter(values.items()))


def format_value(value: Any) -> str:
    """One value in spec syntax: bare where that reads back the same, quoted otherwise."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, str):
        if _BARE.fullmatch(value) and _bare_value(value) == value:
            return value
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"cannot write a {type(value).__name__} in a spec string: {value!r}")


def format_spec(name: str, params: Mapping[str, Any] | None = None) -> str:
    """The canonical spec string ``name(key=value, ...)`` (keys in the given order)."""
    if not _NAME.fullmatch(name):
        raise SpecError(f"bad spec name {name!r}")
    if not params:
        return name
    for key in params:
        if not _KEY.fullmatch(key):
            raise SpecError(f"bad parameter name {key!r}")
    inner = ", ".join(f"{key}={format_value(value)}" for key, value in params.items())
    return f"{name}({inner})"


def read_bare(word: str) -> Any:
    """What a bare word of a spec reads as: None, a bool, an int, a float or the string."""
    return _bare_value(word)


def _bare_value(word: str) -> Any:
    lowered = word.lower()
    if lowered in ("none", "null"):
        return None
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if _INT.fullmatch(word):
        return int(word)
    if _FLOAT.fullmatch(word):
        return float(word)
    return word


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> SpecError:
        caret = " " * self.pos + "^"
        return SpecError(f"{message} at position {self.pos} in spec:\n  {self.text}\n  {caret}")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            raise self.fail(f"expected {char!r}, found {found}")
        self.pos += 1

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        self.skip_space()
        found = pattern.match(self.text, self.pos)
        if not found:
            raise self.fail(f"expected {what}")
        self.pos = found.end()
        return found.group(0)

    def spec(self) -> tuple[str, dict[str, Any]]:
        name = self.match(_NAME, "a name (letters, digits, '_', '-', '.', ':', '/')")
        params: dict[str, Any] = {}
        if self.peek() == "(":
            self.pos += 1
            while self.peek() != ")":
                if not self.peek():
                    raise self.fail("missing ')'")
                start = self.pos
                key = self.match(_KEY, "a parameter name (parameters are key=value; positional "
                                       "values are not allowed)")
                if self.peek() != "=":
                    raise self.fail(f"expected '=' after {key!r} (parameters are key=value; "
                                    "positional values are not allowed)")
                self.pos += 1
                if key in params:
                    self.pos = start
                    raise self.fail(f"parameter {key!r} given twice")
                params[key] = self.value()
                if self.peek() == ",":
                    self.pos += 1
                elif not self.peek():
                    raise self.fail("missing ')'")
                elif self.peek() != ")":
                    raise self.fail("expected ',' or ')' (quote values that hold spaces)")
            self.pos += 1
        if self.peek():
            raise self.fail("unexpected text after the spec")
        return name, params

    def value(self) -> Any:
        char = self.peek()
        if char in ("'", '"'):
            found = _QUOTED.match(self.text, self.pos)
            if not found:
                raise self.fail("unclosed quote")
            self.pos = found.end()
            with _AST_LOCK:  # CPython 3.11's parser is not safe to enter from two threads
                return ast.literal_eval(found.group(0))
        if char == "[":
            self.pos += 1
            items: list[Any] = []
            while self.peek() != "]":
                if not self.peek():
                    raise self.fail("missing ']'")
                items.append(self.value())
                if self.peek() == ",":
                    self.pos += 1
                elif self.peek() != "]":
                    raise self.fail("expected ',' or ']'")
            self.pos += 1
            return items
        return _bare_value(self.match(_BARE, "a value"))


@functools.lru_cache(maxsize=512)
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def check_value(annotation: Any, value: Any) -> Any:
    """``value`` checked against a parameter's type hint, strictly (pydantic's strict mode: no
    string read as a number, no bool for an int; an int is taken for a float, as ``1.0``),
    and finite: ``inf`` and ``nan`` (which the grammar reads) are no parameter's value, in a
    list either. The one checker of agents' and embedders' spec values; raises
    :class:`SpecError` ``must be <type>, got <value>`` or ``must be a finite number, got
    <value>``."""
    if not _finite(value):
        raise SpecError(f"must be a finite number, got {format_value(value)}")
    if annotation is Any:
        return value
    try:
        return _adapter(annotation).validate_python(value, strict=True)
    except ValidationError:
        raise SpecError(f"must be {type_name(annotation)}, got {value!r}") from None


def _finite(value: Any) -> bool:
    """No float in ``value`` (a list, a tuple, a mapping's values) is infinite or NaN."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_finite(item) for item in value)
    if isinstance(value, Mapping):
        return all(_finite(item) for item in value.values())
    return True


def type_name(annotation: Any) -> str:
    """A type hint as a reader writes it: ``float``, ``float | None``, ``Literal['a', 'b']``."""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("NoneType", "None")
