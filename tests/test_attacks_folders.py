"""Attacks on results folders (issue 40): a command killed while it writes one, two commands
on one folder, damaged sweep folders, out-of-range arguments. Each asserts the previous or
the new complete state, or one line naming what is at fault: never a traceback, never a
folder left short."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dixit_lab.cli.main import main
from dixit_lab.records.integrity import FolderLock
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment, run_sweep
from tests.test_attacks import BASE, cli, write_config

ROOT = Path(__file__).parents[1]
TABLES = ("agents.csv", "find_calibration.csv", "summary.json", "report.md")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path (the lock file left out)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def reported(tmp_path_factory) -> Path:
    """A finished run with its tables (two players, so ratings too)."""
    folder = tmp_path_factory.mktemp("reported") / "done"
    data = {**BASE, "players": [{"name": "a", "agent": "random"},
                                {"name": "b", "agent": "random"},
                                {"name": "c", "agent": "random"}]}
    run_experiment(parse_config(data), folder, show_progress=False)
    return folder


# -- report: killed at any moment, or run twice at once ------------------------------------

KILLED_REPORT = """
import os, signal, sys
from pathlib import Path
import dixit_lab.atomic as atomic

folder, moment = sys.argv[1], sys.argv[2]
rename, exchange = os.replace, getattr(atomic, "_exchange", None)

def killed(*args):  # SIGKILL once the dataset rounds.parquet is touched
    os.kill(os.getpid(), signal.SIGKILL)

def replace(source, target, *args, **kwargs):
    names = {Path(source).name, Path(target).name}
    if moment == "first" and "rounds.parquet" in names:
        rename(source, target, *args, **kwargs)
        killed()
    if moment == "between" and names == {".rounds.parquet.new", "rounds.parquet"}:
        killed()  # the old version moved aside, the new one not yet in place
    return rename(source, target, *args, **kwargs)

def swapped(first, second):
    done = exchange(first, second)
    if done:
        killed()
    return done

os.replace = replace
if moment == "first" and exchange is not None:
    atomic._exchange = swapped
if moment == "between":
    atomic._exchange = lambda first, second: False  # a system that cannot swap in one step
from dixit_lab.cli.main import main
sys.exit(main(["report", folder]))
"""


def killed_report(folder: Path, moment: str) -> None:
    process = subprocess.run([sys.executable, "-c", KILLED_REPORT, str(folder), moment],
                             capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert process.returncode == -signal.SIGKILL, process.stderr


def test_report_killed_when_it_puts_the_round_table_in_place_leaves_a_whole_one(reported,
                                                                                 tmp_path):
    """Killed at the first rename (or swap) of ``rounds.parquet``: the folder holds the new
    dataset, whole. It held none (the old one moved aside, the new one not yet in place)."""
    folder = tmp_path / "done"
    shutil.copytree(reported, folder)
    clean = files(reported)
    killed_report(folder, "first")
    dataset = {name: data for name, data in files(folder).items()
               if name.startswith("rounds.parquet/")}
    assert dataset and dataset == {k: v for k, v in clean.items()
                                   if k.startswith("rounds.parquet/")}


def test_report_killed_between_two_renames_is_made_whole_by_the_next_report(reported,
                                                                            tmp_path, capsys):
    """Where the system cannot swap two folders in one step, ``rounds.parquet`` takes two
    renames; killed between them, the next report puts the new version in place: show,
    replay and view work meanwhile, the tables come out byte for byte those of a clean
    report, nothing is left beside them and the folder gets its mode back."""
    folder = tmp_path / "done"
    shutil.copytree(reported, folder)
    folder.chmod(0o750)
    killed_report(folder, "between")
    assert not (folder / "rounds.parquet").exists()  # the moment the kill was sent
    assert (folder / ".rounds.parquet.new").is_dir() and (folder / ".rounds.parquet.old").is_dir()
    assert main(["show", str(folder)]) == 0
    assert main(["replay", str(folder), "--executor", "local", "--quiet"]) == 0
    pytest.importorskip("fastapi", reason="view needs the web extra")
    from dixit_lab.web.view_app import ResultsIndex

    assert len(ResultsIndex.open(folder).runs) == 1
    capsys.readouterr()
    assert cli(capsys, "report", str(folder))[0] == 0
    assert files(folder) == files(reported)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []
    assert mode(folder) == 0o750


def test_a_report_on_a_folder_a_run_holds_is_refused_in_one_line(reported, tmp_path):
    """Before: it wrote the tables of the games the run was writing."""
    folder = tmp_path / "done"
    shutil.copytree(reported, folder)
    with FolderLock(folder):
        second = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "report", str(folder)],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert second.returncode == 2, second.stderr
    assert second.stderr.strip() == (f"dixit-lab report: error: {folder} is in use by another "
                                     f"run (process {os.getpid()}); wait for it to finish, "
                                     f"then run `dixit-lab report` again")
    assert files(folder) == files(reported)


def test_four_reports_at_once_break_nothing(reported, tmp_path):
    """Each one writes the tables or is refused in one line; the folder ends as a clean
    report leaves it (before: 3 of 6 failed, renaming a dataset another had moved)."""
    folder = tmp_path / "done"
    shutil.copytree(reported, folder)
    env = {**os.environ, "DIXIT_LAB_PROGRESS": "0"}
    processes = [subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "report",
                                   str(folder)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
                 for _ in range(4)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in processes]
    for process in processes:
        process.stdout.close()
        process.stderr.close()
    assert any(code == 0 for code, _ in results)
    for code, err in results:
        assert code == 0 or (code == 2 and "is in use by another report" in err
                             and len(err.strip().splitlines()) == 1), err
    assert files(folder) == files(reported)


# -- the lock: every writer, and the mode it restores ---------------------------------------

KILLED_HOLDER = """
import os, signal, sys
from pathlib import Path
from dixit_lab.records.integrity import FolderLock

FolderLock(Path(sys.argv[1])).__enter__()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("shared", [0o755, 0o2775])
def test_a_folder_left_private_by_a_killed_run_gets_its_mode_back(tmp_path, shared):
    """A run killed while it holds the lock leaves the folder 0700; the next run restores
    the mode the folder had before (it kept 0700 for good, the lock's mode taken as the one
    to restore)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(shared)
    for _ in range(2):  # killed twice in a row: still the first mode
        subprocess.run([sys.executable, "-c", KILLED_HOLDER, str(folder)], timeout=60,
                       cwd=ROOT)
        assert mode(folder) == 0o700
    run_experiment(parse_config(BASE), folder, show_progress=False, write_outputs=False)
    assert mode(folder) == shared and not (folder / ".lock").exists()


def test_a_folder_made_private_on_purpose_stays_private(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    folder.chmod(0o700)
    run_experiment(parse_config(BASE), folder, show_progress=False, write_outputs=False)
    assert mode(folder) == 0o700


def held_command(tmp_path: Path, folder: Path, *argv: str) -> str:
    """The one line of ``dixit-lab argv`` while this process holds ``folder``'s lock."""
    folder.mkdir(parents=True, exist_ok=True)
    with FolderLock(folder):
        child = subprocess.run([sys.executable, "-m", "dixit_lab.cli", *argv],
                               capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert child.returncode == 2 and len(child.stderr.strip().splitlines()) == 1, child.stderr
    return child.stderr.strip()


def test_a_sweep_and_a_tune_take_their_folders_lock(tmp_path):
    out = tmp_path / "sweep"
    err = held_command(tmp_path, out, "run", str(write_config(tmp_path, SWEEP, "s.yaml")),
                       "--out", str(out), "--quiet")
    assert f"{out} is in use by another run" in err
    assert not (out / "points").exists()
    from tests.tune.test_search import DATA as tuned

    out = tmp_path / "tune"
    err = held_command(tmp_path, out, "tune", str(write_config(tmp_path, tuned, "t.yaml")),
                       "--out", str(out))
    assert f"{out} is in use by another run" in err and not (out / "tune.csv").exists()


def test_a_rerun_that_plays_nothing_keeps_the_timing_of_the_run_that_played(tmp_path,
                                                                           monkeypatch):
    """The run that played was stopped while its tables were written; the rerun plays
    nothing and writes them, with that run's timing (it wrote none)."""
    import dixit_lab.report.outputs as outputs

    folder = tmp_path / "done"
    config = parse_config(BASE)
    with monkeypatch.context() as patch:
        def stopped(*args, **kwargs):
            raise KeyboardInterrupt

        patch.setattr(outputs, "write_tables", stopped)
        with pytest.raises(KeyboardInterrupt):
            run_experiment(config, folder, show_progress=False)
    played = json.loads((folder / "summary.json").read_text())
    assert played["games_played_this_run"] == 6 and played["wall_seconds"] > 0
    result = run_experiment(config, folder, show_progress=False)
    assert result.played == 0
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["games"] == 6
    assert {k: summary[k] for k in played} == played
    assert "**Speed:** wall time" in (folder / "report.md").read_text()


# -- damaged sweep folders ------------------------------------------------------------------

SWEEP = {**BASE, "games": 2, "sweep": {"rules.options.max_rounds": [2, 3]}}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "sweep"
    run_sweep(SWEEP, "s.yaml", out, show_progress=False)
    return out


DAMAGE = {
    "a point that is no number": (b"point,rules.options.max_rounds,folder\nx,2,points/000\n"
                                  b"1,3,points/001\n", "line 2: point 'x' is not a point"),
    "no folder column": (b"point,rules.options.max_rounds\n0,2\n1,3\n",
                         "line 1: no 'folder' column"),
    "empty": (b"", "sweep.csv is empty"),
    "binary": (bytes(range(256)) * 2, "sweep.csv: not a table of sweep points (byte 129"),
    "a header only": (b"point,rules.options.max_rounds,folder\n", "lists no points"),
    "a row cut short": (b"point,rules.options.max_rounds,folder\n0,2,points/000\n1,3\n",
                        "line 3: 2 fields where the header has 3"),
    "a point twice": (b"point,rules.options.max_rounds,folder\n0,2,points/000\n"
                      b"0,3,points/001\n", "line 3: point 0 again (first on line 2)"),
    "an unclosed quote": (b'point,rules.options.max_rounds,folder\n0,"2,points/000\n',
                          "not CSV"),
}
READERS = (("report",), ("show",), ("show", "--point", "0"), ("replay", "--executor", "local",
                                                               "--quiet"), ("view",))


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_sweep_table_is_one_line_for_every_reader(sweep, tmp_path, capsys, damage):
    folder = tmp_path / "sweep"
    shutil.copytree(sweep, folder)
    table, message = DAMAGE[damage]
    (folder / "sweep.csv").write_bytes(table)
    before = files(folder)
    for command, *options in READERS:
        if command == "view":
            pytest.importorskip("fastapi", reason="view needs the web extra")
            options = ["--no-browser"]
        code, err = cli(capsys, command, str(folder), *options)
        assert code == 2 and f"{folder / 'sweep.csv'}" in err and message in err, (command, err)
    assert files(folder) == before


def test_a_sweep_with_a_points_games_deleted_is_refused_by_every_reader(sweep, tmp_path,
                                                                       capsys):
    """``show`` answered for the other points as if nothing were missing, ``view`` showed
    the sweep without the point, ``replay`` replayed the first point before failing."""
    folder = tmp_path / "sweep"
    shutil.copytree(sweep, folder)
    (folder / "points" / "001" / "games.jsonl.zst").unlink()
    for command, *options in READERS:
        if command == "view":
            pytest.importorskip("fastapi", reason="view needs the web extra")
            options = ["--no-browser"]
        code, err = cli(capsys, command, str(folder), *options)
        assert code == 2 and "sweep.csv, line 3: point 1's games are missing" in err, \
            (command, err)
    run_sweep(SWEEP, "s.yaml", folder, show_progress=False)  # as the message says: played
    games = Path("points", "001", "games.jsonl.zst")
    assert (folder / games).read_bytes() == (sweep / games).read_bytes()
    assert cli(capsys, "show", str(folder), "--point", "1")[0] == 0


# -- arguments out of range -----------------------------------------------------------------

def refused_by_the_parser(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main(list(argv))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


PLAY = {**BASE, "deck": "dreams", "games": 1,
        "players": [{"name": "you", "agent": "human"}, "random", "random"]}


@pytest.mark.parametrize("argv", [("play", "99999"), ("play", "-1"), ("play", "65536"),
                                  ("view", "70000")])
def test_a_port_out_of_range_is_refused_before_anything_is_written(reported, tmp_path, capsys,
                                                                   argv):
    command, port = argv
    out = tmp_path / "played"
    target = str(write_config(tmp_path, PLAY)) if command == "play" else str(reported)
    line = refused_by_the_parser(capsys, command, target, "--port", port, "--no-browser",
                                 *(("--out", str(out)) if command == "play" else ()))
    assert line.endswith(f"argument --port: must be a port from 1 to 65535 (0: any free "
                         f"port), got {port}")
    assert not out.exists()  # play left config.yaml and deal_secret


def test_play_on_a_port_in_use_writes_nothing(tmp_path, capsys):
    pytest.importorskip("fastapi", reason="play needs the web extra")
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    out = tmp_path / "played"
    try:
        port = str(busy.getsockname()[1])
        code, err = cli(capsys, "play", str(write_config(tmp_path, PLAY)), "--no-browser",
                        "--port", port, "--out", str(out))
    finally:
        busy.close()
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err
    assert not out.exists()


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--temperature", "nan", "must be a finite number above 0, got nan"),
    ("--temperature", "0", "must be a finite number above 0, got 0"),
    ("--temperature", "inf", "must be a finite number above 0, got inf"),
    ("--regularization", "-1", "must be a finite number above 0, got -1"),
    ("--regularization", "nan", "must be a finite number above 0, got nan"),
    ("--holdout", "1", "must be a number between 0 and 1 (both excluded), got 1"),
    ("--holdout", "nan", "must be a number between 0 and 1 (both excluded), got nan"),
])
def test_fit_listener_options_out_of_range_are_refused_before_any_game(tmp_path, capsys,
                                                                       option, value, message):
    """Before: sklearn's InvalidParameterError, or a division by zero, after the training
    config's games were played."""
    config = write_config(tmp_path, {**BASE, "name": "training", "out": str(tmp_path / "t")})
    line = refused_by_the_parser(capsys, "fit-listener", "--config", str(config), "--out",
                                 str(tmp_path / "m.json"), option, value)
    assert line.endswith(f"argument {option}: {message}")
    assert not (tmp_path / "t").exists() and not (tmp_path / "m.json").exists()


@pytest.fixture(scope="module")
def dreams_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dreams") / "run"
    data = {**BASE, "deck": "dreams", "games": 12, "players": ["random"] * 4}
    run_experiment(parse_config(data), folder, show_progress=False, write_outputs=False)
    return folder


def test_fit_listener_given_the_same_games_twice_refuses_in_one_line(dreams_run, tmp_path,
                                                                    capsys):
    """Before: it fitted on every game twice without a word."""
    model = tmp_path / "m.json"
    assert cli(capsys, "fit-listener", str(dreams_run), "--out", str(model))[0] == 0
    once = json.loads(model.read_text())["info"]["votes"]
    model.unlink()
    for twice in ([str(dreams_run), str(dreams_run)],
                  [str(dreams_run.parent), str(dreams_run / "games.jsonl.zst")]):
        code, err = cli(capsys, "fit-listener", *twice, "--out", str(model))
        assert code == 2 and "is given twice" in err and "give each results folder once" in err
        assert not model.exists()
    assert once > 0

