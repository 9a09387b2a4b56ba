"""The marked figures of the README and the docs: where a quoted result lives, and what
``docs/figures.json`` says it is.

A figure quoted in prose is marked inline, ``<!--fig:GROUP.NAME-->2.60 [2.55, 2.64]<!--/fig-->``;
a table is a block, ``<!--table:GROUP.NAME-->`` on a line of its own, the table, then
``<!--/table-->``; a command's printed table is ``<!--output:GROUP.NAME-->`` on the line
before a fenced block whose first lines are the command (``$ ...``) and the two lines it
prints first (its timings, a speed figure and not a result, and its folder: left as they
are), the table after them. The marks
render as nothing; the text they mark is the figure's ``text`` in ``docs/figures.json``
(written by ``scripts/figures.py``), byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures.json"
#: the files whose marked figures are the regeneration script's
MARKED = ("README.md", "docs/listener_model.md", "docs/listeners.md", "docs/statistics.md")

INLINE = re.compile(r"<!--fig:(?P<key>[\w.\-]+)-->(?P<text>.*?)<!--/fig-->")
BLOCK = re.compile(r"^<!--table:(?P<key>[\w.\-]+)-->\n(?P<text>.*?)\n<!--/table-->$",
                   flags=re.M | re.S)
OUTPUT = re.compile(r"^(?P<head><!--output:(?P<key>[\w.\-]+)-->\n```\n\$ [^\n]*\n(?:[^\n]*\n){2})"
                    r"(?P<text>.*?)\n```$", flags=re.M | re.S)
KINDS = (INLINE, BLOCK, OUTPUT)


@dataclass(frozen=True)
class Mark:
    """One marked figure or table of a file: its key and the text the file quotes."""

    path: str
    key: str
    text: str
    line: int


def marks(path: str, text: str) -> Iterator[Mark]:
    """Every mark of ``text`` (the contents of ``path``), in order of their start."""
    found = [(m.start(), m) for kind in KINDS for m in kind.finditer(text)]
    for start, match in sorted(found, key=lambda item: item[0]):
        yield Mark(path, match["key"], match["text"], text.count("\n", 0, start) + 1)


def load_figures(path: Path = FIGURES) -> dict[str, Any]:
    """``docs/figures.json`` (empty groups when it does not exist yet)."""
    if not path.is_file():
        return {"groups": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def texts(figures: dict[str, Any]) -> dict[str, str]:
    """Every figure's and table's quoted text by its full key, ``GROUP.NAME``."""
    found = {}
    for group, entry in figures["groups"].items():
        for name, figure in {**entry.get("figures", {}), **entry.get("tables", {})}.items():
            found[f"{group}.{name}"] = figure["text"]
    return found


def differences(figures: dict[str, Any], root: Path = ROOT) -> list[str]:
    """One line per marked figure whose text is not the figures file's (or whose key it
    does not have), naming the file and line."""
    known = texts(figures)
    lines = []
    for name in MARKED:
        for mark in marks(name, (root / name).read_text(encoding="utf-8")):
            if mark.key not in known:
                lines.append(f"{name}:{mark.line}: {mark.key}: not in docs/figures.json")
            elif mark.text != known[mark.key]:
                lines.append(f"{name}:{mark.line}: {mark.key}: the file says {mark.text!r}, "
                             f"the data {known[mark.key]!r}")
    return lines


def rewrite(text: str, known: dict[str, str]) -> str:
    """``text`` with every marked figure whose key ``known`` has replaced by its text."""
    def inline(match: re.Match[str]) -> str:
        key = match["key"]
        return f"<!--fig:{key}-->{known.get(key, match['text'])}<!--/fig-->"

    def block(match: re.Match[str]) -> str:
        key = match["key"]
        return f"<!--table:{key}-->\n{known.get(key, match['text'])}\n<!--/table-->"

    def output(match: re.Match[str]) -> str:
        return f"{match['head']}{known.get(match['key'], match['text'])}\n```"

    return OUTPUT.sub(output, BLOCK.sub(block, INLINE.sub(inline, text)))


def unmarked(text: str) -> str:
    """``text`` without its marked figures (what a test reads for figures nobody marked)."""
    for kind in KINDS:
        text = kind.sub("", text)
    return text


def rewrite_files(figures: dict[str, Any], root: Path = ROOT) -> list[str]:
    """Rewrite the marked figures of every marked file; the files that changed."""
    known = texts(figures)
    changed = []
    for name in MARKED:
        path = root / name
        old = path.read_text(encoding="utf-8")
        new = rewrite(old, known)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed
