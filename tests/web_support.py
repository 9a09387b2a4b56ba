"""Helpers of the web tests: a short game with a person's seat, and a player of that seat that
makes legal moves through the JSON API (as a program taking a seat would)."""

from __future__ import annotations

import threading
import time
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
