"""A run into a results folder that holds saved games: the games it finds, and what they
must share with the games it would add. The same experiment (the resolved config but the
keys of :data:`IGNORED_FOR_RESUME`), the same deck (by content), the same outside agents'
code (:mod:`dixit_lab.run.provenance`), or the run is refused in one line; another package
version, code or engine resumes only when a sample of the saved games replays byte for byte
the same with it (:func:`check_same_code`). ``--restart`` (:func:`discard_run`) empties the
folder of what a run wrote, and nothing else, to play every game again.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from dixit_lab.core.recording import Recording
from dixit_lab.errors import ConfigError
from dixit_lab.records.compare import line_difference
from dixit_lab.records.decks import DECK_PLAYED
from dixit_lab.records.files import RECORD_NAMES, open_text
from dixit_lab.records.format import game_index
from dixit_lab.records.integrity import check_saved_line
from dixit_lab.records.manifest import MANIFEST_NAME
from dixit_lab.run.deal_secret import SECRET_FILE, run_secret
from dixit_lab.run.experiment import ExperimentConfig
from dixit_lab.run.provenance import (
    AGENTS_PLAYED,
    agent_code_change,
    describe_code,
    played_so_far,
    plays_differently,
)
from dixit_lab.run.tournament import GameSpec, TableSetup, play_chunk

__all__ = ["IGNORED_FOR_RESUME", "RESUME_SAMPLE", "LineCheck", "check_same_agents",
           "check_same_code", "check_same_deck", "check_same_experiment", "discard_run",
           "done_indices", "line_check", "saved_files", "saved_lines"]

#: keys of the resolved config that a resumed run may change: they do not change the games
IGNORED_FOR_RESUME = ("executor", "out", "description", "engine", "records", "min_model_share",
                      "max_fault_share")
#: the saved games, at most, that a run with another version, code or engine replays before
#: it resumes (spread over them: the first, the last and evenly between)
RESUME_SAMPLE = 16

_OFFER = ("choose another --out, or run with --restart to discard them and play every game "
          "again")


def _identity(resolved: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in resolved.items() if k not in IGNORED_FOR_RESUME}


def check_same_experiment(folder: Path, resolved: dict[str, Any]) -> dict[str, Any]:
    """The header of the folder's config.yaml (empty when there is none), refused when it
    holds another experiment."""
    existing = folder / "config.yaml"
    if not existing.exists():
        return {}
    try:
        old = yaml.safe_load(existing.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        raise ConfigError(f"{existing} is not valid YAML; delete the folder or choose "
                          f"another --out") from None
    old_identity = _identity(old.get("experiment", {}))
    new_identity = _identity(resolved)
    if old_identity != new_identity:
        changed = sorted(k for k in set(old_identity) | set(new_identity)
                         if old_identity.get(k) != new_identity.get(k))
        raise ConfigError(f"{folder} holds the results of a different experiment (changed: "
                          f"{', '.join(changed)}); choose another --out, or run with "
                          f"--restart to discard them")
    return old if isinstance(old, dict) else {}


def check_same_deck(folder: Path, old: dict[str, Any], deck: dict[str, str]) -> None:
    """Refuse to resume games saved on another deck than ``deck`` (a deck folder edited
    between the parts of a run): the new games would be played on other cards."""
    played = old.get(DECK_PLAYED)
    if not isinstance(played, dict) or not saved_files(folder):
        return  # nothing saved yet, or a folder written before decks were recorded
    if played.get("fingerprint") != deck["fingerprint"]:
        raise ConfigError(f"{folder / 'config.yaml'}: the deck {played.get('spec')} has "
                          f"changed since its saved games were played (its cards' ids, images "
                          f"or captions differ): the missing games would be played on other "
                          f"cards; restore the deck, or choose another --out")


def check_same_agents(folder: Path, old: dict[str, Any], agents: list[dict[str, Any]]) -> None:
    """Refuse a run into a folder whose saved games were played by other code of an outside
    agent than ``agents`` (:func:`~dixit_lab.run.provenance.agents_played`): naming the
    player and the file."""
    if not saved_files(folder):
        return
    change = agent_code_change(old.get(AGENTS_PLAYED), agents)
    if change is not None:
        raise ConfigError(f"{folder}: {change} since its saved games were played; {_OFFER}")


# -- the saved games ------------------------------------------------------------------------

def saved_files(folder: Path) -> list[Path]:
    """The saved games: a games file of either format and the parts' records."""
    parts = folder / "parts"
    saved = [*sorted(parts.glob("*.jsonl")), *sorted(parts.glob("*.jsonl.zst"))]
    return [p for p in [*(folder / name for name in RECORD_NAMES), *saved] if p.is_file()]


LineCheck = Callable[[str, Path, int], int]


def saved_lines(path: Path, check: LineCheck | None = None) -> Iterator[tuple[int, str]]:
    """(game index, line) of a results file, read line by line; with ``check``, each line is
    checked to be a whole record of this experiment's game of that index."""
    with open_text(path) as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if check is not None:
                yield check(line, path, number), line
                continue
            try:
                yield game_index(line), line
            except ValueError:
                raise ConfigError(f"{path}, line {number}: not a game record of this runner; "
                                  f"delete the file to replay those games") from None


def line_check(config: ExperimentConfig, specs: Sequence[GameSpec], secret: bytes | None
               ) -> LineCheck:
    names = tuple(name for name, _ in config.seats())
    return partial(check_saved_line, specs=specs, names=names, seed=config.seed,
                   secret=secret)


def done_indices(folder: Path, check: LineCheck) -> set[int]:
    """Indices of the games already in games.jsonl or in the parts of an interrupted run,
    each line checked to belong to this experiment."""
    return {index for path in saved_files(folder) for index, _ in saved_lines(path, check)}


def _sample(indices: set[int], size: int) -> list[int]:
    """At most ``size`` of ``indices``: the first, the last and evenly spread between."""
    ordered = sorted(indices)
    if len(ordered) <= size:
        return ordered
    return sorted({ordered[round(k * (len(ordered) - 1) / (size - 1))] for k in range(size)})


# -- another version, code or engine ---------------------------------------------------------

def check_same_code(folder: Path, old: dict[str, Any], now: dict[str, Any],
                    config: ExperimentConfig, setup: TableSetup, specs: Sequence[GameSpec]
                    ) -> list[dict[str, Any]] | None:
    """What played the folder's saved games, with ``now`` (:func:`~dixit_lab.run.provenance.
    what_plays`) last if it plays differently from the last of them (None: nothing saved, or
    the same code). Another version, code or engine first replays up to
    :data:`RESUME_SAMPLE` of the saved games and is refused, in one line, if one differs in
    a byte; the line it prints says how many it checked."""
    if not old or not saved_files(folder):
        return None
    history = played_so_far(old)
    if not plays_differently(history[-1], now):
        return history if len(history) > 1 else None
    secret = run_secret(config, folder)
    done = done_indices(folder, line_check(config, specs, secret))
    sample = _sample(done, RESUME_SAMPLE)
    wanted = set(sample)
    saved = {index: line for path in saved_files(folder) for index, line in saved_lines(path)
             if index in wanted}
    setup = dataclasses.replace(setup, secret=secret)
    setup = dataclasses.replace(setup, recording=Recording.of(  # model replies, people: read
        folder, setup.recorders(), "replay"))
    replayed = dict(play_chunk(setup, [specs[index] for index in sample]))
    differ = [found for index in sample
              if (found := line_difference(index, saved[index], replayed[index])) is not None]
    then = describe_code(history[-1])
    if differ:
        raise ConfigError(f"{folder}: its {len(done):,} saved games were played by {then}, and "
                          f"{describe_code(now)} plays them otherwise ({differ[0]}; "
                          f"{len(differ)} of {len(sample)} replayed games differ); {_OFFER}")
    print(f"{config.name}: {len(done):,} saved games were played by {then}; "
          f"{describe_code(now)} replayed {len(sample)} of them byte for byte the same, so "
          f"they are kept (config.yaml: played_by)", file=sys.stderr)
    return [*history, {**now, "saved_before": len(done), "checked": len(sample)}]


# -- --restart -------------------------------------------------------------------------------

def discard_run(folder: Path) -> None:
    """Remove what a run wrote in ``folder`` (its config.yaml, games, parts, deal secret,
    tables and plots), so that it plays every game again; nothing else (a model agent's
    recorded exchanges stay: a replay of the same request reads them). A folder whose
    config.yaml is not a results folder's is refused."""
    from dixit_lab.report.outputs import OUTPUT_FILES

    header = folder / "config.yaml"
    if header.is_file():
        try:
            data = yaml.safe_load(header.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError):
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("experiment"), dict):
            raise ConfigError(f"{header} is not a results folder's config.yaml: --restart "
                              f"discards only what a run wrote; choose another --out")
    names = ["config.yaml", *RECORD_NAMES, MANIFEST_NAME, "parts", SECRET_FILE, *OUTPUT_FILES]
    for name in names:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    plots = folder / "plots"
    if plots.is_dir() and not any(plots.iterdir()):
        plots.rmdir()
