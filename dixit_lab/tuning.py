"""``dixit-lab tune``: find the value of one numeric parameter that maximises a metric.

The search evaluates a grid of candidate values in rounds. Each round plays
``games_per_round`` more games at every candidate still in the race — the same deals for
every candidate, so their differences are not luck of the deal — and computes the metric's
mean with a 95% interval over games. A candidate whose interval lies entirely below the best
candidate's interval is dropped. The search stops when one candidate is left, or when the
budget of games is spent; games are spent only where intervals still overlap.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.atomic import atomic_write, atomic_write_text
from dixit_lab.executors import chunked, get_executor, run_chunks
from dixit_lab.experiment import ConfigError, ExperimentConfig, TuneConfig, parse_config, set_path
from dixit_lab.records import GameRecord, player_names

__all__ = ["METRICS", "Candidate", "grid_values", "tune"]


def _player_seats(record: GameRecord, player: str) -> list[int]:
    names = player_names(record)
    return [seat for seat, name in enumerate(names) if name == player]


def _storyteller_points(record: GameRecord, player: str) -> float | None:
    seats = set(_player_seats(record, player))
    points = [r.points[r.storyteller] for r in record.rounds if r.storyteller in seats]
    return sum(points) / len(points) if points else None


def _points(record: GameRecord, player: str) -> float | None:
    seats = _player_seats(record, player)
    return sum(record.final_scores[s] for s in seats) / len(seats) if seats else None


def _win_share(record: GameRecord, player: str) -> float | None:
    seats = _player_seats(record, player)
    if not seats:
        return None
    return sum(1 / len(record.winners) for s in seats if s in record.winners)


def _some_found(record: GameRecord, player: str) -> float | None:
    seats = set(_player_seats(record, player))
    turns = [r.outcome == "some_found" for r in record.rounds if r.storyteller in seats]
    return sum(turns) / len(turns) if turns else None


METRICS: dict[str, Callable[[GameRecord, str], float | None]] = {
    "storyteller_points_per_turn": _storyteller_points,
    "points_per_game": _points,
    "win_share": _win_share,
    "some_found_rate": _some_found,
}


@dataclass
class Candidate:
    value: float
    samples: list[float] = field(default_factory=list)
    alive: bool = True

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples)) if self.samples else math.nan

    @property
    def half_width(self) -> float:
        if len(self.samples) < 2:
            return math.inf
        return 1.96 * float(np.std(self.samples, ddof=1)) / math.sqrt(len(self.samples))


def grid_values(low: float, high: float, points: int) -> list[float]:
    """``points`` evenly spaced candidates from ``low`` to ``high``, rounded to 12 digits so
    that 0.1 steps give 0.3 and not 0.30000000000000004."""
    return [round(float(v), 12) for v in np.linspace(low, high, points)]


def _point_config(data: dict[str, Any], parameter: str, value: float, games: int,
                  source: str) -> ExperimentConfig:
    point = copy.deepcopy(data)
    point.pop("tune", None)
    point.pop("sweep", None)
    point["games"] = games
    set_path(point, parameter, value)
    return parse_config(point, f"{source} (tune {parameter}={value})")


def tune(data: dict[str, Any], source: str, out: str | Path | None = None, *,
         workers: int | None = None, log: Callable[[str], None] = print) -> list[Candidate]:
    """Run the search described by the config's ``tune`` section; write ``tune.csv``,
    ``tune.json`` and ``tune.png`` into the results folder and return the candidates."""

    if not data.get("tune"):
        raise ConfigError(f"{source}: no 'tune' section (parameter, low, high, player, metric)")
    settings = TuneConfig.model_validate(data["tune"])
    if settings.metric not in METRICS:
        raise ConfigError(f"{source}: tune.metric: unknown metric {settings.metric!r}; "
                          f"allowed: {', '.join(METRICS)}")
    if not settings.low < settings.high:
        raise ConfigError(f"{source}: tune: low ({settings.low}) must be below high "
                          f"({settings.high})")
    metric = METRICS[settings.metric]
    values = grid_values(settings.low, settings.high, settings.points)
    configs = {v: _point_config(data, settings.parameter, v, settings.max_games, source)
               for v in values}
    first = configs[values[0]]
    if settings.player not in {name for name, _ in first.seats()}:
        raise ConfigError(f"{source}: tune.player: no player named {settings.player!r}; "
                          f"players: {', '.join(sorted({n for n, _ in first.seats()}))}")
    folder = Path(out) if out is not None else first.results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    candidates = [Candidate(v) for v in values]
    # one session for the whole search (e.g. one Ray connection), not one per batch
    with get_executor(first.executor.kind).session(first.executor.address, workers):
        _search(settings, metric, configs, first, candidates, folder, workers, log)
    return candidates


def _search(settings: TuneConfig, metric: Callable[[GameRecord, str], float | None],
            configs: dict[float, ExperimentConfig], first: ExperimentConfig,
            candidates: list[Candidate], folder: Path, workers: int | None,
            log: Callable[[str], None]) -> None:
    from dixit_lab.runner import chunk_size_for, game_specs, table_setup

    specs = game_specs(first)  # the same deals for every candidate
    played = start = 0
    while start < len(specs):
        alive = [c for c in candidates if c.alive]
        batch = specs[start:start + settings.games_per_round]
        if not batch or (played + len(batch) * len(alive) > settings.max_games and played):
            break
        for candidate in alive:
            setup = table_setup(configs[candidate.value])
            size = chunk_size_for(first, setup)
            for chunk in run_chunks(setup, chunked(batch, size), first.executor.kind, workers,
                                    address=first.executor.address):
                for _, line in chunk:
                    assert line is not None  # no parts: the lines come back
                    sample = metric(GameRecord.from_json(line), settings.player)
                    if sample is not None:
                        candidate.samples.append(sample)
        played += len(batch) * len(alive)
        start += len(batch)
        best = max(alive, key=lambda c: c.mean)
        for candidate in alive:
            if candidate.mean + candidate.half_width < best.mean - best.half_width:
                candidate.alive = False
        still = [c for c in candidates if c.alive]
        log(f"after {start} deals ({played} games): best {settings.parameter}={best.value:g} "
            f"({settings.metric} {best.mean:.3f} ± {best.half_width:.3f}); "
            f"{len(still)} of {len(candidates)} candidates still in the race")
        _write(folder, settings, candidates, played)
        if len(still) == 1:
            break


def _write(folder: Path, settings: TuneConfig, candidates: list[Candidate], played: int) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # mean ± half_width_95 = [ci_low, ci_high]: the 95% normal interval of the mean over
    # games, 1.96 × sd / √games (docs/results.md)
    writer.writerow(["value", "games", "mean", "half_width_95", "ci_low", "ci_high", "alive"])
    for c in candidates:
        writer.writerow([f"{c.value:g}", len(c.samples), _fixed(c.mean), _fixed(c.half_width),
                         _fixed(c.mean - c.half_width), _fixed(c.mean + c.half_width), c.alive])
    atomic_write_text(folder / "tune.csv", buffer.getvalue())
    alive = [c for c in candidates if c.alive]
    best = max(alive, key=lambda c: c.mean)
    summary = {"parameter": settings.parameter, "metric": settings.metric,
               "player": settings.player, "games_played": played, "best_value": best.value,
               "best_mean": best.mean, "best_ci": [best.mean - best.half_width,
                                                   best.mean + best.half_width],
               "still_in_race": [c.value for c in alive]}
    atomic_write_text(folder / "tune.json", json.dumps(summary, indent=2) + "\n")
    _plot(folder, settings, candidates)


def _fixed(number: float) -> str:
    """Four decimals (the metrics' intervals are wider than 0.001); nan/inf as written."""
    return f"{number:.4f}" if math.isfinite(number) else str(number)


def _plot(folder: Path, settings: TuneConfig, candidates: list[Candidate]) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    xs = [c.value for c in candidates]
    means = [c.mean for c in candidates]
    errors = [c.half_width if math.isfinite(c.half_width) else 0 for c in candidates]
    colors = ["tab:green" if c.alive else "tab:gray" for c in candidates]
    ax.errorbar(xs, means, yerr=errors, fmt="none", ecolor="0.6", capsize=3)
    ax.scatter(xs, means, c=colors, zorder=3)
    ax.plot(xs, means, color="0.7", zorder=1)
    ax.set_xlabel(settings.parameter)
    ax.set_ylabel(f"{settings.metric.replace('_', ' ')}\n({settings.player}: mean, 95% CI)")
    ax.set_title("tuning: green = still in the race, grey = dropped")
    fig.tight_layout()
    atomic_write(folder / "tune.png", lambda tmp: fig.savefig(tmp, format="png", dpi=120))
