"""Agents you don't trust, each in its own OS process (``isolation: process`` in a config).

An :class:`IsolatedAgent` stands at the table for an agent that lives in a child Python
process started fresh (``python -m dixit_lab.engine.isolation``, never forked: nothing of the
engine's memory is there to find). The child receives only serialised views and answers in
JSON, which the parent parses as plain data (never unpickles), so a hostile agent can neither
read the game nor reach into the engine. The agent's code is never imported in the parent:
even its spec is checked and made canonical by a child.

With ``decision_timeout`` a decision (tell, submit, vote) that runs over is a fault of kind
``timeout`` and the child is killed (``begin_game`` and ``observe`` get at least a minute, for
agents that load a model when a game begins); a child that dies is a fault of kind
``crashed``. Either way the seat's later decisions in that game are faults too (with the
engine's seeded fallback actions) and a new child starts at the next game. Records are
byte-identical to the same table without isolation as long as nothing times out or crashes.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import time
import weakref
from typing import Any

from dixit_lab.core.agent import Agent, AgentFailure, AgentSpecError, Clue, GameContext, PublicRound
from dixit_lab.engine.process_life import die_with_parent

__all__ = ["IsolatedAgent", "isolated_spec"]

_HEADER = struct.Struct(">I")
_MAX_REPLY = 1 << 20        # bytes: a child's answer is a few numbers and a clue
_START_TIMEOUT = 120.0      # seconds for a child to import its agent and answer "make"
_HOOK_TIMEOUT = 60.0        # at least this for begin_game and observe (an agent may load a model)
_MAX_UNPERCEIVED = 16       # clue texts a reply may say its agent could not perceive
_MAX_CLUE_TEXT = 4096       # characters of each
_CHILDREN: weakref.WeakSet[_Child] = weakref.WeakSet()


class _ChildGone(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Child:
    """One child process and its two pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dixit_lab.engine.isolation"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, cwd=os.getcwd(), env=os.environ.copy())
        self.owner = os.getpid()  # a forked worker inherits this object, not the child
        _CHILDREN.add(self)

    def call(self, command: str, payload: Any, timeout: float | None) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        data = pickle.dumps((command, payload), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.process.stdin.fileno(), _HEADER.pack(len(data)) + data)
        except OSError:
            raise self._died() from None
        deadline = None if timeout is None else time.monotonic() + timeout
        header = self._read(_HEADER.size, deadline, timeout)
        (size,) = _HEADER.unpack(header)
        if size > _MAX_REPLY:
            self.stop()
            raise _ChildGone("crashed", f"the agent's process sent a reply of {size} bytes "
                                        f"(more than {_MAX_REPLY}); it was stopped")
        reply = json.loads(self._read(size, deadline, timeout))
        if not isinstance(reply, dict):
            raise _ChildGone("crashed", "the agent's process sent a malformed reply")
        return reply

    def _read(self, size: int, deadline: float | None, timeout: float | None) -> bytes:
        stream = self.process.stdout
        assert stream is not None
        chunks, remaining = [], size
        fd = stream.fileno()
        while remaining:
            if deadline is not None and not select.select(
                    [fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                self.stop()
                raise _ChildGone("timeout", f"no answer within {timeout:g} s "
                                            f"(decision_timeout); the agent's process was "
                                            f"stopped")
            chunk = os.read(fd, remaining)
            if not chunk:
                raise self._died()
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _died(self) -> _ChildGone:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            code = self.process.returncode
        return _ChildGone("crashed", f"the agent's process exited (code {code})")

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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@atexit.register
def _stop_children() -> None:
    for child in list(_CHILDREN):
        child.stop()


_SPECS: dict[str, str] = {}


def isolated_spec(spec: str) -> str:
    """The canonical spec of an agent, checked by a child process (its code is not imported
    here). Raises :class:`AgentSpecError` with the child's message."""
    canonical = _SPECS.get(spec)
    if canonical is None:
        child = _Child()
        try:
            reply = child.call("make", spec, _START_TIMEOUT)
        except _ChildGone as gone:
            raise AgentSpecError(f"agent {spec!r} could not start in its own process: "
                                 f"{gone}") from None
        finally:
            child.stop()
        if "error" in reply:
            raise AgentSpecError(str(reply["error"][1]))
        canonical = _SPECS[spec] = str(reply["ok"])
    return canonical


class IsolatedAgent(Agent):
    """The parent's side of an agent in its own process (see the module docstring)."""

    name = "isolated"

    def __init__(self, spec: str, decision_timeout: float | None = None) -> None:
        self.spec = isolated_spec(spec)
        self.decision_timeout = decision_timeout
        self._child: _Child | None = None
        self._stopped: str | None = None  # why this game's child is gone
        self._finalizer: weakref.finalize | None = None
        self._context: GameContext | None = None

    def _start(self) -> _Child:
        child = _Child()
        try:
            reply = child.call("make", self.spec, _START_TIMEOUT)
        except _ChildGone as gone:
            child.stop()
            raise AgentFailure("crashed", f"the agent's process did not start: {gone}") from None
        if "error" in reply:
            child.stop()
            raise AgentFailure("crashed", f"the agent's process could not make the agent: "
                                          f"{reply['error'][1]}")
        self._finalizer = weakref.finalize(self, child.stop)
        return child

    def _call(self, command: str, payload: Any) -> Any:
        timeout = self.decision_timeout
        if timeout is not None and command in ("begin", "observe"):
            timeout = max(timeout, _HOOK_TIMEOUT)
        if self._stopped is not None:
            raise AgentFailure(self._stopped, "the agent's process was stopped earlier in "
                                              "this game")
        if self._child is not None and self._child.owner != os.getpid():
            self._child = None  # inherited through a fork: start our own
        if self._child is None:
            self._child = self._start()
        try:
            reply = self._child.call(command, payload, timeout)
        except _ChildGone as gone:
            self._child.stop()
            self._child, self._stopped = None, gone.kind
            raise AgentFailure(gone.kind, str(gone)) from None
        self._heard(reply.get("unperceived"))
        if "error" in reply:
            kind, message = reply["error"]
            raise AgentFailure("raised", f"the agent raised {kind}: {message}")
        if "clue" in reply:
            card, text = reply["clue"]
            return Clue(card, text)
        return reply["ok"] if "ok" in reply else _Raw(str(reply.get("illegal", "?")))

    def _heard(self, texts: Any) -> None:
        """Pass on the clues the child's agent said it cannot perceive (plain strings, a few
        at a time: anything else is ignored) to this game's context."""
        if isinstance(texts, list) and self._context is not None:
            for text in texts[:_MAX_UNPERCEIVED]:
                if isinstance(text, str) and len(text) <= _MAX_CLUE_TEXT:
                    self._context.cannot_perceive(text)

    # -- the agent API ----------------------------------------------------------------------

    def begin_game(self, context: GameContext) -> None:
        self._stopped = None  # a new game: a child that died is started again
        self._context = context
        self._call("begin", context.to_state())

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
        if self._child is not None:
            self._child.stop()
            self._child = None


class _Raw:
    """A child's answer that was not plain data, shown as the child described it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


# -- the child's side ------------------------------------------------------------------------


def _encode(value: Any) -> dict[str, Any]:
    if isinstance(value, Clue):
        try:
            return {"clue": json.loads(json.dumps([value.card, value.text], default=_plain))}
        except (TypeError, ValueError):
            return {"illegal": repr(value)}
    try:
        return {"ok": json.loads(json.dumps(value, default=_plain))}
    except (TypeError, ValueError):
        return {"illegal": repr(value)}


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    raise TypeError(f"not plain data: {value!r}")


def _serve() -> None:
    """The child's loop: read (command, payload) frames, answer in JSON."""
    from dixit_lab.core.agent import make_agent

    die_with_parent()
    read = sys.stdin.buffer
    write = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # the agent's prints go to stderr, not into the protocol
    sys.stdout = sys.stderr
    agent: Agent | None = None
    context: GameContext | None = None
    told: set[str] = set()  # the clues this game's context already said it cannot perceive
    while True:
        header = read.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the parent is gone
        (size,) = _HEADER.unpack(header)
        command, payload = pickle.loads(read.read(size))
        try:
            if command == "make":
                agent = make_agent(payload)
                reply: dict[str, Any] = {"ok": agent.spec}
            elif agent is None:
                raise RuntimeError("no agent")
            elif command == "begin":
                context, told = GameContext.from_state(payload), set()
                agent.begin_game(context)
                reply = {"ok": None}
            elif command == "observe":
                agent.observe(payload)
                reply = {"ok": None}
            else:
                reply = _encode(getattr(agent, command)(payload))
        except Exception as error:
            reply = {"error": [type(error).__name__, str(error)]}
        if context is not None:  # what the agent said it cannot perceive, once each
            new = sorted(context.unperceived_clues() - told)
            if new:
                told.update(new)
                reply["unperceived"] = new
        data = json.dumps(reply).encode()
        write.write(_HEADER.pack(len(data)) + data)


if __name__ == "__main__":
    _serve()
