"""Running experiments: results folders, determinism across workers, resume after a kill."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image

from dixit_lab.records.format import read_jsonl
from dixit_lab.run.experiment import ConfigError, parse_config
from dixit_lab.run.runner import run_experiment
from tests.games_files import games_text, games_text_of, has_games

CONFIG = {
    "name": "runner-test",
    "seed": 5,
    "rules": "classic",
    "deck": "dreams",
    "players": ["literal", "softmax", {"agent": "ambiguity", "params": {"target": 0.4}},
                "random"],
    "games": 40,
    "schedule": {"kind": "rotation"},
    "executor": {"kind": "process", "chunk_size": 3},
}


def run(tmp_path: Path, name: str, **kwargs) -> Path:
    folder = tmp_path / name
    run_experiment(parse_config(CONFIG), folder, show_progress=False, write_outputs=False,
                   **kwargs)
    return folder


def test_same_games_for_any_number_of_workers(tmp_path):
    one = run(tmp_path, "one", executor="local")
    two = run(tmp_path, "two", workers=2)
    small_chunks = run(tmp_path, "chunks", workers=2, chunk_size=1)
    text = games_text(one)
    assert text == games_text(two)
    assert text == games_text(small_chunks)
    records = list(read_jsonl(one))
    assert [r.meta["game"] for r in records] == list(range(40))
    assert not (one / "parts").exists()
    header = yaml.safe_load((one / "config.yaml").read_text())
    assert header["experiment"]["players"][2]["spec"] == "ambiguity(target=0.4)"
    assert "dixit_lab_version" in header and "git_commit" in header


def test_rerun_of_a_finished_run_plays_nothing(tmp_path):
    folder = run(tmp_path, "done", executor="local")
    before = games_text(folder)
    result = run_experiment(parse_config(CONFIG), folder, show_progress=False,
                            write_outputs=False, executor="local")
    assert result.played == 0 and games_text(folder) == before


def test_partial_parts_are_resumed(tmp_path):
    complete = run(tmp_path, "complete", executor="local")
    lines = games_text(complete).splitlines()
    folder = tmp_path / "partial"
    (folder / "parts").mkdir(parents=True)
    (folder / "parts" / "games-0000000-0000009.jsonl").write_text("\n".join(lines[:10]) + "\n")
    (folder / "parts" / "games-0000020-0000024.jsonl").write_text("\n".join(lines[20:25]) + "\n")
    result = run_experiment(parse_config(CONFIG), folder, show_progress=False,
                            write_outputs=False, executor="local")
    assert result.played == 25
    assert games_text(folder).splitlines() == lines


def test_a_folder_of_another_experiment_is_refused(tmp_path):
    folder = run(tmp_path, "first", executor="local")
    other = parse_config({**CONFIG, "seed": 6})
    with pytest.raises(ConfigError, match="different experiment .*changed: seed"):
        run_experiment(other, folder, show_progress=False, write_outputs=False)
    # the executor is not part of the experiment: changing it resumes happily
    run_experiment(parse_config({**CONFIG, "executor": {"kind": "local"}}), folder,
                   show_progress=False, write_outputs=False)


def test_a_killed_run_resumes_and_plays_only_the_missing_games(tmp_path):
    config = {**CONFIG, "games": 600, "executor": {"kind": "process", "workers": 2,
                                                   "chunk_size": 10}}
    path = tmp_path / "kill.yaml"
    path.write_text(yaml.safe_dump(config))
    folder = tmp_path / "killed"
    env = {**os.environ, "DIXIT_LAB_PROGRESS": "0"}
    command = [sys.executable, "-m", "dixit_lab.cli", "run", str(path), "--out", str(folder),
               "--quiet"]
    process = subprocess.Popen(command, env=env, start_new_session=True)
    deadline = time.time() + 240  # generous: a loaded machine is slow to start the pool
    while time.time() < deadline:
        parts = list((folder / "parts").glob("games-*")) if (folder / "parts").exists() else []
        if len(parts) >= 3:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    saved = sum(len(games_text_of(p).splitlines()) for p in (folder / "parts").glob("games-*")
                if not p.name.startswith("."))
    assert 0 < saved < 600, "the run should have been killed part-way"
    assert not has_games(folder)
    result = run_experiment(parse_config(config), folder, show_progress=False,
                            write_outputs=False)
    assert result.played == 600 - saved
    fresh = run_experiment(parse_config(config), tmp_path / "fresh", show_progress=False,
                           write_outputs=False)
    assert fresh.played == 600
    fresh_bytes = games_text(tmp_path / "fresh")
    assert games_text(folder) == fresh_bytes


def test_a_resume_on_a_deck_changed_since_is_refused_in_one_line(tmp_path, monkeypatch,
                                                                capsys):
    from dixit_lab.cli.main import main
    from tests.deck_support import image_deck, new_process

    deck = image_deck(tmp_path / "dreams", cards=30)
    config = {**CONFIG, "deck": str(deck), "players": ["random"] * 3, "games": 6,
              "executor": {"kind": "local", "chunk_size": 2}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    folder = tmp_path / "out"
    assert main(["run", str(path), "--out", str(folder), "--quiet"]) == 0
    lines = games_text(folder).splitlines()
    for saved in folder.iterdir():  # as a run stopped after its first chunk
        if saved.name != "config.yaml":
            shutil.rmtree(saved) if saved.is_dir() else saved.unlink()
    part = folder / "parts" / "games-0000000-0000001.jsonl"
    part.parent.mkdir()
    part.write_text("\n".join(lines[:2]) + "\n")
    header = (folder / "config.yaml").read_text()
    image = deck / "images" / "0.png"
    original = image.read_bytes()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(image)  # the deck changes between the parts
    new_process(monkeypatch)
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"dixit-lab run: error: {folder / 'config.yaml'}: the deck {deck} "
                          f"has changed since its saved games were played"), err
    # nothing already computed is lost, nor recorded as played on the new deck
    assert part.read_text() == "\n".join(lines[:2]) + "\n"
    assert (folder / "config.yaml").read_text() == header
    image.write_bytes(original)  # restored: the run resumes and plays the same games
    new_process(monkeypatch)
    result = run_experiment(parse_config(config), folder, show_progress=False,
                            write_outputs=False)
    assert result.played == 4 and games_text(folder).splitlines() == lines


def test_a_seat_over_max_fault_share_fails_the_run_once_its_results_are_written(tmp_path):
    from dixit_lab.report.faults import folder_faults
    from dixit_lab.run.runner import FaultShareError

    broken = Path(__file__).parents[1] / "broken_agents.py"
    config = {**CONFIG, "games": 6, "engine": "reference",
              "executor": {"kind": "process", "chunk_size": 1},  # the sums of 6 chunks
              "players": [*CONFIG["players"][:3], {"name": "off",
                                                   "agent": f"{broken}:OffByOne"}]}
    folder = tmp_path / "broken"
    with pytest.raises(FaultShareError) as failed:
        run_experiment(parse_config(config), folder, show_progress=False, workers=2)
    assert failed.value.result.folder == folder and failed.value.result.played == 6
    assert [field for _, field in failed.value.over] == ["max_fault_share"]
    assert str(failed.value).startswith(f"{folder}: off had ")
    seats = folder_faults(folder)
    assert [seat.player for seat in seats] == ["off"] and seats[0].share > 0.05
    first = seats[0].first
    record = next(r for r in read_jsonl(folder) if r.meta["game"] == first["game"])
    fault = next(f for f in record.rounds[first["round"]].faults if f.seat == first["seat"])
    assert (fault.action, fault.kind, fault.message) == (
        first["action"], "raised", first["message"])
    faults_of_off = [(r.meta["game"], number) for r in read_jsonl(folder)
               for number, rnd in enumerate(r.rounds) for f in rnd.faults
               if r.meta["players"][f.seat] == "off"]
    assert min(faults_of_off) == (first["game"], first["round"])  # its first, in game order
    # the limits are no part of the experiment: changed, the same folder resumes (and passes)
    result = run_experiment(parse_config({**config, "max_fault_share": 1,
                                          "min_model_share": 0.9}), folder, show_progress=False)
    assert result.played == 0
