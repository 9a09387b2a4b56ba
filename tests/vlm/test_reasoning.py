"""A reasoning model at the table: its sampling and reasoning parameters are sent as named
(``top_p``, ``reasoning_effort``, ``chat_template_kwargs``) and recorded in the seat's spec;
its scratchpad is kept in the exchange apart from its answer, never parsed; its reasoning
tokens are counted apart; a league entry of it replays offline byte for byte; a value that
no server takes is one line before any game."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from dixit_lab.cli.main import main
from dixit_lab.league.entry import LeagueOptions, enter
from dixit_lab.league.leaderboard import open_league
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import run_experiment
from dixit_lab.vlm.stub import StubServer
from tests.games_files import games_text

pytest.importorskip("httpx")

PARAMS = "reasoning_effort=high, top_p=0.9, enable_thinking=true, timeout=5"


def _lines(folder):
    return [json.loads(line) for path in sorted((folder / "exchanges").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reasoning") / "run"
    with StubServer() as server:
        spec = f"llm(model=thinker, base_url={server.base_url}, {PARAMS})"
        config = parse_config({
            "name": "thinker", "seed": 3, "deck": "dreams", "games": 2,
            "rules": {"preset": "classic", "options": {"max_rounds": 3}},
            "players": [{"name": "thinker", "agent": spec}, {"name": "a", "agent": "random"},
                        {"name": "b", "agent": "random"}],  # (who perceive no free text)
            "executor": {"kind": "local"}})
        run_experiment(config, folder, show_progress=False)
    return folder, config


def test_the_parameters_are_sent_and_the_reasoning_kept_apart(played):
    folder, _ = played
    decisions = [line for line in _lines(folder) if "probe" not in line]
    assert decisions
    for line in decisions:
        request, message = line["request"], line["outcome"]["message"]
        assert request["reasoning_effort"] == "high" and request["top_p"] == 0.9
        assert request["chat_template_kwargs"] == {"enable_thinking": True}
        assert message["reasoning"].startswith("Thinking (effort high, top_p 0.9")
        assert line["outcome"]["usage"]["reasoning_tokens"] > 0
    agents = pd.read_csv(folder / "agents.csv").set_index("player")
    row = agents.loc["thinker"]
    assert row["own_decision_share"] == 1.0  # every answer parsed past its scratchpad
    assert 0 < row["reasoning_tokens"] < row["completion_tokens"]
    assert "reasoning_effort=high" in (folder / "config.yaml").read_text()


def test_the_folder_replays_offline_byte_for_byte(played, tmp_path):
    folder, config = played
    assert replay_folder(folder, executor="local", show_progress=False) == (2, None)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    for path in copy.glob("games.jsonl*"):
        path.unlink()
    (copy / "manifest.json").unlink()
    run_experiment(config, copy, show_progress=False, exchanges="replay")
    assert games_text(copy) == games_text(folder)


def _pool_perceives_free_text() -> None:
    """The pool's members perceive a model's free-text clues with the sentence encoder."""
    from dixit_lab.embeddings.base import text_model_problem

    problem = text_model_problem("conse")
    if problem is not None:
        pytest.skip(f"the pool's members perceive a model's clues with the sentence encoder: "
                    f"{problem[0]} is not installed (the {problem[1]} extra)")


def test_a_reasoning_entrant_plays_the_league_and_replays(tmp_path):
    _pool_perceives_free_text()
    with StubServer() as server:
        spec = f"llm(model=thinker, base_url={server.base_url}, {PARAMS})"
        pool = open_league(tmp_path)
        record = enter(tmp_path, "thinker", spec, pool, LeagueOptions(max_games=8, deals=2),
                       say=lambda _: None)
    assert record.games == 8 and record.fault_share == 0.0
    block = tmp_path / "entrants" / "thinker" / "blocks" / "000"
    assert replay_folder(block, executor="local", show_progress=False) == (8, None)


@pytest.mark.parametrize("bad, said", [("reasoning_effort=extreme", "reasoning_effort"),
                                       ("top_p=1.5", "top_p must be above 0 and at most 1")])
def test_a_value_no_server_takes_is_one_line(tmp_path, capsys, bad, said):
    config = tmp_path / "c.yaml"
    config.write_text(f"name: t\ngames: 1\nplayers:\n  - {{name: m, agent: 'llm(model=x, "
                      f"{bad})'}}\n  - {{name: a, agent: random}}\n  - {{name: b, agent: "
                      f"random}}\nexecutor: {{kind: local}}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and said in error


def test_a_model_entrant_stops_at_its_token_budget(tmp_path):
    _pool_perceives_free_text()
    with StubServer() as server:
        spec = f"llm(model=thinker, base_url={server.base_url}, {PARAMS}, price_out=10.0)"
        pool = open_league(tmp_path)
        record = enter(tmp_path, "thinker", spec, pool,
                       LeagueOptions(max_games=400, deals=2, max_tokens=12_000),
                       say=lambda _: None)
    assert record.stopped == "max_tokens" and record.games < 400
    assert 0 < record.tokens <= 12_000 and record.cost_usd > 0
    board = (tmp_path / "leaderboard.md")
    from dixit_lab.league.leaderboard import write_leaderboard

    write_leaderboard(tmp_path, pool)
    assert f"{record.tokens:,}" in board.read_text()
