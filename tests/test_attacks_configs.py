"""Attacks on experiment configs (issue 26, item 4): a config means what it says or is
refused with one line naming the file, the line or the field. Duplicate keys, YAML 1.1's
surprises, names that leave the results folder, sizes bounded before anything is expanded,
and typos that get a suggestion."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dixit_lab.cli.main import main
from dixit_lab.run.experiment import ConfigError, load_config

HEAD = "seed: 3\ndeck: numbered-60\nexecutor: {kind: local}\n"
PLAYERS = "players: [random, random, random]\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def one_line(capsys, *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- duplicate keys ------------------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    ("name: dup\n" + HEAD + PLAYERS + "games: 3\ngames: 5\n", 7),
    ("name: dup\n" + HEAD + PLAYERS + "games: 3\nrules:\n  preset: classic\n  options:\n"
     "    max_rounds: 3\n    max_rounds: 9\n", 11),
    ("name: dup\n" + HEAD.replace("numbered-60", "dreams") + "games: 3\nplayers:\n"
     "  - random\n  - random\n  - agent: softmax\n"
     "    params: {temperature: 0.05, temperature: 50}\n", 10),
], ids=["top level", "rule option", "agent parameter"])
def test_a_duplicate_key_is_refused_naming_its_line(tmp_path, text, line):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"{path}, line {line}: .*(games|max_rounds|"
                                          rf"temperature).* again"):
        load_config(path)


# -- YAML 1.1's surprises ------------------------------------------------------------------

@pytest.mark.parametrize("value, meant", [
    ("012", "seed: 012 (YAML 1.1: octal 10)"),
    ("1:30", "sexagesimal 90"),
    ("yes", "a boolean"),
    ("on", "a boolean"),
    ("1_000", "1_000"),
])
def test_yaml_1_1_numbers_and_booleans_are_refused_where_they_surprise(tmp_path, value,
                                                                         meant):
    for field in ("seed", "games"):
        other = "games: 3" if field == "seed" else "seed: 3"
        text = (f"name: y\ndeck: numbered-60\nexecutor: {{kind: local}}\n{PLAYERS}{other}\n"
                f"{field}: {value}\n")
        path = write(tmp_path, text)
        with pytest.raises(ConfigError, match=rf"{path}, line 6: .*{field}") as error:
            config = load_config(path)
            pytest.fail(f"{field}: {value} read as {getattr(config, field)!r} ({meant})")
        assert "\n" not in str(error.value)


def test_yaml_1_2_values_still_read_as_written(tmp_path):
    text = ("name: y\ndeck: numbered-60\nexecutor: {kind: local}\ngames: 7\nseed: 0\n"
            "players:\n  - random\n  - random\n  - agent: softmax\n"
            "    params: {temperature: 1e-2}\n"
            "description: 'yes: 012, 1:30 quoted are text'\n")
    config = load_config(write(tmp_path, text.replace("numbered-60", "dreams")))
    assert (config.games, config.seed) == (7, 0)
    octal = load_config(write(tmp_path, text.replace("numbered-60", "dreams").replace(
        "seed: 0", "seed: 0o12")))
    assert octal.seed == 10  # YAML 1.2's octal, as written
    assert config.players[2].params == {"temperature": 0.01}  # YAML 1.2: a float, not "1e-2"
    assert config.description == "yes: 012, 1:30 quoted are text"


# -- names stay inside the results folder --------------------------------------------------

@pytest.mark.parametrize("name", ["../../escape", "/tmp/elsewhere", "a/b", "..", "."])
def test_a_name_cannot_leave_the_results_folder(tmp_path, monkeypatch, capsys, name):
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    path = write(work, f"name: '{name}'\n" + HEAD + PLAYERS + "games: 2\n")
    before = sorted(tmp_path.rglob("*"))
    err = one_line(capsys, "run", str(path), "--quiet")
    assert f"{path}: name: " in err
    assert sorted(tmp_path.rglob("*")) == before  # nothing written anywhere


def test_a_plain_name_runs_into_results(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "name: fine-run_2\n" + HEAD + PLAYERS + "games: 2\n")
    assert main(["run", str(path), "--quiet"]) == 0
    assert (tmp_path / "results" / "fine-run_2" / "agents.csv").is_file()


# -- sizes bounded before anything is expanded ---------------------------------------------

@pytest.mark.parametrize("count", [100_000, 1_000_000])
def test_a_huge_count_is_refused_at_once(tmp_path, count):
    path = write(tmp_path, "name: big\n" + HEAD + f"games: 2\nplayers:\n"
                 f"  - {{agent: random, count: {count}}}\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(path), "--out",
                           str(tmp_path / "out"), "--quiet"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "DIXIT_LAB_PROGRESS": "0"})
    assert done.returncode == 2 and "count" in done.stderr, done.stderr
    assert time.perf_counter() - start < 20 and not (tmp_path / "out").exists()


def test_a_huge_tune_grid_is_refused_at_once(tmp_path):
    path = write(tmp_path, "name: t\n" + HEAD.replace("numbered-60", "dreams") + "games: 2\n"
                 "players:\n  - random\n  - random\n  - {name: s, agent: softmax}\n"
                 "tune: {parameter: players.2.params.temperature, low: 0.01, high: 1,"
                 " points: 100000000, player: s}\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "tune", str(path), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=30)
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1 and "points" in err, err
    assert time.perf_counter() - start < 20 and not (tmp_path / "out").exists()


# -- typos ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, suggestion", [
    ("name: t\n" + HEAD + "games: 2\nplayers: [random, random, sofmax]\n", "'softmax'"),
    ("name: t\n" + HEAD + "games: 2\nplayers: [random, random, {agent: softmax, params: "
     "{temprature: 0.1}}]\n", "'temperature'"),
    ("name: t\n" + HEAD + PLAYERS + "gmaes: 2\n", "'games'"),
    ("name: t\n" + HEAD + PLAYERS + "games: 2\nrules: {preset: clasic}\n", "'classic'"),
])
def test_a_typo_gets_a_did_you_mean(tmp_path, text, suggestion):
    path = write(tmp_path, text.replace("numbered-60", "dreams"))
    with pytest.raises(ConfigError, match=rf"did you mean {suggestion}"):
        load_config(path)
