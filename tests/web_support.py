"""Helpers of the web tests: a short game with a person's seat, and a player of that seat that
makes legal moves through the JSON API (as a program taking a seat would)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dixit_lab.core.agent import register_agent
from dixit_lab.core.clues import ClueBank
from dixit_lab.run.experiment import parse_config
from dixit_lab.web.results import PlayFolder
from dixit_lab.web.table import PlayTable
from dixit_lab_agents.random_agent import RandomAgent

BANK_CLUE = ClueBank.load("default")[0]  # a clue the agents perceive without a model


@register_agent("test-slow")
class SlowAgent(RandomAgent):
    """``random``, taking 0.3 s to think: the page shows it thinking."""

    def tell(self, view: Any) -> Any:
        time.sleep(0.3)
        return super().tell(view)

    def submit(self, view: Any) -> Any:
        time.sleep(0.3)
        return super().submit(view)

    def vote(self, view: Any) -> Any:
        time.sleep(0.3)
        return super().vote(view)


def config_data(players: list[dict[str, Any]] | None = None, games: int = 1,
                max_rounds: int = 4) -> dict[str, Any]:
    """A short game on the bundled deck: the person and three built-in agents."""
    return {
        "name": "people",
        "seed": 11,
        "rules": {"preset": "classic", "options": {"max_rounds": max_rounds}},
        "deck": "dreams",
        "players": players or [{"name": "you", "agent": "human"},
                               {"name": "literal", "agent": "literal"},
                               {"name": "softmax", "agent": "softmax",
                                "params": {"temperature": 0.05}},
                               # registered in this process only: seated here, on purpose
                               {"name": "slow", "agent": "test-slow", "isolation": "none"}],
        "games": games,
        "executor": {"kind": "local"},
    }


def start_table(folder: Path, data: dict[str, Any]) -> tuple[PlayTable, threading.Thread]:
    config = parse_config(data, "test config")
    table = PlayTable(config, PlayFolder(config, folder))
    thread = threading.Thread(target=table.run, daemon=True)
    thread.start()
    return table, thread


def legal_move(view: dict[str, Any], clue: str = BANK_CLUE) -> dict[str, Any]:
    """The first legal move of the seat's pending decision."""
    if view["phase"] == "tell":
        return {"tell": {"card": view["hand"][0]["card"], "clue": clue}}
    if view["phase"] == "submit":
        return {"submit": [card["card"] for card in view["hand"][:view["n_cards"]]]}
    if view["phase"] == "vote":
        allowed = [p for p in range(len(view["display"])) if p not in view["own_positions"]]
        return {"vote": allowed[0]}
    raise ValueError(f"no move in phase {view['phase']}")


def play_seat(client: Any, token: str, timeout: float = 120.0) -> list[dict[str, Any]]:
    """Play the seat to the end of the run through the API; returns every view seen."""
    deadline = time.monotonic() + timeout
    view = client.get(f"/api/play/{token}").json()
    seen = [view]
    while view["phase"] != "over":
        assert time.monotonic() < deadline, f"the game did not end; last view {view}"
        if view["phase"] == "wait":
            response = client.get(f"/api/play/{token}", params={"after": view["version"]})
        else:
            response = client.post(f"/api/play/{token}", json=legal_move(view))
        assert response.status_code == 200, response.text
        view = response.json()
        seen.append(view)
    return seen


def until_people_decide(table: PlayTable, timeout: float = 60.0) -> int:
    """Wait until the table waits for people only (no agent is thinking): its version then,
    which stays until a person moves."""
    deadline = time.monotonic() + timeout
    while True:
        with table.cond:
            people = {human.seat for human in table.humans if human.pending is not None}
            if table.waiting and table.waiting <= people:
                return table.version
        assert time.monotonic() < deadline, "the table never waited for a person"
        time.sleep(0.05)


@contextlib.contextmanager
def serving(app: Any) -> Iterator[tuple[str, Any]]:
    """``app`` served by uvicorn on a loopback port, in a thread: its base URL and the
    ``uvicorn.Server``."""
    from dixit_lab.web.server import bind, serve

    sock = bind("127.0.0.1", 0)
    server = serve(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server never started"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", server
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


async def raw_get(base: str, path: str, timeout: float = 30.0) -> tuple[int, Any]:
    """GET ``path`` on a new connection (asyncio streams: an HTTP client's pool would cost
    more than the server under test): the status and the JSON body."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                     .encode("ascii"))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)
