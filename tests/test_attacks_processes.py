"""Attacks on a run's processes (issue 14): a signal to the command or its parent, a worker
that dies under Ray: no orphaned worker, no traceback, the saved games kept."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_attacks import BASE, write_config


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _pool_run(tmp_path: Path, name: str, stderr: int) -> tuple[subprocess.Popen, Path, list[int]]:
    """A long ``dixit-lab run`` on a process pool, once it has saved a few chunks: the process,
    its results folder and its workers."""
    config = {**BASE, "games": 4000, "engine": "reference",
              "executor": {"kind": "process", "workers": 2, "chunk_size": 20}}
    folder = tmp_path / name
    env = {**os.environ, "DIXIT_LAB_PROGRESS": "0"}
    process = subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "run",
                                str(write_config(tmp_path, config)), "--out", str(folder),
                                "--quiet"], env=env, stderr=stderr, text=True,
                               start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(folder.glob("parts/games-*"))) < 2:
        time.sleep(0.05)
    return process, folder, _children(process.pid)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_sigterm_stops_the_pool_and_keeps_the_saved_games(tmp_path):
    process, folder, workers = _pool_run(tmp_path, "term", subprocess.PIPE)
    try:
        assert workers, "the run should have a worker pool"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130 and "interrupted:" in err and "Traceback" not in err
        time.sleep(0.5)
        assert not [pid for pid in workers if _alive(pid)], "orphaned workers"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert list(folder.glob("parts/games-*")) and not (folder / ".lock").exists()


DIES_ONCE = """
import os
import re
from pathlib import Path

from dixit_lab_agents.random_agent import RandomAgent

MARKER = Path(__file__).with_name("died")


class DiesOnce(RandomAgent):
    def vote(self, view):
        if not MARKER.exists():  # once: the worker process dies mid-game, Ray re-runs it
            MARKER.write_text(str(os.getpid()))
            print("an agent's own print")
            os._exit(1)
        return super().vote(view)
"""


def test_ray_messages_stay_out_of_stdout(tmp_path):
    from tests.optional import import_or_skip

    import_or_skip("ray")
    (tmp_path / "dies.py").write_text(DIES_ONCE, encoding="utf-8")
    config = {**BASE, "engine": "reference", "players": [
        "random", "random", {"name": "dies", "agent": f"{tmp_path / 'dies.py'}:DiesOnce"}],
        "executor": {"kind": "ray", "workers": 1, "chunk_size": 2}}
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run",
                           str(write_config(tmp_path, config)), "--out",
                           str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "died").exists(), "the worker should have died once"
    assert done.stdout.startswith("attack: 6 games"), done.stdout  # the command's own lines
    assert "(raylet)" not in done.stdout and "pid=" not in done.stdout, done.stdout
    assert "A worker died" in done.stderr and "an agent's own print" in done.stderr


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_sigkill_of_the_parent_leaves_no_worker_behind(tmp_path):
    process, folder, workers = _pool_run(tmp_path, "kill", subprocess.DEVNULL)
    try:
        assert workers, "the run should have a worker pool"
        process.kill()  # the parent only, not its process group
        process.wait(timeout=30)
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "orphaned workers"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    # and the saved games resume as after any interruption
    assert list(folder.glob("parts/games-*"))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_a_worker_killed_by_the_system_is_one_line_and_the_rerun_resumes(tmp_path):
    """SIGKILL of one pool worker (the OOM killer's way): one line naming the games in play and
    the likely cause, exit 2, the saved games kept; the same command then plays the rest,
    and the folder replays byte for byte."""
    process, folder, workers = _pool_run(tmp_path, "lost", subprocess.PIPE)
    try:
        assert workers, "the run should have a worker pool"
        os.kill(workers[0], signal.SIGKILL)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    lines = err.strip().splitlines()
    assert process.returncode == 2 and "Traceback" not in err, err
    assert len(lines) == 1 and "a worker process died" in lines[0], err
    assert "out of memory" in lines[0] and "run the same command again" in lines[0], err
    found = re.search(r"at least (\d+) of 4000 games are saved", lines[0])
    assert found, err
    saved = int(found.group(1))
    assert saved > 0 and list(folder.glob("parts/games-*"))
    rerun = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(tmp_path / "c.yaml"),
                            "--out",
                            str(folder), "--quiet"], capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    played = re.search(r"^attack: 4000 games \((\d+) played this run", rerun.stdout, re.M)
    assert played and 0 < int(played.group(1)) <= 4000 - saved, rerun.stdout
