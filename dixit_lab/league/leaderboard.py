"""A league folder and its leaderboard: ``league.json`` (the pool version every entrant of the
folder is rated against), ``entrants/<name>/`` (each entry,
:mod:`dixit_lab.league.entry`), and ``leaderboard.csv`` and ``leaderboard.md``, written anew
from the entrants' records and the pool's shipped strengths."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from dixit_lab.atomic import atomic_write_text
from dixit_lab.errors import ConfigError
from dixit_lab.league.entry import ENTRANT_FILE, ENTRANTS, EntrantResult
from dixit_lab.league.pool import Pool, load_pool

__all__ = ["COLUMNS", "LEAGUE_FILE", "leaderboard_rows", "open_league", "write_leaderboard"]

LEAGUE_FILE = "league.json"
COLUMNS = ["rank", "player", "kind", "strength", "ci_low", "ci_high", "games", "spec",
           "stopped", "fault_share", "seconds", "tokens", "cost_usd", "deal_secret"]


def open_league(folder: Path, version: str | None = None) -> Pool:
    """The pool of the league in ``folder``: the one its ``league.json`` names (a different
    ``version`` asked for is refused in one line), or, for a new league, ``version``'s (None:
    the newest), recorded in a new ``league.json``."""
    path = folder / LEAGUE_FILE
    if path.is_file():
        try:
            kept = str(json.loads(path.read_text(encoding="utf-8"))["pool_version"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"{path} is not a league's file ({error})") from None
        if version is not None and str(version) != kept:
            raise ConfigError(f"{folder} is a league against pool {kept}, not {version}: its "
                              f"ratings are on pool {kept}'s scale; choose another folder")
        return load_pool(kept)
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"{folder} is not empty and holds no {LEAGUE_FILE}: not a league "
                          f"folder; choose another")
    pool = load_pool(version)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"pool_version": pool.version, "rules": pool.rules,
                                        "deck": pool.deck, "table_size": pool.table_size},
                                       indent=2) + "\n")
    return pool


def entrants(folder: Path) -> list[EntrantResult]:
    root = folder / ENTRANTS
    if not root.is_dir():
        return []
    return [EntrantResult.read(path) for path in sorted(root.glob(f"*/{ENTRANT_FILE}"))]


def leaderboard_rows(folder: Path, pool: Pool) -> list[dict[str, Any]]:
    """The pool's members and the league's entrants, strongest first."""
    rows: list[dict[str, Any]] = []
    calibration_games = int(pool.calibration.get("games", 0))
    share = (pool.table_size / len(pool.members)) if pool.members else 0.0
    for member in pool.members:
        low, high = pool.intervals[member.name]
        rows.append({"player": member.name, "kind": f"pool {pool.version}",
                     "strength": pool.strengths[member.name], "ci_low": low, "ci_high": high,
                     "games": round(calibration_games * share), "spec": member.spec,
                     "stopped": "", "fault_share": 0.0, "seconds": "", "tokens": "",
                     "cost_usd": "", "deal_secret": ""})
    for entry in entrants(folder):
        rows.append({"player": entry.name,
                     "kind": "entrant" if entry.status == "done" else "entrant (playing)",
                     "strength": entry.strength, "ci_low": entry.ci_low,
                     "ci_high": entry.ci_high, "games": entry.games, "spec": entry.spec,
                     "stopped": entry.stopped, "fault_share": entry.fault_share,
                     "seconds": round(entry.seconds, 1), "tokens": entry.tokens,
                     "cost_usd": round(entry.cost_usd, 6), "deal_secret": entry.deal_secret or ""})
    rows.sort(key=lambda row: (-row["strength"] if math.isfinite(row["strength"]) else
                               math.inf, row["player"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def _number(value: Any) -> str:
    return f"{value:+.3f}" if isinstance(value, float) and math.isfinite(value) else ""


def write_leaderboard(folder: Path, pool: Pool) -> list[dict[str, Any]]:
    """Write ``leaderboard.csv`` and ``leaderboard.md`` of the league in ``folder``."""
    rows = leaderboard_rows(folder, pool)
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: (round(value, 6) if isinstance(value, float) else value)
                         for key, value in row.items()})
    atomic_write_text(folder / "leaderboard.csv", out.getvalue())
    lines = [f"# Leaderboard: reference pool {pool.version}", "",
             f"Rules `{pool.rules}`, deck `{pool.deck}`, {pool.table_size} players a table: "
             f"each entrant plays {pool.table_size - 1} pool members at a time on sealed "
             f"deals. A strength is on the pool's scale (Bradley-Terry log-strength, the "
             f"pool's median member at 0, its members held at their shipped values), so it "
             f"compares across leagues of this pool; the interval is the estimate +- 1.96 "
             f"bootstrap standard deviations over deals.", "",
             "| rank | player | kind | strength | 95% interval | games | stopped | faults | "
             "tokens | cost |",
             "|---:|---|---|---:|---|---:|---|---:|---:|---:|"]
    for row in rows:
        interval = (f"[{_number(row['ci_low'])}, {_number(row['ci_high'])}]"
                    if _number(row["ci_low"]) else "")
        entrant = row["kind"].startswith("entrant")
        faults = f"{row['fault_share']:.1%}" if entrant else ""
        tokens = f"{row['tokens']:,}" if entrant and row["tokens"] else ""
        cost = f"${row['cost_usd']:.4f}" if entrant and row["cost_usd"] else ""
        player = row["player"].replace("|", "\\|")
        lines.append(f"| {row['rank']} | {player} | {row['kind']} | "
                     f"{_number(row['strength'])} | {interval} | {row['games']} | "
                     f"{row['stopped']} | {faults} | {tokens} | {cost} |")
    atomic_write_text(folder / "leaderboard.md", "\n".join(lines) + "\n")
    return rows
