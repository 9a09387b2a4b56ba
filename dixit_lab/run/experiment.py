"""Experiment configs: a validated YAML schema, sweeps over any config path, and tuning.

A config names the rules, the deck, the clue bank, the players (agent specs), the number of
games, the schedule and the executor. ``load_config`` validates it and reports any problem
with the file, the field path and what is allowed. A ``sweep`` section expands a grid over
config paths into sub-runs; a ``tune`` section describes a search for ``dixit-lab tune``.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from dixit_lab.core.agent import AgentSpecError, get_agent_class, make_agent
from dixit_lab.core.cards import DeckError, load_deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.errors import ConfigError, install_hint
from dixit_lab.isolation.trust import Isolation
from dixit_lab.plugins.spec import parse_spec
from dixit_lab.run.config_sections import (
    MAX_CONFIG_NODES,
    MAX_GAMES,
    MAX_SEATS,
    MAX_SWEEP_POINTS,
    ExecutorConfig,
    ModelBudget,
    PlayerEntry,
    RulesConfig,
    ScheduleConfig,
    TuneConfig,
    _one_line,
    _Strict,
)
from dixit_lab.run.config_yaml import load_yaml
from dixit_lab.suggest import did_you_mean
from dixit_lab.text_rule import SURROGATE_NOTE, describe_character

__all__ = [
    "MAX_FAULT_SHARE",
    "ConfigError",
    "ExecutorConfig",
    "ExperimentConfig",
    "PlayerEntry",
    "ScheduleConfig",
    "TuneConfig",
    "expand_sweep",
    "load_config",
    "parse_config",
]


#: the default ``max_fault_share``: a seat whose faults replaced more than one decision in
#: twenty fails the run (the built-in agents never fault; a broken agent's share is far over)
MAX_FAULT_SHARE = 0.05
_QUIET_DEFAULTS = {"model_budget": None, "min_model_share": 0.5,
                   "max_fault_share": MAX_FAULT_SHARE}


class ExperimentConfig(_Strict):
    name: str
    description: str = ""
    seed: int = Field(default=0, ge=0)
    rules: RulesConfig = Field(default_factory=RulesConfig)
    deck: str = "dreams"
    clues: str = "default"
    players: list[PlayerEntry] = Field(min_length=1)
    games: int = Field(ge=1, le=MAX_GAMES)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    on_illegal: Literal["raise", "fallback"] = "fallback"
    #: ``auto`` plays with the batched engine when every agent supports it (same records,
    #: much faster; from 100,000 games the compiled kernel when the ``fast`` extra plays every
    #: agent), ``reference`` forces the one-game-at-a-time engine, ``batched`` insists on the
    #: NumPy batched engine, ``compiled`` on the compiled kernel
    engine: Literal["auto", "reference", "batched", "compiled"] = "auto"
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    #: how the results folder keeps its games: ``games.jsonl.zst`` (Zstandard-compressed JSON
    #: Lines, about a seventh of the bytes) or the plain ``games.jsonl``
    records: Literal["jsonl.zst", "jsonl"] = "jsonl.zst"
    out: str | None = None
    #: the deals' secret (32 hex digits), pinned: a competition published later reproduces
    #: from it. Without it, a run with an untrusted seat draws a secret from the OS and keeps
    #: it in its results folder (docs/security.md)
    deal_secret: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{32}$")
    sweep: dict[str, list[Any]] | None = None
    tune: TuneConfig | None = None
    #: what the model seats of the run may spend together (docs/vlm.md, Budgets)
    model_budget: ModelBudget | None = None
    #: the least share of its decisions a model seat must make itself (the rest are its
    #: faults' fallbacks) for the run to pass; 0 turns the check off. A model seat's
    #: replies fail now and then (unparsable, refused, a server's error), so it has this
    #: limit of its own instead of ``max_fault_share``
    min_model_share: float = Field(default=0.5, ge=0, le=1)
    #: the largest share of a seat's decisions (not a model's: ``min_model_share``) that its
    #: faults may have replaced for the run to pass; over it the run fails once every
    #: result is written, naming the seat; 1 accepts any
    max_fault_share: float = Field(default=MAX_FAULT_SHARE, ge=0, le=1)

    @field_validator("name")
    @classmethod
    def _a_folder_name(cls, value: str) -> str:
        """The name is the results folder's (``results/<name>``): one line of text, and a
        single folder name, so that it cannot lead outside ``results``."""
        _one_line(value)
        if value.strip() in ("", ".", "..") or any(sep in value for sep in ("/", "\\")):
            raise ValueError(f"{value!r} cannot name a results folder (results/<name>): give "
                             f"a name without '/', '\\' and not '.' or '..'; to write "
                             f"elsewhere, use out: or --out")
        return value

    @field_validator("clues")
    @classmethod
    def _no_top_level_clues(cls, value: str) -> str:
        if value != "default":
            raise ValueError("a top-level clue bank is not used by any agent; give each "
                             "player its bank in its params (params: {clues: " + repr(value)
                             + "}) and remove this field")
        return value

    @field_validator("rules", mode="before")
    @classmethod
    def _rules_shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"preset": value}
        return value

    @field_validator("players", mode="before")
    @classmethod
    def _player_shorthand(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"agent": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _bounded_pool(self) -> ExperimentConfig:
        seats = sum(player.count for player in self.players)  # before any seat is made
        if seats > MAX_SEATS:
            raise ValueError(f"the players fill {seats:,} seats (count included); at most "
                             f"{MAX_SEATS:,}")
        return self

    # -- derived --------------------------------------------------------------------------

    def seats(self) -> list[tuple[str, str]]:
        """(name, spec) of every seat of the pool, players expanded by ``count`` (each
        player's spec made once)."""
        seats: list[tuple[str, str]] = []
        for player in self.players:
            spec = player.spec()
            seats.extend([(player.name or spec, spec)] * player.count)
        return seats

    def public_names(self) -> tuple[str, ...]:
        """The name each seat of the pool (as :meth:`seats`) is known by at the table: the
        player's ``name``, else ``player <k>`` (its place in ``players``, from 1). Never its
        spec: how a player thinks is not public (its display name, in the tables, may be)."""
        return tuple(p.name or f"player {index + 1}" for index, p in enumerate(self.players)
                     for _ in range(p.count))

    def isolation(self) -> tuple[Isolation, ...]:
        """How every seat of the pool is run, as :meth:`seats`."""
        return tuple(p.seat_isolation() for p in self.players for _ in range(p.count))

    @property
    def table_size(self) -> int:
        return self.schedule.table_size or len(self.seats())

    def rule_set(self) -> RuleSet:
        return self.rules.build()

    def results_dir(self, base: Path | None = None) -> Path:
        if self.out:
            return Path(self.out)
        return (base or Path("results")) / self.name

    def resolved(self) -> dict[str, Any]:
        """The config with every default filled in and agent specs canonical."""
        data = self.model_dump(mode="json")
        data.pop("deal_secret")  # never written out: the results folder keeps it apart
        for entry, player in zip(data["players"], self.players, strict=True):
            entry["spec"] = player.spec()
            entry["name"] = player.display_name()
            for option, default in _LATER_PLAYER_OPTIONS.items():
                if entry.get(option) == default:
                    del entry[option]  # config.yaml as before the option existed
        data["rules"]["resolved"] = self.rule_set().options()
        for option, default in _LATER_TUNE_OPTIONS.items():
            if data["tune"] and data["tune"].get(option) == default:
                del data["tune"][option]  # as before tune searched ints and lists
        for key, default in _QUIET_DEFAULTS.items():
            if data.get(key) == default:
                del data[key]
        return data


#: player options added since results folders were first written, left out of config.yaml at
#: their defaults (a folder written before them still resumes)
_LATER_PLAYER_OPTIONS: dict[str, Any] = {"limits": None, "trusted_to_forget": False, "files": [],
                                         "pace": None}
#: the same for the tune section's
_LATER_TUNE_OPTIONS: dict[str, Any] = {"kind": "float", "values": None}


def _format_location(location: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in location) or "(top level)"


def parse_config(data: Any, source: str = "<config>") -> ExperimentConfig:
    """Validate a config dict; errors name ``source``, the field path and what is allowed."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config must be a mapping of fields, got "
                          f"{type(data).__name__}")
    check_size(data, source)
    check_unicode(data, source)
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            path = _format_location(problem["loc"])
            message = problem["msg"]
            if problem["type"] == "value_error":  # a validator's own words
                message = str(problem.get("ctx", {}).get("error", message))
            if problem["type"] == "extra_forbidden":
                parent = problem["loc"][:-1]
                model = _model_at(parent)
                allowed = ", ".join(model.model_fields) if model else "see the docs"
                hint = did_you_mean(problem["loc"][-1], model.model_fields) if model else ""
                message = f"unknown field{hint}; allowed fields here: {allowed}"
            lines.append(f"{source}: {path}: {message}")
        raise ConfigError("\n".join(lines)) from None
    _check_semantics(config, source)
    return config


def _model_at(location: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = ExperimentConfig
    for part in location:
        if isinstance(part, int) or model is None:
            continue
        annotation = model.model_fields[part].annotation if part in model.model_fields else None
        model = _first_model(annotation)
    return model


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _first_model(arg)
        if found:
            return found
    return None


def _check_semantics(config: ExperimentConfig, source: str) -> None:
    try:
        rules = config.rule_set()
    except ValueError as error:
        raise ConfigError(f"{source}: rules: {error}") from None
    for index, player in enumerate(config.players):
        try:
            player.spec()
        except (AgentSpecError, ValueError, OSError) as error:  # OSError: a missing file
            raise ConfigError(f"{source}: players.{index}.agent: {error}") from None
    names: dict[str, str] = {}
    for index, player in enumerate(config.players):
        name, spec = player.display_name(), player.spec()
        if names.get(name, spec) != spec:
            raise ConfigError(f"{source}: players.{index}.name: {name!r} already names another "
                              f"agent ({names[name]}); give each player a distinct name")
        names[name] = spec
    pool = len(config.seats())
    size = config.table_size
    try:
        rules.check_players(size)
    except ValueError as error:
        raise ConfigError(f"{source}: schedule.table_size: {error}") from None
    if config.schedule.kind in ("rotation", "duplicate") and pool != size:
        raise ConfigError(f"{source}: schedule: a {config.schedule.kind} schedule seats the "
                          f"whole pool at every game, but the players fill {pool} seats and "
                          f"table_size is {size}; use kind: sampled for a larger pool")
    if config.schedule.kind == "sampled" and pool < size:
        raise ConfigError(f"{source}: schedule.table_size: {size} seats but the players fill "
                          f"only {pool}")
    if config.schedule.kind == "sampled" and rules.first_storyteller == "first_player":
        raise ConfigError(f"{source}: rules: first_storyteller: first_player needs the first "
                          f"player at every table, which a sampled schedule does not promise; "
                          f"use a rotation or duplicate schedule, or first_storyteller: seat0 "
                          f"or random")
    try:
        deck = load_deck(config.deck)
        deck.check_playable(size, rules.hand_size_for(size), rules.displayed_cards(size))
    except DeckError as error:
        raise ConfigError(f"{source}: deck: {error}") from None
    if config.engine in ("batched", "compiled"):  # refused before a results folder exists
        from dixit_lab.run.tournament import table_setup

        try:
            table_setup(config).engine_plan()
        except ValueError as error:
            raise ConfigError(f"{source}: engine: {error}") from None
    _check_tables(config, rules, size, source)
    _check_free_text(config, source)
    if not deck.has_images:
        from dixit_lab.isolation.seats import seat_info

        for index, player in enumerate(config.players):
            try:
                info = seat_info(player.spec(), player.seat_isolation(), config.deck)
            except AgentSpecError as error:  # e.g. a recorder that is not a name
                raise ConfigError(f"{source}: players.{index}.agent: {error}") from None
            if info.needs_card_images:
                raise ConfigError(f"{source}: players.{index}.agent: {player.spec()} "
                                  f"perceives card images, but deck {config.deck!r} has "
                                  f"none; use an image deck such as 'dreams'")


#: the extra that installs each source of free text (each brings the sentence encoder too)
_SOURCE_EXTRAS = {"human": "web", "vlm": "vlm", "llm": "vlm"}


def _own_agent(agent: str) -> bool:
    """Whether ``agent`` names one of this project's built-in agents: code the engine trusts,
    which it may build to check it even for an untrusted seat (never an outside agent's)."""
    from dixit_lab.core.agent import AGENTS
    from dixit_lab.plugins.code_files import is_own_module
    from dixit_lab.plugins.imports import is_import_string

    name = parse_spec(agent)[0]
    if is_import_string(name):
        return False
    return is_own_module(AGENTS.origin(name) or "")


def _check_tables(config: ExperimentConfig, rules: RuleSet, size: int, source: str) -> None:
    """Refuse a player whose agent cannot play at the config's tables (its class's
    ``table_problem``: a model storyteller where listeners put three cards down), naming it.
    An outside untrusted agent's class is never imported here."""
    for index, player in enumerate(config.players):
        if player.isolation != "none" and not _own_agent(player.agent):
            continue
        problem = get_agent_class(parse_spec(player.agent)[0]).table_problem(rules, size)
        if problem is not None:
            raise ConfigError(f"{source}: players.{index}.agent: {player.display_name()} "
                              f"cannot play here: {problem}")


def _check_free_text(config: ExperimentConfig, source: str) -> None:
    """Refuse a config in which players who write free text (people, model agents) sit with
    players who could not perceive it here (their embedder's text model is not installed),
    naming both and the extra to install. Untrusted players (``process``, ``sandbox``) are
    built here only when they are the project's own agents (a ``dixit-lab play`` table seats
    the built-ins in sandboxes): an outside agent's code is never imported here, and what it
    cannot perceive is counted when the games are played."""
    present = [index for index, player in enumerate(config.players)
               if player.isolation == "none" or _own_agent(player.agent)]
    writers = [i for i in present
               if get_agent_class(parse_spec(config.players[i].agent)[0]).writes_free_text]
    if not writers:
        return
    deaf = []
    for index in present:
        check = getattr(make_agent(config.players[index].spec()), "clue_perception_problem",
                        None)
        problem = check() if callable(check) else None
        if problem is not None:
            deaf.append((index, problem))
    if not deaf:
        return
    names = [f"players.{i} ({config.players[i].display_name()})" for i in writers]
    kinds = {parse_spec(config.players[i].agent)[0] for i in writers}
    what, extra = deaf[0][1]
    if extra == "offline":  # the sentence encoder: the extra of the free text's source has it
        extra = ",".join(sorted({_SOURCE_EXTRAS.get(kind, "offline") for kind in kinds}))
    listeners = ", ".join(f"players.{i} ({config.players[i].display_name()})" for i, _ in deaf)
    raise ConfigError(f"{source}: players: {', '.join(names)} write free-text clues, which "
                      f"{listeners} cannot perceive here: {what}; install it with "
                      f"{install_hint(extra, torch=True)}, or seat listeners that can")


def check_size(data: Any, source: str) -> None:
    """Raise :class:`ConfigError` if ``data`` holds more than :data:`MAX_CONFIG_NODES`
    values once YAML aliases are expanded (a "billion laughs" file is a few lines long). The
    walk stops as soon as the bound is passed, so it is quick whatever the file."""
    budget = MAX_CONFIG_NODES
    stack = [data]
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            raise ConfigError(f"{source}: the config holds more than {MAX_CONFIG_NODES:,} "
                              f"values once its YAML aliases are expanded; write it out")
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)


def check_unicode(data: Any, source: str) -> None:
    """Raise :class:`ConfigError` naming the field if a text of the config (a key or a value)
    holds a lone surrogate: a YAML or JSON escape (``"\\ud800"``) makes one, no file can hold
    it, and saving the config or a record would fail after the games were played."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{key}" if path else str(key)
                stack.append((where, key) if isinstance(key, str) else ("", None))
                stack.append((where, value))
        elif isinstance(node, list | tuple):
            stack.extend((f"{path}.{index}", item) for index, item in enumerate(node))
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ConfigError(f"{source}: {path or '(top level)'}: {node!r} holds "
                                  f"{describe_character(node[error.start])} at character "
                                  f"{error.start + 1} ({SURROGATE_NOTE})") from None


def read_yaml_file(path: str | Path, *, strict: bool = True) -> Any:
    """The YAML document of a file; a missing, non-UTF-8 or invalid file is a
    :class:`ConfigError` naming it (and the line, for invalid YAML). ``strict``: a config a
    person wrote, read by :func:`dixit_lab.config_yaml.load_yaml` (YAML 1.2 scalars, no key
    twice); else a file ``yaml.safe_dump`` wrote (a results folder's config.yaml), read back
    with its own reader."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"config file {source} does not exist")
    try:
        text = source.read_text(encoding="utf-8")
        return load_yaml(text, str(source)) if strict else yaml.safe_load(text)
    except UnicodeDecodeError as error:
        raise ConfigError(f"{source}: not UTF-8 text (byte {error.start}); save it as "
                          f"UTF-8") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {' '.join(str(error).split())}") from None


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate a YAML config file."""
    return parse_config(read_yaml_file(path), str(path))


# -- sweeps ------------------------------------------------------------------------------------

def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b.0.c`` in nested dicts and lists, creating dict levels as needed. A player
    or the rules written in their string shorthand are expanded to a mapping first."""
    parts = path.split(".")
    node: Any = data
    for depth, part in enumerate(parts):
        where = ".".join(parts[:depth]) or "top level"
        if isinstance(node, list):
            if not part.lstrip("-").isdigit() or not 0 <= int(part) < len(node):
                raise ConfigError(f"sweep path {path!r}: index {part} is out of range at "
                                  f"{where} ({len(node)} entries)")
            key: Any = int(part)
        elif isinstance(node, dict):
            key = part
        else:
            raise ConfigError(f"sweep path {path!r}: {where} is {node!r}, not a mapping or "
                              f"a list")
        if depth == len(parts) - 1:
            node[key] = value
            return
        child = node[key] if isinstance(node, list) or key in node else None
        if child is None:
            child = node[key] = {}
        elif isinstance(child, str) and parts[:depth + 1] == ["rules"]:
            child = node[key] = {"preset": child}
        elif isinstance(child, str) and depth == 1 and parts[0] == "players":
            child = node[key] = {"agent": child}  # the string shorthand of a player
        node = child


def expand_sweep(data: dict[str, Any], source: str = "<config>"
                 ) -> Iterator[tuple[int, dict[str, Any], ExperimentConfig]]:
    """Each point of the ``sweep`` grid: (point index, {path: value}, validated config).
    Every point keeps the experiment seed, so points are compared on the same deals."""
    grid = data.get("sweep") or {}
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise ConfigError(f"{source}: sweep: expected a mapping of config paths to non-empty "
                          f"lists of values")
    paths = list(grid)
    size = math.prod(len(grid[p]) for p in paths)
    if size > MAX_SWEEP_POINTS:
        raise ConfigError(f"{source}: sweep: the grid has {size:,} points; at most "
                          f"{MAX_SWEEP_POINTS:,} (sweep fewer values, or split the sweep)")
    for index, values in enumerate(itertools.product(*(grid[p] for p in paths))):
        point = copy.deepcopy(data)
        point.pop("sweep", None)
        point.pop("tune", None)
        if isinstance(point.get("rules"), str):
            point["rules"] = {"preset": point["rules"]}
        for path, value in zip(paths, values, strict=True):
            if path.startswith("rules.") and path != "rules.preset" and not path.startswith(
                    "rules.options."):
                path = "rules.options." + path.removeprefix("rules.")
            set_path(point, path, value)
        settings = dict(zip(paths, values, strict=True))
        label = ", ".join(f"{p}={v}" for p, v in settings.items())
        yield index, settings, parse_config(point, f"{source} (sweep point {index}: {label})")
