"""The table of docs/listeners.md ("What theory_of_mind knows"), from a run of
``experiments/theory_of_mind_table.yaml``::

    dixit-lab run experiments/theory_of_mind_table.yaml --quiet
    python experiments/theory_of_mind_table.py results/theory_of_mind_table

For every audience (the listener entries of a point) and table size: the storyteller points
per turn of ``theory_of_mind``, of ``pragmatic`` and of the oracle (any other storyteller: a
pragmatic told the listeners' space and temperature), with each point's 95% interval
clustered by game (its ``agents.csv``), and theory_of_mind minus each, paired by game (the
points of one audience and size play the same deals). An audience is *inside* the family when
its listeners are one type of the theory_of_mind storyteller's family, *outside* otherwise.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from dixit_lab.core.agent import make_agent
from dixit_lab.records.sweeps import sweep_points
from dixit_lab.stats.intervals import PairedDifference, paired_difference
from dixit_lab.stats.sweep_pairs import per_game_values

STORYTELLER = "storyteller"
METRIC = "storyteller_points_per_turn"
ROLES = ("theory_of_mind", "pragmatic", "oracle")


@dataclass(frozen=True)
class Point:
    folder: Path
    role: str                                  # one of ROLES
    spec: str                                  # the storyteller's agent spec
    audience: tuple[tuple[str, str, int], ...]  # (name, spec, count) of each listener entry

    @property
    def players(self) -> int:
        return 1 + sum(count for _, _, count in self.audience)

    @property
    def label(self) -> str:
        names = [name for name, _, _ in self.audience]
        return names[0] if len(names) == 1 else "mixed (" + ", ".join(names) + ")"


def _role(spec: str) -> str:
    if spec.split("(")[0] == "theory_of_mind":
        return "theory_of_mind"
    return "pragmatic" if spec == "pragmatic" else "oracle"


def read_points(folder: str | Path) -> list[Point]:
    """Every point of the sweep at ``folder``, read from its resolved config."""
    points = sweep_points(folder)
    if points is None:
        raise SystemExit(f"{folder} is not a sweep folder (no sweep.csv)")
    found = []
    for point in points:
        config = yaml.safe_load((point.folder / "config.yaml").read_text(encoding="utf-8"))
        players = config["experiment"]["players"]
        teller = [p for p in players if p["name"] == STORYTELLER]
        if len(teller) != 1:
            raise SystemExit(f"{point.folder}: expected one player named {STORYTELLER!r}")
        audience = tuple((p["name"], p["spec"], int(p["count"])) for p in players
                         if p["name"] != STORYTELLER)
        found.append(Point(point.folder, _role(teller[0]["spec"]), teller[0]["spec"],
                           audience))
    return found


def inside(tom_spec: str, audience: Sequence[tuple[str, str, int]]) -> bool:
    """Whether every listener is of one type, and that type is in the storyteller's family."""
    kinds = set()
    for _, spec, _ in audience:
        listener: Any = make_agent(spec)
        kinds.add((str(listener.embedder), float(getattr(listener, "temperature", math.nan)),
                   float(listener.noise)))
    storyteller: Any = make_agent(tom_spec)
    family = {(t.embedder, t.temperature, t.noise) for t in storyteller.types}
    return len(kinds) == 1 and kinds <= family


def _mean(point: Point) -> tuple[float, float, float]:
    agents = pd.read_csv(point.folder / "agents.csv")
    row = agents[agents["player"] == STORYTELLER].iloc[0]
    return float(row[METRIC]), float(row[f"{METRIC}_ci_low"]), float(row[f"{METRIC}_ci_high"])


def _difference(a: dict[int, float], b: dict[int, float]) -> PairedDifference:
    games = sorted(set(a) & set(b))
    return paired_difference([a[g] for g in games], [b[g] for g in games])


def table_rows(folder: str | Path) -> list[dict[str, object]]:
    """One row per (audience, table size), in the order of the sweep."""
    groups: dict[tuple[object, ...], dict[str, Point]] = {}
    for point in read_points(folder):
        group = groups.setdefault((point.audience,), {})
        if point.role in group:
            raise SystemExit(f"two {point.role} storytellers for {point.label} at "
                             f"{point.players} players ({point.folder})")
        group[point.role] = point
    rows = []
    for group in groups.values():
        if "theory_of_mind" not in group:
            continue
        tom = group["theory_of_mind"]
        values = {role: per_game_values(p.folder, [STORYTELLER], METRIC)[STORYTELLER]
                  for role, p in group.items()}
        row: dict[str, object] = {
            "audience": tom.label, "players": tom.players,
            "family": "inside" if inside(tom.spec, tom.audience) else "outside",
            "games": len(values["theory_of_mind"]),
            "oracle spec": group["oracle"].spec if "oracle" in group else None}
        for role in ROLES:
            row[role] = _mean(group[role]) if role in group else None
        for role in ROLES[1:]:
            row[f"minus {role}"] = (_difference(values["theory_of_mind"], values[role])
                                    if role in group else None)
        rows.append(row)
    return rows


def _value(cell: Any) -> str:
    if cell is None:
        return "–"
    if isinstance(cell, PairedDifference):  # with the minus sign of the docs' tables
        return f"{cell.mean:+.2f} [{cell.low:+.2f}, {cell.high:+.2f}]".replace("-", "−")
    mean, low, high = cell
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]"


def markdown(rows: Sequence[dict[str, object]]) -> str:
    lines = ["| audience | family | players | games | theory_of_mind | pragmatic | oracle "
             "| ToM − pragmatic | ToM − oracle |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        cells = [str(row["audience"]), str(row["family"]), str(row["players"]),
                 f"{row['games']:,}", *(_value(row[r]) for r in ROLES),
                 _value(row["minus pragmatic"]), _value(row["minus oracle"])]
        lines.append("| " + " | ".join(cells) + " |")
    oracles = list(dict.fromkeys(str(r["oracle spec"]) for r in rows
                                 if r["oracle spec"] is not None))
    lines += ["", "Oracles: " + ", ".join(f"`{o}`" for o in oracles) + "."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the sweep folder of theory_of_mind_table.yaml")
    args = parser.parse_args(argv)
    print(markdown(table_rows(args.folder)))


if __name__ == "__main__":
    main()
