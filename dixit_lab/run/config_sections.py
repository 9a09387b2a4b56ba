"""The sections of an experiment config (players, rules, schedule, executor, tune, model
budgets) as validated models, and the bounds on what one config may ask for;
:mod:`dixit_lab.run.experiment` puts them together."""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from dixit_lab.core.agent import get_agent_class, make_agent
from dixit_lab.core.rules import RuleSet, get_rules
from dixit_lab.isolation.trust import Isolation, Limits
from dixit_lab.plugins.spec import format_spec, parse_spec
from dixit_lab.text_rule import text_problem

#: bounds on what one config may ask for: beyond them a typo would hang the machine
MAX_GAMES = 100_000_000
MAX_SWEEP_POINTS = 1_000
MAX_CONFIG_NODES = 100_000  # values in the config once YAML aliases are expanded
MAX_SEATS = 1_000  # seats of the players' pool (count included): a table has at most a dozen


class _Strict(BaseModel):
    """No unknown field; no number of a config infinite or NaN (YAML reads ``.inf`` and
    ``.nan``: a time-out, a limit or a bound is a finite number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _one_line(value: str | None) -> str | None:
    """A name or a spec as the text rule allows it (:mod:`dixit_lab.text_rule`)."""
    problem = None if value is None else text_problem(value)
    if problem:
        raise ValueError(f"{value!r} is not one line of text: it holds {problem}")
    return value


class LimitsConfig(_Strict):
    """``limits:`` of an untrusted player (see :class:`~dixit_lab.isolation.trust.Limits`)."""

    memory_mb: int = Field(default=Limits.memory_mb, ge=64)
    processes: int = Field(default=Limits.processes, ge=0, le=4096)
    file_mb: int = Field(default=Limits.file_mb, ge=0)
    cpu_seconds: float = Field(default=Limits.cpu_seconds, gt=0)


class PaceConfig(_Strict):
    """``pace:`` of an untrusted player: no call of a game returns to the engine before
    ``seconds`` have passed since it was made (docs/security.md, entrants who cooperate)."""

    seconds: float = Field(gt=0, le=60)


class PlayerEntry(_Strict):
    """One player of the pool: a ``name`` for tables and ratings, an agent spec, and how many
    seats it fills (``count``; e.g. four identical listeners)."""

    name: str | None = None
    agent: str
    params: dict[str, Any] = Field(default_factory=dict)
    count: int = Field(default=1, ge=1, le=MAX_SEATS)
    #: ``sandbox``: the agent lives behind a real boundary (its own namespaces, read-only
    #: runtime, another uid, limits; a fresh process each game: docs/security.md);
    #: ``process``: in its own OS process, which is not a boundary; ``none``: in the engine's
    #: process (the default, fastest: for agents you trust)
    isolation: Literal["none", "process", "sandbox"] = "none"
    #: seconds an untrusted agent may take for one call (a decision, begin_game, observe;
    #: 30 by default); over it, the call is a fault of kind ``timeout`` and the seat plays
    #: seeded fallbacks for the rest of that game
    decision_timeout: float | None = Field(default=None, gt=0)
    #: what an untrusted agent's process may use in a game (memory, processes, file size,
    #: CPU seconds); enforced by the kernel in a sandbox
    limits: LimitsConfig | None = None
    #: a sandboxed agent the user trusts to forget: one process for every game of a worker
    #: (faster; without it, each game gets a fresh process)
    trusted_to_forget: bool = False
    #: more files or folders a sandboxed agent may read (its weights, its data)
    files: list[str] = Field(default_factory=list)
    #: an untrusted agent's answers held until ``seconds`` after each call (begin_game, a
    #: decision, observe) was made: its timing tells the other seats nothing
    pace: PaceConfig | None = None

    @field_validator("name", "agent")
    @classmethod
    def _one_line_of_text(cls, value: str | None) -> str | None:
        return _one_line(value)

    @model_validator(mode="after")
    def _options_need_isolation(self) -> PlayerEntry:
        if self.isolation == "none":
            for name in ("decision_timeout", "limits", "pace"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} needs isolation: sandbox or process (an agent "
                                     f"in the engine's own process cannot be bounded)")
        if self.isolation != "sandbox":
            if self.trusted_to_forget:
                raise ValueError("trusted_to_forget needs isolation: sandbox")
            if self.files:
                raise ValueError("files needs isolation: sandbox (other agents read what "
                                 "they like)")
        return self

    def seat_isolation(self) -> Isolation:
        """How this player's seats are run (:class:`~dixit_lab.isolation.trust.Isolation`)."""
        limits = Limits(**self.limits.model_dump()) if self.limits else None
        return Isolation(self.isolation, self.decision_timeout, limits,
                         self.trusted_to_forget, tuple(self.files),
                         self.pace.seconds if self.pace else None)

    def spec(self) -> str:
        """The canonical agent spec, with ``params`` merged over the spec string's. An
        untrusted agent's spec is checked in a child process: its code never runs here."""
        base, inline = parse_spec(self.agent)
        written = format_spec(base, {**inline, **self.params})
        if self.isolation != "none":
            from dixit_lab.isolation.isolated_agent import isolated_spec

            return isolated_spec(written, self.seat_isolation())
        agent_class: Any = get_agent_class(base)  # (a class is hashable; typing says Agent is not)
        return _canonical_spec(written, agent_class)

    def display_name(self) -> str:
        return self.name or self.spec()


@functools.lru_cache(maxsize=1024)
def _canonical_spec(written: str, agent_class: Any) -> str:
    """The canonical spec of the agent ``written`` names, built (and so checked) once per
    spec and class: a config's players are asked for theirs a dozen times per run (the
    class is in the key, so an agent registered again under the same name is asked anew)."""
    return make_agent(written).spec


class RulesConfig(_Strict):
    preset: str = "classic"
    options: dict[str, Any] = Field(default_factory=dict)

    def build(self) -> RuleSet:
        return get_rules(self.preset, **self.options)


class ScheduleConfig(_Strict):
    """``rotation``: the players' seats rotate every game, so each sits in each seat equally
    often (over a multiple of the table size). ``duplicate``: groups of table-size games share
    one deal and rotate the seats over it, which cancels the luck of the deal.
    ``sampled``: each game seats a random subset of a larger pool, in random order."""

    kind: Literal["rotation", "duplicate", "sampled"] = "rotation"
    table_size: int | None = Field(default=None, ge=3)


class ExecutorConfig(_Strict):
    """Where games run: ``local`` (this process), ``process`` (a pool of worker processes;
    ``workers`` defaults to all cores) or ``ray`` (a Ray cluster at ``address``, e.g.
    ``HEAD:6379``; no address starts a local Ray instance with ``workers`` CPUs; needs
    ``pip install -e ".[ray]"`` from the clone). Games go out in chunks of ``chunk_size``
    (default: four chunks per worker, 25 to 250 games for the reference engine and 100 to
    5,000 for the batched one: ``runner.chunk_size_for``); every executor gives the same
    records."""

    kind: str = "process"
    workers: int | None = Field(default=None, ge=1)
    chunk_size: int | None = Field(default=None, ge=1)
    address: str | None = None


    @field_validator("kind")
    @classmethod
    def _known_executor(cls, value: str) -> str:
        from dixit_lab.run.executors import executor_names

        if value not in executor_names():
            raise ValueError(f"unknown executor {value!r}; allowed: "
                             f"{', '.join(executor_names())}")
        return value


class TuneConfig(_Strict):
    """Search one config ``parameter`` for the value that maximises ``metric`` of player
    ``player``, or the values the games cannot separate (see ``dixit-lab tune``).

    The candidates are either a grid, ``points`` evenly spaced numbers from ``low`` to
    ``high`` (``kind: float``, the default, rounded to 12 digits; ``kind: int``: rounded to
    integers, each kept once, for an integer parameter), or the list ``values``: numbers,
    texts (a categorical parameter: agents, embedders, rule presets...), true/false, each
    given once. Every candidate is distinct and finite."""

    parameter: str
    low: float | None = None
    high: float | None = None
    points: int = Field(default=9, ge=2, le=MAX_SWEEP_POINTS)
    kind: Literal["float", "int"] = "float"
    values: list[Any] | None = Field(default=None, min_length=2, max_length=MAX_SWEEP_POINTS)
    player: str
    metric: str = "storyteller_points_per_turn"
    games_per_round: int = Field(default=100, ge=1, le=MAX_GAMES)
    max_games: int = Field(default=5000, ge=1, le=MAX_GAMES)
    #: family-wise error of ever dropping a best candidate, over candidates, looks and the
    #: confirmation (Holm, Bonferroni; half to the search and half to the confirmation)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    #: fresh deals on which every contender the search leaves is replayed against the others
    #: (0: no confirmation)
    confirm_games: int = Field(default=200, ge=0, le=MAX_GAMES)

    @field_validator("values")
    @classmethod
    def _distinct_values(cls, values: list[Any] | None) -> list[Any] | None:
        for index, value in enumerate(values or ()):
            if not isinstance(value, str | int | float | bool):
                raise ValueError(f"{value!r}: a candidate is one value (a number, a text, "
                                 f"true or false)")
            problem = text_problem(value) if isinstance(value, str) else None
            if problem:
                raise ValueError(f"{value!r} is not one line of text: it holds {problem}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"a candidate must be a finite number, got {value}")
            for earlier in (values or [])[:index]:
                if earlier == value:
                    same = (f"{_written(value)} is given twice" if
                            _written(earlier) == _written(value) else
                            f"{_written(earlier)} and {_written(value)} are the same candidate")
                    raise ValueError(same)
        return values

    @model_validator(mode="after")
    def _a_grid_or_values(self) -> TuneConfig:
        if self.values is not None:
            given = sorted({"low", "high", "points", "kind"} & self.model_fields_set)
            if given:
                raise ValueError(f"values lists the candidates: leave out {', '.join(given)}")
        elif self.low is None or self.high is None:
            raise ValueError("give low and high (a grid of points), or values (the "
                             "candidates)")
        elif not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        elif self.kind == "int":
            for bound in (self.low, self.high):
                if not float(bound).is_integer():
                    raise ValueError(f"kind int needs integers for low and high, got {bound:g}")
        return self


def _written(value: Any) -> str:
    """A candidate as the config writes it (YAML: true, false; numbers as Python's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ModelBudget(_Strict):
    """Limits on what the model seats of a run spend together (None: no limit)."""

    max_tokens_total: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)


#: fields left out of the resolved config at their default, so that the folders of runs
#: that do not use them are as they were
