"""``dixit-lab run`` says a seat's faults out loud: a line for each seat that had any (its
kinds, its share of decisions replaced, its first fault), and a run whose seat is over
``max_fault_share`` exits 2 naming it, once every result is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dixit_lab.cli.main import main

BROKEN = Path(__file__).resolve().parents[1] / "broken_agents.py"


def _run(tmp_path: Path, capsys, teller: str, name: str = "b", **extra):
    """``dixit-lab run`` of a player ``broken`` (agent ``teller``) against three random
    ones: (exit code, stdout, stderr, the results folder)."""
    config = {"name": name, "seed": 4, "rules": {"preset": "classic",
                                                 "options": {"max_rounds": 6}},
              "deck": "dreams", "games": 4, "executor": {"kind": "local"},
              "engine": "reference",  # (auto says on stderr why a file agent needs it)
              "players": [{"name": "broken", "agent": teller}, "random",
                          {"name": "r2", "agent": "random"}, {"name": "r3", "agent": "random"}],
              **extra}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    folder = tmp_path / name
    code = main(["run", str(path), "--out", str(folder), "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, folder


@pytest.mark.parametrize(("agent", "kind", "first"), [
    ("RaisesInVote", "raised", r"vote, game 0, round \d+: the agent raised ZeroDivisionError"),
    ("IllegalEveryMove", "illegal", r"tell, game 0, round 1: card -1 is not in the "),
    ("OffByOne", "raised", r"game 0, round \d+: the agent raised IndexError: list index"),
])
def test_a_broken_agent_fails_the_run_naming_its_seat_once_the_results_are_written(
        tmp_path, capsys, agent, kind, first):
    code, out, err, folder = _run(tmp_path, capsys, f"{BROKEN}:{agent}")
    assert code == 2
    row = pd.read_csv(folder / "agents.csv").set_index("player").loc["broken"]
    replaced = round((1 - row["own_decision_share"]) * row["decisions"])
    lines = [line for line in out.splitlines() if line.startswith("faults:")]
    assert len(lines) == 1  # the broken seat's, no other
    assert lines[0].startswith(f"faults: broken (agent {BROKEN}:{agent}): {replaced} of "
                               f"{row['decisions']} decisions replaced (")
    assert f": {kind} {row[f'faults_{kind}']} — first: " in lines[0]
    assert re.search(first, lines[0]), lines[0]
    assert err.count("\n") == 1 and err.startswith(
        f"dixit-lab run: error: {folder}: broken had {replaced} of {row['decisions']} "
        f"decisions replaced by faults (")
    assert "over max_fault_share 0.05" in err and "set max_fault_share: 1" in err
    for name in ("games.jsonl.zst", "manifest.json", "agents.csv", "summary.json",
                 "ratings.csv", "report.md"):
        assert (folder / name).is_file(), name  # every result written before the exit
    assert f"{kind} {row[f'faults_{kind}']}" in (folder / "report.md").read_text()


def test_a_clean_run_of_built_ins_prints_no_fault_line_and_passes(tmp_path, capsys):
    code, out, err, folder = _run(tmp_path, capsys, "softmax")
    assert code == 0 and "faults:" not in out and "max_fault_share" not in err
    assert json.loads((folder / "summary.json").read_text())["first_faults"] == {}
    assert "- **Faults:** none" in (folder / "report.md").read_text()


def test_max_fault_share_1_accepts_any_faults_and_still_says_them(tmp_path, capsys):
    code, out, err, folder = _run(tmp_path, capsys, f"{BROKEN}:IllegalEveryMove",
                                  max_fault_share=1)
    assert code == 0 and "error" not in err
    assert "faults: broken (agent " in out and "(100%): illegal " in out
    assert yaml.safe_load((folder / "config.yaml").read_text())["experiment"][
        "max_fault_share"] == 1  # not the default: config.yaml says it


def test_report_rebuilds_the_same_report_text_with_its_faults(tmp_path, capsys):
    code, _, _, folder = _run(tmp_path, capsys, f"{BROKEN}:OffByOne")
    assert code == 2
    first = (folder / "report.md").read_text()
    summary = json.loads((folder / "summary.json").read_text())
    assert "IndexError" in summary["first_faults"]["broken"]["message"]
    (folder / "report.md").unlink()
    (folder / "summary.json").write_text(json.dumps({**summary, "first_faults": {}}))
    assert main(["report", str(folder)]) == 0  # the first faults again, from the games file
    assert (folder / "report.md").read_text() == first
    assert json.loads((folder / "summary.json").read_text()) == summary


def test_a_sweep_plays_every_point_and_fails_naming_the_point_and_seat(tmp_path, capsys):
    code, out, err, folder = _run(
        tmp_path, capsys, "random", name="sw",
        sweep={"players.0.agent": ["random", f"{BROKEN}:RaisesInVote"]})
    assert code == 2
    assert (folder / "sweep.csv").is_file() and (folder / "report.md").is_file()
    assert all((folder / "points" / point / "report.md").is_file() for point in ("000", "001"))
    lines = [line for line in out.splitlines() if "faults:" in line]
    assert len(lines) == 1 and lines[0].startswith(
        f"point 1 (players.0.agent={BROKEN}:RaisesInVote): faults: broken (agent ")
    assert f"{folder}: point 1 (players.0.agent=" in err and "over max_fault_share" in err
    sweep_report = (folder / "report.md").read_text()
    assert "## Faults" in sweep_report and "- point 1: broken (agent " in sweep_report
    report_before = sweep_report
    assert main(["report", str(folder)]) == 0
    assert (folder / "report.md").read_text() == report_before
