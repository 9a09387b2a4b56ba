"""``isolation: sandbox``: the same games as in the engine, a fresh process each game (unless
the agent is trusted to forget), the agent's own files and nothing else, and one line naming
what a machine that cannot make a sandbox lacks. The attacks: tests/test_trust_attacks.py."""

from __future__ import annotations

import pytest

from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.isolation import sandbox
from dixit_lab.isolation.isolated_agent import IsolatedAgent
from dixit_lab.isolation.trust import Isolation
from tests.agent_support import PLAIN_DECISIONS, plays_the_engines_games, table
from tests.test_trust_attacks import needs_sandbox

RULES = get_rules("classic", max_rounds=4)
DECK = Deck.numbered(60)

COUNTER = '''
from dixit_lab.core.agent import Agent, Clue

GAMES = []  # kept in the process: how many games it has begun


class Counter(Agent):
    def begin_game(self, context):
        super().begin_game(context)
        GAMES.append(1)

    def tell(self, view):
        return Clue(view.hand[0], f"games={len(GAMES)}")
''' + PLAIN_DECISIONS


def test_a_sandboxed_agent_plays_the_same_games():
    needs_sandbox()
    plays_the_engines_games(IsolatedAgent("random", Isolation("sandbox")), "random", RULES,
                            DECK, 3)


@pytest.mark.parametrize("forgets", [False, True])
def test_each_game_a_fresh_process_unless_trusted_to_forget(tmp_path, monkeypatch, forgets):
    needs_sandbox()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "counter.py").write_text(COUNTER)
    agent = IsolatedAgent("counter.py:Counter", Isolation("sandbox", forgets=forgets))
    try:
        counts = set()
        for g in range(3):
            record = play_game(table(agent), RULES, DECK, game_seed(1, g))
            counts.update(r.clue for r in record.rounds if r.storyteller == 1)
    finally:
        agent.close()
    assert counts == ({"games=1", "games=2", "games=3"} if forgets else {"games=1"})


def test_a_relative_agent_file_is_found_in_the_sandbox_s_working_folder(tmp_path, monkeypatch):
    needs_sandbox()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "counter.py").write_text(COUNTER)
    binds = dict((str(t), s) for s, t in sandbox.agent_files("agents/counter.py:Counter"))
    assert binds == {f"{sandbox.WORKDIR}/agents/counter.py": tmp_path / "agents" / "counter.py"}
    (tmp_path / "secret.txt").write_text("the config's seed")
    assert all("secret" not in str(s) for s, _ in sandbox.sandbox_binds(
        sandbox.agent_files("agents/counter.py:Counter")))
    agent = IsolatedAgent("agents/counter.py:Counter", Isolation("sandbox"))
    try:
        assert agent.spec == "agents/counter.py:Counter"
        play_game(table(agent), RULES, DECK, game_seed(1, 0))
    finally:
        agent.close()


def test_a_machine_without_bubblewrap_is_told_in_one_line(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    sandbox.sandbox_problem.cache_clear()
    try:
        problem = sandbox.sandbox_problem()
        assert problem is not None and "\n" not in problem
        assert "bubblewrap" in problem and "pip install" in problem
        with pytest.raises(sandbox.SandboxError, match="bubblewrap"):
            sandbox.Sandbox()
    finally:
        sandbox.sandbox_problem.cache_clear()


def test_a_config_refuses_sandbox_options_elsewhere():
    from dixit_lab.run.experiment import ConfigError, parse_config

    base = {"name": "x", "deck": "numbered-60", "games": 1, "players": ["random"] * 3}
    for player, message in (({"agent": "random", "trusted_to_forget": True}, "needs isolation"),
                            ({"agent": "random", "isolation": "process", "files": ["x"]},
                             "files needs isolation: sandbox"),
                            ({"agent": "random", "limits": {"memory_mb": 512}},
                             "limits needs isolation")):
        with pytest.raises(ConfigError, match=message):
            parse_config({**base, "players": [player, "random", "random"]})
