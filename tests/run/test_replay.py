"""``replay DIR`` from any working folder, after checking that the outside agents' code is the
code that played, and saying when another version played the games."""

from __future__ import annotations

from pathlib import Path

import yaml

from dixit_lab.cli.main import main
from dixit_lab.records.compare import Difference
from dixit_lab.run import replay
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import run_experiment
from tests.agent_support import agent_file, fresh_agents

CONFIG = {"name": "replay-test", "seed": 4, "games": 4, "rules": "classic",
          "players": [{"name": "mine", "agent": "agents/mine.py:Mine"}, "literal", "random"],
          "executor": {"kind": "local"}}


def played_in(where: Path, monkeypatch) -> Path:
    """A results folder ``where/out`` played from ``where``, with its agent file given by a
    relative path."""
    where.mkdir()
    monkeypatch.chdir(where)
    fresh_agents(monkeypatch)
    agent_file(where / "agents" / "mine.py", "valley")
    run_experiment(parse_config(CONFIG), "out", show_progress=False, write_outputs=False)
    return where / "out"


def test_a_file_agent_replays_from_another_working_folder(tmp_path, monkeypatch):
    folder = played_in(tmp_path / "work", monkeypatch)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    fresh_agents(monkeypatch)
    assert replay_folder(folder, executor="local", show_progress=False) == (4, None)
    assert Path.cwd() == tmp_path / "elsewhere"  # given back
    header = yaml.safe_load((folder / "config.yaml").read_text())
    assert header["working_directory"] == str(tmp_path / "work")
    assert header["agents_played"][0]["code"][0]["path"] == str(
        tmp_path / "work" / "agents" / "mine.py")


def test_a_changed_agent_file_is_named_instead_of_a_difference(tmp_path, monkeypatch, capsys):
    folder = played_in(tmp_path / "work", monkeypatch)
    agent_file(tmp_path / "work" / "agents" / "mine.py", "asteroid")
    fresh_agents(monkeypatch)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["replay", str(folder), "--executor", "local", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"dixit-lab replay: error: {folder / 'config.yaml'}: player 'mine' "
                   f"(agents/mine.py:Mine): its agent file "
                   f"{tmp_path / 'work' / 'agents' / 'mine.py'} has changed since these games "
                   f"were played, so a replay would play other games; restore it, or run the "
                   f"config again into a new folder"), err


def test_a_difference_says_when_another_version_played(tmp_path, monkeypatch, capsys):
    folder = played_in(tmp_path / "work", monkeypatch)
    path = folder / "config.yaml"
    header = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**header, "dixit_lab_version": "0.0.9"}, sort_keys=False))
    monkeypatch.setattr(replay, "_replay", lambda *args: (  # as that version's other play
        1, Difference(0, 2, "clue", "valley", "meadow")))
    capsys.readouterr()
    assert main(["replay", str(folder), "--executor", "local", "--quiet"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("DIFFERENT after 1 game(s): game 0, round 3, field clue: recorded "
                          "'valley', replayed 'meadow' (the games were played by dixit_lab "
                          "0.0.9 (code "), out
    assert out.endswith(f"); this is dixit_lab 0.1.0 (code {header['dixit_lab_code'][:12]}))")
