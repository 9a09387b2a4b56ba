"""fit-listener and the ``calibrated`` agent, on a small fixture of real games."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dixit_lab.cli.main import main
from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.listener.fit import FEATURES, FittedListener, fit_listener
from dixit_lab.records.format import write_jsonl


@pytest.fixture(scope="module")
def fixture_games(tmp_path_factory):
    """40 games on ``dreams`` (shipped conse embeddings, no model needed): storytellers of
    varied ambiguity against softmax listeners."""
    deck = load_deck("dreams")
    folder = tmp_path_factory.mktemp("results")
    records = []
    for i in range(40):
        target = (0.2, 0.4, 0.6, 0.8)[i % 4]
        agents = [make_agent(f"ambiguity(target={target})")] + \
            [make_agent("softmax") for _ in range(3)]
        records.append(play_game(agents, get_rules("classic"), deck, game_seed(11, i)))
    write_jsonl(records, folder / "games.jsonl")
    return folder


def test_fit_listener_holds_out_whole_deals_across_sweep_points(tmp_path):
    """Two sweep points (4 and 5 players) that reuse the deals 0..12 of one experiment seed:
    deals 4 and 9 are held out at both table sizes, so the fit never sees a held-out deal
    (holding out every 5th game by position would hold out deal 1's 5-player game while
    training on its 4-player game)."""
    deck = load_deck("dreams")
    for point, n_players in enumerate((4, 5)):
        records = []
        for deal in range(13):
            agents = [make_agent("ambiguity(target=0.5)")] + \
                [make_agent("softmax") for _ in range(n_players - 1)]
            records.append(play_game(agents, get_rules("classic"), deck, game_seed(11, deal)))
        folder = tmp_path / "points" / f"{point:03d}"
        folder.mkdir(parents=True)
        write_jsonl(records, folder / "games.jsonl")
    info = fit_listener([tmp_path]).info
    assert info["holdout"]["deals"] == 2 and info["holdout"]["games"] == 4
    assert "deal" in info["holdout"]["rule"]


def test_fit_listener_writes_plain_json(fixture_games, tmp_path):
    fitted = fit_listener([fixture_games])
    path = fitted.save(tmp_path / "model.json")
    data = json.loads(path.read_text())
    assert data["format"] == "dixit-lab-listener-model/1"
    assert data["features"] == list(FEATURES)
    assert data["info"]["votes"] > 1000
    loaded = FittedListener.load(path)
    assert loaded == fitted
    # the fit beats the prior on the held-out games (every 5th deal: 8 of 40)
    info = fitted.info
    assert info["holdout"]["games"] == info["holdout"]["deals"] == 8
    assert info["fitted"]["votes"] == info["holdout"]["votes"] < info["votes"] / 4
    y_mean = info["fitted"]["mean_observed"]
    prior = -(y_mean * np.log(y_mean) + (1 - y_mean) * np.log(1 - y_mean))
    assert info["fitted"]["log_loss"] < prior
    assert info["fitted_in_sample"]["votes"] + info["fitted"]["votes"] == info["votes"]
    # a bin's interval, or null when its votes come from one round (plain JSON: no NaN)
    assert all(0 <= row["ci_low"] <= row["observed"] <= row["ci_high"] <= 1
               if row["ci_low"] is not None else row["ci_high"] is None
               for row in info["reliability_fitted"] + info["reliability_analytic"])
    assert "NaN" not in path.read_text()
    assert info["voters_seen"] == [3]


def test_cli_fit_listener_and_calibrated_agent(fixture_games, tmp_path, capsys):
    out = tmp_path / "listener.json"
    assert main(["fit-listener", str(fixture_games), "--out", str(out)]) == 0
    assert "fitted model" in capsys.readouterr().out
    assert main(["fit-listener", "--out", str(out)]) != 0  # neither results nor --config
    agents = [make_agent(f"calibrated(model={out})")] + [make_agent("softmax") for _ in range(3)]
    record = play_game(agents, get_rules("classic"), load_deck("dreams"), 3)
    for rnd in record.rounds:
        assert rnd.storyteller_card in rnd.storyteller_hand and not rnd.faults
    teller = agents[0]
    told = next(r for r in record.rounds if r.storyteller == 0)
    p = teller.predicted_find(list(told.storyteller_hand), told.storyteller_card, told.clue,
                              record.rounds.index(told))
    assert 0.0 < p < 1.0


def test_model_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="bad.json: field 'format'"):
        FittedListener.load(bad)
    with pytest.raises(FileNotFoundError, match="no listener model 'nowhere'"):
        FittedListener.load("nowhere")


def test_not_enough_rounds(tmp_path):
    empty = tmp_path / "games.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="not enough usable rounds"):
        fit_listener([empty])


@pytest.mark.parametrize("options", [{"temperature": float("nan")}, {"temperature": 0.0},
                                     {"regularization": -1.0},
                                     {"regularization": float("inf")}])
def test_fit_listener_refuses_options_out_of_range_before_reading_a_game(tmp_path, options):
    from dixit_lab.run.experiment import ConfigError

    name = next(iter(options))
    with pytest.raises(ConfigError, match=f"{name} must be a finite number above 0"):
        fit_listener([tmp_path / "no such folder"], **options)
