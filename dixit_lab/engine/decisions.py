"""What the reference engine asks and is answered: a :class:`Decision` (one seat, its action
and the view it decides on), a :class:`Phase` (every decision of one phase), a
:class:`Failure` (an answer meaning the seat's decision failed), and :func:`agent_answer`,
an agent's answer to a decision (and :func:`observes`, whether its ``observe`` does
anything). :mod:`dixit_lab.engine.game` asks them; every driver of a
game (the engine's own loop, isolated seats, models, people, the PettingZoo env) answers them.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from dixit_lab.core.agent import Agent, AgentFailure, SubmitView, TellView, VoteView

__all__ = ["Action", "Decision", "Failure", "Phase", "agent_answer", "observes",
           "raised_message"]

Action = Literal["tell", "submit", "vote"]


class Decision(NamedTuple):
    """One seat's pending decision and the view it decides on."""

    seat: int
    action: Action
    view: TellView | SubmitView | VoteView


class Phase(NamedTuple):
    """Every decision of one phase, all known at once: the storyteller's ``tell``, or the
    listeners' ``submit`` or ``vote`` (in seat order from the storyteller's left)."""

    action: Action
    decisions: tuple[Decision, ...]


class Failure(NamedTuple):
    """An answer meaning "this seat's decision failed": ``kind`` is the fault class
    (``raised``, ``timeout``, ``crashed``, ``unparsable``, ``refused``, ``backend`` ...)."""

    kind: str
    message: str
    error: BaseException | None = None


def agent_answer(agent: Agent, decision: Decision,
                 fatal: tuple[type[BaseException], ...] = ()) -> Any:
    """``agent``'s answer to ``decision``: what it returns, or the :class:`Failure` that its
    exception stands for (an exception of a ``fatal`` class propagates: it stops the run)."""
    try:
        return getattr(agent, decision.action)(decision.view)
    except fatal:
        raise
    except AgentFailure as failure:
        return Failure(failure.kind, str(failure), failure)
    except Exception as error:
        return Failure("raised", raised_message(error), error)


def raised_message(error: BaseException) -> str:
    """The fault message of an agent's exception."""
    return f"the agent raised {type(error).__name__}: {error}"


def observes(agent: Agent) -> bool:
    """Whether ``agent.observe`` may do anything: False for the base class's, which does
    nothing (``play_game`` then calls it not at all)."""
    method = getattr(agent, "observe", None)
    return getattr(method, "__func__", None) is not Agent.observe
