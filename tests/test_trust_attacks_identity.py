"""Trust II's impostor (issue 42, item 7): a seat's child that says it is another agent. The
engine made the seat's canonical spec from the child's word: a child claiming another
entrant's spec had that entrant's code played in its seat, and the records, ``config.yaml``
and the digests of the code that played named the other entrant; a claim of a megabyte went
into every record. Now the engine makes the spec from the config, and a child claiming
another is refused before any game, in one line naming the seat."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import AgentSpecError
from dixit_lab.engine.seat_identity import seat_spec
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
