"""Outside agents for tests: a ``file.py:Class`` agent whose clue is its code, agents loaded
afresh after their code was edited, as by a new process, the plain decisions an agent file's
source ends with, and the check that an isolated agent plays the engine's own games."""

from __future__ import annotations

import sys
from pathlib import Path

from dixit_lab.core.agent import Agent, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
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


#: the end of an agent file's source whose agent only tells its own way: it submits its first
#: cards and votes for the first card that is not its own
PLAIN_DECISIONS = '''
    def submit(self, view):
        return list(view.hand[:view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)
'''


def table(agent: Agent) -> list[Agent]:
    """A four-seat table with ``agent`` in seat 1 and ``random`` elsewhere."""
    return [make_agent("random"), agent, make_agent("random"), make_agent("random")]


def plays_the_engines_games(isolated: Agent, spec: str, rules: RuleSet, deck: Deck,
                            games: int) -> None:
    """Assert that ``isolated`` (an agent run outside the engine) plays, game after game, the
    records of ``spec``'s agent built in the engine; then close it."""
    try:
        for g in range(games):
            inside = play_game(table(make_agent(spec)), rules, deck, game_seed(2, g))
            outside = play_game(table(isolated), rules, deck, game_seed(2, g))
            assert outside.to_json() == inside.to_json(), f"game {g}"
    finally:
        isolated.close()  # type: ignore[attr-defined]


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
