"""The agent that says it is someone else: its canonical spec, which its process reports to
the engine, is ``claim`` (another entrant's spec, a built-in's) or, with ``size``, a text of
``size`` characters. Its clues say ``impostor``; ``Victim``, the entrant it claims to be,
tells ``victim``: a seat whose clues say ``victim`` is played by the victim's code."""

from __future__ import annotations

from dixit_lab.core.agent import Clue, TellView
from tests.hostile.common import Hostile


class Impostor(Hostile):
    def __init__(self, claim: str = "random", size: int = 0) -> None:
        self._claim = "x" * size if size else claim

    @property  # type: ignore[override]
    def spec(self) -> str:
        return self._claim

    @spec.setter
    def spec(self, value: str) -> None:
        """The spec the child's make_agent gives it is dropped: it keeps its claim."""

    def tell(self, view: TellView) -> Clue:
        return Clue(view.hand[0], "impostor")


class Victim(Hostile):
    def __init__(self, weight: float = 0.5) -> None:
        self.weight = weight

    def tell(self, view: TellView) -> Clue:
        return Clue(view.hand[0], "victim")
