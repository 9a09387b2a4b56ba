"""Trust II's impostor (issue 42, item 7): a seat's child that says it is another agent. The
engine made the seat's canonical spec from the child's word: a child claiming another
entrant's spec had that entrant's code played in its seat, and the records, ``config.yaml``
and the digests of the code that played named the other entrant; a claim of a megabyte went
into every record. Now the engine makes the spec from the config, and a child claiming
another is refused before any game, in one line naming the seat."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import AgentSpecError
from dixit_lab.isolation.seat_identity import seat_spec
from tests.agent_support import PLAIN_DECISIONS
from tests.test_trust_attacks import RANDOM, spy
from tests.test_trust_attacks_answers import MODES, _mode, cli_run

VICTIM = "tests.hostile.identity:Victim"


def _clues(records: list, player: str) -> set[str]:
    return {rnd["clue"] for r in records for rnd in r["rounds"]
            if r["meta"]["players"][rnd["storyteller"]] == player}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("claim", [VICTIM, "random", "size"])
def test_a_child_claiming_another_agent_is_refused(tmp_path, mode, claim):
    """Before: a claim of the victim's spec played the victim's code in the impostor's seat
    (its clues said ``victim``) and the records named the victim; a claim of ``random``
    recorded ``random``; a 1,000,000-character claim went into every record."""
    _mode(mode)
    params = {"size": 1_000_000} if claim == "size" else {"claim": claim}
    impostor = {**spy("impostor", "identity:Impostor", **params), "isolation": mode}
    victim = {**spy("victim", "identity:Victim"), "isolation": mode}
    code, stderr, records = cli_run(tmp_path, [impostor, victim, RANDOM, RANDOM], games=2)
    assert records == [], _clues(records, "impostor")
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, stderr[-3000:]
    assert "tests.hostile.identity:Impostor" in lines[0] and "refused" in lines[0], lines
    assert len(lines[0]) < 600, len(lines[0])


@pytest.mark.parametrize("mode", MODES)
def test_an_honest_child_records_the_config_spec(tmp_path, mode):
    """An integer given for a float parameter is recorded ``1.0`` as before (and as a trusted
    seat records it); a built-in's spec in a child is the trusted seat's. (In a sandbox
    ``softmax`` on ``dreams`` raises ``Could not determine home directory`` at some
    decisions, a fault of its own: the spec is what this test reads.)"""
    _mode(mode)
    honest = {"name": "honest", "agent": f"{VICTIM}(weight=1)", "isolation": mode}
    builtin = {"name": "soft", "agent": "softmax(temperature=1)", "isolation": mode}
    code, stderr, records = cli_run(tmp_path, [honest, builtin, RANDOM, RANDOM], games=2,
                                    deck="dreams", max_fault_share=1)
    assert code == 0 and len(records) == 2, stderr[-3000:]
    trusted = {**builtin, "isolation": "none"}
    (tmp_path / "trusted").mkdir()
    code, stderr, plain = cli_run(tmp_path / "trusted", [honest | {"isolation": "none"},
                                                          trusted, RANDOM, RANDOM], games=2,
                                  deck="dreams")
    assert code == 0, stderr[-3000:]
    assert [r["agents"] for r in records] == [r["agents"] for r in plain]
    assert f"{VICTIM}(weight=1.0)" in records[0]["agents"]
    assert _clues(records, "honest") <= {"victim"}


def test_the_spec_is_made_from_the_config_and_a_claim_only_lends_a_type():
    assert seat_spec("x.py:A(b=2, a=1)", "x.py:A(a=1.0, b=2)") == "x.py:A(a=1.0, b=2)"
    assert seat_spec("x.py:A(a=[1, 2])", "x.py:A(a=[1.0, 2])") == "x.py:A(a=[1.0, 2])"
    assert seat_spec("random", "random") == "random"
    for claim in ["y.py:B", "x.py:A(a=2)", "x.py:A(a=1, c=3)", "x.py:A(a=True)", "x.py:A",
                  "x.py:A(a='1')", "x.py:A(a=1.5)", "x" * 10_000, "x.py:A(a=" + "[" * 900,
                  None, 5]:
        with pytest.raises(AgentSpecError, match="refused"):
            seat_spec("x.py:A(a=1)", claim)


# -- a module's binds: its own package, not its top-level package's -----------------------------

_READER = '''
import os
from dixit_lab.core.agent import Agent, Clue


class {name}(Agent):
    """Reads every file of Bob's under ``target`` at each game's start; its clues say how
    many."""

    def __init__(self, target: str = "") -> None:
        self.target, self.read = target, 0

    def begin_game(self, context):
        super().begin_game(context)
        self.read = 0
        for root, _, names in os.walk(self.target):
            for name in names:
                if "bob" not in os.path.join(root, name) or "__pycache__" in root:
                    continue
                try:
                    with open(os.path.join(root, name), "rb") as handle:
                        handle.read(1 << 16)
                    self.read += 1
                except OSError:
                    pass

    def tell(self, view):
        return Clue(view.hand[0], f"read {{self.read}}")
''' + PLAIN_DECISIONS


def _league(tmp_path, flat: bool) -> tuple[str, str, str]:
    """A top-level package ``league`` of two entrants: ``league/alice/agent.py`` and
    ``league/bob/agent.py`` (with Bob's weights), or, ``flat``, ``league/alice.py`` and
    ``league/bob.py`` side by side. Their specs, and the folder where Alice looks for Bob's
    files."""
    league = tmp_path / "league"
    league.mkdir()
    (league / "__init__.py").write_text("")
    for name in ("alice", "bob"):
        code = _READER.format(name=name.title())
        if flat:
            (league / f"{name}.py").write_text(code)
        else:
            (league / name).mkdir()
            (league / name / "__init__.py").write_text("")
            (league / name / "agent.py").write_text(code)
            (league / name / "weights.txt").write_text(f"{name}'s secret weights")
    # (relative: the working folder, where the engine finds ``league``, is the sandbox's /agent)
    if flat:
        return "league.alice:Alice", "league.bob:Bob", "league"
    return "league.alice.agent:Alice", "league.bob.agent:Bob", "league"


@pytest.mark.parametrize("flat", [False, True])
def test_an_entrant_reads_only_its_own_package(tmp_path, flat):
    """Before: a ``module:Class``'s whole top-level package was bound, so Alice read Bob's
    code and weights (``league/bob/``: 3 files; ``league/bob.py``) and nothing was said.
    Now Alice's sandbox binds ``league/alice/`` and ``league/__init__.py``: 0 files of
    Bob's; where the two share one package folder (``flat``), she still can, and the run
    says so in one line naming both."""
    from tests.test_trust_attacks import needs_sandbox

    needs_sandbox()
    alice, bob, target = _league(tmp_path, flat)
    players = [{"name": "alice", "agent": alice, "params": {"target": target},
                "isolation": "sandbox"},
               {"name": "bob", "agent": bob, "isolation": "sandbox"}, RANDOM, RANDOM]
    code, stderr, records = cli_run(tmp_path, players, games=2)
    assert code == 0 and len(records) == 2, stderr[-3000:]
    read = _clues(records, "alice")
    warned = [line for line in stderr.splitlines() if "warning" in line]
    if flat:
        assert read == {"read 1"}, read
        assert len(warned) == 2 and "player 'alice'" in warned[0] and "'bob'" in warned[0], \
            stderr
    else:
        assert read == {"read 0"}, read  # (before: 3, his agent.py, __init__.py, weights)
        assert warned == [], stderr
