"""dixit-lab tune: the search drops candidates whose intervals fall below the best."""

from __future__ import annotations

import csv
import json

import pytest
from PIL import Image

from dixit_lab.cli.main import main
from dixit_lab.run.experiment import ConfigError
from dixit_lab.run.tuning import grid_values, tune

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
                             "alive", "p_versus_leader", "dropped_after_look"]
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
    out = capsys.readouterr().out
    assert "best value" in out and "95% interval half-width" in out


def test_cli_tune_writes_into_the_configs_results_folder(tmp_path, capsys, monkeypatch):
    import yaml

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({**DATA, "tune": {**DATA["tune"], "max_games": 120}}))
    assert main(["tune", str(path)]) == 0
    assert (tmp_path / "results" / "tune-test" / "tune.csv").is_file()
    assert "results/tune-test/tune.csv" in capsys.readouterr().out


def test_the_winner_is_re_evaluated_on_fresh_deals(tmp_path):
    data = {**DATA, "tune": {**DATA["tune"], "max_games": 240, "confirm_games": 30}}
    tune(data, "t.yaml", tmp_path, log=lambda _: None)
    summary = json.loads((tmp_path / "tune.json").read_text())
    confirmed = summary["confirmed"]
    assert confirmed["games"] == 30 and confirmed["seed"] != DATA["seed"]
    assert confirmed["ci"][0] < confirmed["mean"] < confirmed["ci"][1]
    header = (tmp_path / "tune.csv").read_text().splitlines()[0]
    assert header.endswith("p_versus_leader,dropped_after_look")


def test_equal_candidates_are_rarely_dropped():
    """Nine candidates with the same mean, ten looks: paired Holm at alpha / looks drops one
    in few runs (the unpaired, uncorrected overlap rule dropped one in about a third)."""
    import numpy as np

    from dixit_lab.run.tuning import Candidate, _eliminate

    rng = np.random.default_rng(11)
    runs, dropped = 40, 0
    for _ in range(runs):
        candidates = [Candidate(float(v)) for v in range(9)]
        for look in range(10):
            deal_luck = rng.normal(0, 1.0, 50)
            for c in candidates:
                if c.alive:
                    c.by_deal.update({look * 50 + i: float(x) for i, x in
                                      enumerate(deal_luck + rng.normal(0, 1.0, 50))})
            _eliminate([c for c in candidates if c.alive], 0.05, 10, look + 1)
        dropped += any(not c.alive for c in candidates)
    assert dropped / runs <= 0.1


def test_a_clearly_worse_candidate_is_dropped():
    import numpy as np

    from dixit_lab.run.tuning import Candidate, _eliminate

    rng = np.random.default_rng(2)
    good, bad = Candidate(1.0), Candidate(2.0)
    luck = rng.normal(0, 2.0, 100)
    good.by_deal = dict(enumerate(luck + 0.5 + rng.normal(0, 0.3, 100)))
    bad.by_deal = dict(enumerate(luck + rng.normal(0, 0.3, 100)))
    _eliminate([good, bad], 0.05, 10, 1)
    assert good.alive and not bad.alive and bad.dropped_after == 1 and bad.p_value < 0.005
