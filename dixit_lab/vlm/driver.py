"""Playing many model games at once: every game of a chunk in flight, and every decision of
a phase (the listeners' submits, then their votes) asked concurrently.

Each game is a :class:`~dixit_lab.engine.game.GameSteps` driven by its own thread, with its own
agent instances; the requests themselves are bounded per endpoint by the client. A game's record
depends only on the replies, never on the order they arrive in, so the records are those of
:func:`~dixit_lab.engine.game.play_game` playing the games one by one. Each decision's usage row
(tokens, latency, cost, fault class) is written to ``exchanges/usage/`` for ``agents.csv``.
A tournament reaches it through the model agents' recorder (:mod:`dixit_lab.vlm.recorder`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from dixit_lab.core.agent import Agent
from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.engine.game import Decision, GameSteps, Phase, agent_answer
from dixit_lab.vlm.chat_agent import AgentSetupError
from dixit_lab.vlm.client import STOP, EndpointError, RunInterrupted
from dixit_lab.vlm.store import ExchangeWriteError, ReplayMiss, canonical_json, current_store

if TYPE_CHECKING:
    from dixit_lab.run.tournament import GameSpec, TableSetup

__all__ = ["FATAL", "play_remote_chunk"]

#: errors that stop the run: they would fail every decision, or break a replay (an exchange
#: that cannot be stored)
FATAL = (EndpointError, ReplayMiss, AgentSetupError, ExchangeWriteError)


class _Stopped(Exception):
    """Another game of the chunk failed: this one stops too."""


def _answer(agent: Agent, decision: Decision) -> Any:
    return agent_answer(agent, decision, FATAL)


def play_game_steps(agents: list[Agent], game: GameSteps, decisions: ThreadPoolExecutor | None,
                    stop: threading.Event | None = None) -> None:
    """Drive ``game`` with ``agents`` to its end (``game.record``), a phase's decisions asked
    at once on ``decisions``; what ``play_game`` does, concurrently."""
    for seat, agent in enumerate(agents):
        try:
            agent.begin_game(game.context(seat))
        except FATAL:
            raise
        except Exception as error:
            game.hook_failed(seat, "begin_game", error)
    event = game.start()
    while event is not None:
        if stop is not None and stop.is_set():
            raise _Stopped
        if isinstance(event, Phase):
            if decisions is None or len(event.decisions) == 1:
                answers = [_answer(agents[d.seat], d) for d in event.decisions]
            else:
                answers = list(decisions.map(lambda d: _answer(agents[d.seat], d),
                                             event.decisions))
            event = game.send(answers)
        else:
            for seat, agent in enumerate(agents):
                try:
                    agent.observe(event)
                except FATAL:
                    raise
                except Exception as error:
                    game.hook_failed(seat, "observe", error)
            event = game.send(None)


def _play_one(setup: TableSetup, spec: GameSpec, deck: Deck, decisions: ThreadPoolExecutor,
              stop: threading.Event) -> tuple[int, str, list[dict[str, Any]]]:
    from dixit_lab.isolation.seats import GameFailed, make_seat_agent

    # one set of agents per game in flight (isolated seats each get their own process)
    agents = [make_seat_agent(setup.specs[seat], setup.seat_isolation(seat), setup.deck)
              for seat in spec.seats]
    players = [setup.names[seat] for seat in spec.seats]
    for agent, player in zip(agents, players, strict=True):
        if hasattr(agent, "ledger_name"):
            agent.ledger_name = player  # the seat's budget is the player's, across games
    meta = {"game": spec.index, "deal": spec.deal, "players": players}
    try:
        game = GameSteps(tuple(agent.spec for agent in agents), setup.rules, deck,
                         setup.game_seed(spec.deal),
                         on_illegal=setup.on_illegal,  # type: ignore[arg-type]
                         meta=meta, players=setup.public_names(spec.seats),
                         first_player_seat=spec.first_player_seat)
        play_game_steps(agents, game, decisions, stop)
    except _Stopped:
        raise
    except ExchangeWriteError:  # FILE: reason, as any write the disk refuses
        stop.set()
        raise
    except Exception as error:
        stop.set()
        raise GameFailed(f"game {spec.index} (players {players}): {type(error).__name__}: "
                         f"{error}") from error
    finally:
        for agent in agents:
            close = getattr(agent, "close", None)
            if close is not None:
                close()  # an isolated agent's process
    assert game.record is not None
    rows = []
    for seat, agent in enumerate(agents):
        drain = getattr(agent, "drain_usage", None)
        for row in drain() if drain else ():
            rows.append({"game": spec.index, "seat": seat, "player": players[seat],
                         "agent": agent.spec, **row})
    return spec.index, game.record.to_json(), rows


_POOLS: dict[str, tuple[ThreadPoolExecutor, int]] = {}
_POOLS_LOCK = threading.Lock()


def _pool(kind: str, size: int) -> ThreadPoolExecutor:
    """A process-wide pool of at least ``size`` threads: threads start on demand and serve the
    next chunks too (starting a hundred threads per chunk costs a second on a busy machine)."""
    size = max(size, 1)
    with _POOLS_LOCK:
        pool, capacity = _POOLS.get(kind, (None, 0))
        if pool is None or capacity < size:
            if pool is not None:
                pool.shutdown(wait=False)  # its threads end once idle
            pool = ThreadPoolExecutor(size, thread_name_prefix=f"dixit-{kind}")
            _POOLS[kind] = (pool, size)
        return pool


def _forget_pools() -> None:
    global _POOLS_LOCK
    _POOLS_LOCK = threading.Lock()
    _POOLS.clear()  # a forked child has none of the parent's threads


os.register_at_fork(after_in_child=_forget_pools)


def play_remote_chunk(setup: TableSetup, chunk: list[GameSpec]) -> list[tuple[int, str]]:
    """Play the games of ``chunk`` all at once; returns (game index, JSON line) pairs in
    chunk order and writes the decisions' usage rows next to the exchange store."""
    from dixit_lab.run.tournament import ChunkInterrupted

    deck = load_deck(setup.deck)
    stop = threading.Event()
    STOP.clear()
    games = _pool("game", len(chunk))
    decisions = _pool("decision", sum(len(spec.seats) - 1 for spec in chunk))
    futures = [games.submit(_play_one, setup, spec, deck, decisions, stop) for spec in chunk]
    results = []
    failure: BaseException | None = None
    try:
        for future in futures:  # every game is waited for, also after a failure
            try:
                results.append(future.result())
            except (_Stopped, RunInterrupted):
                continue
            except Exception as error:  # a game's failure stops the others (never Ctrl-C)
                stop.set()
                failure = failure or error
    except BaseException:  # Ctrl-C, SIGTERM: no request starts, those in flight end now
        stop.set()
        STOP.set()
        for future in futures:
            future.cancel()
        ended = [future.result() for future in futures if future.done()
                 and not future.cancelled() and future.exception() is None]
        _write_usage(ended)
        raise ChunkInterrupted([(index, line) for index, line, _ in ended]) from None
    if failure is not None:
        raise failure
    _write_usage(results)
    return [(index, line) for index, line, _ in results]


def _write_usage(results: list[tuple[int, str, list[dict[str, Any]]]]) -> None:
    """The decisions' usage rows of the games that ended, beside the exchange store (one file
    for each run of consecutive games: the rows of a game are where ``agents.csv`` finds its
    usage columns)."""
    from dixit_lab.atomic import atomic_write_text
    from dixit_lab.records.format import part_name

    store = current_store()
    if store.folder is None or store.mode == "replay" or not results:
        return
    runs: list[list[tuple[int, str, list[dict[str, Any]]]]] = []
    for result in sorted(results, key=lambda item: item[0]):
        if runs and result[0] == runs[-1][-1][0] + 1:
            runs[-1].append(result)
        else:
            runs.append([result])
    for run in runs:
        text = "".join(canonical_json(row) + "\n" for _, _, rows in run for row in rows)
        atomic_write_text(store.folder / "usage" / part_name(run[0][0], run[-1][0]), text)
