"""The shared helpers of ``scripts/figures.py``: the docs' way of writing a figure, and the
shipped configs played into a scratch folder (a folder that already holds a finished run is
reused as it is)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dixit_lab.run.experiment import parse_config, read_yaml_file
from dixit_lab.run.runner import run_experiment, run_sweep

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "experiments"
TELLER = "storyteller"


# -- formatting: the docs' style ----------------------------------------------------------------

def minus(text: str) -> str:
    """The docs' minus sign."""
    return text.replace("-", "−")


def num(value: float, digits: int = 2, signed: bool = False) -> str:
    return minus(f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}")


def with_ci(value: float, low: float, high: float, digits: int = 2,
            signed: bool = False) -> str:
    return (f"{num(value, digits, signed)} [{num(low, digits, signed)}, "
            f"{num(high, digits, signed)}]")


def figure(text: str, value: Any = None, interval: Sequence[float] | None = None,
           **more: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"value": value, "text": text}
    if interval is not None:
        entry["interval"] = [float(x) for x in interval]
    entry.update(more)
    return entry


def ci_figure(value: float, low: float, high: float, digits: int = 2,
              signed: bool = False) -> dict[str, Any]:
    return figure(with_ci(value, low, high, digits, signed), float(value), (low, high))


def number_figure(value: float, digits: int = 2, signed: bool = False) -> dict[str, Any]:
    return figure(num(value, digits, signed), float(value))


def percent_figure(value: float) -> dict[str, Any]:
    return figure(f"{100 * value:.0f}%", float(value))


def range_text(values: Sequence[float], digits: int = 2, signed: bool = False) -> str:
    low, high = min(values), max(values)
    if num(low, digits, signed) == num(high, digits, signed):
        return num(low, digits, signed)
    return f"{num(low, digits, signed)} to {num(high, digits, signed)}"


def range_figure(values: Sequence[float], digits: int = 2, signed: bool = False
                 ) -> dict[str, Any]:
    return figure(range_text(values, digits, signed), [float(min(values)), float(max(values))])


# -- running the shipped configs ----------------------------------------------------------------

def _play(config: Any, folder: Path) -> Path:
    """Play ``config`` into ``folder``, unless the folder already holds its finished run (a
    ``--scratch`` folder given again after an interruption: nothing is played or rewritten)."""
    import yaml

    summary, written = folder / "summary.json", folder / "config.yaml"
    if summary.is_file() and (folder / "agents.csv").is_file() and written.is_file():
        done = json.loads(summary.read_text(encoding="utf-8")).get("games")
        experiment = yaml.safe_load(written.read_text(encoding="utf-8")).get("experiment")
        if done == config.games and experiment == json.loads(json.dumps(config.resolved())):
            return folder
    run_experiment(config, folder, show_progress=False)
    return folder


def run_config(name: str, scratch: Path, seed: int | None = None) -> Path:
    """Play ``experiments/NAME.yaml`` (at ``seed``, else its own) into ``scratch``; the
    results folder (a sweep folder for a config with a sweep)."""
    path = EXPERIMENTS / f"{name}.yaml"
    data = read_yaml_file(path)
    if seed is not None:
        data["seed"] = seed
    out = scratch / f"{name}-{data['seed']}"
    if data.get("sweep"):
        run_sweep(data, str(path), out, show_progress=False)
    else:
        _play(parse_config(data, str(path)), out)
    return out


def run_points(name: str, scratch: Path, seed: int | None = None,
               agents: Sequence[str] | None = None) -> list[tuple[dict[str, Any], Path]]:
    """Play the points of ``experiments/NAME.yaml``'s sweep (at ``seed``, else its own; with
    ``agents``, only the points whose storyteller is one of them: a point's games do not
    depend on the other points) into ``scratch``; (the point's settings, folder) of each."""
    from dixit_lab.run.experiment import expand_sweep

    path = EXPERIMENTS / f"{name}.yaml"
    data = read_yaml_file(path)
    if seed is not None:
        data["seed"] = seed
    out = scratch / f"{name}-{data['seed']}" / "points"
    chosen = []
    for index, settings, config in expand_sweep(data, str(path)):
        if agents is None or teller_agent(settings) in agents:
            chosen.append((settings, _play(config, out / f"{index:03d}")))
    return chosen


def teller_agent(settings: dict[str, Any]) -> str:
    """The storyteller's agent name at a point of a sweep over it."""
    return str(settings["players.0.agent"]).split("(")[0]


def told(name: str, scratch: Path, agents: Sequence[str]) -> list[tuple[str, Path]]:
    """The points of a sweep over the storyteller whose agent is in ``agents``: (the agent's
    name, folder)."""
    return [(teller_agent(settings), folder)
            for settings, folder in run_points(name, scratch, agents=agents)]


def config_seed(name: str) -> int:
    return int(read_yaml_file(EXPERIMENTS / f"{name}.yaml")["seed"])


def teller_row(folder: Path) -> pd.Series:
    agents = pd.read_csv(folder / "agents.csv")
    return agents[agents["player"] == TELLER].iloc[0]
