"""The results viewer's API: runs (sweeps too), pages of games, one game, card images."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")

from fastapi.testclient import TestClient

from dixit_lab.records.format import read_jsonl
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment, run_sweep
from dixit_lab.web.view_app import ResultsIndex, view_app

CONFIG = {"name": "viewed", "seed": 5, "rules": {"preset": "classic",
                                                 "options": {"max_rounds": 3}},
          "deck": "dreams", "players": ["random", "random", "random"], "games": 3,
          "executor": {"kind": "local"}}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("viewed")
    run_experiment(parse_config(CONFIG), out, show_progress=False)
    return out


def client_for(path):
    return TestClient(view_app(ResultsIndex.open(path), ["testserver"]))


def test_a_results_folder_game_by_game_and_round_by_round(folder):
    client = client_for(folder)
    assert "view.js" in client.get("/").text
    runs = client.get("/api/runs").json()["runs"]
    assert [run["games"] for run in runs] == [3]
    listing = client.get("/api/runs/0/games", params={"start": 1, "count": 5}).json()
    assert listing["total"] == 3 and [g["index"] for g in listing["games"]] == [1, 2]
    records = list(read_jsonl(folder))
    game = client.get("/api/runs/0/games/2").json()
    record = records[2]
    assert game["final_scores"] == list(record.final_scores)
    assert len(game["rounds"]) == len(record.rounds)
    first = game["rounds"][0]
    assert [card["card"] for card in first["display"]] == list(record.rounds[0].display)
    assert first["card_owner"] == list(record.rounds[0].card_owner)
    assert first["votes"] == list(record.rounds[0].votes)
    assert first["outcome"] == record.rounds[0].outcome
    image = client.get(first["display"][0]["image"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/webp"


def test_bad_numbers_are_404s_and_no_path_is_read(folder):
    client = client_for(folder)
    for url in ("/api/runs/1/games", "/api/runs/0/games/3", "/api/runs/0/games/-1",
                "/api/runs/0/games/100", f"/api/runs/0/games/{2 ** 64}", "/cards/7/0",
                "/static/..%2F..%2Fgames.jsonl"):
        assert client.get(url).status_code == 404, url
    for url in ("/api/runs/x/games", "/api/runs/0/games/\uff11", "/api/runs/\uff10/games",
                "/api/runs/0/games/%F0%9D%9F%8F", "/api/runs/0/games?start=\uff11"):
        refused = client.get(url)  # full-width and mathematical digits are not numbers here
        assert refused.status_code == 400 and refused.json()["rule"] == "malformed", url


def test_a_sweep_lists_its_points(tmp_path):
    data = {**CONFIG, "games": 1, "sweep": {"rules.max_rounds": [1, 2]}}
    run_sweep(data, "test", tmp_path, show_progress=False)
    runs = client_for(tmp_path).get("/api/runs").json()["runs"]
    assert [run["label"] for run in runs] == ["point 0: rules.max_rounds=1",
                                             "point 1: rules.max_rounds=2"]
    second = client_for(tmp_path).get("/api/runs/1/games/0").json()
    assert len(second["rounds"]) == 2


def test_a_folder_without_games_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="is it a results folder"):
        ResultsIndex.open(tmp_path)
