"""Seating a player's agent for a game of a tournament, what the engine knows of a seat, and
the error of a game that fails.

The one home of these for every chunk player: the reference engine's loop
(:func:`dixit_lab.run.tournament.play_chunk`), the model driver (:mod:`dixit_lab.vlm.driver`) and
the people's table (:mod:`dixit_lab.web.table`). How a seat is run and what the engine knows
of an agent it does not hold: :mod:`dixit_lab.isolation.trust`.
"""

from __future__ import annotations

from dixit_lab.core.agent import Agent, make_agent
from dixit_lab.errors import UserError
from dixit_lab.isolation.isolated_agent import IsolatedAgent, isolated_info
from dixit_lab.isolation.trust import TRUSTED, AgentInfo, Isolation

__all__ = ["GameFailed", "make_seat_agent", "seat_info"]


class GameFailed(UserError, RuntimeError):
    """A game of a tournament could not be played; the message names the game."""


_TRUSTED_INFO: dict[str, AgentInfo] = {}


def seat_info(spec: str, isolation: Isolation = TRUSTED, deck: str | None = None) -> AgentInfo:
    """What the engine knows of a seat's agent: built here for a trusted seat (once a spec),
    told by a child for an untrusted one (its code never runs here)."""
    if isolation.untrusted:
        return isolated_info(spec, isolation, deck)
    info = _TRUSTED_INFO.get(spec)
    if info is None:
        info = _TRUSTED_INFO[spec] = AgentInfo.of(make_agent(spec))
    return info


def make_seat_agent(spec: str, isolation: Isolation = TRUSTED, deck: str | None = None
                    ) -> Agent:
    """The agent of a seat: built here, or in a child (``isolation: process`` or
    ``sandbox``; ``deck``: the deck the games use, which a sandbox may read)."""
    if not isolation.untrusted:
        return make_agent(spec)
    return IsolatedAgent(spec, isolation, deck)
