"""Golden replays: seeded tournaments committed with their records must replay identically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dixit_lab.cli.main import main
from dixit_lab.run.replay import first_difference, replay_folder
from tests.games_files import games_text

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("name", ["golden", "golden_three"])
def test_golden_replays_byte_for_byte(name):
    compared, difference = replay_folder(GOLDEN / name, executor="local", show_progress=False)
    assert difference is None, str(difference)
    assert compared == len(games_text(GOLDEN / name).splitlines()) > 0


def test_replay_reports_the_first_difference(tmp_path, capsys):
    folder = tmp_path / "tampered"
    folder.mkdir()
    (folder / "config.yaml").write_text((GOLDEN / "golden" / "config.yaml").read_text())
    lines = games_text(GOLDEN / "golden").splitlines()
    record = json.loads(lines[3])
    record["rounds"][2]["votes"] = [None if v is None else v for v in record["rounds"][2]["votes"]]
    record["rounds"][2]["clue"] = "tampered"
    lines[3] = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    (folder / "games.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["replay", str(folder), "--executor", "local", "--quiet"]) == 1
    out = capsys.readouterr().out
    # games numbered from 0 (meta.game, line 4), rounds from 1: rounds[2] is round 3
    assert "game 3, round 3, field clue" in out and "'tampered'" in out


def test_first_difference_finds_fields_and_rounds():
    a = {"seed": 1, "rounds": [{"clue": "x", "votes": [1]}]}
    assert first_difference(0, a, a) is None
    assert str(first_difference(0, a, {**a, "seed": 2})).startswith("game 0, field seed")
    b = {"seed": 1, "rounds": [{"clue": "x", "votes": [2]}]}
    assert first_difference(4, a, b).round == 0
    c = {"seed": 1, "rounds": [{"clue": "x", "votes": [1]}, {"clue": "y"}]}
    assert first_difference(0, a, c).field == "rounds (count)"
