"""What a seat is trusted with: how its agent is run (:class:`Isolation`, :class:`Limits`)
and what the engine knows of an agent it does not hold (:class:`AgentInfo`).

A seat is *trusted* (``isolation: none``: its agent is built in the engine's process) or
*untrusted* (``process`` or ``sandbox``: its agent lives in a child, see
:mod:`dixit_lab.isolation.isolated_agent`; a person's or a model's seat is untrusted too).
What the engine must know of an untrusted seat's agent (its canonical spec, whether it plays
through a remote model, whether it predicts find rates, whether it perceives card images) comes
from a child as an :class:`AgentInfo`: the engine never imports, builds or asks an untrusted
agent anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dixit_lab.core.agent import Agent, AgentSpecError

__all__ = ["DEFAULT_TIMEOUT", "TRUSTED", "AgentInfo", "Isolation", "Limits"]

Mode = Literal["none", "process", "sandbox"]

#: seconds an untrusted seat may take for one call when its config names no decision_timeout
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Limits:
    """What an untrusted seat's process may use in one game (``limits:`` of a player).
    Enforced by the kernel in a sandbox, always (these defaults unless the player says
    otherwise). In ``isolation: process`` the CPU budget always holds (measured by the
    engine); the memory and file limits only when the player gives ``limits:`` (set in the
    child, which an agent running as root could lift); the process limit never."""

    memory_mb: int = 4096        # each process's address space and data (RLIMIT_AS and
                                 # RLIMIT_DATA: shared memory counts); a CLIP model in torch
                                 # maps ~1.2 GB
    processes: int = 4           # processes and threads beyond the agent's own
    file_mb: int = 16            # the largest file it may write
    cpu_seconds: float = 60.0    # CPU time in one game, decisions and hooks and in between
                                 # (in a sandbox: of all the game's processes)


@dataclass(frozen=True)
class Isolation:
    """How a seat's agent is run: ``none`` (in the engine's process), ``process`` (its own
    process, not a boundary) or ``sandbox`` (its own namespaces, see
    :mod:`dixit_lab.isolation.sandbox`);
    ``timeout``: seconds for each call to an untrusted agent; ``forgets``: a sandboxed agent
    the user trusts to forget, kept for every game (else a fresh process each game);
    ``files``: more paths the sandbox may read; ``limits``: the player's ``limits:`` (None:
    the defaults, see :attr:`budget`); ``pace``: seconds before which no call of a game
    (``begin_game``, a decision, ``observe``) returns to the engine, however early the agent
    answered (None: as soon as it answers), so that the other seats cannot time it."""

    mode: Mode = "none"
    timeout: float | None = None
    limits: Limits | None = None
    forgets: bool = False
    files: tuple[str, ...] = ()
    pace: float | None = None

    @property
    def budget(self) -> Limits:
        """The limits in force: the player's, else the defaults."""
        return self.limits or Limits()

    @property
    def untrusted(self) -> bool:
        return self.mode != "none"

    @property
    def call_timeout(self) -> float:
        """Seconds for one call (a decision, ``begin_game`` or ``observe``)."""
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT


TRUSTED = Isolation()


@dataclass(frozen=True)
class AgentInfo:
    """What the engine knows of an agent without holding it: its canonical ``spec``, whether
    it plays through a ``remote`` model, whether a ``person`` plays it, whether it
    ``predicts`` find rates and whether it ``needs_card_images``."""

    spec: str
    remote: bool = False
    person: bool = False
    predicts: bool = False
    needs_card_images: bool = False
    recorder: str | None = None

    @classmethod
    def of(cls, agent: Agent) -> AgentInfo:
        needs = getattr(agent, "needs_card_images", None)
        return cls(spec=str(agent.spec), remote=bool(getattr(agent, "remote", False)),
                   person=bool(getattr(agent, "person", False)),
                   predicts=callable(getattr(agent, "predicted_find", None)),
                   needs_card_images=bool(needs()) if callable(needs) else False,
                   recorder=_recorder(type(agent).__name__, getattr(agent, "recorder", None)))

    def to_json(self) -> dict[str, object]:
        return {"spec": self.spec, "remote": self.remote, "person": self.person,
                "predicts": self.predicts, "needs_card_images": self.needs_card_images,
                "recorder": self.recorder}

    @classmethod
    def from_json(cls, data: object) -> AgentInfo:
        """An info a child sent (plain JSON, checked field by field)."""
        if not isinstance(data, dict) or not isinstance(data.get("spec"), str):
            raise ValueError("the agent's process sent no spec")
        return cls(spec=data["spec"], remote=data.get("remote") is True,
                   person=data.get("person") is True, predicts=data.get("predicts") is True,
                   needs_card_images=data.get("needs_card_images") is True,
                   recorder=_recorder("the agent", data.get("recorder")))

    @property
    def untrusted(self) -> bool:
        """A seat played from outside the engine (a model, a person) is untrusted too."""
        return self.remote or self.person


def _recorder(owner: str, value: object) -> str | None:
    """An agent's ``recorder``: None, or a recorder's name (a string of 1 to 100 characters);
    anything else is refused, naming ``owner`` (it would play with nothing recorded)."""
    if value is None or (isinstance(value, str) and 0 < len(value) <= 100):
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise AgentSpecError(f"{owner}'s recorder is {shown} ({type(value).__name__}): it must be "
                         f"a recorder's name (a string of 1 to 100 characters) or None")
