"""What a results folder says was run, read from its ``config.yaml``: the experiment as it was
resolved when the games were played (every rule option, each player's canonical spec) and
the deck, by absolute path and content fingerprint (read, as every reader of a folder reads
it, by :mod:`dixit_lab.records.decks`). ``replay`` reads a folder through this module, never
by re-resolving names from the working directory or from the config file the run started
from (which may have been edited, moved or deleted since).

Every problem is a :class:`~dixit_lab.run.experiment.ConfigError` naming ``config.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from dixit_lab.core.rules import RuleSet
from dixit_lab.records.decks import folder_deck, played_spec
from dixit_lab.run.experiment import ConfigError, ExperimentConfig, parse_config, read_yaml_file

__all__ = ["ENGINE_PLAYED", "Played", "played_config", "read_header"]

#: the key that records the engine that played the games and why (``{"engine": "reference",
#: "batched" or "compiled", "why": ...}``), for the report
ENGINE_PLAYED = "engine_played"


def read_header(folder: Path) -> dict[str, Any]:
    """The whole config.yaml of a results folder (``experiment`` and the header around it)."""
    path = folder / "config.yaml"
    if not path.is_file():
        raise ConfigError(f"{path} is missing: is {folder} a results folder?")
    header = read_yaml_file(path, strict=False)  # written by yaml.safe_dump
    if not isinstance(header, dict) or not isinstance(header.get("experiment"), dict):
        raise ConfigError(f"{path}: no 'experiment' section; is {folder} a results folder?")
    return header


def _as_played(experiment: dict[str, Any], path: Path, deck: str) -> dict[str, Any]:
    """The experiment section with the rules and players exactly as resolved for the run."""
    data = dict(experiment)
    rules = data.get("rules")
    resolved = rules.get("resolved") if isinstance(rules, dict) else None
    if not isinstance(resolved, dict) or "name" not in resolved:
        raise ConfigError(f"{path}: rules.resolved is missing: replay needs the rules the "
                          f"games were played with, as dixit-lab run writes them")
    data["rules"] = {"preset": resolved["name"],
                     "options": {k: v for k, v in resolved.items() if k != "name"}}
    players = []
    for index, entry in enumerate(data.get("players") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
            raise ConfigError(f"{path}: players.{index}.spec is missing: replay needs the "
                              f"agent specs the games were played with, as dixit-lab run "
                              f"writes them")
        player = {k: v for k, v in entry.items() if k not in ("spec", "params")}
        player["agent"] = entry["spec"]
        players.append(player)
    data["players"] = players
    data["deck"] = deck
    return data


class Played(NamedTuple):
    """A results folder's experiment as played: its config (whose ``deck`` is the absolute
    spec), the rules, and the agent spec of every seat of the pool."""

    config: ExperimentConfig
    rules: RuleSet
    specs: tuple[str, ...]


def played_config(folder: Path) -> Played:
    """The experiment of the games in ``folder``, as they were played: the rules from
    ``rules.resolved``, the agents from each player's ``spec`` and the deck from
    :data:`DECK_PLAYED`; the players' ``agent`` and ``params`` (what the user wrote) are not
    read again."""
    header = read_header(folder)
    path = folder / "config.yaml"
    folder_deck(folder, header)  # the same cards as then
    spec, _ = played_spec(folder, header)
    data = _as_played(header["experiment"], path, spec)
    config = parse_config(data, str(path))
    resolved = data["rules"]
    try:
        rules = RuleSet(name=resolved["preset"], **resolved["options"])
    except TypeError as error:
        raise ConfigError(f"{path}: rules.resolved: {error}") from None
    specs = tuple(player["agent"] for player in data["players"]
                  for _ in range(int(player.get("count", 1))))
    return Played(config, rules, specs)
