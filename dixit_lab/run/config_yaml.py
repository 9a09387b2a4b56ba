"""YAML for configs, read so that a config means what it says.

PyYAML reads YAML 1.1, whose plain scalars surprise: ``seed: 012`` is the octal 10,
``games: 1:30`` the sexagesimal 90, ``games: yes`` the boolean true (so 1 game), and a key
written twice keeps its last value without a word. :func:`load_yaml` reads a config instead
with the scalars of YAML 1.2's core schema (``true``/``false``, ``null``, decimal, ``0o``
octal and ``0x`` hexadecimal integers, floats such as ``1e-3``, ``.inf``; every other plain
scalar, dates included, is text), and refuses, naming the line:

- a key written twice in one mapping (a merge ``<<:`` may still be overridden);
- a plain scalar that YAML 1.1 and 1.2 read differently: an integer with a leading zero
  (``012``), sexagesimal (``1:30``), ``yes``/``no``/``on``/``off``, binary ``0b101`` and
  numbers with ``_`` (``1_000``). Quoted, each is text.

Results folders' own ``config.yaml`` files, written by ``yaml.safe_dump``, are read back with
``yaml.safe_load`` (the writer's own reader), not here.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from dixit_lab.errors import ConfigError

__all__ = ["load_yaml"]

_YAML11 = "tag:dixit-lab,2026:yaml-1.1-only"
_LINES = re.compile("\r\n|[\n\r\x85\u2028\u2029]")  # YAML's line breaks, for messages


class _Loader(yaml.SafeLoader):
    """A SafeLoader with YAML 1.2 core scalars, refusing duplicate keys and YAML 1.1-only
    scalars (see the module docstring)."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text)
        self.source = source
        self.lines = _LINES.split(text)

    def where(self, node: yaml.Node, quote: bool = False) -> str:
        """``FILE, line N`` of ``node`` (with ``quote``, then the line's text)."""
        number = node.start_mark.line + 1
        text = self.lines[number - 1].strip() if number <= len(self.lines) else ""
        return f"{self.source}, line {number}" + (f": {text!r}" if quote and text else "")

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                if first is not None:
                    raise ConfigError(f"{self.where(key_node)}: {key!r} again (first on line "
                                      f"{first}); a key may appear once in a mapping")
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)  # type: ignore[arg-type]


_Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (  # YAML 1.1-only forms first: they win over the numbers
    (_YAML11,  # booleans, leading zeros, binary, sexagesimal, digits with "_"
     r"yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|[-+]?0[0-9_]+|[-+]?0b[01_]+"
     r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
     r"|[-+]?[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?[0-9]+\.[0-9]*_[0-9_]*(?:[eE][-+]?[0-9]+)?", list("yYnNoO-+0123456789")),
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
    ("tag:yaml.org,2002:int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", list("-+0123456789")),
    ("tag:yaml.org,2002:float",
     r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
     r"|\.(?:nan|NaN|NAN)", list("-+0123456789.")),
    ("tag:yaml.org,2002:merge", r"<<", ["<"]),
):
    _Loader.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), _first)


def _int(loader: _Loader, node: yaml.Node) -> int:
    return int(str(loader.construct_scalar(node)), 0)  # type: ignore[arg-type]


def _float(loader: _Loader, node: yaml.Node) -> float:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if value.lower().lstrip("+-") == ".inf":
        return float("-inf") if value.startswith("-") else float("inf")
    if value.lower() == ".nan":
        return float("nan")
    return float(value)


def _yaml11_only(loader: _Loader, node: yaml.Node) -> Any:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    digits = value.lstrip("+-")
    if value.lower() in ("yes", "no", "on", "off"):
        meant = (f"the boolean {str(value.lower() in ('yes', 'on')).lower()} in YAML 1.1 "
                 f"but text in YAML 1.2: write true or false")
    elif ":" in value:
        meant = "a base-60 number in YAML 1.1 but text in YAML 1.2: write the number"
    elif "_" in value:
        meant = (f"the number {value.replace('_', '')} in YAML 1.1 but text in YAML 1.2: "
                 f"write {value.replace('_', '')}")
    elif digits.startswith("0b"):
        meant = "a binary number in YAML 1.1 but text in YAML 1.2: write it in decimal"
    elif set(digits) <= set("01234567"):
        meant = (f"the octal number {int(digits, 8)} in YAML 1.1 but {int(digits)} in YAML "
                 f"1.2: write {int(digits)} (or 0o{int(digits, 8):o} for the octal)")
    else:
        meant = f"not a number in YAML 1.1 but {int(digits)} in YAML 1.2: write {int(digits)}"
    raise ConfigError(f"{loader.where(node, quote=True)}: {value} is {meant}, or quote it to "
                      f"mean the "
                      f"text {value!r}")


_Loader.add_constructor("tag:yaml.org,2002:int", _int)
_Loader.add_constructor("tag:yaml.org,2002:float", _float)
_Loader.add_constructor(_YAML11, _yaml11_only)


def load_yaml(text: str, source: str) -> Any:
    """The YAML document ``text`` (from ``source``, for messages), read as the module
    docstring says; a problem is a one-line :class:`ConfigError` naming the line."""
    loader = _Loader(text, source)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
