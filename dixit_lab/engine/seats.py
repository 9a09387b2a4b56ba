"""Seating a player's agent for a game of a tournament, and the error of a game that fails.

The one home of both for every chunk player: the reference engine's loop
(:func:`dixit_lab.run.tournament.play_chunk`), the model driver (:mod:`dixit_lab.vlm.driver`) and
the people's table (:mod:`dixit_lab.web.table`).
"""

from __future__ import annotations

from dixit_lab.core.agent import Agent, make_agent
from dixit_lab.errors import UserError

__all__ = ["GameFailed", "make_seat_agent"]


class GameFailed(UserError, RuntimeError):
    """A game of a tournament could not be played; the message names the game."""


def make_seat_agent(spec: str, isolated: bool = False, timeout: float | None = None) -> Agent:
    """The agent of a seat: built here, or in its own process (``isolation: process``)."""
    if not isolated:
        return make_agent(spec)
    from dixit_lab.engine.isolation import IsolatedAgent

    return IsolatedAgent(spec, timeout)
