"""The league's frozen reference pool: a few built-in agents at fixed parameters, weak to
strong, whose strengths are measured once, at release, and shipped, so that an entrant's
rating against them (:mod:`dixit_lab.ratings.anchored`) means the same in every league.

A pool is one file, ``data/league/pool-<version>.json``: its members (name, agent,
parameters), the rules preset, the deck (by name and content fingerprint) and the table size
its games are played at, each member's strength with its interval (median member at 0), and
how they were measured (:func:`calibrate`: every table of distinct members, its deals and
seed). **Versioning**: a version is frozen. Whatever changes a pool game's
record (a member's code or parameters, the rules, the deck, the table size) makes a new
version, never an edit of the old file; ``tests/league/test_pool.py`` plays each shipped
version's calibration again and fails if a strength moves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dixit_lab.bundled import data_path
from dixit_lab.errors import UserError
from dixit_lab.plugins.spec import format_spec

__all__ = ["POOL_FOLDER", "Pool", "PoolMember", "calibrate", "load_pool", "pool_versions"]

#: where the pools are, under the data folder
POOL_FOLDER = "league"


@dataclass(frozen=True)
class PoolMember:
    name: str
    agent: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return format_spec(self.agent, dict(self.params))

    def player(self) -> dict[str, Any]:
        """Its entry in a config's ``players``."""
        return {"name": self.name, "agent": self.agent, "params": dict(self.params)}


@dataclass(frozen=True)
class Pool:
    """A reference pool (see the module docstring); ``strengths`` by member name."""

    version: str
    rules: str
    deck: str
    deck_fingerprint: str
    table_size: int
    members: tuple[PoolMember, ...]
    strengths: Mapping[str, float]
    intervals: Mapping[str, tuple[float, float]]
    calibration: Mapping[str, Any]
    description: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)

    def member(self, name: str) -> PoolMember:
        return next(member for member in self.members if member.name == name)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "description": self.description,
                "rules": self.rules, "deck": self.deck,
                "deck_fingerprint": self.deck_fingerprint, "table_size": self.table_size,
                "members": [{"name": m.name, "agent": m.agent, "params": dict(m.params)}
                            for m in self.members],
                "strengths": dict(self.strengths),
                "intervals": {name: list(pair) for name, pair in self.intervals.items()},
                "calibration": dict(self.calibration)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pool:
        return cls(str(data["version"]), str(data["rules"]), str(data["deck"]),
                   str(data["deck_fingerprint"]), int(data["table_size"]),
                   tuple(PoolMember(m["name"], m["agent"], dict(m.get("params") or {}))
                         for m in data["members"]),
                   {str(k): float(v) for k, v in data["strengths"].items()},
                   {str(k): (float(v[0]), float(v[1])) for k, v in data["intervals"].items()},
                   dict(data.get("calibration") or {}), str(data.get("description", "")))


def _folder() -> Path:
    return data_path(POOL_FOLDER)


def pool_versions() -> list[str]:
    """The shipped pool versions, oldest first."""
    found = [path.stem[len("pool-"):] for path in _folder().glob("pool-*.json")]
    return sorted(found, key=lambda v: (len(v), v))


def load_pool(version: str | None = None) -> Pool:
    """The shipped pool of ``version`` (None: the newest)."""
    versions = pool_versions()
    if not versions:
        raise UserError(f"no reference pool is installed (nothing in {_folder()})")
    chosen = versions[-1] if version is None else str(version)
    if chosen not in versions:
        raise UserError(f"no reference pool of version {chosen!r}; versions: "
                        f"{', '.join(versions)}")
    path = _folder() / f"pool-{chosen}.json"
    return Pool.from_json(json.loads(path.read_text(encoding="utf-8")))


def calibrate(version: str, members: list[PoolMember], *, rules: str, deck: str,
              table_size: int, deals: int, seed: int, out: Path, description: str = "",
              say: Any = None) -> Pool:
    """Measure a pool: every table of ``table_size`` distinct members (a round robin of the
    tables) plays ``deals`` deals, each once per seat (a duplicate schedule), into
    ``out/<n>``; the members' Plackett-Luce strengths over all those games
    (:func:`~dixit_lab.ratings.plackett_luce.plackett_luce`, every pair of seats a
    comparison, its bootstrap interval) are shifted to put the median member at 0. An entrant
    then meets the members in the same company (every set of ``table_size - 1`` of them:
    :func:`~dixit_lab.league.entry.opponent_sets`), and a member entered again meets the
    others only, as here."""
    import itertools

    import numpy as np

    from dixit_lab._version import __version__
    from dixit_lab.core.cards import load_deck
    from dixit_lab.ratings.games import games_from_records
    from dixit_lab.ratings.plackett_luce import plackett_luce
    from dixit_lab.records.files import find_records
    from dixit_lab.records.format import read_jsonl
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    games: list[Any] = []
    tables = list(itertools.combinations(members, table_size))
    for index, table in enumerate(tables):
        config = parse_config({
            "name": f"pool-{version}-table-{index}", "seed": seed + index, "rules": rules,
            "deck": deck, "players": [member.player() for member in table],
            "games": deals * table_size, "schedule": {"kind": "duplicate"},
            "executor": {"kind": "local"}}, f"pool {version}")
        result = run_experiment(config, out / str(index), show_progress=False,
                                write_outputs=False)
        records = find_records(result.folder)
        assert records is not None
        games += games_from_records(read_jsonl(records))
        if say is not None:
            say(f"table {index + 1} of {len(tables)}: {', '.join(m.name for m in table)}")
    fit = plackett_luce(games, seed=seed).set_index("player")
    median = float(np.median(fit["strength"]))

    def shifted(value: float) -> float:
        return round(float(value) - median, 6)

    return Pool(version, rules, deck, load_deck(deck).fingerprint, table_size, tuple(members),
                {m.name: shifted(fit.loc[m.name, "strength"]) for m in members},
                {m.name: (shifted(fit.loc[m.name, "ci_low"]),
                          shifted(fit.loc[m.name, "ci_high"])) for m in members},
                {"tables": len(tables), "deals": deals, "seed": seed, "games": len(games),
                 "dixit_lab_version": __version__}, description)
