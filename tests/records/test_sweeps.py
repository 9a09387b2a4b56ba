"""The one reader of a sweep folder's ``sweep.csv``: its points, their labels and folders,
and one line for a table that is not one."""

from __future__ import annotations

import pytest

from dixit_lab.errors import ConfigError
from dixit_lab.records.sweeps import SweepPoint, sweep_points


def sweep_folder(tmp_path, table: str, *games: str):
    for folder in games:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "games.jsonl").write_text("")
    (tmp_path / "sweep.csv").write_text(table, encoding="utf-8")
    return tmp_path


def test_the_points_of_a_sweep_with_their_settings(tmp_path):
    folder = sweep_folder(tmp_path, 'point,players.0.agent,rules.preset,folder\n'
                                    '0,"softmax(temperature=0.1, top=2)",classic,points/000\n'
                                    '\n'
                                    '1,literal,classic,points/001\n',
                          "points/000", "points/001")
    assert sweep_points(folder) == [
        SweepPoint(0, "players.0.agent=softmax(temperature=0.1, top=2), rules.preset=classic",
                   folder / "points/000"),
        SweepPoint(1, "players.0.agent=literal, rules.preset=classic", folder / "points/001")]


def test_a_folder_without_sweep_csv_is_not_a_sweep(tmp_path):
    assert sweep_points(tmp_path) is None


@pytest.mark.parametrize(("point", "message"), [
    ("１", "line 2: point '１' is not a point number"),  # int() reads full-width digits
    ("-1", "line 2: point '-1' is not a point number"),
    ("1.0", "line 2: point '1.0' is not a point number"),
    (" 1", "line 2: point ' 1' is not a point number"),
])
def test_a_point_is_written_in_ascii_digits(tmp_path, point, message):
    folder = sweep_folder(tmp_path, f"point,x,folder\n{point},1,p\n", "p")
    with pytest.raises(ConfigError, match=message):
        sweep_points(folder)


def test_a_point_without_games_or_folder_is_named(tmp_path):
    folder = sweep_folder(tmp_path, "point,x,folder\n0,1,p\n1,2,q\n", "p")
    with pytest.raises(ConfigError, match=r"line 3: point 1's games are missing \(.*q holds no "
                                          r"games.jsonl.zst or games.jsonl\)"):
        sweep_points(folder)
    (tmp_path / "sweep.csv").write_text("point,x,folder\n0,1,\n")
    with pytest.raises(ConfigError, match="line 2: point 0 names no folder"):
        sweep_points(folder)
    (tmp_path / "sweep.csv").write_text("point,x,x,folder\n0,1,1,p\n")
    with pytest.raises(ConfigError, match="line 1: column 'x' twice"):
        sweep_points(folder)
