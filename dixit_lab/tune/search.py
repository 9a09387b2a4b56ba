"""``dixit-lab tune``: find the values of one parameter that maximise a metric, or say which
of them the games cannot tell apart.

The candidates are a grid of numbers (floats, or integers for an integer parameter) or a list
of values (a categorical parameter's too), each distinct and finite
(:func:`~dixit_lab.tune.candidates.candidate_values`). The search evaluates them in
rounds ("looks"). Each look plays
``games_per_round`` more games at every candidate still in the race — the same deals for
every candidate, so their differences are not luck of the deal. After each look, every
pair of candidates still in the race is compared **paired by deal** (a paired t test), and a
candidate is dropped when Holm's procedure over all those pairs, at level ``alpha_search /
looks`` (``looks`` the most looks the budget allows: Bonferroni over looks), finds another
candidate better. The search stops when one candidate is left, or when the budget of games
is spent.

The candidates it leaves are the contenders. The **confirmation** plays every contender on
``confirm_games`` fresh deals (another seed), the same deals for each, and compares every
pair paired by deal: each difference with its 95% interval, and Holm's procedure over the
pairs at ``alpha_confirm`` drops the worse member of each pair it separates. The search's
means are biased upwards (the leader is the maximum of noisy means); the confirmation's are
not. ``alpha`` is split between the two steps (half each; all of it to the search without a
confirmation), so the chance of ever dropping a best candidate stays below ``alpha``.

What is left is the verdict: one value is **best**, or several are **tied** — the games do
not separate them, and tune names them all instead of a winner.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.records.batches import batches_of_lines
from dixit_lab.records.integrity import FolderLock
from dixit_lab.run.executors import chunked, get_executor, run_chunks
from dixit_lab.run.experiment import (
    ConfigError,
    ExperimentConfig,
    TuneConfig,
    parse_config,
    set_path,
)
from dixit_lab.stats.catalogue import per_game_metrics, per_game_samples
from dixit_lab.tune.candidates import (
    Candidate,
    alpha_split,
    candidate_values,
    grid_values,
    paired_by_deal,
    search_leader,
    value_text,
)

__all__ = ["METRICS", "Candidate", "alpha_split", "grid_values", "paired_by_deal", "search_leader",
           "tune"]


#: The metrics ``tune`` can maximise: those of the catalogue with a per-game sample.
METRICS: tuple[str, ...] = per_game_metrics()


def _paired_p(a: Candidate, b: Candidate) -> tuple[float, float]:
    """Mean difference ``a - b`` over their common deals and its two-sided paired p-value."""
    result = paired_by_deal(a.by_deal, b.by_deal)
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


def _update_p_values(candidates: Sequence[Candidate]) -> None:
    """Every candidate's paired p-value against the search's leader now, on their common
    deals (a dropped candidate's too); the leader's own is NaN."""
    leader = search_leader(candidates)
    for c in candidates:
        c.p_value = math.nan if c is leader else _paired_p(c, leader)[1]


def _point_config(data: dict[str, Any], parameter: str, value: Any, games: int,
                  source: str) -> ExperimentConfig:
    point = copy.deepcopy(data)
    point.pop("tune", None)
    point.pop("sweep", None)
    point["games"] = games
    set_path(point, parameter, value)
    return parse_config(point, f"{source} (tune {parameter}={value})")


def _candidates(data: dict[str, Any], settings: TuneConfig, source: str,
                log: Callable[[str], None]) -> dict[Any, ExperimentConfig]:
    """Each candidate value's config (the experiment with ``parameter`` set to it), in order;
    refused in one line: a float grid that repeats a value, a float for an integer parameter."""
    values = candidate_values(settings)
    if settings.values is None and settings.kind == "float":
        for i, value in enumerate(values[1:]):
            if value == values[i]:
                raise ConfigError(f"{source}: tune: low {settings.low} and high {settings.high} "
                                  f"are too close for {settings.points} points: the grid gives "
                                  f"{value_text(value)} twice (its values are rounded to 12 "
                                  f"digits)")
    if settings.kind == "int" and len(values) < settings.points:
        log(f"tune: {settings.parameter} takes {len(values)} integers from {values[0]} to "
            f"{values[-1]} ({settings.points} points rounded, each once): "
            f"{', '.join(map(str, values))}")
    configs = {}
    for value in values:
        try:
            configs[value] = _point_config(data, settings.parameter, value,
                                           settings.max_games, source)
        except ConfigError:
            if settings.values is None and settings.kind == "float" and \
                    _takes(data, settings.parameter, round(value), source):
                raise ConfigError(f"{source}: tune: {settings.parameter} takes integers "
                                  f"({value!r} is refused): add kind: int to tune, or list "
                                  f"the candidates in values") from None
            raise
    return configs


def _takes(data: dict[str, Any], parameter: str, value: Any, source: str) -> bool:
    """Whether the experiment is valid with ``parameter`` set to ``value``."""
    try:
        _point_config(data, parameter, value, 1, source)
    except ConfigError:
        return False
    return True


def tune(data: dict[str, Any], source: str, out: str | Path | None = None, *,
         workers: int | None = None, log: Callable[[str], None] = print) -> list[Candidate]:
    """Run the search described by the config's ``tune`` section; write ``tune.csv``,
    ``tune.json`` and ``tune.png`` into the results folder and return the candidates."""

    if not data.get("tune"):
        raise ConfigError(f"{source}: no 'tune' section (parameter, player, metric, and low "
                          f"and high or values)")
    settings = parse_config(data, source).tune  # errors name the field, in one line
    assert settings is not None
    if settings.metric not in METRICS:
        raise ConfigError(f"{source}: tune.metric: unknown metric {settings.metric!r}; "
                          f"allowed: {', '.join(METRICS)}")
    metric = settings.metric
    configs = _candidates(data, settings, source, log)
    values = list(configs)
    first = configs[values[0]]
    if settings.player not in {name for name, _ in first.seats()}:
        raise ConfigError(f"{source}: tune.player: no player named {settings.player!r}; "
                          f"players: {', '.join(sorted({n for n, _ in first.seats()}))}")
    folder = Path(out) if out is not None else first.results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    candidates = [Candidate(v) for v in values]
    # one session for the whole search (e.g. one Ray connection), not one per batch; the
    # folder's lock: one writer of tune.csv, tune.json and tune.png
    with FolderLock(folder, "tune"), \
            get_executor(first.executor.kind).session(first.executor.address, workers):
        _search(settings, metric, configs, first, candidates, folder, workers, log)
    return candidates


def _search(settings: TuneConfig, metric: str,
            configs: dict[Any, ExperimentConfig], first: ExperimentConfig,
            candidates: list[Candidate], folder: Path, workers: int | None,
            log: Callable[[str], None]) -> None:
    from dixit_lab.run.runner import game_specs
    from dixit_lab.tune.report import verdict_line, write_outputs

    specs = game_specs(first)  # the same deals for every candidate
    looks = max(1, math.ceil(settings.max_games / (2 * settings.games_per_round)))
    alpha_search, alpha_confirm = alpha_split(settings)
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
        _eliminate(alive, alpha_search, looks, look)
        _update_p_values(candidates)
        leader = search_leader(candidates)
        still = [c for c in candidates if c.alive]
        log(f"after {start} deals ({played} games): leader {settings.parameter}="
            f"{value_text(leader.value)} ({settings.metric} {leader.mean:.3f} ± "
            f"{leader.half_width:.3f}); "
            f"{len(still)} of {len(candidates)} candidates still in the race")
        write_outputs(folder, settings, candidates, played)
        if len(still) == 1:
            break
    contenders = [c for c in candidates if c.alive]
    confirmed = _confirm(settings, metric, configs, contenders, workers, alpha_confirm, log)
    write_outputs(folder, settings, candidates, played, confirmed)
    log(verdict_line(settings, candidates, confirmed))


def _play(config: ExperimentConfig, first: ExperimentConfig, batch: Sequence[Any],
          metric: str, player: str,
          workers: int | None, offset: int) -> dict[int, float]:
    """The metric of each game of ``batch`` under ``config``, by deal position."""
    from dixit_lab.run.runner import chunk_size_for, table_setup

    setup = table_setup(config)
    size = chunk_size_for(first, setup)
    position = {spec.index: offset + i for i, spec in enumerate(batch)}
    out: dict[int, float] = {}
    for chunk in run_chunks(setup, chunked(batch, size), first.executor.kind, workers,
                            address=first.executor.address):
        played = [(index, line) for index, line in chunk if line]
        lines = [line.encode() + b"\n" for _, line in played]
        indices = np.array([index for index, _ in played], dtype=np.int64)
        for games in batches_of_lines(lines, indices):
            for index, sample in per_game_samples(metric, games, player).items():
                out[position[index]] = sample
    return out


def _confirm(settings: TuneConfig, metric: str,
             configs: dict[Any, ExperimentConfig], contenders: list[Candidate],
             workers: int | None, alpha: float,
             log: Callable[[str], None]) -> dict[str, Any] | None:
    """Every contender on the same ``confirm_games`` deals of a seed derived from the
    experiment's (estimates free of the search's selection), every pair compared paired by
    deal; Holm's procedure at ``alpha`` over the pairs drops the worse member of each pair it
    separates."""
    from dixit_lab.run.runner import game_specs
    from dixit_lab.stats.intervals import holm

    if settings.confirm_games <= 0 or not contenders:
        return None
    base = configs[contenders[0].value]
    seed = int(np.random.SeedSequence([base.seed, 0x636F6E66]).generate_state(1)[0])
    fresh = {c.value: configs[c.value].model_copy(
        update={"seed": seed, "games": settings.confirm_games}) for c in contenders}
    first = fresh[contenders[0].value]
    specs = game_specs(first)
    log(f"confirmation: {len(contenders)} contender(s) on the same {len(specs)} fresh deals "
        f"(seed {seed})")
    for c in contenders:
        c.confirm_by_deal = _play(fresh[c.value], first, specs, metric, settings.player,
                                  workers, offset=0)
    pairs = [(a, b) for i, a in enumerate(contenders) for b in contenders[i + 1:]]
    results = [paired_by_deal(a.confirm_by_deal, b.confirm_by_deal) for a, b in pairs]
    separated = [bool(x) for x in holm([r.p_value for r in results], alpha)] if pairs else []
    differences = []
    for (a, b), result, worse in zip(pairs, results, separated, strict=True):
        if worse:
            loser = b if result.mean > 0 else a
            loser.alive, loser.dropped_in_confirmation = False, True
        differences.append({"a": a.value, "b": b.value, "difference": result.mean,
                            "ci": [result.low, result.high], "p_value": result.p_value,
                            "deals": result.pairs, "separated": bool(worse)})
    return {"deals": len(specs), "games": len(specs) * len(contenders), "seed": seed,
            "alpha": alpha,
            "contenders": [{"value": c.value, "games": len(c.confirm_by_deal),
                            "mean": c.confirmed()[0], "ci": list(c.confirmed()[1:])}
                           for c in contenders],
            "differences": differences}
