"""The tables of a results folder: rounds.parquet, agents.csv, ratings.csv, summary.json and
the report, all computed from games.jsonl (so ``dixit-lab report DIR`` can rebuild them)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from dixit_lab.atomic import atomic_write, atomic_write_text
from dixit_lab.results_integrity import read_checked_records

__all__ = ["write_tables"]


def _seed(folder: Path) -> int:
    try:
        header = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8")) or {}
        return int(header.get("experiment", {}).get("seed", 0))
    except (OSError, yaml.YAMLError, ValueError):
        return 0


def write_tables(folder: str | Path, run: Any = None, *, bootstrap: int = 200) -> None:
    """Compute and write every table and the report from ``folder/games.jsonl``.

    ``run`` (a :class:`~dixit_lab.runner.RunResult`) adds timing to summary.json; without it
    the timing of an earlier summary.json is kept.
    """
    from dixit_lab.find_rates import calibration_bins, find_rate_table, turn_predictions
    from dixit_lab.metrics import agent_table, rounds_frame, summary_stats
    from dixit_lab.rating_pairs import rating_pairs
    from dixit_lab.ratings import games_from_records, ratings_table
    from dixit_lab.report import write_report
    from dixit_lab.vlm.usage import add_model_columns

    folder = Path(folder)
    games_path = folder / "games.jsonl"
    if not games_path.is_file():
        raise FileNotFoundError(f"{folder} has no games.jsonl: is it a results folder?")
    records = read_checked_records(games_path)  # whole, consistent, games 0..N-1 once each
    if not records:
        raise ValueError(f"{games_path} holds no games")

    rounds = rounds_frame(records)
    atomic_write(folder / "rounds.parquet", lambda tmp: rounds.to_parquet(tmp, index=False))
    agents = agent_table(records)
    turns = turn_predictions(records)
    agents = agents.merge(find_rate_table(turns), on="player", how="left")
    agents = add_model_columns(agents, records, folder)  # faults by class, tokens, cost
    atomic_write_text(folder / "agents.csv", agents.to_csv(index=False))
    atomic_write_text(folder / "find_calibration.csv",
                      calibration_bins(turns).to_csv(index=False))
    games = games_from_records(records)
    if len({name for players, _ in games for name in players}) > 1:
        ratings = ratings_table(games, bootstrap=bootstrap, seed=_seed(folder))
        atomic_write_text(folder / "ratings.csv", ratings.to_csv(index=False))
        pairs = rating_pairs(games, bootstrap=bootstrap, seed=_seed(folder))
        atomic_write_text(folder / "rating_pairs.csv", pairs.to_csv(index=False))

    summary: dict[str, Any] = {}
    old = folder / "summary.json"
    if old.is_file():
        try:
            summary = json.loads(old.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{old}: not a JSON summary ({error}); delete it and run "
                             f"`dixit-lab report` again") from None
        if not isinstance(summary, dict):
            raise ValueError(f"{old}: not a JSON summary (a {type(summary).__name__}); "
                             f"delete it and run `dixit-lab report` again")
    summary.update(summary_stats(records))
    if run is not None and run.played:  # a rerun that played nothing keeps the old timing
        summary.update({
            "wall_seconds": round(run.wall_seconds, 3),
            "games_played_this_run": run.played,
            "games_per_second": round(run.games_per_second, 1),
            "workers": run.workers,
        })
    buffer = io.StringIO()
    json.dump(summary, buffer, indent=2, sort_keys=True, default=str)
    atomic_write_text(old, buffer.getvalue() + "\n")
    write_report(folder)
