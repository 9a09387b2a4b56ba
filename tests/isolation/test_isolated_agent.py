"""Agents in their own process: same records, hangs and crashes become faults, runs finish."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dixit_lab.core.agent import AgentSpecError, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.isolation.isolated_agent import IsolatedAgent, isolated_spec
from tests.agent_support import plays_the_engines_games, table
from tests.games_files import games_text

SPIES = Path(__file__).parents[1] / "spies.py"
RULES = get_rules("classic")
DECK = Deck.numbered(84)


def test_an_isolated_agent_plays_the_same_games():
    plays_the_engines_games(IsolatedAgent("random"), "random", RULES, DECK, 5)


def test_a_hanging_agent_costs_one_fault_per_decision_and_the_game_goes_on():
    agent = IsolatedAgent(f"{SPIES}:HangingAgent(hang_in=vote)", decision_timeout=0.3)
    try:
        start = time.monotonic()
        records = [play_game(table(agent), RULES, DECK, game_seed(4, g), on_illegal="fallback")
                   for g in range(3)]
        elapsed = time.monotonic() - start
    finally:
        agent.close()
    for record in records:
        faults = [f for rnd in record.rounds for f in rnd.faults]
        assert all(f.seat == 1 for f in faults) and {f.kind for f in faults} == {"timeout"}
        # round 0: its submit was answered, its vote ran over; from then on the process is
        # stopped, and each of its decisions (a tell, or a submit and a vote) is one fault
        expected = 1 + sum(1 if rnd.storyteller == 1 else 2 for rnd in record.rounds[1:])
        assert len(faults) == expected
        assert (faults[0].action, faults[0].kind) == ("vote", "timeout")
        assert "decision_timeout" in faults[0].message
        assert record.end_reason == "deck_exhausted"  # the game was played to its end
    assert elapsed < 20  # one timeout per game (and a restart), not one per decision


def test_a_crashing_agent_is_a_fault_and_restarts_next_game():
    agent = IsolatedAgent(f"{SPIES}:CrashingAgent(crash_in=submit)", decision_timeout=10)
    try:
        records = [play_game(table(agent), RULES, DECK, game_seed(4, g), on_illegal="fallback")
                   for g in range(2)]
    finally:
        agent.close()
    for record in records:
        faults = [f for rnd in record.rounds for f in rnd.faults]
        assert faults and {f.kind for f in faults} == {"crashed"}
        assert "exited (code 3)" in faults[0].message


def test_an_agent_exception_inside_the_process_reads_as_one_outside():
    class_spec = f"{SPIES}:HangingAgent(hang_in=nowhere)"
    assert isolated_spec(class_spec) == make_agent(class_spec).spec
    with pytest.raises(AgentSpecError, match="no parameter"):
        isolated_spec(f"{SPIES}:HangingAgent(wrong=1)")
    with pytest.raises(AgentSpecError, match="not found"):
        isolated_spec("missing_file.py:Agent")


USER_AGENT = '''
from dixit_lab.core.agent import Agent, Clue


class FirstCard(Agent):
    """A student's agent: first card, first allowed vote, a fixed clue."""

    def __init__(self, clue: str = "dream") -> None:
        self.clue = clue

    def tell(self, view):
        return Clue(view.hand[0], self.clue)

    def submit(self, view):
        return list(view.hand[:view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)
'''


def config(agent_file: Path, isolated: bool, executor: str) -> dict:
    isolation = {"isolation": "process", "decision_timeout": 20} if isolated else {}
    return {  # the isolated run's deals mix a secret: pinned, the three runs deal alike
        "name": "outside", "seed": 3, "rules": "classic", "deck": "dreams", "games": 12,
        "deal_secret": "5eed" * 8,
        "players": [{"name": "student", "agent": f"{agent_file}:FirstCard",
                     "params": {"clue": "moon"}, **isolation},
                    {"name": "spy", "agent": f"{SPIES}:KeySpy", **isolation},
                    "literal", "random"],
        "executor": {"kind": executor, "workers": 2, "chunk_size": 3},
    }


def test_outside_agents_by_import_string_in_the_process_pool_replay_identically(tmp_path):
    from dixit_lab.cli.main import main
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    agent_file = tmp_path / "student_agent.py"
    agent_file.write_text(USER_AGENT)
    folders = {}
    for isolated, executor in ((False, "local"), (False, "process"), (True, "process")):
        folder = folders[isolated, executor] = tmp_path / f"{executor}-{isolated}"
        run_experiment(parse_config(config(agent_file, isolated, executor)), folder,
                       show_progress=False, write_outputs=False)
    games = {key: games_text(folder) for key, folder in folders.items()}
    assert len(set(games.values())) == 1  # local, pool and isolated: the same bytes
    assert "student_agent.py:FirstCard(clue=moon)" in games[False, "local"]
    assert main(["replay", str(folders[True, "process"])]) == 0


def test_a_run_with_a_hanging_isolated_agent_completes(tmp_path):
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    data = {"name": "hang", "seed": 1, "rules": "classic", "deck": "dreams", "games": 2,
            "players": [{"name": "stuck", "agent": f"{SPIES}:HangingAgent(hang_in=tell)",
                         "isolation": "process", "decision_timeout": 0.3},
                        "literal", "random", "random"],
            "executor": {"kind": "local"}, "max_fault_share": 1}  # its faults accepted
    result = run_experiment(parse_config(data), tmp_path / "hang", show_progress=False)
    lines = games_text(tmp_path / "hang").splitlines()
    assert len(lines) == 2 and result.games == 2
    assert '"kind":"timeout"' in lines[0]
