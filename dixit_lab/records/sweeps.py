"""Reading a sweep's results folder: ``sweep.csv`` lists one row per point (its index, the
value of every swept path, and the point's results folder, relative to the sweep folder).
:func:`sweep_points` is the one reader every command uses (``report``, ``show``,
``replay``, ``view``): a damaged table, or a point whose games are gone, is one line naming
the file and line, never a traceback or a sweep read as fewer points."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import NamedTuple

from dixit_lab.errors import ConfigError
from dixit_lab.records.files import RECORD_NAMES, find_records

__all__ = ["SWEEP_TABLE", "SweepPoint", "sweep_points"]

#: the table of a sweep's points, in the sweep folder
SWEEP_TABLE = "sweep.csv"
_AGAIN = "run the sweep's config again (dixit-lab run) to write it anew"


class SweepPoint(NamedTuple):
    point: int
    label: str  # "players.0.params.target=0.2, ..."
    folder: Path


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    """The rows of a CSV file with their line numbers (blank lines left out)."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not a table of sweep points (byte {error.start + 1} is not "
                          f"UTF-8 text): the file is damaged; {_AGAIN}") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows = []
    try:
        for row in reader:
            if row:
                rows.append((reader.line_num, row))
    except csv.Error as error:
        raise ConfigError(f"{path}, line {reader.line_num}: not CSV ({error}): the file is "
                          f"damaged; {_AGAIN}") from None
    return rows


def sweep_points(folder: str | Path) -> list[SweepPoint] | None:
    """The points of the sweep in ``folder``, or None if ``folder`` is not a sweep folder (no
    ``sweep.csv``). A table that is not UTF-8 CSV, lacks the ``point`` or ``folder`` column,
    has a row of another width, a point that is not a number or is there twice, or a point
    whose folder holds no games file is refused (:class:`ConfigError`, naming the line)."""
    root = Path(folder)
    path = root / SWEEP_TABLE
    if not path.is_file():
        return None
    rows = _rows(path)
    if not rows:
        raise ConfigError(f"{path} is empty: it should list the sweep's points; {_AGAIN}")
    (_, header), body = rows[0], rows[1:]
    for name in header:
        if header.count(name) > 1:
            raise ConfigError(f"{path}, line 1: column {name!r} twice; {_AGAIN}")
    missing = [name for name in ("point", "folder") if name not in header]
    if missing:
        raise ConfigError(f"{path}, line 1: no {' or '.join(repr(m) for m in missing)} "
                          f"column (the header is point, the swept paths, folder); {_AGAIN}")
    if not body:
        raise ConfigError(f"{path} lists no points; {_AGAIN}")
    points: list[SweepPoint] = []
    seen: dict[int, int] = {}
    for number, row in body:
        where = f"{path}, line {number}"
        if len(row) != len(header):
            raise ConfigError(f"{where}: {len(row)} fields where the header has "
                              f"{len(header)}; {_AGAIN}")
        values = dict(zip(header, row, strict=True))
        text, place = values.pop("point"), values.pop("folder")
        if not (text.isascii() and text.isdigit()):
            raise ConfigError(f"{where}: point {text!r} is not a point number (0, 1, ...); "
                              f"{_AGAIN}")
        point = int(text)
        if point in seen:
            raise ConfigError(f"{where}: point {point} again (first on line {seen[point]}); "
                              f"{_AGAIN}")
        seen[point] = number
        if not place.strip():
            raise ConfigError(f"{where}: point {point} names no folder; {_AGAIN}")
        sub = root / place
        if find_records(sub) is None:
            raise ConfigError(f"{where}: point {point}'s games are missing ({sub} holds no "
                              f"{' or '.join(RECORD_NAMES)}); run the sweep's config again "
                              f"to play them")
        label = ", ".join(f"{k}={v}" for k, v in values.items())
        points.append(SweepPoint(point, label, sub))
    return points
