"""The agent API: views, the ``Agent`` base class, the registry and ``make_agent``.

An agent sees the game only through views that hold what its seat may know: its own hand,
the clue, the displayed cards, which displayed positions are its own, public scores and the
public history of past rounds. It never sees another hand, nor who owns a displayed card
before the round is revealed.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from dixit_lab.bundled import source_checkout
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet, rules_from_values
from dixit_lab.core.seeding import CounterStream, seat_generator
from dixit_lab.errors import UserError
from dixit_lab.plugins.imports import ImportStringError, is_import_string, load_class
from dixit_lab.plugins.registry import Registry, UnknownName
from dixit_lab.plugins.spec import SpecError, check_value, parse_spec, read_bare, type_name

__all__ = [
    "AGENTS",
    "Agent",
    "AgentFailure",
    "AgentSpecError",
    "Clue",
    "GameContext",
    "PublicRound",
    "SubmitView",
    "TellView",
    "VoteView",
    "agent_parameters",
    "available_agents",
    "get_agent_class",
    "make_agent",
    "register_agent",
    "seat_names",
]


@dataclass(frozen=True, slots=True)
class Clue:
    """The storyteller's choice: a card of its hand (deck index) and the clue text."""

    card: int
    text: str


class PublicRound(NamedTuple):
    """What every player learns when a round is revealed.

    Views are named tuples: immutable, and cheap to build on the engine's hot path."""

    round: int
    storyteller: int
    clue: str
    display: tuple[int, ...]
    card_owner: tuple[int, ...]
    votes: tuple[int | None, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]


class TellView(NamedTuple):
    """The storyteller's view when choosing a card and a clue."""

    seat: int
    round: int
    hand: tuple[int, ...]
    scores: tuple[int, ...]
    history: tuple[PublicRound, ...]


class SubmitView(NamedTuple):
    """A listener's view when choosing ``n_cards`` cards of its hand to match the clue."""

    seat: int
    round: int
    storyteller: int
    clue: str
    hand: tuple[int, ...]
    n_cards: int
    scores: tuple[int, ...]
    history: tuple[PublicRound, ...]


class VoteView(NamedTuple):
    """A listener's view when voting: the displayed cards and which positions are its own."""

    seat: int
    round: int
    storyteller: int
    clue: str
    hand: tuple[int, ...]
    display: tuple[int, ...]
    own_positions: tuple[int, ...]
    scores: tuple[int, ...]
    history: tuple[PublicRound, ...]


@functools.cache
def seat_names(n_players: int) -> tuple[str, ...]:
    """The public names of a table whose players have none: ``seat 0``, ``seat 1`` ..."""
    return tuple(f"seat {seat}" for seat in range(n_players))


class GameContext:
    """What an agent learns at the start of a game: its seat, the table, the rules, the deck,
    the players' public names by seat (``players``), and its own randomness: ``uniforms``, a
    counter-based stream of uniform numbers (what the built-in agents draw from, so that the
    batched engine can reproduce them), and ``rng``, a numpy ``Generator`` for any other use.

    A context holds nothing that leads to another seat's cards or streams, the deck order or
    the display order: both streams come from the seat's base alone, a one-way hash of the game
    key (see :mod:`dixit_lab.core.seeding`), and ``rules`` and ``deck`` are this seat's own copies
    of immutable values (in the engine's contexts, ``rules`` and ``deck`` are made when first
    read, from tuples of the rules' and the deck's values: nothing shared to change). Nor
    does it say how another seat thinks: a player is its public name (the config's ``name``,
    else ``player <k>``, its place in the config), never its agent spec, parameters, embedder
    or temperature."""

    __slots__ = (
        "_base",
        "_deck",
        "_deck_state",
        "_first",
        "_rng",
        "_rule_values",
        "_rules",
        "_uniforms",
        "_unperceived",
        "n_players",
        "players",
        "seat",
    )

    def __init__(
        self,
        seat: int,
        n_players: int,
        rules: RuleSet | tuple[Any, ...],
        deck: Deck | tuple[tuple[str, Any], ...],
        players: tuple[str, ...] | None = None,
        stream_base: int = 0,
        first_block: list[float] | None = None,
    ) -> None:
        self.seat = seat
        self.n_players = n_players
        # a tuple: the rules' values (rules.rule_values), this seat's RuleSet made when first
        # read (most agents never read it: five copies were a twentieth of a random game)
        self._rules: RuleSet | None = None if isinstance(rules, tuple) else rules
        self._rule_values = rules if isinstance(rules, tuple) else None
        # a tuple (Deck.state): the deck's immutable values, this seat's Deck made when first
        # read too (a random game's five copies were 2 % of it)
        self._deck: Deck | None = None if isinstance(deck, tuple) else deck
        self._deck_state = deck if isinstance(deck, tuple) else None
        self.players = tuple(players) if players is not None else seat_names(n_players)
        self._base = int(stream_base)
        self._first = first_block
        self._rng: np.random.Generator | None = None
        self._uniforms: CounterStream | None = None
        self._unperceived: set[str] = set()

    def cannot_perceive(self, clue: str) -> None:
        """Say that this seat cannot perceive ``clue`` (a text outside its clue bank, with no
        model here to embed it): the engine records the seat in the ``unperceived`` field of
        every round of this game with that clue, and ``agents.csv`` and ``report.md`` count
        them. Nothing an agent says here changes the game."""
        if isinstance(clue, str) and len(self._unperceived) < 10_000:
            self._unperceived.add(clue)

    def perceived(self, clue: str) -> bool:
        """False if this seat said it cannot perceive ``clue`` (:meth:`cannot_perceive`)."""
        return clue not in self._unperceived

    def unperceived_clues(self) -> frozenset[str]:
        """Every clue this seat said it cannot perceive in this game."""
        return frozenset(self._unperceived)

    @property
    def unperceived_now(self) -> Set[str]:
        """:meth:`unperceived_clues` without the copy: the live set, read-only (the engine
        asks every round whether any seat has said anything)."""
        return self._unperceived

    @property
    def deck(self) -> Deck:
        """The deck (this seat's own copy)."""
        if self._deck is None:
            assert self._deck_state is not None
            self._deck = Deck.from_state(self._deck_state)
        return self._deck

    @property
    def rules(self) -> RuleSet:
        """The game's rules (this seat's own copy)."""
        if self._rules is None:
            assert self._rule_values is not None
            self._rules = rules_from_values(self._rule_values)
        return self._rules

    @rules.setter
    def rules(self, rules: RuleSet) -> None:
        self._rules = rules

    @property
    def agents(self) -> tuple[str, ...]:
        """The players' public names (the name ``players`` had before; never their specs)."""
        return self.players

    @property
    def rng(self) -> np.random.Generator:
        """The seat's numpy ``Generator`` (created on first use)."""
        if self._rng is None:
            self._rng = seat_generator(self._base)
        return self._rng

    @property
    def uniforms(self) -> CounterStream:
        """The seat's counter-based stream: ``uniforms.next()`` is the next number in [0, 1)."""
        if self._uniforms is None:
            self._uniforms = CounterStream(self._base, first=self._first)
            self._first = None
        return self._uniforms

    def to_state(self) -> tuple[Any, ...]:
        """Everything the context holds, as plain values (for an agent in another process)."""
        return (self.seat, self.n_players, self.rules, self.deck, self.players, self._base)

    @classmethod
    def from_state(cls, state: tuple[Any, ...]) -> GameContext:
        return cls(*state)


class Agent:
    """Base class of every agent. Subclasses override ``tell``, ``submit`` and ``vote``.

    Parameters are keyword arguments of ``__init__`` with type hints; ``make_agent`` checks
    them. ``self.context`` is set by ``begin_game`` and ``self.rng`` is the seat's stream.
    """

    name: ClassVar[str] = "agent"
    #: whether its clues are free text, outside any clue bank (a person, a language model):
    #: a config that seats it with listeners who cannot perceive such text is refused
    writes_free_text: ClassVar[bool] = False
    #: whether it plays through a remote model (its seat is untrusted, its games wait on a
    #: server), and whether a person plays it (``dixit-lab play``)
    remote: ClassVar[bool] = False
    person: ClassVar[bool] = False
    #: the :class:`~dixit_lab.core.recording.Recorder` that records its answers so that a
    #: replay gives them again (a name of the ``dixit_lab.recorders`` registry; None: nothing
    #: to record, its answers follow from the seeds)
    recorder: ClassVar[str | None] = None
    spec: str
    context: GameContext

    def begin_game(self, context: GameContext) -> None:
        self.context = context

    @classmethod
    def table_problem(cls, rules: RuleSet, n_players: int) -> str | None:
        """Why agents of this class cannot play at a table of ``n_players`` under ``rules``
        (None: they can), one phrase. A config that seats one where it cannot play is
        refused before any game, naming the player (the base class plays every table)."""
        return None

    @property
    def rng(self) -> np.random.Generator:
        return self.context.rng

    def tell(self, view: TellView) -> Clue:
        raise NotImplementedError(f"agent {self.name!r} cannot be a storyteller")

    def submit(self, view: SubmitView) -> list[int]:
        raise NotImplementedError(f"agent {self.name!r} cannot submit cards")

    def vote(self, view: VoteView) -> int:
        raise NotImplementedError(f"agent {self.name!r} cannot vote")

    def observe(self, result: PublicRound) -> None:
        """Called on every seat after each round is revealed."""

    def __repr__(self) -> str:
        return getattr(self, "spec", self.name)


class AgentFailure(Exception):
    """Raised by an agent to report that a decision failed, with its class: the engine records
    a fault of that ``kind`` (``timeout``, ``crashed``, ``unparsable``, ``refused``, ``backend``
    ...) and, for an action, plays a seeded legal fallback (``on_illegal="fallback"``)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class AgentSpecError(UserError, ValueError):
    """An unknown agent or a bad parameter in an agent spec."""


A = TypeVar("A", bound=type[Agent])
#: Agents by name: the built-ins and plugins are entry points of the ``dixit_lab.agents`` group
#: (see ``pyproject.toml``), imported on first use.
AGENTS: Registry[Agent] = Registry("dixit_lab.agents", "agent", Agent, source_checkout)


def register_agent(name: str) -> Callable[[A], A]:
    """Class decorator: register an agent class under ``name`` (and make it its ``name``)."""

    def decorate(cls: A) -> A:
        AGENTS.register(name)(cls)
        cls.name = name
        return cls

    return decorate


def available_agents() -> list[str]:
    return AGENTS.names()


def get_agent_class(name: str) -> type[Agent]:
    """A registered agent by name, or any ``Agent`` subclass by import string
    (``"package.module:ClassName"`` or ``"path/to/file.py:ClassName"``)."""
    if is_import_string(name):
        try:
            cls = load_class(name)
        except ImportStringError as error:
            raise AgentSpecError(str(error)) from None
        if not issubclass(cls, Agent):
            raise AgentSpecError(f"{name!r}: {cls.__qualname__} is not a subclass of "
                                 f"dixit_lab.Agent")
        return cls
    try:
        cls = AGENTS.get(name)
    except UnknownName as error:
        if AGENTS.origin(name) is not None:  # an entry point that does not load
            raise AgentSpecError(str(error)) from None
        raise AgentSpecError(f"{error}; or an import string 'package.module:ClassName' / "
                             f"'path/to/file.py:ClassName'") from None
    if cls.name == "agent":  # an entry point to an undecorated class: it is known by its name
        cls.name = name
    return cls


@dataclass(frozen=True)
class Parameter:
    name: str
    annotation: Any
    default: Any
    required: bool

    def describe(self) -> str:
        kind = type_name(self.annotation)
        return f"{self.name}: {kind}" + ("" if self.required else f" = {self.default!r}")


def agent_parameters(cls: type[Agent]) -> list[Parameter]:
    """The typed keyword parameters of an agent class."""
    hints = typing.get_type_hints(cls.__init__)
    params = []
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        params.append(Parameter(p.name, hints.get(p.name, Any), p.default,
                                p.default is inspect.Parameter.empty))
    return params


def make_agent(spec: str | dict[str, Any]) -> Agent:
    """Build an agent from ``"name(key=value, ...)"`` or ``{"name": ..., key: value}``."""
    if isinstance(spec, dict):
        args = dict(spec)
        if "name" not in args:
            raise AgentSpecError(f"agent spec {spec!r} has no 'name'")
        name = str(args.pop("name"))
    else:
        try:
            name, args = parse_spec(spec)
        except ValueError as error:
            raise AgentSpecError(f"bad agent spec {spec!r}: {error}") from None
    cls = get_agent_class(name)
    params = {p.name: p for p in agent_parameters(cls)}
    unknown = sorted(set(args) - set(params))
    if unknown:
        allowed = ", ".join(p.describe() for p in params.values()) or "none"
        from dixit_lab.suggest import did_you_mean

        raise AgentSpecError(f"agent {name!r} has no parameter(s) {', '.join(unknown)}"
                             f"{did_you_mean(unknown[0], params)}; "
                             f"allowed: {allowed}")
    missing = [p.name for p in params.values() if p.required and p.name not in args]
    if missing:
        raise AgentSpecError(f"agent {name!r} needs parameter(s) {', '.join(missing)}")
    checked = {key: _coerce(name, params[key], value) for key, value in args.items()}
    try:
        agent = cls(**checked)
    except (TypeError, ValueError) as error:
        raise AgentSpecError(f"agent {name!r}: {error}") from None
    agent.spec = canonical_spec(name, checked)
    return agent


def canonical_spec(name: str, args: dict[str, Any]) -> str:
    """A spec string that names the agent and the parameters given, in sorted order."""
    if not args:
        return name
    inner = ", ".join(f"{key}={_format_value(args[key])}" for key in sorted(args))
    return f"{name}({inner})"


def _format_value(value: Any) -> str:
    if isinstance(value, str):  # bare only where the spec parser reads the same string back
        safe = value and all(ch.isalnum() or ch in "_-./:@+" for ch in value)
        return value if safe and read_bare(value) == value else repr(value)
    return repr(value)


def _coerce(agent: str, param: Parameter, value: Any) -> Any:
    """Check ``value`` against the parameter's annotation (ints are accepted for floats)."""
    try:
        return check_value(param.annotation, value)
    except SpecError as error:
        raise AgentSpecError(f"agent {agent!r}: parameter {param.name} {error}") from None
