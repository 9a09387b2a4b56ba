"""What the commands share: argument types, checks of output files, the command's clock and
the agent table they print."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path

from dixit_lab.errors import UserError

__all__ = ["at_least", "check_output_file", "non_negative", "open_share", "positive",
           "positive_number", "print_agents", "seconds_since_start", "share"]


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``."""
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, {minimum} or more, "
                                             f"got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value

    return check


positive, non_negative = at_least(1), at_least(0)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0."""
    value = _number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def open_share(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (both "
                                         f"excluded), got {text}")
    return value


def share(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}") \
            from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def check_output_file(path: str, option: str) -> None:
    """Refuse, before any work, an output file that is a folder or lies in a missing one."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{option} {path} is a folder; give a file name")
    if not target.parent.is_dir():
        raise UserError(f"{option} {path}: folder {target.parent} does not exist")


def seconds_since_start() -> float:
    """Seconds since the package was first imported: the whole command but the interpreter's
    own start-up."""
    from dixit_lab._clock import STARTED

    return time.perf_counter() - STARTED


def print_agents(folder: Path) -> None:
    """The main columns of a results folder's ``agents.csv``, as a table on the terminal."""
    import pandas as pd

    path = folder / "agents.csv"
    if not path.is_file():
        return
    table = pd.read_csv(path)
    columns = [c for c in ("player", "games", "win_share", "points_per_game",
                           "storyteller_points_per_turn", "some_found_rate", "all_found_rate",
                           "none_found_rate", "listener_accuracy", "listener_kappa",
                           "own_decision_share") if c in table.columns]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table[columns].round(3).to_string(index=False))
