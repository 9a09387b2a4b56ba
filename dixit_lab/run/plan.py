"""``dixit-lab plan CONFIG``: what a run will take, from a short pilot, before anything long
starts. The pilot plays the config's first ``pilot`` games (its own seeds and deals: the same
games the run would play first) into a temporary folder, with its tables, and scales what it
measured: an interval narrows as one over the square root of the games, so the width ``w``
measured over ``n`` games becomes ``w * sqrt(n / N)`` over ``N`` games, and a target width
``t`` needs ``n * (w / t)**2`` games; the seconds, tokens and cost of a game are the pilot's.
The pilot's games are not kept (a model seat's pilot calls are spent: it says how many).
A sweep is planned at its first point.

How far to trust it: on the quickstart (5 players, 1,000 games), the widths predicted from a
100-game pilot were 20-40% narrower than the run's own (from a 300-game pilot, 4-25%
narrower; ``random``, far below the rest, the most): the intervals of a few hundred games
are narrower than the square-root law carries to a thousand. Read the games it names as a
floor."""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dixit_lab.errors import ConfigError

__all__ = ["Plan", "PlayerPlan", "plan_run"]


@dataclass(frozen=True)
class PlayerPlan:
    """One player's rating interval: its width over the pilot, predicted over the run, and
    the games a target width needs."""

    player: str
    pilot_width: float
    run_width: float
    games_for_target: int | None


@dataclass(frozen=True)
class Plan:
    pilot_games: int
    run_games: int
    seconds_per_game: float
    tokens_per_game: float
    cost_per_game: float
    players: tuple[PlayerPlan, ...]
    target_width: float | None

    @property
    def run_seconds(self) -> float:
        return self.seconds_per_game * self.run_games

    def lines(self) -> list[str]:
        """The plan as a person reads it."""
        out = [f"pilot: {self.pilot_games} games, {self.seconds_per_game * 1000:.1f} ms a "
               f"game on one worker",
               f"run: {self.run_games:,} games, about {_duration(self.run_seconds)}"
               f" on one worker"]
        if self.tokens_per_game:
            out.append(f"model seats: about {self.tokens_per_game * self.run_games:,.0f} "
                       f"tokens ({self.tokens_per_game:,.0f} a game)"
                       + (f", ${self.cost_per_game * self.run_games:,.4f}"
                          if self.cost_per_game else ", no price given (price_in, "
                          "price_out)"))
        out.append("rating intervals (95%, ratings.csv's strength):")
        for player in self.players:
            need = ""
            if self.target_width is not None and player.games_for_target is not None:
                need = (f"; width {self.target_width} needs about "
                        f"{player.games_for_target:,} games")
            out.append(f"  {player.player}: {player.pilot_width:.3f} wide over the pilot, "
                       f"about {player.run_width:.3f} over the run{need}")
        return out


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_run(data: dict[str, Any], source: str, *, pilot: int = 100,
             target_width: float | None = None) -> Plan:
    """The plan of the config ``data`` (read from ``source``) from a pilot of ``pilot``
    games (see the module docstring)."""
    from dixit_lab.core.recording import recorder_columns
    from dixit_lab.run.experiment import expand_sweep, parse_config
    from dixit_lab.run.runner import run_experiment

    if pilot < 1:
        raise ConfigError(f"the pilot needs at least 1 game, got {pilot}")
    config = (next(iter(expand_sweep(data, source)))[2] if data.get("sweep")
              else parse_config(data, source))
    games = min(pilot, config.games)
    trial = config.model_copy(update={
        "games": games, "out": None,
        "executor": config.executor.model_copy(update={"kind": "local", "workers": None})})
    with tempfile.TemporaryDirectory(prefix="dixit-lab-plan-") as folder:
        started = time.perf_counter()
        run_experiment(trial, Path(folder) / "pilot", show_progress=False)
        seconds = time.perf_counter() - started
        ratings = pd.read_csv(Path(folder) / "pilot" / "ratings.csv", dtype={"player": str},
                              keep_default_na=False, na_values=[""])
        tokens = cost = 0.0
        for frame in recorder_columns(Path(folder) / "pilot"):
            for column, total in (("prompt_tokens", "t"), ("completion_tokens", "t"),
                                  ("cost_usd", "c")):
                if column in frame:
                    value = float(pd.to_numeric(frame[column], errors="coerce").sum())
                    if total == "t":
                        tokens += value
                    else:
                        cost += value
    players = []
    for row in ratings.itertuples():
        width = float(row.ci_high) - float(row.ci_low)
        if not math.isfinite(width):
            continue
        need = (math.ceil(games * (width / target_width) ** 2)
                if target_width is not None and width > 0 else None)
        players.append(PlayerPlan(str(row.player), width,
                                  width * math.sqrt(games / config.games), need))
    return Plan(games, config.games, seconds / games, tokens / games, cost / games,
                tuple(players), target_width)
