"""Tournament schedules and the plan of every game: who sits where, and from which seed.

A schedule turns a config into :class:`GameSpec` s. Every game is fully determined by its
spec, so games can be played in any order, on any number of workers, and give the same
records. :func:`play_chunk` plays a list of specs in one process and returns their JSON lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, overload

import numpy as np

from dixit_lab.core.agent import Agent, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.recording import Recording, chunk_player, recording
from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import DealSeeds, deal_seed
from dixit_lab.engine.game import play_game
from dixit_lab.errors import ConfigError
from dixit_lab.isolation.seats import GameFailed, make_seat_agent, seat_info
from dixit_lab.isolation.trust import TRUSTED, Isolation
from dixit_lab.records.decks import DeckLookup, played_with

__all__ = [
    "ChunkInterrupted",
    "GameFailed",
    "GameSpec",
    "Schedule",
    "TableSetup",
    "TableSource",
    "forget_agents",
    "make_seat_agent",
    "play_chunk",
    "schedule_games",
    "table_setup",
]



#: the games from which ``engine: auto`` plays on the compiled kernel (the ``fast`` extra)
AUTO_COMPILED_GAMES = 100_000
_SCHEDULE_STREAM = 0x5C4ED  # spawn key of the stream that samples tables (apart from games)


class ChunkInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM while a chunk's games were being played: ``results`` are the (game
    index, JSON line) pairs of the games that had ended, in game order, for the caller to save
    before the interrupt goes on (a chunk of model games is minutes of a server's work)."""

    def __init__(self, results: list[tuple[int, str]]) -> None:
        super().__init__()
        self.results = results


@dataclass(frozen=True)
class GameSpec:
    """One game of a tournament: its index, the pool seats at each table seat, and the index
    of the deal (its ``SeedSequence`` is ``TableSetup.game_seed(deal)``)."""

    index: int
    seats: tuple[int, ...]
    deal: int

    @property
    def first_player_seat(self) -> int:
        """The seat of the config's first player (pool seat 0), who tells first under
        ``first_storyteller: first_player``; 0 if it is not at this table (a config with that
        rule and a schedule that leaves it out is refused)."""
        return self.seats.index(0) if 0 in self.seats else 0


@dataclass(frozen=True)
class TableSetup:
    """What a worker needs to play games: plain, picklable values."""

    seed: int
    rules: RuleSet
    deck: str
    names: tuple[str, ...]   # by pool seat
    specs: tuple[str, ...]   # by pool seat
    on_illegal: str
    engine: str = "auto"     # auto | reference | batched | compiled
    #: the games of the run (``engine: auto`` plays a long run on the compiled kernel)
    games: int = 0
    #: how each pool seat is run (:class:`~dixit_lab.isolation.trust.Isolation`); empty: all trusted
    isolation: tuple[Isolation, ...] = ()
    #: the run's deal secret (:mod:`dixit_lab.run.deal_secret`); None: deals from the seed alone
    secret: bytes | None = None
    #: by pool seat: the name the other agents know it by (never its spec); empty: ``player
    #: <k>``, its pool seat counted from 1
    public: tuple[str, ...] = ()
    #: what the chunks record, and where (:mod:`dixit_lab.core.recording`): set by the runner
    #: and the replay, opened by :func:`play_chunk` in whichever process plays them
    recording: Recording | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.rules, self.deck, self.specs, self.on_illegal, self.isolation)

    def decks(self) -> DeckLookup:
        """The deck lookup of this setup's games: its own deck, whatever name a record
        gives (a folder named ``dreams`` is not the bundled ``dreams``)."""
        return played_with(load_deck(self.deck))

    def seat_isolation(self, seat: int) -> Isolation:
        return self.isolation[seat] if self.isolation else TRUSTED

    def game_seed(self, deal: int) -> np.random.SeedSequence:
        """The ``SeedSequence`` of deal ``deal`` (:func:`~dixit_lab.core.seeding.deal_seed`)."""
        return deal_seed(self.seed, deal, self.secret)

    def deal_seeds(self, deals: Sequence[int]) -> Sequence[np.random.SeedSequence]:
        """:meth:`game_seed` of each of ``deals``: a :class:`~dixit_lab.core.seeding.
        DealSeeds` (no object a game) when the deals need no secret."""
        if self.secret is None:
            return DealSeeds(self.seed, deals)
        return [self.game_seed(deal) for deal in deals]

    @property
    def untrusted(self) -> bool:
        return any(isolation.untrusted for isolation in self.isolation)

    @property
    def untrusted_specs(self) -> frozenset[str]:
        """The specs that an untrusted seat plays: the engine never builds these."""
        return frozenset(spec for seat, spec in enumerate(self.specs)
                         if self.seat_isolation(seat).untrusted)

    def remote(self) -> bool:
        """Whether a seat plays through a remote model (told by a child for an untrusted
        seat: the engine never builds its agent)."""
        return any(seat_info(spec, self.seat_isolation(seat), self.deck).remote
                   for seat, spec in enumerate(self.specs))

    def recorders(self) -> tuple[str, ...]:
        """The recorders the seats' agents name (told by a child for an untrusted seat)."""
        names = (seat_info(spec, self.seat_isolation(seat), self.deck).recorder
                 for seat, spec in enumerate(self.specs))
        return tuple(dict.fromkeys(name for name in names if name))

    def public_names(self, seats: Sequence[int]) -> tuple[str, ...]:
        """The public names of the pool seats ``seats`` (a table, by table seat)."""
        return tuple(self.public[s] if self.public else f"player {s + 1}" for s in seats)

    def batched(self) -> bool:
        """Whether games are played by a batched engine (NumPy or compiled): ``auto`` uses
        one when every agent supports it, ``batched`` and ``compiled`` insist (and raise
        naming what they cannot play), ``reference`` never does."""
        return self.engine_plan()[0]

    def engine_plan(self) -> tuple[bool, str]:
        """(batched engine?, why): :meth:`engine_choice` as a flag."""
        engine, why = self.engine_choice()
        return engine != "reference", why

    def engine_choice(self) -> tuple[str, str]:
        """(engine, why): the engine these games are played with (``reference``, ``batched``
        or ``compiled``) and the reason, a phrase for the terminal and the report (``engine:
        batched`` or ``compiled`` raises instead of falling back). ``auto`` plays on the
        compiled kernel when the ``fast`` extra is installed, it plays every agent and rule,
        and the run has at least :data:`AUTO_COMPILED_GAMES` games (fewer do not repay the
        kernel's start: seconds to load, minutes to compile the first time).

        Chosen once per setup, on the agents of :func:`_shared_agents` (the ones the games
        are then played with), and kept with it: a worker the setup is sent to plays the
        choice rather than making it again."""
        choice: tuple[str, str] | None = self.__dict__.get("_engine_choice")
        if choice is None:
            choice = self._choose_engine()
            object.__setattr__(self, "_engine_choice", choice)  # frozen: a cache, not a field
        return choice

    def _choose_engine(self) -> tuple[str, str]:
        """:meth:`engine_choice`, made."""
        if self.engine == "reference":
            return "reference", "engine: reference in the config"
        from dixit_lab.engine.batched import batch_blocker
        from dixit_lab.engine.rule_support import rules_problem

        rule_problem = rules_problem("compiled" if self.engine == "compiled" else "batched",
                                     self.rules)
        if self.untrusted:  # the engine never builds an untrusted seat's agent
            why = "a player has isolation: process or sandbox"
        elif rule_problem is not None:
            why = rule_problem
        else:
            shared = _shared_agents(self)
            blockers = {spec: batch_blocker(agent) for spec, agent in shared.items()}
            why = "; ".join(f"{spec}: {reason}" for spec, reason in blockers.items()
                            if reason is not None)
            if not why:
                return self._batched_choice()
        if self.engine in ("batched", "compiled"):
            raise ConfigError(f"engine {self.engine!r} was asked for, but {why}; use engine: "
                              f"auto or reference")
        return "reference", why

    def _batched_choice(self) -> tuple[str, str]:
        """:meth:`engine_choice` once every agent has a batched policy."""
        if self.engine == "batched":
            return "batched", "every agent has a batched policy"
        from dixit_lab.engine.compiled import compiled_problem

        problem = compiled_problem(self.rules, load_deck(self.deck),
                                   list(_shared_agents(self).values()))
        if self.engine == "compiled":
            if problem is not None:
                raise ConfigError(f"engine 'compiled' was asked for, but {problem}; use "
                                  f"engine: auto or batched")
            return "compiled", "every agent has a compiled form (engine: compiled)"
        if problem is not None:
            return "batched", f"every agent has a batched policy; not compiled: {problem}"
        if self.games < AUTO_COMPILED_GAMES:
            return "batched", (f"every agent has a batched policy; not compiled: {self.games:,} "
                               f"games, fewer than {AUTO_COMPILED_GAMES:,}, do not repay the "
                               f"compiled kernel's start")
        return "compiled", f"every agent has a compiled form and the run has {self.games:,} games"


class TableSource(Protocol):
    """What :func:`table_setup` reads of a config (a ``run.experiment.ExperimentConfig``)."""

    @property
    def seed(self) -> int: ...
    @property
    def deck(self) -> str: ...
    @property
    def on_illegal(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def games(self) -> int: ...
    def seats(self) -> list[tuple[str, str]]: ...
    def rule_set(self) -> RuleSet: ...
    def isolation(self) -> tuple[Isolation, ...]: ...
    def public_names(self) -> tuple[str, ...]: ...


def table_setup(config: TableSource, secret: bytes | None = None) -> TableSetup:
    """The :class:`TableSetup` of a config: its pool's names, specs, public names and
    isolation, its rules, deck, seed and engine; ``secret``: the run's deal secret
    (:func:`~dixit_lab.run.deal_secret.run_secret`), None for deals from the seed alone."""
    seats = config.seats()
    return TableSetup(seed=config.seed, rules=config.rule_set(), deck=config.deck,
                      names=tuple(name for name, _ in seats),
                      specs=tuple(spec for _, spec in seats), on_illegal=config.on_illegal,
                      engine=config.engine, games=config.games,
                      isolation=config.isolation(),
                      public=config.public_names(), secret=secret)


class Schedule(Sequence[GameSpec]):
    """The games of a schedule, made when asked for (a million games are a few megabytes of
    seats, not a million objects): ``len``, indexing and slicing (a list) as for a list."""

    def __init__(self, kind: str, table_size: int, games: int,
                 seats: np.ndarray | None = None) -> None:
        self.kind, self.table_size, self.games, self._seats = kind, table_size, games, seats

    def __len__(self) -> int:
        return self.games

    @overload
    def __getitem__(self, index: int) -> GameSpec: ...

    @overload
    def __getitem__(self, index: slice) -> list[GameSpec]: ...

    def __getitem__(self, index: int | slice) -> GameSpec | list[GameSpec]:
        if isinstance(index, slice):
            return [self._spec(i) for i in range(*index.indices(self.games))]
        if index < 0:
            index += self.games
        if not 0 <= index < self.games:
            raise IndexError(f"game {index} of a schedule of {self.games}")
        return self._spec(index)

    def __iter__(self) -> Iterator[GameSpec]:
        return (self._spec(i) for i in range(self.games))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Schedule) and (self.kind, self.table_size, self.games) == (
                other.kind, other.table_size, other.games):
            return self._seats is other._seats or (
                self._seats is not None and other._seats is not None
                and bool(np.array_equal(self._seats, other._seats)))
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Schedule({self.kind!r}, table of {self.table_size}, {self.games} games)"

    def _spec(self, index: int) -> GameSpec:
        if self._seats is not None:
            return GameSpec(index, tuple(int(s) for s in self._seats[index]), index)
        shift = index % self.table_size
        seats = tuple((seat + shift) % self.table_size for seat in range(self.table_size))
        deal = index if self.kind == "rotation" else index // self.table_size
        return GameSpec(index, seats, deal)


def schedule_games(kind: str, pool: int, table_size: int, games: int, seed: int) -> Schedule:
    """The specs of ``games`` games of a ``rotation``, ``duplicate`` or ``sampled`` schedule
    over a pool of ``pool`` seats."""
    if kind in ("rotation", "duplicate"):
        if pool != table_size:
            raise ConfigError(f"a {kind} schedule needs the pool ({pool}) to fill the table "
                             f"({table_size})")
        return Schedule(kind, table_size, games)
    if kind == "sampled":
        if pool < table_size:
            raise ConfigError(f"cannot seat {table_size} players from a pool of {pool}")
        rng = np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(seed, spawn_key=(_SCHEDULE_STREAM,))))
        seats = np.empty((games, table_size), dtype=np.int32)
        for index in range(games):
            seats[index] = rng.permutation(pool)[:table_size]
        return Schedule(kind, table_size, games, seats)
    raise ConfigError(f"unknown schedule {kind!r}; allowed: rotation, duplicate, sampled")


class _AgentPool:
    """Agent instances reused across the games a worker plays (one per spec and occurrence).
    Agents must not carry anything from one game to the next (``begin_game`` resets them);
    ``tests/agents/test_conformance.py`` checks the built-ins."""

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.instances: dict[tuple[str, int, Isolation], Agent] = {}

    def table(self, setup: TableSetup, seats: tuple[int, ...]) -> list[Agent]:
        if setup.key != self.key:
            self.key, self.instances = setup.key, {}
        seen: dict[str, int] = {}
        agents = []
        for seat in seats:
            spec = setup.specs[seat]
            occurrence = seen.get(spec, 0)
            seen[spec] = occurrence + 1
            isolation = setup.seat_isolation(seat)
            key = (spec, occurrence, isolation)
            agent = self.instances.get(key)
            if agent is None:
                agent = self.instances[key] = make_seat_agent(spec, isolation, setup.deck)
            agents.append(agent)
        return agents



_POOL = _AgentPool()


#: the setups whose agents the batched engines keep in a process, the most recently used
#: ones: each holds its agents' tables (a model storyteller's are tens of MB), so a sweep of
#: a thousand points or a tune of a thousand candidates keeps at most this many at once and
#: memory stays flat; a tune look plays each live candidate in turn, and up to this many
#: (the default grid's 9; a league's cycle of 10 opponent sets) are played again without
#: being built again. An agent is shared by the games of one setup only: one instance
#: carried from setup to setup (shared by spec) changed the games of check_shipped's
#: quickstart after ambiguity_table_sizes' 36 points, though no agent keeps anything from
#: one game to the next that a shorter history shows
AGENT_SETUPS = 12
_SHARED: dict[tuple[Any, ...], dict[str, Agent]] = {}


def forget_agents() -> None:
    """Drop the agents this process keeps for the setups it played (a sweep point's, once the
    point is done: the next point plays other setups), and give their memory back."""
    _SHARED.clear()
    _POOL.key, _POOL.instances = None, {}
    release_memory()


def release_memory() -> None:
    """Free what dropped agents held: their cycles (an agent and its policies refer to each
    other), then the C heap's free pages, which glibc keeps otherwise (each setup's tables are
    allocated anew, and a fragmented heap grew by tens of MB a sweep point)."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # glibc only
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _shared_agents(setup: TableSetup) -> dict[str, Agent]:
    """The agents of ``setup``'s specs, one instance per spec for every seat and game (a
    batched policy keeps no state), made once while the setup is among the
    :data:`AGENT_SETUPS` most recently played."""
    shared = _SHARED.pop(setup.key, None)
    if shared is None:
        shared = {spec: make_agent(spec) for spec in dict.fromkeys(setup.specs)}
    _SHARED[setup.key] = shared  # the most recent last
    if len(_SHARED) > AGENT_SETUPS:
        while len(_SHARED) > AGENT_SETUPS:
            del _SHARED[next(iter(_SHARED))]
        release_memory()
    return shared


def _play_batched(setup: TableSetup, chunk: list[GameSpec], columns: bool = False
                  ) -> tuple[list[tuple[int, str]], Any, str | None]:
    from dixit_lab.engine.batch_output import lines_of

    # the choice travels with the setup; a worker without Numba (a cluster's machine) plays
    # the same games, byte for byte, on the NumPy engine
    compiled = setup.engine_choice()[0] == "compiled"
    if compiled:
        from dixit_lab.engine.compiled import kernel_problem

        compiled = kernel_problem() is None
    if compiled:
        from dixit_lab.engine.compiled import play_compiled as play_batch
        from dixit_lab.engine.compiled import play_compiled_columns as play_batch_columns
        engine = "compiled engine"
    else:
        from dixit_lab.engine.batched import play_batch, play_batch_columns
        engine = "batched engine"
    deck = load_deck(setup.deck)
    shared = _shared_agents(setup)
    tables = [[shared[setup.specs[s]] for s in game.seats] for game in chunk]
    metas = [{"game": game.index, "deal": game.deal,
              "players": [setup.names[s] for s in game.seats]} for game in chunk]
    seeds = setup.deal_seeds([game.deal for game in chunk])
    firsts = [game.first_player_seat for game in chunk]
    batch = text = None
    try:
        if columns:
            text, batch = play_batch_columns(tables, setup.rules, deck, seeds, metas,
                                             [game.index for game in chunk], firsts)
            lines = lines_of(text)
        else:
            lines = play_batch(tables, setup.rules, deck, seeds, metas, firsts)
    except Exception as error:
        raise GameFailed(f"games {chunk[0].index}..{chunk[-1].index} ({engine}): "
                         f"{type(error).__name__}: {error}") from error
    pairs = [(game.index, line) for game, line in zip(chunk, lines, strict=True)]
    return pairs, batch, text


def play_chunk_columns(setup: TableSetup, chunk: list[GameSpec]
                       ) -> tuple[list[tuple[int, str]], Any, str | None]:
    """:func:`play_chunk`, and with the batched engine the games as a
    :class:`~dixit_lab.records.batches.GameBatch` too and their lines as one text, each
    line and its newline (else None and None)."""
    if setup.engine != "reference" and chunk and setup.batched():
        with recording(setup.recording):
            return _play_batched(setup, chunk, columns=True)
    return play_chunk(setup, chunk), None, None


def play_chunk(setup: TableSetup, chunk: list[GameSpec]) -> list[tuple[int, str]]:
    """Play the games of ``chunk`` and return (game index, JSON line) pairs, with the batched
    engine when the setup allows it (the records are the same either way), inside the
    setup's recording (whichever engine plays)."""
    with recording(setup.recording):
        if setup.engine != "reference" and chunk and setup.batched():
            return _play_batched(setup, chunk)[0]
        player = chunk_player(setup.recorders()) if chunk and setup.remote() else None
        if player is not None:  # e.g. model agents: every game of the chunk in flight at once
            return player.play_chunk(setup, chunk)
        return _play_one_by_one(setup, chunk)


def _play_one_by_one(setup: TableSetup, chunk: list[GameSpec]) -> list[tuple[int, str]]:
    deck = load_deck(setup.deck)
    out: list[tuple[int, str]] = []
    for spec in chunk:
        agents = _POOL.table(setup, spec.seats)
        meta = {"game": spec.index, "deal": spec.deal,
                "players": [setup.names[s] for s in spec.seats]}
        try:
            record = play_game(agents, setup.rules, deck, setup.game_seed(spec.deal),
                               on_illegal=setup.on_illegal,  # type: ignore[arg-type]
                               meta=meta, players=setup.public_names(spec.seats),
                               first_player_seat=spec.first_player_seat)
        except KeyboardInterrupt:
            raise ChunkInterrupted(out) from None  # the games that ended are kept
        except Exception as error:
            raise GameFailed(f"game {spec.index} (players {meta['players']}): "
                             f"{type(error).__name__}: {error}") from error
        out.append((spec.index, record.to_json()))
    return out
