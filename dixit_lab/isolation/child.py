"""The child's side of an untrusted seat: one loop that reads the engine's commands and
answers in JSON, for ``isolation: process`` (``python -m dixit_lab.isolation.child``)
and for a sandbox's game process (:mod:`dixit_lab.isolation.sandbox_template`).

Commands (pickled by the engine, which the child trusts): ``make`` (the spec: build the agent,
answer its :class:`~dixit_lab.isolation.trust.AgentInfo`), ``deck`` (a deck the contexts name by
its fingerprint), ``begin`` (a :class:`~dixit_lab.core.agent.GameContext`'s state), ``tell``,
``submit``, ``vote`` and ``observe``. Answers are plain JSON, which the engine parses as data
(it never unpickles what a child sends).
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import sys
from typing import Any

from dixit_lab.core.agent import Agent, Clue, GameContext
from dixit_lab.isolation.channel import read_frame, write_frame
from dixit_lab.isolation.trust import AgentInfo, Limits

__all__ = ["serve", "set_limits"]


def set_limits(limits: Limits, processes: int | None = None) -> None:
    """Lower this process's resource limits to ``limits`` (soft and hard): its address space
    (every mapping: shared memory too, which the data limit does not count) and its data
    (heap and private memory), the size of a file it writes, no core files, and with
    ``processes`` the tasks its user may run (in a sandbox's game, the tasks of its own user
    namespace)."""
    memory = limits.memory_mb << 20
    size = limits.file_mb << 20
    pairs = [(resource.RLIMIT_AS, memory), (resource.RLIMIT_DATA, memory),
             (resource.RLIMIT_FSIZE, size), (resource.RLIMIT_CORE, 0)]
    if processes is not None:
        pairs.append((resource.RLIMIT_NPROC, processes))
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def serve(read_fd: int, write_fd: int, decks: dict[str, Any] | None = None,
          prepared: dict[str, Agent] | None = None) -> None:
    """Answer the engine's frames on ``read_fd`` until it closes it. ``decks`` and
    ``prepared`` (built-in agents a sandbox's template made and warmed, by spec) come from the
    template, through the fork."""
    from dixit_lab.core.agent import make_agent

    decks = {} if decks is None else decks
    prepared = {} if prepared is None else prepared
    agent: Agent | None = None
    context: GameContext | None = None
    told: set[str] = set()  # the clues this game's context already said it cannot perceive
    while True:
        frame = read_frame(read_fd)
        if frame is None:
            return  # the engine is gone, or done with this game
        command, payload = pickle.loads(frame)
        try:
            if command == "make":
                spec, path = payload
                if path is not None:
                    sys.path[:] = path
                agent = prepared.pop(spec, None) or make_agent(spec)
                reply: dict[str, Any] = {"ok": AgentInfo.of(agent).to_json()}
            elif command == "deck":
                key, deck = payload
                decks[key] = deck
                reply = {"ok": None}
            elif agent is None:
                raise RuntimeError("no agent")
            elif command == "begin":
                seat, n_players, rules, deck_key, agents, base = payload
                context, told = GameContext(seat, n_players, rules, decks[deck_key], agents,
                                            base), set()
                agent.begin_game(context)
                reply = {"ok": None}
            elif command == "observe":
                agent.observe(payload)
                reply = {"ok": None}
            elif command in ("tell", "submit", "vote"):
                reply = _encode(getattr(agent, command)(payload))
            else:
                raise RuntimeError(f"unknown command {command!r}")
        except Exception as error:
            reply = {"error": [type(error).__name__, str(error)]}
        if context is not None:  # what the agent said it cannot perceive, once each
            new = sorted(context.unperceived_clues() - told)
            if new:
                told.update(new)
                reply["unperceived"] = new
        write_frame(write_fd, json.dumps(reply).encode())


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


def _main() -> None:
    """``isolation: process``: stdin and stdout are the frames; the agent's prints go to
    stderr; the player's limits (or None) come as the first frame."""
    from dixit_lab.isolation.process_life import die_with_parent

    die_with_parent()
    write_fd = os.dup(1)
    os.dup2(2, 1)  # the agent's prints go to stderr, not into the protocol
    sys.stdout = sys.stderr
    frame = read_frame(0)
    if frame is None:
        return
    limits = pickle.loads(frame)
    if limits is not None:
        set_limits(limits)
    serve(0, write_fd)


if __name__ == "__main__":
    _main()
