"""A league folder: its pool version is kept and another one refused, its leaderboard lists
the pool's members beside the entrants, strongest first, in CSV and Markdown, and the
command line enters, prints and refuses in one line."""

from __future__ import annotations

import csv
import json

import pytest

from dixit_lab.cli.main import main
from dixit_lab.errors import ConfigError
from dixit_lab.league.entry import LeagueOptions, enter
from dixit_lab.league.leaderboard import COLUMNS, open_league, write_leaderboard


def test_a_league_keeps_its_pool_version_and_refuses_another(tmp_path):
    pool = open_league(tmp_path / "league")
    assert json.loads((tmp_path / "league" / "league.json").read_text())["pool_version"] == \
        pool.version
    assert open_league(tmp_path / "league").version == pool.version
    with pytest.raises(ConfigError, match="is a league against pool 1, not 7"):
        open_league(tmp_path / "league", "7")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a league folder"):
        open_league(tmp_path / "other")


def test_the_leaderboard_ranks_members_and_entrants(tmp_path):
    pool = open_league(tmp_path)
    enter(tmp_path, "weak", "softmax(temperature=0.5)", pool,
          LeagueOptions(max_games=40, deals=2), say=lambda _: None)
    rows = write_leaderboard(tmp_path, pool)
    assert [row["rank"] for row in rows] == list(range(1, len(pool.names) + 2))
    strengths = [row["strength"] for row in rows]
    assert strengths == sorted(strengths, reverse=True)
    assert {row["player"] for row in rows} == {*pool.names, "weak"}
    with open(tmp_path / "leaderboard.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == COLUMNS
    weak = next(row for row in table if row["player"] == "weak")
    assert weak["kind"] == "entrant" and weak["games"] == "40" and len(weak["deal_secret"]) == 32
    page = (tmp_path / "leaderboard.md").read_text()
    assert "# Leaderboard: reference pool 1" in page and "| weak | entrant |" in page


def test_the_command_enters_prints_and_refuses_in_one_line(tmp_path, capsys):
    folder = tmp_path / "league"
    assert main(["league", str(folder), "--enter", "w=softmax(temperature=0.5)",
                 "--max-games", "16", "--deals", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "w: " in out and "after 16 games (stopped: max_games)" in out
    assert "wrote" in out and (folder / "leaderboard.md").is_file()
    assert main(["league", str(folder)]) == 0  # the leaderboard alone
    assert "ambiguity-0.5" in capsys.readouterr().out
    assert main(["league", str(folder), "--enter", "softmax(temperature=0.5)"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "name it, NAME=SPEC" in error
    assert main(["league", str(folder), "--enter", "x=nosuchagent"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "nosuchagent" in error
