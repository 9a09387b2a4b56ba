"""dixit-lab tune: the search drops candidates whose intervals fall below the best."""

from __future__ import annotations

import csv
import json

import pytest
from PIL import Image

from dixit_lab.cli import main
from dixit_lab.experiment import ConfigError
from dixit_lab.tuning import grid_values, tune

DATA = {
    "name": "tune-test",
    "seed": 3,
    "rules": "classic",
    "deck": "dreams",
    "players": [{"name": "teller", "agent": "ambiguity", "params": {"target": 0.5}},
                {"name": "softmax", "agent": "softmax", "count": 4}],
    "games": 10,
    "executor": {"kind": "local"},
    "tune": {"parameter": "players.0.params.target", "low": 0.1, "high": 0.9, "points": 3,
             "player": "teller", "games_per_round": 40, "max_games": 600},
}


def test_tune_finds_that_middling_ambiguity_beats_the_extremes(tmp_path):
    candidates = tune(DATA, "t.yaml", tmp_path, log=lambda _: None)
    by_value = {round(c.value, 2): c for c in candidates}
    assert by_value[0.5].alive
    assert by_value[0.5].mean > by_value[0.9].mean
    assert not by_value[0.9].alive  # an obvious clue is found by everyone: dropped early
    assert len(by_value[0.9].samples) <= len(by_value[0.5].samples)
    # the search stops once one candidate is left, well before its budget
    assert sum(len(c.samples) for c in candidates) < DATA["tune"]["max_games"]
    summary = json.loads((tmp_path / "tune.json").read_text())
    assert summary["best_value"] == 0.5
    Image.open(tmp_path / "tune.png").verify()
    with (tmp_path / "tune.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["value", "games", "mean", "half_width_95", "ci_low", "ci_high",
                             "alive"]
    assert [row["value"] for row in rows] == ["0.1", "0.5", "0.9"]
    for row in rows:
        assert all(len(row[k].split(".")[-1]) <= 4 for k in ("mean", "ci_low", "ci_high"))
        mean, half = float(row["mean"]), float(row["half_width_95"])
        assert float(row["ci_low"]) == pytest.approx(mean - half, abs=2e-4)
        assert float(row["ci_high"]) == pytest.approx(mean + half, abs=2e-4)


def test_grid_values_are_the_decimals_a_person_writes() -> None:
    assert grid_values(0.1, 0.9, 9) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert [str(v) for v in grid_values(0.1, 0.9, 9)][2] == "0.3"  # not 0.30000000000000004


def test_tune_errors(tmp_path):
    with pytest.raises(ConfigError, match="no 'tune' section"):
        tune({k: v for k, v in DATA.items() if k != "tune"}, "t.yaml", tmp_path)
    bad = {**DATA, "tune": {**DATA["tune"], "metric": "happiness"}}
    with pytest.raises(ConfigError, match="unknown metric 'happiness'"):
        tune(bad, "t.yaml", tmp_path)
    bad = {**DATA, "tune": {**DATA["tune"], "player": "nobody"}}
    with pytest.raises(ConfigError, match="no player named 'nobody'"):
        tune(bad, "t.yaml", tmp_path)


def test_cli_tune(tmp_path, capsys):
    import yaml

    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({**DATA, "tune": {**DATA["tune"], "max_games": 120}}))
    assert main(["tune", str(path), "--out", str(tmp_path / "out")]) == 0
    assert "95% interval half-width" in capsys.readouterr().out


def test_cli_tune_writes_into_the_configs_results_folder(tmp_path, capsys, monkeypatch):
    import yaml

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({**DATA, "tune": {**DATA["tune"], "max_games": 120}}))
    assert main(["tune", str(path)]) == 0
    assert (tmp_path / "results" / "tune-test" / "tune.csv").is_file()
    assert "results/tune-test/tune.csv" in capsys.readouterr().out
