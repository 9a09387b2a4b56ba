"""Agents you don't trust, in a child (``isolation: process`` or ``sandbox`` in a config).

An :class:`IsolatedAgent` stands at the table for an agent that lives in another process:

- ``process``: a fresh Python process per seat (``python -I -m dixit_lab.isolation.child``,
  never forked from the engine), kept for the seat's games, with an empty environment. *Its
  own process, not a boundary*: it runs as the engine's user and can read what that user can.
- ``sandbox``: a bubblewrap sandbox per seat (:mod:`dixit_lab.isolation.sandbox`) and a fresh game
  process forked from its pristine template for every game (``trusted_to_forget``: one game
  process kept for every game).

Either way the child receives only pickled views and answers in JSON, which the engine parses
as plain data (never unpickles); the agent's code is never imported by the engine's process:
even its spec is checked, and what the engine must know of it (:class:`~dixit_lab.isolation.trust.
AgentInfo`) told, by a child; its canonical spec the engine makes from the config's
(:mod:`dixit_lab.isolation.seat_identity`). Every call (``begin_game``, ``observe``, a decision)
and every write to the child is bounded by ``decision_timeout`` (30 s by default), and each
game by a CPU budget (``limits.cpu_seconds``, work between decisions included): a child that is
slow, stopped, silent, that stops reading or floods becomes a fault (``timeout`` or
``crashed``) and is stopped; the seat's later decisions in that game are faults too (with the
engine's seeded fallback actions) and a new child starts at the next game. Records are
byte-identical to the same table with the agents in the engine as long as nothing fails.
A player's ``pace`` holds every call of a game until a fixed interval has passed since it was
made, so that the other seats cannot read the agent's timing (docs/security.md).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import pickle
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

from dixit_lab.core.agent import Agent, AgentFailure, AgentSpecError, Clue, GameContext, PublicRound
from dixit_lab.isolation.channel import Channel, ChannelError
from dixit_lab.isolation.child_stderr import SeatStderr, StderrRelay
from dixit_lab.isolation.seat_identity import seat_spec
from dixit_lab.isolation.trust import AgentInfo, Isolation, Limits
from dixit_lab.text_rule import CLUE_CHARS, RECORD_MESSAGE_CHARS, safe_message, shown_message

__all__ = ["IsolatedAgent", "isolated_info", "isolated_spec", "shared_code"]

_START_TIMEOUT = 120.0     # seconds for a child to import its agent and answer "make"
_CHILDREN: weakref.WeakSet[_ProcessChild] = weakref.WeakSet()
_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_MAX_UNPERCEIVED = 16      # clue texts a reply may say its agent could not perceive
_PACED = frozenset({"begin", "tell", "submit", "vote", "observe"})  # the calls of a game


def _wait_until(moment: float) -> None:
    """Sleep until ``time.monotonic()`` reaches ``moment`` (``pace``: an answer held)."""
    while (left := moment - time.monotonic()) > 0:
        time.sleep(left)


class _ChildGone(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Endpoint:
    """A channel to an agent's process: :meth:`call` sends a command and reads the answer."""

    channel: Channel
    owner: int

    def call(self, command: str, payload: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        data = pickle.dumps((command, payload), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.channel.send(data, deadline)
            reply = json.loads(self.channel.receive(deadline))
        except ChannelError as error:
            gone = self.gone(error, timeout)  # (asked before stopping: how did it end?)
            self.stop()
            raise gone from None
        except (ValueError, RecursionError):  # (RecursionError: nested too deep to parse)
            self.stop()
            raise _ChildGone("crashed", "the agent's process sent a reply that is not "
                                        "JSON; it was stopped") from None
        problem = _envelope_problem(reply)
        if problem is not None:
            self.stop()
            raise _ChildGone("crashed", f"the agent's process sent a malformed reply "
                                        f"({problem}); it was stopped")
        return reply

    def gone(self, error: ChannelError, timeout: float) -> _ChildGone:
        if error.kind == "timeout":
            return _ChildGone("timeout", f"{error} within {timeout:g} s (decision_timeout); "
                                         f"the agent's process was stopped")
        ended = self.how_ended()
        kind = "timeout" if ended and "CPU budget" in ended else "crashed"
        return _ChildGone(kind, f"the agent's process {ended or 'closed its end'}"
                                + ("" if "closed" in str(error) else f": {error}"))

    def how_ended(self) -> str | None:
        return None

    def cpu_seconds(self) -> float | None:
        """CPU time the agent's process has used (None where the kernel bounds it)."""
        return None

    def stop(self) -> None:
        raise NotImplementedError


class _ProcessChild(_Endpoint):
    """``isolation: process``: one child process and its two pipes."""

    def __init__(self, limits: Limits | None, stderr: SeatStderr) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "dixit_lab.isolation.child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=os.getcwd(), env=dict(_THREADS))
        self.owner = os.getpid()  # a forked worker inherits this object, not the child
        _CHILDREN.add(self)
        assert self.process.stdin is not None and self.process.stdout is not None
        assert self.process.stderr is not None  # read in bounded chunks, escaped, by seat
        self.stderr = StderrRelay(os.dup(self.process.stderr.fileno()), stderr)
        self.process.stderr.close()
        self.channel = Channel(self.process.stdout.fileno(), self.process.stdin.fileno())
        try:
            self.channel.send(pickle.dumps(limits), time.monotonic() + _START_TIMEOUT)
        except ChannelError as error:
            self.stop()
            raise _ChildGone("crashed", f"the agent's process did not start: {error}") from None
        self._ticks = os.sysconf("SC_CLK_TCK")
        self._stat: int | None = None  # /proc/<child>/stat, kept open (a pread a call)

    def how_ended(self) -> str | None:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            code = self.process.returncode
        return f"exited (code {code})"

    def cpu_seconds(self) -> float | None:
        try:
            if self._stat is None:
                self._stat = os.open(f"/proc/{self.process.pid}/stat", os.O_RDONLY)
            fields = os.pread(self._stat, 1024, 0).rpartition(b")")[2].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / self._ticks  # utime + stime

    def stop(self) -> None:
        if self.owner != os.getpid():
            return  # another process's child (this object came through a fork)
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        if self._stat is not None:
            with contextlib.suppress(OSError):
                os.close(self._stat)
            self._stat = None


class _SandboxChild(_Endpoint):
    """``isolation: sandbox``: one game process forked in a seat's sandbox."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.channel = game.channel
        self.owner = game.owner

    def how_ended(self) -> str | None:
        return self.game.how_ended()

    def stop(self) -> None:
        self.game.stop()


def _envelope_problem(reply: Any) -> str | None:
    """What is wrong with the frame of a child's reply (None: it is as ``serve`` writes
    them): an object whose ``error`` is [exception type, message] (two strings), ``clue``
    [card, text] (any values: the engine checks them as an answer) and ``illegal`` a
    string. What is inside ``ok`` and ``clue`` is the agent's answer, checked by the engine
    (:mod:`dixit_lab.engine.answer_checks`) like any agent's."""
    if not isinstance(reply, dict):
        return f"a {type(reply).__name__}, not an object"
    error = reply.get("error")
    if "error" in reply and not (type(error) is list and len(error) == 2
                                 and all(type(part) is str for part in error)):
        return "its error is not [type, message]"
    clue = reply.get("clue")
    if "clue" in reply and not (type(clue) is list and len(clue) == 2):
        return "its clue is not [card, text]"
    if "illegal" in reply and type(reply["illegal"]) is not str:
        return "its illegal answer is not a string"
    return None


@atexit.register
def _stop_children() -> None:
    for child in list(_CHILDREN):
        child.stop()


# -- the spec, checked by a child -----------------------------------------------------------------

_INFOS: dict[tuple[str, str, tuple[str, ...]], AgentInfo] = {}


def _files(spec: str, isolation: Isolation, deck: str | None) -> list[tuple[Path, Path]]:
    """What a sandbox of this seat may read beyond the runtime: the agent's own files, the
    player's ``files`` and a deck folder outside the shipped data."""
    from dixit_lab.isolation.sandbox import agent_files, user_binds

    files = [*agent_files(spec), *user_binds(isolation.files)]
    if deck is not None:
        from dixit_lab.core.cards import absolute_deck_spec

        where = Path(absolute_deck_spec(deck))
        if where.exists():
            files.append((where, where))
    return files


def _code_path(spec: str) -> Path | None:
    """The file (or package folder) of the agent code ``spec`` names, found without importing
    it: a ``file.py:Class``'s file, a ``module:Class``'s module file or package folder."""
    from dixit_lab.plugins.spec import parse_spec

    try:
        where = parse_spec(spec)[0].rpartition(":")[0]
    except ValueError:
        return None
    if not where:
        return None
    if where.endswith(".py") or "/" in where or "\\" in where:
        return Path(where).expanduser().resolve()
    parts = where.split(".")
    for entry in sys.path:
        base = Path(entry or ".").absolute()
        for path in (base.joinpath(*parts), base.joinpath(*parts[:-1], f"{parts[-1]}.py")):
            if path.exists():
                return path.resolve()
    return None


def shared_code(seats: list[tuple[str, str, Isolation]]) -> list[str]:
    """One line for each sandboxed seat (``(player, spec, isolation)``) whose sandbox binds
    another player's agent code (an entrant's package holding another entrant's module, or a
    ``files:`` entry that does): that seat can read the other's code and weights."""
    from dixit_lab.isolation.sandbox import agent_files, user_binds

    code = {player: (spec, _code_path(spec)) for player, spec, _ in seats}
    lines = []
    for player, spec, isolation in seats:
        if isolation.mode != "sandbox":
            continue
        binds = [source for source, _ in (*agent_files(spec), *user_binds(isolation.files))]
        others = sorted(other for other, (other_spec, path) in code.items()
                        if other != player and path is not None and path != code[player][1]
                        and any(path.is_relative_to(bound) for bound in binds))
        if others:
            shown = ", ".join(repr(other) for other in others)
            lines.append(f"warning: player {player!r}'s sandbox can read the agent code of "
                         f"{shown} (it binds a folder that holds it): give each entrant a "
                         f"package of its own")
    return lines


#: sandboxes that checked a spec, kept for the first seat that needs one like it (a sandbox
#: takes a second or two to start: the runtime's imports)
_SPARES: dict[tuple[Any, ...], Any] = {}


def _sandbox(spec: str, isolation: Isolation, deck: str | None,
             stderr: SeatStderr | None = None) -> Any:
    """A sandbox for ``spec``'s seat: a spare one like it, else a new one; its stderr goes
    to ``stderr`` (the seat's), else is shown under the spec."""
    from dixit_lab.isolation.sandbox import Sandbox, _preload

    files, preload = _files(spec, isolation, deck), _preload(spec)
    key = (spec, tuple(files), tuple(preload), isolation.budget, os.getpid())
    seat = stderr or SeatStderr(spec)
    spare = _SPARES.pop(key, None)
    if spare is not None and spare.alive:
        spare.stderr.seat = seat
        return spare
    sandbox = Sandbox(files, preload, isolation.budget, spec if preload else None, seat)
    sandbox.spare_key = key
    return sandbox


def _start(spec: str, isolation: Isolation, deck: str | None) -> tuple[_Endpoint, Any]:
    """A child for ``spec`` (and its sandbox, or None): not yet asked to make the agent."""
    if isolation.mode == "sandbox":
        from dixit_lab.isolation.sandbox import SandboxError

        try:
            sandbox = _sandbox(spec, isolation, deck)
            return _SandboxChild(sandbox.game()), sandbox
        except SandboxError as error:
            raise AgentSpecError(f"agent {spec!r}: {error}") from None
    return _ProcessChild(isolation.limits, SeatStderr(spec)), None


def _make(child: _Endpoint, spec: str, timeout: float = _START_TIMEOUT) -> AgentInfo:
    path = list(sys.path) if isinstance(child, _ProcessChild) else None  # (a sandbox's is set)
    reply = child.call("make", (spec, path), timeout)
    if "error" in reply:
        raise AgentSpecError(shown_message(reply["error"][1], RECORD_MESSAGE_CHARS))
    try:
        info = AgentInfo.from_json(reply.get("ok"))
    except ValueError as error:
        raise AgentSpecError(f"agent {spec!r}: {error}") from None
    return dataclasses.replace(info, spec=seat_spec(spec, info.spec))  # never the child's


def isolated_info(spec: str, isolation: Isolation | None = None, deck: str | None = None
                  ) -> AgentInfo:
    """What the engine needs to know of an untrusted agent, told by a child (its code is not
    imported here). Raises :class:`AgentSpecError` with the child's message."""
    isolation = isolation or Isolation("process")
    key = (spec, isolation.mode, isolation.files)
    info = _INFOS.get(key)
    if info is None:
        child, sandbox = _start(spec, isolation, deck)
        try:
            info = _make(child, spec)
        except _ChildGone as gone:
            raise AgentSpecError(f"agent {spec!r} could not start in its own process: "
                                 f"{gone}") from None
        finally:
            child.stop()
            if sandbox is not None:  # its game is over: the template is pristine still
                _SPARES.setdefault(sandbox.spare_key, sandbox)
        _INFOS[key] = _INFOS[(info.spec, *key[1:])] = info  # the canonical spec too
    return info


def isolated_spec(spec: str, isolation: Isolation | None = None) -> str:
    """The canonical spec of an agent, checked by a child process."""
    return isolated_info(spec, isolation).spec


# -- the engine's side of a seat ------------------------------------------------------------------

class IsolatedAgent(Agent):
    """The engine's side of an agent in a child (see the module docstring)."""

    name = "isolated"

    def __init__(self, spec: str, isolation: Isolation | None = None, deck: str | None = None,
                 *, decision_timeout: float | None = None) -> None:
        if isolation is None:
            isolation = Isolation("process", timeout=decision_timeout)
        self.isolation, self.deck_spec = isolation, deck
        self.info = isolated_info(spec, isolation, deck)
        self.spec = self.info.spec
        self._written = spec
        self._stderr = SeatStderr(spec)  # its name: the seat's, once it plays
        self._child: _Endpoint | None = None
        self._sandbox: Any = None
        self._decks: set[str] = set()        # the decks the current child holds
        self._stopped: str | None = None     # why this game's child is gone
        self._cpu_at_begin: float | None = None
        self._games = 0
        self._finalizer = weakref.finalize(self, IsolatedAgent._release, [None, None])
        self._context: GameContext | None = None

    @staticmethod
    def _release(held: list[Any]) -> None:
        for thing in held:
            if thing is not None:
                thing.stop()

    # -- children --------------------------------------------------------------------------

    def _fresh(self, context: GameContext) -> _Endpoint:
        """A child that has made the agent: a process, or a game process forked in the
        sandbox (which holds the context's deck first, and has let a built-in agent fill its
        caches for the table, so that the game process does too)."""
        if self.isolation.mode == "sandbox":
            from dixit_lab.isolation.sandbox import SandboxError

            try:
                if self._sandbox is None or not self._sandbox.alive:
                    self._sandbox = _sandbox(self._written, self.isolation, self.deck_spec,
                                             self._stderr)
                self._sandbox.add_deck(context.deck.fingerprint, context.deck)
                self._sandbox.warm(context.deck.fingerprint, context.n_players, context.rules,
                                   context.agents)
                child: _Endpoint = _SandboxChild(self._sandbox.game())
            except SandboxError as error:
                raise AgentFailure("crashed", str(error)) from None
            self._decks = set(self._sandbox.decks)
        else:
            try:
                child = _ProcessChild(self.isolation.limits, self._stderr)
            except _ChildGone as gone:
                raise AgentFailure("crashed", str(gone)) from None
            self._decks = set()
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, IsolatedAgent._release,
                                           [child, self._sandbox])
        try:  # a sandbox's game process makes its agent each game: a call's deadline
            _make(child, self._written, self.isolation.call_timeout if self._sandbox is not None
                  else _START_TIMEOUT)
        except (_ChildGone, AgentSpecError) as error:
            child.stop()
            raise AgentFailure("crashed", f"the agent's process could not make the agent: "
                                          f"{error}") from None
        return child

    def _end_game(self) -> None:
        if self._child is not None:
            self._child.stop()
            self._child = None

    def _call(self, command: str, payload: Any) -> Any:
        if self._stopped is not None:
            raise AgentFailure(self._stopped, "the agent's process was stopped earlier in "
                                              "this game")
        child = self._child
        if child is None or child.owner != os.getpid():
            raise AgentFailure("crashed", "the agent's process is not running")
        asked = time.monotonic()
        try:
            reply = child.call(command, payload, self.isolation.call_timeout)
            self._check_cpu(child)
        except _ChildGone as gone:
            child.stop()
            self._child, self._stopped = None, gone.kind
            raise AgentFailure(gone.kind, str(gone)) from None
        finally:
            if self.isolation.pace is not None and command in _PACED:
                _wait_until(asked + self.isolation.pace)
        self._heard(reply.get("unperceived"))
        if "error" in reply:  # (the frame checked: two strings; the message cut)
            kind, message = reply["error"]
            raise AgentFailure("raised", safe_message(f"the agent raised {kind[:100]}: "
                                                      f"{message[:RECORD_MESSAGE_CHARS]}"))
        if "clue" in reply:
            card, text = reply["clue"]
            return Clue(card, text)
        return reply["ok"] if "ok" in reply else _Raw(str(reply.get("illegal", "?"))[:200])

    def _check_cpu(self, child: _Endpoint) -> None:
        """``isolation: process``: the game's CPU budget, measured from outside (a sandbox's
        kernel limit stops its game process by itself)."""
        if self._cpu_at_begin is None:
            return
        used = child.cpu_seconds()
        budget = self.isolation.budget.cpu_seconds
        if used is not None and used - self._cpu_at_begin > budget:
            child.stop()
            raise _ChildGone("timeout", f"the agent's process used {used - self._cpu_at_begin:.1f}"
                                        f" s of CPU in this game, over its CPU budget of "
                                        f"{budget:g} s (limits.cpu_seconds); it was stopped")

    def _heard(self, texts: Any) -> None:
        """Pass on the clues the child's agent said it cannot perceive (plain strings, a few
        at a time: anything else is ignored) to this game's context."""
        if isinstance(texts, list) and self._context is not None:
            for text in texts[:_MAX_UNPERCEIVED]:
                if isinstance(text, str) and len(text) <= CLUE_CHARS:
                    self._context.cannot_perceive(text)

    # -- the agent API -----------------------------------------------------------------------

    def begin_game(self, context: GameContext) -> None:
        self._stopped = None  # a new game: a child that died is started again
        self._context = context
        if 0 <= context.seat < len(context.players):  # its stderr shown under its name
            self._stderr.label = str(context.players[context.seat])
        self._games += 1
        fresh_each_game = self.isolation.mode == "sandbox" and not self.isolation.forgets
        if self._child is not None and (fresh_each_game or self._child.owner != os.getpid()):
            if self._child.owner == os.getpid():
                self._child.stop()
            self._child = None  # (one inherited through a fork belongs to another process)
        if self._child is None:
            try:
                self._child = self._fresh(context)
            except AgentFailure as failure:
                self._stopped = failure.kind
                raise
        key = context.deck.fingerprint
        if key not in self._decks:  # a process's first game on this deck
            self._call("deck", (key, context.deck))
            self._decks.add(key)
        self._cpu_at_begin = self._child.cpu_seconds() if self._child is not None else None
        state = context.to_state()
        self._call("begin", (*state[:3], key, *state[4:]))

    def tell(self, view: Any) -> Any:
        return self._call("tell", view)

    def submit(self, view: Any) -> Any:
        return self._call("submit", view)

    def vote(self, view: Any) -> Any:
        return self._call("vote", view)

    def observe(self, result: PublicRound) -> None:
        if self._stopped is None:  # a stopped child has already cost this game a fault
            self._call("observe", result)

    def close(self) -> None:
        self._end_game()
        if self._sandbox is not None:
            self._sandbox.stop()
            self._sandbox = None


class _Raw:
    """A child's answer that was not plain data, shown as the child described it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text
