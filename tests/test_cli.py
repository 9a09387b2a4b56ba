"""The command line: simulate and agents."""

from __future__ import annotations

from dixit_lab.cli import main
from dixit_lab.records import read_jsonl


def test_simulate_prints_a_summary(capsys, tmp_path):
    out = tmp_path / "games.jsonl"
    code = main(["simulate", "--players", "5", "--rules", "classic", "--agents", "random",
                 "--games", "20", "--seed", "1", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "games        20" in text and "mean rounds  11.00" in text
    assert "deck_exhausted 20" in text
    assert len(list(read_jsonl(out))) == 20


def test_simulate_is_seeded(capsys):
    main(["simulate", "--games", "10", "--seed", "3"])
    first = capsys.readouterr().out
    main(["simulate", "--games", "10", "--seed", "3"])
    assert capsys.readouterr().out == first


def test_simulate_rule_overrides_and_per_seat_agents(capsys):
    code = main(["simulate", "--players", "3", "--rules", "refresh", "--set",
                 "lone_finder_points=4", "--agents", "random,softmax(temperature=2),random",
                 "--games", "5", "--deck", "dreams"])
    assert code == 0
    assert "softmax(temperature=2.0)" in capsys.readouterr().out


def test_errors_are_one_line_with_status_2(capsys):
    assert main(["simulate", "--rules", "nope"]) == 2
    assert "unknown rule preset 'nope'" in capsys.readouterr().err
    assert main(["simulate", "--players", "4", "--agents", "random,random"]) == 2
    assert "lists 2 agents for 4 players" in capsys.readouterr().err
    assert main(["simulate", "--set", "bogus=1"]) == 2
    assert "unknown rule option" in capsys.readouterr().err


def test_agents_lists_parameters(capsys):
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out
    assert "random()" in listing and "softmax(temperature: float = 0.05" in listing


def test_run_report_show_and_replay_end_to_end(tmp_path, capsys):
    import yaml

    config = {"name": "e2e", "seed": 1, "rules": "quest", "deck": "dreams",
              "players": ["literal", "softmax", "pragmatic", "random"], "games": 8,
              "executor": {"kind": "local"}}
    path = tmp_path / "e2e.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "e2e: 8 games (8 played this run" in text and "pragmatic" in text
    for name in ("config.yaml", "games.jsonl", "rounds.parquet", "agents.csv", "ratings.csv",
                 "summary.json", "report.md", "find_calibration.csv",
                 "plots/storyteller_outcomes.png", "plots/find_calibration.png"):
        assert (out / name).is_file(), name
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.md").is_file()
    assert main(["show", str(out), "--game", "2"]) == 0
    shown = capsys.readouterr().out
    assert "Game 2" in shown and "storyteller" in shown
    assert main(["show", str(out), "--game", "99"]) == 2
    assert main(["replay", str(out), "--executor", "local", "--quiet"]) == 0
    assert "identical: 8 games" in capsys.readouterr().out
