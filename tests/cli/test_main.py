"""The command line: simulate and agents."""

from __future__ import annotations

import pytest

from dixit_lab.cli.main import main
from dixit_lab.records.format import read_jsonl


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
                 "lone_finder_points=4", "--agents", "random,softmax(temperature=2),random",
                 "--games", "5", "--deck", "dreams"])
    assert code == 0
    assert "softmax(temperature=2.0)" in capsys.readouterr().out


def test_errors_are_one_line_with_status_2(capsys):
    assert main(["simulate", "--rules", "nope"]) == 2
    assert "unknown rule preset 'nope'" in capsys.readouterr().err
    assert main(["simulate", "--players", "4", "--agents", "random,random"]) == 2
    assert "lists 2 agents for 4 players" in capsys.readouterr().err
    assert main(["simulate", "--set", "bogus=1"]) == 2
    assert "unknown rule option" in capsys.readouterr().err


def test_agents_lists_parameters(capsys):
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out
    assert "random()" in listing and "softmax(temperature: float = 0.05" in listing


def test_run_report_show_and_replay_end_to_end(tmp_path, capsys):
    import yaml

    config = {"name": "e2e", "seed": 1, "rules": "quest", "deck": "dreams",
              "players": ["literal", "softmax", "pragmatic", "random"], "games": 8,
              "executor": {"kind": "local"}}
    path = tmp_path / "e2e.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "e2e: 8 games (8 played this run" in text and "pragmatic" in text
    for name in ("config.yaml", "games.jsonl.zst", "agents.csv", "ratings.csv",
                 "summary.json", "report.md", "find_calibration.csv",
                 "plots/storyteller_outcomes.png", "plots/find_calibration.png"):
        assert (out / name).is_file(), name
    assert list((out / "rounds.parquet").glob("part-*.parquet"))
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.md").is_file()
    assert main(["show", str(out), "--game", "2"]) == 0
    shown = capsys.readouterr().out
    assert "Game 2" in shown and "storyteller" in shown
    assert main(["show", str(out), "--game", "99"]) == 2
    assert main(["replay", str(out), "--executor", "local", "--quiet"]) == 0
    assert "identical: 8 games" in capsys.readouterr().out


def test_simulate_default_deck_serves_embedding_agents_and_zero_games(capsys):
    assert main(["simulate", "--players", "3", "--agents", "literal", "--games", "2"]) == 0
    assert "games        2" in capsys.readouterr().out
    assert main(["simulate", "--games", "0"]) == 0
    assert "games        0" in capsys.readouterr().out
    import pytest

    with pytest.raises(SystemExit):
        main(["simulate", "--games", "-1"])
    assert "must be 0 or more" in capsys.readouterr().err


def test_agents_shows_whole_first_paragraphs_in_plain_text(capsys):
    from dixit_lab.cli.agents import _first_paragraph

    assert _first_paragraph("""Uses :class:`Foo` and ``bar``,
        across two lines.

        Second paragraph.""") == "Uses Foo and bar, across two lines."
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out
    assert "`" not in listing
    assert "fitted on logged rounds" in listing  # the calibrated agent's second line


def test_replay_and_show_take_a_sweep_folder(tmp_path, capsys):
    import yaml

    config = {"name": "sw", "seed": 2, "rules": "classic", "deck": "dreams",
              "players": [{"name": "teller", "agent": "random"}, "literal", "random"],
              "games": 3, "executor": {"kind": "local"},
              "sweep": {"players.0.agent": ["random", "literal"]}}
    path = tmp_path / "sw.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "sw"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["replay", str(out), "--executor", "local", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "point 1 (players.0.agent=literal): identical: 3 games" in text
    assert "identical: 6 games replayed byte for byte (2 sweep points)" in text
    assert main(["show", str(out)]) == 2
    assert "--point 1: players.0.agent=literal" in capsys.readouterr().err
    assert main(["show", str(out), "--point", "1", "--game", "2"]) == 0
    assert "Game 2" in capsys.readouterr().out
    assert main(["show", str(out / "points" / "000"), "--point", "1"]) == 2
    assert "not a sweep folder" in capsys.readouterr().err


def test_run_prints_the_time_of_the_whole_command(tmp_path, capsys):
    path = tmp_path / "q.yaml"
    path.write_text(f"name: q\nplayers: [random, random, random]\ngames: 2\nout: {tmp_path}/q\n"
                    "executor: {kind: local}\n")
    assert main(["run", str(path), "--quiet"]) == 0
    assert "s of play, 1 worker(s); the whole command" in capsys.readouterr().out


def test_embed_without_the_model_is_a_clear_error(monkeypatch, capsys, tmp_path):
    import sys

    for name in ("torch", "sentence_transformers", "efficientnet_lite_pytorch"):
        monkeypatch.setitem(sys.modules, name, None)  # `import torch` now fails
    assert main(["embed", "--deck", "dreams", "--embedder", "conse", "--out", str(tmp_path)]) == 2
    assert "torch" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.npz"))


def test_a_bug_keeps_its_traceback_and_a_users_error_is_one_line(monkeypatch, capsys):
    """Only a user's mistake (a UserError, a file that cannot be read) is one line; any other
    exception is a bug and reaches the user with its traceback. --traceback shows a user
    error's too."""
    import dixit_lab.cli.agents as agents_command
    from dixit_lab.errors import UserError

    def broken(args):
        raise ValueError("a bug in the harness")

    monkeypatch.setattr(agents_command, "cmd_agents", broken)
    with pytest.raises(ValueError, match="a bug in the harness"):
        main(["agents"])

    def refused(args):
        raise UserError("players.1.agent: unknown agent 'literl'")

    monkeypatch.setattr(agents_command, "cmd_agents", refused)
    assert main(["agents"]) == 2
    assert capsys.readouterr().err == ("dixit-lab agents: error: players.1.agent: unknown agent "
                                       "'literl'\n")
    with pytest.raises(UserError):
        main(["--traceback", "agents"])


def test_simulate_says_each_seats_faults_and_fails_over_the_limit(capsys):
    from pathlib import Path

    broken = Path(__file__).parents[1] / "broken_agents.py"
    argv = ["simulate", "--players", "4", "--games", "4", "--on-illegal", "fallback",
            "--agents", f"{broken}:OffByOne,random,random,random"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if line.startswith("faults:")]
    assert len(lines) == 1 and lines[0].startswith(f"faults: {broken}:OffByOne: ")
    assert "— first: " in lines[0] and "IndexError" in lines[0]
    assert "over max_fault_share 0.05" in captured.err and "--max-fault-share 1" in captured.err
    assert main([*argv, "--max-fault-share", "1"]) == 0
    assert capsys.readouterr().out.count("faults:") == 1
    assert main(["simulate", "--games", "4"]) == 0 and "faults" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["simulate", "--max-fault-share", "2"])
    assert "must be from 0 to 1, got 2" in capsys.readouterr().err


def test_simulate_names_a_broken_agent_in_one_line_and_keeps_the_games_before(capsys,
                                                                               tmp_path):
    """--on-illegal raise (the default): an agent that raises after a game or more stops the
    command with one line naming the game, seat and agent (it was a traceback), the games
    before it written to --out."""
    agent = tmp_path / "late.py"
    agent.write_text("from dixit_lab_agents.random_agent import RandomAgent\n"
                     "class Late(RandomAgent):\n"
                     "    votes = 0\n"
                     "    def vote(self, view):\n"
                     "        Late.votes += 1\n"
                     "        if Late.votes > 2 * 11 * 3:\n"
                     "            raise RuntimeError('worn out')\n"
                     "        return super().vote(view)\n", encoding="utf-8")
    out = tmp_path / "games.jsonl"
    code = main(["simulate", "--players", "4", "--agents", f"{agent}:Late", "--games", "5",
                 "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    import re

    stopped = re.search(r"game (\d+): seat \d \(agent .*late.py:Late\), round \d+, vote", err)
    assert stopped and int(stopped[1]) >= 1, err
    assert "worn out" in err and "--on-illegal fallback" in err
    assert f"the {stopped[1]} games before it are in {out}" in err
    assert len(list(read_jsonl(out))) == int(stopped[1])


@pytest.mark.parametrize("argv", [
    ["league", "L", "--max-games", "1.5"], ["league", "L", "--target-width", "abc"],
    ["league", "L", "--deals", "0"], ["plan", "quickstart", "--pilot", "x"], ["run"],
    ["nosuchcommand"], ["simulate", "--games", "-3"]])
def test_a_bad_argument_is_one_line_naming_it(argv, capsys):
    """argparse's usage block is not printed before the error: one line, the command and the
    argument."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "usage:" not in error, error
    assert error.startswith("dixit-lab") and "error: " in error
