"""dixit-lab plan: a pilot of the run's first games, scaled to the run: the seconds a game,
each player's interval over the pilot and the run, the games a target width needs, a model
seat's tokens and cost, a sweep at its first point; nothing is kept."""

from __future__ import annotations

import math

import pytest

from dixit_lab.cli.main import main
from dixit_lab.errors import ConfigError
from dixit_lab.run.plan import plan_run

DATA = {"name": "plan-test", "seed": 4, "rules": "classic", "deck": "dreams",
        "players": [{"name": "lit", "agent": "literal"}, {"name": "soft", "agent": "softmax"},
                    {"name": "dice", "agent": "random"}],
        "games": 2000, "executor": {"kind": "process"}}


def test_a_pilot_scales_to_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = plan_run(DATA, "plan.yaml", pilot=60, target_width=0.3)
    assert (plan.pilot_games, plan.run_games) == (60, 2000)
    assert plan.seconds_per_game > 0 and plan.tokens_per_game == 0
    assert {p.player for p in plan.players} == {"lit", "soft", "dice"}
    for player in plan.players:
        assert player.run_width == pytest.approx(player.pilot_width * math.sqrt(60 / 2000))
        assert player.games_for_target == math.ceil(60 * (player.pilot_width / 0.3) ** 2)
    assert not list(tmp_path.iterdir())  # nothing kept, no results folder made
    assert any("width 0.3 needs about" in line for line in plan.lines())


def test_a_sweep_is_planned_at_its_first_point_and_a_bad_config_is_one_line(tmp_path):
    sweep = {**DATA, "sweep": {"players.1.params.temperature": [0.1, 0.5]}}
    assert plan_run(sweep, "sweep.yaml", pilot=30).pilot_games == 30
    with pytest.raises(ConfigError):
        plan_run({**DATA, "games": 0}, "bad.yaml")


def test_a_model_seat_plan_counts_its_tokens_and_cost(tmp_path):
    pytest.importorskip("httpx")
    from dixit_lab.vlm.stub import StubServer

    with StubServer() as server:
        data = {**DATA, "games": 500, "rules": {"preset": "classic",
                                                "options": {"max_rounds": 2}},
                "players": [{"name": "m", "agent": f"llm(model=good, base_url="
                                                   f"{server.base_url}, price_in=1.0)"},
                            {"name": "dice", "agent": "random", "count": 2}]}
        plan = plan_run(data, "model.yaml", pilot=4)
    assert plan.tokens_per_game > 0 and plan.cost_per_game > 0
    assert any("tokens" in line and "$" in line for line in plan.lines())


def test_the_command_prints_the_plan(capsys):
    assert main(["plan", "quickstart", "--pilot", "20", "--target-width", "0.5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pilot: 20 games") and "run: 1,000 games" in out
