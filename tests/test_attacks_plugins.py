"""Attacks on the plugin seams (issue 40, item 7): a recorder, or any entry-point plugin, that
is unknown, does not import, is of the wrong type or raises is named in one line before play,
or its failure during the run is a fault of the run with nothing lost; a plugin merely
installed never stops a run or a report. Each failed before its fix (docs/reliability.md,
"Plugins and caches"). A packaged example's name beside a file of that name:
``tests/cli/test_examples.py``; a damaged Numba cache: ``tests/engine/test_numba_cache.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dixit_lab.cli.main import main
from dixit_lab.core.agent import AGENTS
from dixit_lab.core.recording import RECORDERS, get_recorder
from dixit_lab.run.executors import EXECUTORS
from tests.games_files import games_text

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*agents.csv is written without its columns:RuntimeWarning")

#: a plugin module (put on sys.path with the fake distribution) holding every kind of recorder
PLUGIN = textwrap.dedent('''
    import contextlib
    from typing import ClassVar

    from dixit_lab.core.recording import Recorder
    from dixit_lab.errors import UserError
    from dixit_lab_agents.random_agent import RandomAgent

    opened = []


    class NotARecorder:
        pass


    class Unmakeable(Recorder):
        def __init__(self):
            raise RuntimeError("no store here")


    class FailsSecondSession(Recorder):
        """Its session fails the second time it is opened (a chunk), then works again."""

        def session(self, folder, mode, budget):
            opened.append(str(folder))
            if len(opened) == 2:
                raise RuntimeError("the store is locked")
            return contextlib.nullcontext()


    class BrokenColumns(Recorder):
        def agent_columns(self, folder):
            raise RuntimeError("no columns today")


    class FolderAtFault(Recorder):
        def agent_columns(self, folder):
            if (folder / "damaged-store").exists():
                raise UserError(f"{folder / 'damaged-store'}: not a store")
            return None


    class UnknownRecorder(RandomAgent):
        recorder: ClassVar = "nope"


    class MissingRecorder(RandomAgent):
        recorder: ClassVar = "missing"


    class WrongTypeRecorder(RandomAgent):
        recorder: ClassVar = "wrong-type"


    class UnmakeableRecorder(RandomAgent):
        recorder: ClassVar = "unmakeable"


    class IntRecorder(RandomAgent):
        recorder: ClassVar = 7


    class SessionRecorder(RandomAgent):
        recorder: ClassVar = "fails-second-session"
    ''')

#: the fake distribution's entry points by name: (group, object reference)
ENTRY_POINTS = {
    "missing": ("dixit_lab.recorders", "plugin_missing_module:Nothing"),
    "wrong-type": ("dixit_lab.recorders", "dixit_attack_plugin:NotARecorder"),
    "unmakeable": ("dixit_lab.recorders", "dixit_attack_plugin:Unmakeable"),
    "fails-second-session": ("dixit_lab.recorders", "dixit_attack_plugin:FailsSecondSession"),
    "broken-columns": ("dixit_lab.recorders", "dixit_attack_plugin:BrokenColumns"),
    "folder-at-fault": ("dixit_lab.recorders", "dixit_attack_plugin:FolderAtFault"),
    "broken-agent": ("dixit_lab.agents", "plugin_missing_module:Agent"),
    "broken-executor": ("dixit_lab.executors", "plugin_missing_module:Executor"),
}
#: the recorders that cannot be made or give no columns, merely installed
BROKEN = ("missing", "wrong-type", "unmakeable", "broken-columns")


def _install(root: Path, names: tuple[str, ...]) -> Path:
    """A distribution ``dixit-attack-plugin`` in ``root``: its dist-info, with the entry
    points ``names``, and its module."""
    info = root / "dixit_attack_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dixit-attack-plugin\n"
                                   "Version: 0.1\n", encoding="utf-8")
    groups: dict[str, list[str]] = {}
    for name in names:
        group, value = ENTRY_POINTS[name]
        groups.setdefault(group, []).append(f"{name} = {value}")
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n" + "\n".join(lines) + "\n\n" for group, lines in groups.items()),
        encoding="utf-8")
    (root / "dixit_attack_plugin.py").write_text(PLUGIN, encoding="utf-8")
    return root


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Callable[..., Path]]:
    """``install(*names)``: the fake distribution with those entry points on sys.path, every
    registry reading its entry points anew."""

    def installed(*names: str) -> Path:
        root = _install(tmp_path / "site", names)
        monkeypatch.syspath_prepend(str(root))
        for registry in (RECORDERS, AGENTS, EXECUTORS):
            monkeypatch.setattr(registry, "_entries", None)
            monkeypatch.setattr(registry, "_classes", dict(registry._classes))
        get_recorder.cache_clear()
        return root

    yield installed
    get_recorder.cache_clear()
    sys.modules.pop("dixit_attack_plugin", None)


def _config(tmp_path: Path, agent: str, engine: str = "auto", isolation: str = "none"
            ) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(f"name: plugged\nseed: 5\ndeck: numbered-60\nengine: {engine}\n"
                    f"players: [{{agent: '{agent}', isolation: {isolation}}}, random, random]\n"
                    f"games: 6\nexecutor: {{kind: local}}\n", encoding="utf-8")
    return path


def _one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("agent", "problem"), [
    ("UnknownRecorder", "unknown recorder 'nope'"),
    ("MissingRecorder", "recorder 'missing' (plugin_missing_module:Nothing) could not be "
                        "loaded: ModuleNotFoundError"),
    ("WrongTypeRecorder", "recorder 'wrong-type': entry point dixit_attack_plugin:NotARecorder "
                          "is not a subclass of Recorder"),
    ("UnmakeableRecorder", "recorder 'unmakeable' (dixit_attack_plugin.Unmakeable) could not "
                           "be made: RuntimeError: no store here"),
    ("IntRecorder", "IntRecorder's recorder is 7 (int): it must be a recorder's name"),
], ids=["unknown", "does-not-import", "not-a-recorder", "raises-when-made", "an-int"])
@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_an_agent_whose_recorder_cannot_be_used_is_refused_before_anything_is_written(
        install, tmp_path, capsys, agent, problem, engine):
    """Before: a traceback once the first chunk opened its recorder (config.yaml and parts/
    left); on the batched engine the recorder was never opened and the games played
    unrecorded; an int was read as no recorder at all."""
    named = {"MissingRecorder": "missing", "WrongTypeRecorder": "wrong-type",
             "UnmakeableRecorder": "unmakeable"}.get(agent)
    install(*([named] if named else []))  # (the agents' module, too)
    out = tmp_path / "out"
    config = _config(tmp_path, f"dixit_attack_plugin:{agent}", engine)
    err = _one_line(capsys, "run", str(config), "--out", str(out), "--quiet")
    assert "players.0.agent: " in err and problem in err
    assert not out.exists()


@pytest.mark.parametrize("agent", ["IntRecorder", "UnknownRecorder"])
def test_an_isolated_seat_whose_recorder_cannot_be_used_is_refused_the_same_way(
        install, tmp_path, capsys, agent):
    """The seat's child tells its recorder (the agent's code never runs in the engine)."""
    install()
    out = tmp_path / "out"
    config = _config(tmp_path, f"dixit_attack_plugin:{agent}", isolation="process")
    err = _one_line(capsys, "run", str(config), "--out", str(out), "--quiet")
    assert "players.0.agent: " in err and out.exists() is False
    assert ("IntRecorder's recorder is 7 (int)" if agent == "IntRecorder"
            else "unknown recorder 'nope'") in err


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_a_session_that_raises_stops_the_run_with_its_games_kept(install, tmp_path, capsys,
                                                                 engine):
    """Before: a traceback (reference engine), or no session opened at all (batched)."""
    install("fails-second-session")
    config = _config(tmp_path, "dixit_attack_plugin:SessionRecorder", engine)
    out = tmp_path / "out"
    argv = ["run", str(config), "--out", str(out), "--quiet", "--chunk-size", "2"]
    err = _one_line(capsys, *argv)  # the second chunk's session fails
    assert "recorder 'fails-second-session' could not open its session in" in err
    assert "RuntimeError: the store is locked" in err
    assert "2 of 6 games are saved" in err and "run the same command again" in err
    assert main(argv) == 0  # resumed: the four missing games
    capsys.readouterr()
    whole = tmp_path / "whole"
    assert main(["run", str(config), "--out", str(whole), "--quiet"]) == 0
    assert games_text(out) == games_text(whole)


def test_a_broken_recorder_merely_installed_costs_only_its_columns(install, tmp_path,
                                                                    capsys):
    """Before: every `run` failed after its games (UnknownName, no agents.csv), and so did
    every `report`."""
    install(*BROKEN)
    out = tmp_path / "out"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["run", str(_config(tmp_path, "random")), "--out", str(out),
                     "--quiet"]) == 0
        assert (out / "agents.csv").is_file()
        assert main(["report", str(out)]) == 0
    messages = sorted({str(w.message) for w in caught if "recorder" in str(w.message)})
    assert len(messages) == 4, messages  # missing, wrong-type, unmakeable, broken-columns
    assert all(m.endswith("agents.csv is written without its columns") for m in messages)
    assert any("recorder 'broken-columns' failed to give its columns for" in m
               and "RuntimeError: no columns today" in m for m in messages)
    assert any("recorder 'missing' (plugin_missing_module:Nothing) could not be loaded" in m
               for m in messages)


def test_a_recorder_that_finds_the_folder_at_fault_stops_the_report_in_one_line(
        install, tmp_path, capsys):
    install("folder-at-fault")
    out = tmp_path / "out"
    assert main(["run", str(_config(tmp_path, "random")), "--out", str(out), "--quiet"]) == 0
    (out / "damaged-store").write_text("x")
    err = _one_line(capsys, "report", str(out))
    assert f"{out / 'damaged-store'}: not a store" in err
    assert (out / "games.jsonl.zst").is_file()  # the games are kept for the next report
    (out / "damaged-store").unlink()
    assert main(["report", str(out)]) == 0


def test_a_broken_agent_or_executor_plugin_costs_only_its_own_name(install, tmp_path,
                                                                   capsys):
    """Before: `dixit-lab agents` stopped at the broken entry (one line, nothing listed after
    it); `--executor broken-executor` was a traceback after config.yaml was written."""
    install("broken-agent", "broken-executor")
    assert main(["agents"]) == 0
    captured = capsys.readouterr()
    assert "agent 'broken-agent' (plugin_missing_module:Agent) could not be loaded" in \
        captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert "random(" in captured.out and "softmax(" in captured.out
    out = tmp_path / "out"
    err = _one_line(capsys, "run", str(_config(tmp_path, "random")), "--out", str(out),
                    "--executor", "broken-executor", "--quiet")
    assert "executor 'broken-executor' (plugin_missing_module:Executor) could not be loaded" \
        in err
    assert not out.exists()


def test_the_command_line_says_a_broken_installed_recorder_in_one_line(tmp_path):
    """The real command, the plugin installed as a distribution on PYTHONPATH: `run` and
    `report` succeed, each with one line on stderr per broken recorder."""
    root = _install(tmp_path / "site", BROKEN)
    config = _config(tmp_path, "random")
    environment = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "dixit_lab.cli.main"]
    run = subprocess.run([*command, "run", str(config), "--out", str(tmp_path / "out"),
                          "--quiet"], env=environment, capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    report = subprocess.run([*command, "report", str(tmp_path / "out")], env=environment,
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert report.returncode == 0, report.stderr
    for stderr in (run.stderr, report.stderr):
        lines = stderr.strip().splitlines()
        assert len(lines) == 4 and "Traceback" not in stderr, stderr
        assert all("agents.csv is written without its columns" in line for line in lines)
