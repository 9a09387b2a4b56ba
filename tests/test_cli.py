"""The command line: simulate and agents."""

from __future__ import annotations

from dixit_lab.cli import main
from dixit_lab.records import read_jsonl


def test_simulate_prints_a_summary(capsys, tmp_path):
    out = tmp_path / "games.jsonl"
    code = main(["simulate", "--players", "5", "--rules", "classic", "--agents", "random",
                 "--games", "20", "--seed", "1", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "games        20" in text and "mean rounds  11.00" in text
    assert "deck_exhausted 20" in text
    assert len(list(read_jsonl(out))) == 20


def test_simulate_is_seeded(capsys):
    main(["simulate", "--games", "10", "--seed", "3"])
    first = capsys.readouterr().out
    main(["simulate", "--games", "10", "--seed", "3"])
    assert capsys.readouterr().out == first


def test_simulate_rule_overrides_and_per_seat_agents(capsys):
    code = main(["simulate", "--players", "3", "--rules", "refresh", "--set",
                 "lone_finder_points=4", "--agents", "random,random(block=8),random",
                 "--games", "5"])
    assert code == 0
    assert "random(block=8)" in capsys.readouterr().out


def test_errors_are_one_line_with_status_2(capsys):
    assert main(["simulate", "--rules", "nope"]) == 2
    assert "unknown rule preset 'nope'" in capsys.readouterr().err
    assert main(["simulate", "--players", "4", "--agents", "random,random"]) == 2
    assert "lists 2 agents for 4 players" in capsys.readouterr().err
    assert main(["simulate", "--set", "bogus=1"]) == 2
    assert "unknown rule option" in capsys.readouterr().err


def test_agents_lists_parameters(capsys):
    assert main(["agents"]) == 0
    assert "random(block: int = 64)" in capsys.readouterr().out
