"""Markdown for reports: numbers with sensible digits, values with their intervals, tables,
and the small readers of a results folder's YAML and JSON files."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from dixit_lab.errors import ConfigError

__all__ = ["experiment_of", "fmt", "html_text", "is_number", "markdown_table", "pct", "read_json",
           "read_yaml", "separated", "with_ci"]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool) and math.isfinite(float(value))


def fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}"
    return str(value)


def pct(value: Any) -> str:
    if value is None or not is_number(value):
        return "–"
    return f"{100 * float(value):.0f}%"


def with_ci(row: pd.Series, name: str, digits: int = 2, percent: bool = False) -> str:
    show = pct if percent else (lambda v: fmt(v, digits))
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    text = show(row.get(name))
    if is_number(low) and is_number(high):
        text += f" [{show(low)}, {show(high)}]"
    return text


def html_text(text: str) -> str:
    """``text`` with ``&``, ``<`` and ``>`` as entities: shown as written, never as a tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                    right: Sequence[bool] | None = None) -> str:
    def cell(text: str) -> str:  # a player's name is the user's text: it cannot break a row
        return str(text).replace("|", "\\|").replace("\n", " ")

    right = right or [False] * len(header)
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def read_yaml(path: Path) -> dict[str, Any]:
    """A results folder's YAML file as a mapping ({} if absent); a broken file is a
    ``ValueError`` naming it."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
    return data if isinstance(data, dict) else {}


def read_json(path: Path) -> dict[str, Any]:
    """A results folder's JSON file as a mapping ({} if absent); a broken file is a
    ``ValueError`` naming it."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path}: not valid JSON ({error})") from None
    return data if isinstance(data, dict) else {}


def experiment_of(config: dict[str, Any]) -> dict[str, Any]:
    """The experiment section of a results folder's config.yaml (or the config itself)."""
    inner = config.get("experiment")
    return inner if isinstance(inner, dict) else config


def separated(a: pd.Series, b: pd.Series, metric: str) -> bool | None:
    """True if the intervals of ``metric`` for rows a and b do not overlap; None if unknown."""
    values = [a.get(f"{metric}_ci_low"), a.get(f"{metric}_ci_high"),
              b.get(f"{metric}_ci_low"), b.get(f"{metric}_ci_high")]
    if not all(is_number(v) for v in values):
        return None
    a_low, a_high, b_low, b_high = (float(v) for v in values)
    return a_low > b_high or b_low > a_high

