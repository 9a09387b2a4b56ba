"""``dixit-lab tune``: find the value of one numeric parameter that maximises a metric.

The search evaluates a grid of candidate values in rounds ("looks"). Each look plays
``games_per_round`` more games at every candidate still in the race — the same deals for
every candidate, so their differences are not luck of the deal. After each look, every
pair of candidates still in the race is compared **paired by deal** (a paired t test), and a
candidate is dropped when Holm's procedure over all those pairs, at level ``alpha / looks``
(``looks`` the most looks the budget allows: Bonferroni over looks), finds another candidate
better: the chance of ever dropping a best candidate stays below ``alpha`` although many
candidates are compared and the data are looked at many times. The search stops when one
candidate is left, or when the budget of games is spent.

The leader's mean over the search is biased upwards (it is the maximum of noisy means), so
the winner is then played on ``confirm_games`` fresh deals (another seed) and that unbiased
estimate is reported next to the search's.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.atomic import atomic_write, atomic_write_text
from dixit_lab.records.format import GameRecord
from dixit_lab.run.executors import chunked, get_executor, run_chunks
from dixit_lab.run.experiment import (
    ConfigError,
    ExperimentConfig,
    TuneConfig,
    parse_config,
    set_path,
)
from dixit_lab.stats.catalogue import per_game_metrics

__all__ = ["METRICS", "Candidate", "grid_values", "tune"]


#: The metrics ``tune`` can maximise: those of the catalogue with a per-game sample.
METRICS: dict[str, Callable[[GameRecord, str], float | None]] = per_game_metrics()


@dataclass
class Candidate:
    """One value of the parameter: its metric per deal played (by deal position), whether it
    is still in the race, and the paired p-value of its last comparison with the leader."""

    value: float
    by_deal: dict[int, float] = field(default_factory=dict)
    alive: bool = True
    p_value: float = math.nan
    dropped_after: int | None = None

    @property
    def samples(self) -> list[float]:
        return list(self.by_deal.values())

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


def _paired_p(a: Candidate, b: Candidate) -> tuple[float, float]:
    """Mean difference ``a - b`` over their common deals and its two-sided paired p-value."""
    from dixit_lab.stats.intervals import paired_difference

    common = sorted(set(a.by_deal) & set(b.by_deal))
    result = paired_difference([a.by_deal[d] for d in common],
                               [b.by_deal[d] for d in common])
    return result.mean, result.p_value


def _eliminate(alive: list[Candidate], alpha: float, looks: int, look: int) -> None:
    """Drop every candidate found worse than another: Holm's procedure over all pairs of the
    candidates still in the race, at level ``alpha / looks``. The family is fixed (every
    pair, not "each against the observed leader", whose selection would bias the tests), so
    the chance of dropping a best candidate at this look is at most ``alpha / looks``."""
    from dixit_lab.stats.intervals import holm

    pairs = [(a, b) for i, a in enumerate(alive) for b in alive[i + 1:]]
    tests = [_paired_p(a, b) for a, b in pairs]
    rejected = holm([p for _, p in tests], alpha / looks)
    leader = max(alive, key=lambda c: c.mean)
    for (a, b), (difference, p), worse in zip(pairs, tests, rejected, strict=True):
        if leader in (a, b):
            (b if a is leader else a).p_value = p
        if worse:
            loser = b if difference > 0 else a
            loser.alive = False
            loser.dropped_after = look


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
    from dixit_lab.run.runner import game_specs

    specs = game_specs(first)  # the same deals for every candidate
    looks = max(1, math.ceil(settings.max_games / (2 * settings.games_per_round)))
    played = start = look = 0
    while start < len(specs):
        alive = [c for c in candidates if c.alive]
        batch = specs[start:start + settings.games_per_round]
        if not batch or (played + len(batch) * len(alive) > settings.max_games and played):
            break
        for candidate in alive:
            candidate.by_deal.update(_play(configs[candidate.value], first, batch, metric,
                                           settings.player, workers, offset=start))
        played += len(batch) * len(alive)
        start += len(batch)
        look += 1
        _eliminate(alive, settings.alpha, looks, look)
        best = max(alive, key=lambda c: c.mean)
        still = [c for c in candidates if c.alive]
        log(f"after {start} deals ({played} games): best {settings.parameter}={best.value:g} "
            f"({settings.metric} {best.mean:.3f} ± {best.half_width:.3f}); "
            f"{len(still)} of {len(candidates)} candidates still in the race")
        _write(folder, settings, candidates, played)
        if len(still) == 1:
            break
    best = max((c for c in candidates if c.alive), key=lambda c: c.mean)
    confirmed = _confirm(settings, metric, configs[best.value], first, workers)
    _write(folder, settings, candidates, played, confirmed)
    if confirmed:
        log(f"confirmed on {confirmed['games']} fresh deals: {settings.parameter}="
            f"{best.value:g} {settings.metric} {confirmed['mean']:.3f} "
            f"[{confirmed['ci'][0]:.3f}, {confirmed['ci'][1]:.3f}] (search: {best.mean:.3f})")


def _play(config: ExperimentConfig, first: ExperimentConfig, batch: Sequence[Any],
          metric: Callable[[GameRecord, str], float | None], player: str,
          workers: int | None, offset: int) -> dict[int, float]:
    """The metric of each game of ``batch`` under ``config``, by deal position."""
    from dixit_lab.run.runner import chunk_size_for, table_setup

    setup = table_setup(config)
    size = chunk_size_for(first, setup)
    position = {spec.index: offset + i for i, spec in enumerate(batch)}
    out: dict[int, float] = {}
    for chunk in run_chunks(setup, chunked(batch, size), first.executor.kind, workers,
                            address=first.executor.address):
        for index, line in chunk:
            sample = metric(GameRecord.from_json(line), player) if line else None
            if sample is not None:
                out[position[index]] = sample
    return out


def _confirm(settings: TuneConfig, metric: Callable[[GameRecord, str], float | None],
             config: ExperimentConfig, first: ExperimentConfig,
             workers: int | None) -> dict[str, Any] | None:
    """The winner on ``confirm_games`` deals of a seed derived from the experiment's: an
    estimate free of the search's selection."""
    from dixit_lab.run.runner import game_specs
    from dixit_lab.stats.metrics import mean_interval

    if settings.confirm_games <= 0:
        return None
    seed = int(np.random.SeedSequence([config.seed, 0x636F6E66]).generate_state(1)[0])
    fresh = config.model_copy(update={"seed": seed, "games": settings.confirm_games})
    samples = list(_play(fresh, first, game_specs(fresh), metric, settings.player, workers,
                         offset=0).values())
    mean, low, high = mean_interval(samples)
    return {"games": len(samples), "seed": seed, "mean": mean, "ci": [low, high]}


def _write(folder: Path, settings: TuneConfig, candidates: list[Candidate], played: int,
           confirmed: dict[str, Any] | None = None) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # mean ± half_width_95 = [ci_low, ci_high]: the 95% normal interval of the mean over
    # games, 1.96 × sd / √games (docs/results.md); p_versus_leader: the paired p-value against
    # the leader on common deals (Holm over all pairs decides the drops)
    writer.writerow(["value", "games", "mean", "half_width_95", "ci_low", "ci_high", "alive",
                     "p_versus_leader", "dropped_after_look"])
    for c in candidates:
        writer.writerow([f"{c.value:g}", len(c.samples), _fixed(c.mean), _fixed(c.half_width),
                         _fixed(c.mean - c.half_width), _fixed(c.mean + c.half_width), c.alive,
                         _fixed(c.p_value), c.dropped_after or ""])
    atomic_write_text(folder / "tune.csv", buffer.getvalue())
    alive = [c for c in candidates if c.alive]
    best = max(alive, key=lambda c: c.mean)
    summary = {"parameter": settings.parameter, "metric": settings.metric,
               "player": settings.player, "games_played": played, "best_value": best.value,
               "best_mean": best.mean, "best_ci": [best.mean - best.half_width,
                                                   best.mean + best.half_width],
               "best_mean_note": "the search's mean of the selected value: biased upwards",
               "alpha": settings.alpha, "still_in_race": [c.value for c in alive]}
    if confirmed:
        summary["confirmed"] = confirmed
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
