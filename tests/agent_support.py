"""Outside agents for tests: a ``file.py:Class`` agent whose clue is its code, and agents
loaded afresh after their code was edited, as by a new process."""

from __future__ import annotations

import sys
from pathlib import Path

from dixit_lab.isolation import isolated_agent as isolation
from dixit_lab.isolation import seats
from dixit_lab.run import runner, tournament

AGENT = '''
from dixit_lab.core.agent import Clue
from dixit_lab_agents.literal import LiteralAgent


class Mine(LiteralAgent):
    """The literal storyteller, telling one clue whatever the card."""

    def tell(self, view):
        return Clue(super().tell(view).card, {clue!r})
'''


def agent_file(path: Path, clue: str = "valley") -> Path:
    """Write (or rewrite) an agent file at ``path`` that tells ``clue`` every turn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(AGENT.format(clue=clue), encoding="utf-8")
    return path


def fresh_agents(monkeypatch) -> None:
    """Forget the agent files imported so far and every agent made from them: the next run
    imports them again, as a new process would."""
    for name in [name for name in sys.modules if name.startswith("dixit_lab_user_")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [name for name in sys.modules if name.startswith("mine_pkg")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(seats, "_TRUSTED_INFO", {})
    monkeypatch.setattr(isolation, "_INFOS", {})
    monkeypatch.setattr(tournament, "_POOL", tournament._AgentPool())
    monkeypatch.setattr(tournament, "_SHARED", {})
    runner.has_budgets.cache_clear()
