"""Reading a sweep's results folder: ``sweep.csv`` lists one row per point (its index, the
value of every swept path, and the point's results folder, relative to the sweep folder)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

__all__ = ["SweepPoint", "sweep_points"]


class SweepPoint(NamedTuple):
    point: int
    label: str  # "players.0.params.target=0.2, ..."
    folder: Path


def sweep_points(folder: str | Path) -> list[SweepPoint] | None:
    """The points of the sweep in ``folder``, or None if ``folder`` is not a sweep folder."""
    path = Path(folder) / "sweep.csv"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    points = []
    for row in rows:
        settings = {k: v for k, v in row.items() if k not in ("point", "folder")}
        label = ", ".join(f"{k}={v}" for k, v in settings.items())
        points.append(SweepPoint(int(row["point"]), label, Path(folder) / row["folder"]))
    return points
