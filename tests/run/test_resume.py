"""A run into a folder that holds saved games: the same code or refused (an outside agent's
file, package or ``files:``), another version, code or engine only when a sample of the saved
games replays the same, ``--restart``, and folders written before any of this."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from dixit_lab.cli.main import main
from dixit_lab.errors import ConfigError
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.provenance import AGENTS_PLAYED, agents_played
from dixit_lab.run.resume import RESUME_SAMPLE, check_same_agents, discard_run
from dixit_lab.run.runner import run_experiment
from tests.agent_support import agent_file, fresh_agents
from tests.games_files import games_text

CONFIG = {"name": "resume-test", "seed": 3, "games": 6, "rules": "classic",
          "players": [{"name": "mine", "agent": "mine.py:Mine"}, "literal", "random"],
          "executor": {"kind": "local", "chunk_size": 2}}


def write_config(where: Path, **changes) -> Path:
    path = where / "c.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, **changes}))
    return path


def run_cli(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["run", *args, "--quiet"])
    return code, capsys.readouterr().err.strip()


def stopped_after_first_chunk(folder: Path) -> str:
    """Leave ``folder`` as a run stopped after its first chunk (config.yaml and a part of
    games 0 and 1); returns that part's text."""
    lines = games_text(folder).splitlines()
    for saved in folder.iterdir():
        if saved.name not in ("config.yaml", ".lock"):
            shutil.rmtree(saved) if saved.is_dir() else saved.unlink()
    part = folder / "parts" / "games-0000000-0000001.jsonl"
    part.parent.mkdir()
    part.write_text("\n".join(lines[:2]) + "\n")
    return part.read_text()


def edit_header(folder: Path, **values) -> None:
    path = folder / "config.yaml"
    header = yaml.safe_load(path.read_text())
    header.update(values)
    path.write_text(yaml.safe_dump(header, sort_keys=False))


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    fresh_agents(monkeypatch)
    agent_file(tmp_path / "mine.py", "valley")
    return tmp_path


def test_an_agent_file_edited_between_two_runs_is_refused_naming_it(here, capsys,
                                                                    monkeypatch):
    config = write_config(here)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    header = (here / "out" / "config.yaml").read_text()
    played = yaml.safe_load(header)[AGENTS_PLAYED]
    assert played == [{"player": "mine", "spec": "mine.py:Mine", "code": [
        {"kind": "file", "path": str(here / "mine.py"),
         "sha256": __import__("hashlib").sha256((here / "mine.py").read_bytes()).hexdigest()}]}]
    games = games_text(here / "out")
    agent_file(here / "mine.py", "asteroid")
    fresh_agents(monkeypatch)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err == (f"dixit-lab run: error: out: player 'mine' (mine.py:Mine): its agent file "
                   f"{here / 'mine.py'} has changed since its saved games were played; choose "
                   f"another --out, or run with --restart to discard them and play every game "
                   f"again")
    assert games_text(here / "out") == games  # nothing computed is lost or mixed
    assert (here / "out" / "config.yaml").read_text() == header
    part = stopped_after_first_chunk(here / "out")  # a resume is refused the same way
    fresh_agents(monkeypatch)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 2 and "its agent file" in err and (here / "out" / "parts").is_dir()
    assert (here / "out" / "parts" / "games-0000000-0000001.jsonl").read_text() == part


def test_restart_plays_every_game_again_and_keeps_what_is_not_the_runs(here, capsys,
                                                                     monkeypatch):
    config = write_config(here)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    (here / "out" / "my notes.txt").write_text("mine")
    (here / "out" / "exchanges").mkdir()  # a model agent's recorded replies: kept
    (here / "out" / "exchanges" / "a.jsonl").write_text("{}\n")
    agent_file(here / "mine.py", "asteroid")
    fresh_agents(monkeypatch)
    assert run_cli(capsys, str(config), "--out", "out", "--restart")[0] == 0
    fresh_agents(monkeypatch)
    assert run_cli(capsys, str(config), "--out", "fresh")[0] == 0
    assert games_text(here / "out") == games_text(here / "fresh")
    assert '"clue":"asteroid"' in games_text(here / "out")
    assert (here / "out" / "my notes.txt").read_text() == "mine"
    assert (here / "out" / "exchanges" / "a.jsonl").is_file()
    assert sorted(p.name for p in (here / "out").iterdir()) == sorted(
        [*(p.name for p in (here / "fresh").iterdir()), "exchanges", "my notes.txt"])


def test_restart_discards_only_what_a_run_wrote(tmp_path):
    folder = tmp_path / "run"
    config = {**CONFIG, "players": ["literal", {"agent": "ambiguity", "params": {"target": 0.5}},
                                    "random"]}  # every table and plot
    run_experiment(parse_config(config), folder, show_progress=False)
    assert (folder / "plots" / "find_calibration.png").is_file()
    (folder / "my notes.txt").write_text("mine")
    discard_run(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["my notes.txt"]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "config.yaml").write_text("my: own settings\n")
    (folder / "report.md").write_text("my report")
    with pytest.raises(ConfigError, match="not a results folder's config.yaml: --restart "
                                          "discards only what a run wrote"):
        discard_run(folder)
    assert (folder / "report.md").read_text() == "my report"


def test_a_module_agent_s_package_edited_is_refused_naming_it(here, capsys, monkeypatch):
    package = here / "mine_pkg"
    agent_file(package / "tellers.py", "valley")
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("DEPTH = 1\n")
    monkeypatch.syspath_prepend(str(here))
    config = write_config(here, players=[{"name": "mine", "agent": "mine_pkg.tellers:Mine"},
                                         "literal", "random"])
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    played = yaml.safe_load((here / "out" / "config.yaml").read_text())[AGENTS_PLAYED]
    assert [(c["kind"], c["path"]) for c in played[0]["code"]] == [("package", str(package))]
    (package / "helpers.py").write_text("DEPTH = 2\n")  # another file of its package
    fresh_agents(monkeypatch)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"player 'mine' (mine_pkg.tellers:Mine): its package {package} has changed" in err


def test_an_untrusted_agent_s_file_is_read_by_the_engine(here, capsys, monkeypatch):
    config = write_config(here, players=[
        {"name": "mine", "agent": "mine.py:Mine", "isolation": "process"}, "literal",
        "random"], games=2)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    agent_file(here / "mine.py", "asteroid")
    fresh_agents(monkeypatch)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 2 and f"its agent file {here / 'mine.py'} has changed" in err, err


def test_a_files_entry_changed_is_refused_naming_it(tmp_path):
    """A sandboxed player's ``files:`` (its weights, its data) are digested with its code
    (checked here without a sandbox: the digests are the engine's own reading)."""
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "layer.bin").write_bytes(b"\1\2")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "games-0000000-0000000.jsonl").write_text("{}\n")
    player = {"name": "mine", "spec": "random", "files": [str(weights)]}
    old = {AGENTS_PLAYED: agents_played([player])}
    assert [c["kind"] for c in old[AGENTS_PLAYED][0]["code"]] == ["files"]
    check_same_agents(tmp_path, old, agents_played([player]))  # unchanged: resumes
    (weights / "layer.bin").write_bytes(b"\1\3")
    with pytest.raises(ConfigError) as refused:
        check_same_agents(tmp_path, old, agents_played([player]))
    assert str(refused.value) == (f"{tmp_path}: player 'mine' (random): its files: entry "
                                  f"{weights} has changed since its saved games were played; "
                                  f"choose another --out, or run with --restart to discard "
                                  f"them and play every game again")


def test_another_version_resumes_when_its_records_are_the_same(here, capsys, monkeypatch):
    config = write_config(here)
    assert run_cli(capsys, str(config), "--out", "fresh")[0] == 0
    shutil.copytree(here / "fresh", here / "out")
    stopped_after_first_chunk(here / "out")
    edit_header(here / "out", dixit_lab_version="0.0.9", dixit_lab_code="0" * 64)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 0, err
    assert ("resume-test: 2 saved games were played by dixit_lab 0.0.9 (code 000000000000, "
            "reference engine); dixit_lab 0.1.0 (code ") in err
    assert "replayed 2 of them byte for byte the same, so they are kept" in err
    assert games_text(here / "out") == games_text(here / "fresh")
    header = yaml.safe_load((here / "out" / "config.yaml").read_text())
    first, second = header["played_by"]
    assert (first["dixit_lab_version"], first["dixit_lab_code"]) == ("0.0.9", "0" * 64)
    assert (second["dixit_lab_version"], second["dixit_lab_code"], second["saved_before"],
            second["checked"]) == ("0.1.0", header["dixit_lab_code"], 2, 2)
    capsys.readouterr()
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0  # the same code again
    assert yaml.safe_load((here / "out" / "config.yaml").read_text())["played_by"] == \
        header["played_by"]


def test_another_version_whose_records_differ_is_refused(here, capsys):
    config = write_config(here)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    part = stopped_after_first_chunk(here / "out")
    lines = part.splitlines()  # game 1 as another version played it: another first clue
    other = lines[1].replace('"clue":"valley"', '"clue":"meadow"', 1)
    assert other != lines[1]
    saved = here / "out" / "parts" / "games-0000000-0000001.jsonl"
    saved.write_text(lines[0] + "\n" + other + "\n")
    edit_header(here / "out", dixit_lab_version="0.0.9")
    header = (here / "out" / "config.yaml").read_text()
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("dixit-lab run: error: out: its 2 saved games were played by "
                          "dixit_lab 0.0.9 (code "), err
    assert "plays them otherwise (game 1, round " in err and "field clue: recorded 'meadow', " \
        "replayed 'valley'; 1 of 2 replayed games differ); choose another --out, or run " \
        "with --restart" in err
    assert saved.read_text() == lines[0] + "\n" + other + "\n"
    assert (here / "out" / "config.yaml").read_text() == header


def test_a_sample_of_many_saved_games_is_replayed(here, capsys):
    config = write_config(here, players=["literal", "random", "random"], games=40)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    edit_header(here / "out", dixit_lab_code="1" * 64)
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 0 and f"replayed {RESUME_SAMPLE} of them byte for byte" in err, err
    assert "40 saved games were played by dixit_lab 0.1.0 (code 111111111111" in err


def test_an_engine_change_resumes_when_its_records_are_the_same(here, capsys):
    builtins = ["literal", "softmax", "random"]
    config = write_config(here, players=builtins, engine="reference")
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    games = games_text(here / "out")
    stopped_after_first_chunk(here / "out")
    config = write_config(here, players=builtins, engine="batched")
    code, err = run_cli(capsys, str(config), "--out", "out")
    assert code == 0, err
    assert "(code " in err and "reference engine) replayed" not in err
    assert "batched engine) replayed 2 of them byte for byte the same" in err
    assert games_text(here / "out") == games
    header = yaml.safe_load((here / "out" / "config.yaml").read_text())
    assert [entry["engine"] for entry in header["played_by"]] == ["reference", "batched"]
    assert header["engine_played"]["engine"] == "batched"


def test_a_folder_written_before_the_digests_still_resumes(here, capsys, monkeypatch):
    config = write_config(here)
    assert run_cli(capsys, str(config), "--out", "out")[0] == 0
    games = games_text(here / "out")
    stopped_after_first_chunk(here / "out")
    path = here / "out" / "config.yaml"
    header = yaml.safe_load(path.read_text())
    for key in ("dixit_lab_code", "working_directory", AGENTS_PLAYED):
        del header[key]  # as this version's run wrote it before
    path.write_text(yaml.safe_dump(header, sort_keys=False))
    fresh_agents(monkeypatch)
    result = run_experiment(parse_config(yaml.safe_load(config.read_text())), here / "out",
                            show_progress=False, write_outputs=False)
    assert result.played == 4 and games_text(here / "out") == games
    assert "played_by" not in yaml.safe_load(path.read_text())
