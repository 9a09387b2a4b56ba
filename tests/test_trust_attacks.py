"""The Trust issue's attacks (issue 25), each by a hostile agent of ``tests/hostile/``, against
``isolation: sandbox`` (and ``process`` where the same defence holds: docs/security.md says
which). The engine runs (``dixit-lab run``) in a subprocess, from a folder named ``canary``,
with ``canary`` in its environment's secrets: an attack that worked would show the word, a
find rate of 1, a stopped or killed engine, or a process left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from dixit_lab.isolation.sandbox import sandbox_problem

ROOT = Path(__file__).resolve().parent.parent
SECRETS = {"OPENAI_API_KEY": "sk-canary-key", "HF_TOKEN": "hf-canary-token"}
RANDOM = {"agent": "random"}


def needs_sandbox() -> None:
    problem = sandbox_problem()
    if problem and not os.environ.get("CI"):
        pytest.skip(problem)
    assert problem is None, problem  # CI's machines make sandboxes: never skipped there


@dataclass
class Run:
    code: int
    stderr: str
    records: list[dict[str, Any]]
    seconds: float
    folder: Path
    marks: list[int]  # process ids that imported tests/hostile/proxy.py
    engine: int

    def faults(self, seat_name: str) -> list[dict[str, Any]]:
        found = []
        for record in self.records:
            seat = record["meta"]["players"].index(seat_name)
            found += [f for rnd in record["rounds"] for f in rnd.get("faults", [])
                      if f["seat"] == seat]
        return found

    def reports(self, seat_name: str) -> list[dict[str, Any]]:
        """What the hostile seat reported in its clues."""
        out = []
        for record in self.records:
            seat = record["meta"]["players"].index(seat_name)
            for rnd in record["rounds"]:
                if rnd["storyteller"] == seat and rnd["clue"].startswith("report:"):
                    out.append(json.loads(rnd["clue"].removeprefix("report:")))
        return out

    def find_rate(self, seat_name: str) -> tuple[int, int]:
        """(votes for the storyteller's card, votes) of a seat."""
        hits = votes = 0
        for record in self.records:
            seat = record["meta"]["players"].index(seat_name)
            for rnd in record["rounds"]:
                vote = rnd["votes"][seat]
                if rnd["storyteller"] != seat and vote is not None:
                    votes += 1
                    hits += rnd["card_owner"][vote] == rnd["storyteller"]
        return hits, votes


def start(tmp_path: Path, players: list[dict[str, Any]], *, games: int = 2, seed: int = 0,
          schedule: str = "rotation", max_rounds: int | None = 6,
          prefix: tuple[str, ...] = (), **config: Any
          ) -> tuple[subprocess.Popen[str], Path, Path]:
    """``dixit-lab run`` of these players (4 seats, numbered cards) started in a subprocess
    (without the tables: ``tests/hostile/engine.py``; ``prefix``: a command that runs it):
    the process, its results folder and the file of the hostile module's imports."""
    home = tmp_path / "canary"
    home.mkdir(exist_ok=True)
    folder = home / "canary-results"
    names = []
    for index, player in enumerate(players):
        player.setdefault("name", f"p{index}")
        names.append(player["name"])
    options = {"max_rounds": max_rounds} if max_rounds else {}
    data = {"name": "canary", "seed": seed, "deck": "numbered-60", "records": "jsonl",
            "rules": {"preset": "classic", "options": options}, "players": players,
            "games": games, "schedule": {"kind": schedule}, "executor": {"kind": "local"},
            **config}
    path = home / "canary.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    marks = home / "imports.txt"
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT), "DIXIT_LAB_PROGRESS": "off",
           "DIXIT_TEST_IMPORTS": str(marks)}
    process = subprocess.Popen([*prefix, sys.executable, "-m", "tests.hostile.engine",
                                str(path), str(folder)], cwd=home, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, folder, marks


def run(tmp_path: Path, players: list[dict[str, Any]], *, timeout: float = 120,
        **config: Any) -> Run:
    """``dixit-lab run`` of these players (see :func:`start`), to its end."""
    began = time.monotonic()
    process, folder, marks = start(tmp_path, players, **config)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
        pytest.fail(f"the engine hung for {timeout} s: {stderr[-2000:]}")
    seconds = time.monotonic() - began
    games_file = folder / "games.jsonl"
    records = [json.loads(line) for line in games_file.read_text().splitlines()
               if line.strip()] if games_file.is_file() else []
    imported = [int(n) for n in marks.read_text().split()] if marks.is_file() else []
    return Run(process.returncode, stderr, records, seconds, folder, imported, process.pid)


def sandboxed(player: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**player, "isolation": "sandbox", **extra}


def spy(name: str, cls: str, **params: Any) -> dict[str, Any]:
    return {"name": name, "agent": f"tests.hostile.{cls}", "params": params}


# -- reading what is not its own: the engine, the seed, the folder -------------------------------

@pytest.fixture(scope="module", params=["sandbox", "process"])
def readers(request, tmp_path_factory) -> tuple[str, Run]:
    """One run of four readers: the proxy patcher, the seed brute force, the /proc reader and
    the results-folder reader."""
    if request.param == "sandbox":
        needs_sandbox()
    tmp = tmp_path_factory.mktemp(request.param)
    target = str(tmp / "canary" / "canary-results")
    players = [spy("proxy", "proxy:ProxyPatcher"), spy("seeds", "seeds:SeedSpy"),
               spy("proc", "proc:ProcSpy"), spy("folder", "reach:FolderSpy", target=target)]
    if request.param == "sandbox":  # the seed spy's base, outside its package tests.hostile
        players[1]["files"] = [str(ROOT / "tests" / "spies.py")]
    result = run(tmp, [{**p, "isolation": request.param} for p in players], games=4)
    assert result.code == 0, result.stderr
    return request.param, result


def test_an_untrusted_agent_is_imported_only_in_children_and_patches_nothing(readers):
    _, result = readers
    assert result.engine not in result.marks and not result.marks  # never in the engine
    reports = result.reports("proxy")
    assert reports and not any(r["patched"] for r in reports)
    assert all(r["pid"] != result.engine for r in reports)
    hits, votes = result.find_rate("proxy")
    assert votes >= 10 and hits < votes * 0.7  # chance (1/3), not 176/176


def test_brute_force_of_the_seed_from_a_hand_fails_when_a_seat_is_untrusted(readers):
    _, result = readers
    hits, votes = result.find_rate("seeds")
    print("PROBE", hits, votes, [r for r in (result.folder.parent).rglob("*.log")])
    assert votes >= 10 and hits < votes * 0.7
    assert all(len(r["spawn_key"]) == 5 for r in result.records)  # the deal, then the secret
    secret = result.folder / "deal_secret"
    assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_text().strip()) == 32


def test_brute_force_of_the_seed_still_works_on_a_trusted_run(tmp_path):
    result = run(tmp_path, [spy("seeds", "seeds:SeedSpy"), RANDOM, RANDOM, RANDOM], games=2)
    assert result.code == 0, result.stderr
    hits, votes = result.find_rate("seeds")
    assert votes >= 6 and hits == votes  # as on every run before: the seed alone deals
    reports = result.reports("seeds")
    assert reports and all(r["found"] for r in reports)
    assert not (result.folder / "deal_secret").exists()


def test_the_engine_process_and_its_environment_are_out_of_reach(readers):
    mode, result = readers
    reports = result.reports("proc")
    assert reports
    for report in reports:
        assert report["env"] == []  # no key, token or path in the child's environment
        if mode == "sandbox":  # /proc/<engine>/cmdline, cwd, environ, fd, mem; ptrace
            assert report["leaks"] == [], report


def test_the_results_folder_and_exchanges_are_out_of_reach(readers):
    mode, result = readers
    reports = result.reports("folder")
    assert reports
    if mode == "sandbox":
        assert all(r["files"] == 0 for r in reports), reports


# -- reaching out: signals, floods, grandchildren ---------------------------------------------

def test_signals_reach_no_other_seat_and_not_the_engine(tmp_path):
    needs_sandbox()
    players = [sandboxed(spy(name.lower(), "reach:SignalSpy", signal=name))
               for name in ("SIGKILL", "SIGSTOP", "SIGTERM")]
    result = run(tmp_path, [*players, sandboxed({"name": "victim", "agent": "random"})],
                 games=3, timeout=90)
    assert result.code == 0, result.stderr
    assert len(result.records) == 3  # every game saved: the engine was never stopped
    assert result.faults("victim") == [] and result.seconds < 60


def test_floods_are_bounded(tmp_path):
    needs_sandbox()
    target = str(tmp_path / "canary" / "canary-results")
    players = [sandboxed(spy("memory", "floods:FloodSpy", kind="memory", gib=6)),  # > 4 GiB
               sandboxed(spy("file", "floods:FloodSpy", kind="file", target=target)),
               sandboxed(spy("processes", "floods:FloodSpy", kind="processes")),
               sandboxed(spy("cpu", "floods:FloodSpy", kind="cpu", pause=0.3),
                         limits={"cpu_seconds": 1})]
    result = run(tmp_path, players, games=1, max_rounds=None, timeout=90)
    assert result.code == 0, result.stderr
    assert all(r["bytes"] == 0 for r in result.reports("memory"))  # MemoryError
    assert all(r["bytes"] == 0 for r in result.reports("file"))    # nothing writable
    assert all(r["started"] <= 4 for r in result.reports("processes"))
    assert not list(result.folder.rglob("flood.bin"))
    assert any(f["kind"] in ("timeout", "crashed") and "CPU" in f["message"]
               for f in result.faults("cpu")), [(f["kind"], f["message"])
                                                for f in result.faults("cpu")]


def test_in_a_process_the_cpu_budget_holds_and_the_limits_a_player_gives(tmp_path):
    """``isolation: process`` promises the CPU budget always, and the memory and file limits
    when the player gives ``limits:`` (docs/security.md); not the process limit."""
    target = str(tmp_path / "canary" / "canary-results")
    players = [{**spy("memory", "floods:FloodSpy", kind="memory", gib=2), "isolation": "process",
                "limits": {"memory_mb": 1024}},
               {**spy("file", "floods:FloodSpy", kind="file", target=target),
                "isolation": "process", "limits": {"file_mb": 16}},
               {**spy("cpu", "floods:FloodSpy", kind="cpu", pause=0.3), "isolation": "process",
                "limits": {"cpu_seconds": 1}},
               RANDOM]
    result = run(tmp_path, players, games=1, max_rounds=None, timeout=90)
    assert result.code == 0, result.stderr
    assert all(r["bytes"] == 0 for r in result.reports("memory"))  # MemoryError, not 2 GiB
    files = result.reports("file")
    assert files and all(0 < r["bytes"] <= 16 << 20 for r in files), files  # not 256 MiB
    assert any(f["kind"] in ("timeout", "crashed") and "CPU" in f["message"]
               for f in result.faults("cpu")), result.faults("cpu")


def test_no_grandchild_outlives_its_game(tmp_path):
    needs_sandbox()
    result = run(tmp_path, [sandboxed(spy("orphan", "reach:OrphanSpy", seconds=60)), RANDOM,
                            RANDOM, RANDOM], games=2)
    assert result.code == 0, result.stderr
    assert all(r["forked"] for r in result.reports("orphan"))
    time.sleep(0.5)
    left = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "dixit-orphan":
                left.append(pid)
        except OSError:
            continue
    assert left == []


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (by their parents in /proc)."""
    parents: dict[int, int] = {}
    for entry in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parents[int(entry)] = int(line.split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _threads(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines()
                 if line.startswith("Threads:")), 0)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie is dead, waiting for its reaper


@pytest.mark.parametrize("mode", ["sandbox", "process"])
def test_every_seat_dies_with_the_engine(tmp_path, mode):
    """The engine killed (SIGKILL, no cleanup) while a seat is stuck in a decision it never
    ends (it would not notice the engine's end): its seats' processes (bubblewrap, the
    template, the game processes; a process child) die with it."""
    if mode == "sandbox":
        needs_sandbox()
    players = [{**spy("stuck", "floods:StuckSpy"), "isolation": mode, "decision_timeout": 120},
               {**RANDOM, "isolation": mode}, RANDOM, RANDOM]
    process, _, _ = start(tmp_path, players, games=4)
    try:
        seats: set[int] = set()
        stuck: set[int] = set()  # the stuck seat's process: two threads, neither returns
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            seats |= _descendants(process.pid)
            now = {pid for pid in seats if _threads(pid) >= 2}
            if now & stuck:  # stuck for two looks in a row
                break
            stuck = now
            time.sleep(0.5)
        assert process.poll() is None and stuck, "the stuck seat was never seen stuck"
        seats |= _descendants(process.pid)
    finally:
        process.kill()
        process.wait()
        for pipe in (process.stdout, process.stderr):  # a seat left alive would hold them
            if pipe is not None:
                pipe.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in seats):
        time.sleep(0.1)
    assert [pid for pid in seats if _alive(pid)] == []


# -- time: slow hooks, a child that stops reading -------------------------------------------------

@pytest.mark.parametrize("mode", ["sandbox", "process"])
def test_a_slow_observe_and_a_deaf_child_become_faults_not_hangs(tmp_path, mode):
    if mode == "sandbox":
        needs_sandbox()
    players = [{**spy("slow", "floods:SlowObserver", seconds=3), "isolation": mode,
                "decision_timeout": 0.5},
               {**spy("deaf", "floods:DeafSpy"), "isolation": mode, "decision_timeout": 1},
               RANDOM, RANDOM]
    result = run(tmp_path, players, games=2, timeout=90)
    assert result.code == 0, result.stderr
    assert len(result.records) == 2 and result.seconds < 60
    slow = result.faults("slow")
    assert any(f["action"] == "observe" and f["kind"] == "timeout" for f in slow), slow
    deaf = result.faults("deaf")
    assert deaf and {f["kind"] for f in deaf} <= {"timeout", "illegal", "crashed"}


# -- memory across games -------------------------------------------------------------------------

def test_no_memory_across_games_of_a_duplicate_schedule(tmp_path):
    needs_sandbox()
    players = [sandboxed(spy("memory", "memory:MemorySpy")), RANDOM, RANDOM, RANDOM]
    result = run(tmp_path, players, games=8, schedule="duplicate", max_rounds=None)
    assert result.code == 0, result.stderr
    reports = result.reports("memory")
    assert reports and not any(r["recalled"] for r in reports)
    assert all(r["deals"] == 0 for r in reports)  # each game: a fresh process
    hits, votes = result.find_rate("memory")
    assert votes >= 40 and hits < votes * 0.6  # chance (1/3), not 269/288


# -- a people's table ----------------------------------------------------------------------------

@pytest.mark.parametrize("explicit", [None, "none"])
def test_an_agent_at_a_people_table_cannot_reach_their_tokens(tmp_path, explicit):
    """Seated by default (``dixit-lab play``'s rule), the token spy is in a sandbox and finds
    no person's seat; seated in the server's process on purpose (``isolation: none``), it
    finds them, as every agent did before."""
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")
    from fastapi.testclient import TestClient

    from dixit_lab.web.play_app import play_app
    from dixit_lab.web.table import untrusted_by_default
    from tests.web_support import config_data, play_seat, start_table

    if explicit is None:
        needs_sandbox()
    spy_player = {"name": "spy", "agent": "tests.hostile.tokens:TokenSpy"}
    if explicit is not None:
        spy_player["isolation"] = explicit
    data, note = untrusted_by_default(config_data([{"name": "you", "agent": "human"},
                                                   spy_player, {"name": "r", "agent": "random"}],
                                                  max_rounds=3))
    assert data["players"][2]["isolation"] == "sandbox"
    assert note == ([] if explicit is None else ["warning: player 'spy' plays outside code "
                                                 "with isolation: none, as the config asks: "
                                                 "in the server's own process, the people's "
                                                 "tokens and hands included"])
    table, thread = start_table(tmp_path, data)
    play_seat(TestClient(play_app(table, ["testserver"])), table.humans[0].token)
    thread.join(timeout=60)
    record = json.loads((tmp_path / "games.jsonl").read_text().splitlines()[0])
    seat = record["meta"]["players"].index("spy")
    reports = [json.loads(r["clue"].removeprefix("report:")) for r in record["rounds"]
               if r["storyteller"] == seat]
    assert reports
    if explicit is None:
        assert all(r["tokens"] == 0 for r in reports), reports
    else:  # (and any table an earlier test left in this process)
        assert all(r["tokens"] >= 1 for r in reports), reports
    assert len(record["spawn_key"]) == 5  # a person at the table: the deal mixes the secret
