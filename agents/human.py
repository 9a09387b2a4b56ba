"""``human``: a seat for a person. ``dixit-lab play`` serves the seat a web page and the engine
waits on it; anywhere else (``dixit-lab replay``) the seat answers with the decisions recorded
in the results folder (see :mod:`dixit_lab.web.decisions`)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from dixit_lab.core.agent import (
    Agent,
    Clue,
    GameContext,
    SubmitView,
    TellView,
    VoteView,
    register_agent,
)
from dixit_lab.web.decisions import decisions_path, load_decisions, view_key

_LOADED: dict[tuple[str, float], dict[str, tuple[str, Any]]] = {}


def _recorded() -> dict[str, tuple[str, Any]] | None:
    path = decisions_path()
    if path is None:
        return None
    key = (str(path), os.path.getmtime(path))
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = load_decisions(path)
    return _LOADED[key]


@register_agent("human")
class HumanAgent(Agent):
    """A person's seat: played through the web page of ``dixit-lab play``; replayed from the
    recorded decisions of its results folder."""

    person: ClassVar[bool] = True  # an untrusted seat: its run deals from a secret
    recorder: ClassVar[str | None] = "decisions"  # a replay answers from its decisions
    writes_free_text = True  # a person types any clue

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        decisions = _recorded()
        if decisions is None:
            raise RuntimeError("agent 'human' is a seat for a person: play this config with "
                               "`dixit-lab play CONFIG` (or replay a folder that holds "
                               "human_decisions.jsonl)")
        self.decisions = decisions

    def _answer(self, action: str, view: Any) -> Any:
        recorded = self.decisions.get(view_key(view))
        if recorded is None or recorded[0] != action:
            raise LookupError(f"no recorded {action} decision of seat {view.seat} for this "
                              f"view of round {view.round}")
        return recorded[1]

    def tell(self, view: TellView) -> Clue:
        answer: Clue = self._answer("tell", view)
        return answer

    def submit(self, view: SubmitView) -> list[int]:
        answer: list[int] = self._answer("submit", view)
        return answer

    def vote(self, view: VoteView) -> int:
        answer: int = self._answer("vote", view)
        return answer
