"""The Trust issue's attacks, measured: each hostile agent of ``tests/hostile/`` against a run
(``dixit-lab run`` in a subprocess, 4 seats, numbered cards), with the hostile seats in the
engine's process (``none``), in their own processes (``process``) or sandboxed
(``sandbox``). Prints one line per attack and mode: what the attack got.

    python benchmarks/bench_attacks.py [--modes none,process,sandbox] [--games 4]
                                       [--attacks trust,kernel]

The figures of docs/security.md's table (``kernel``: Trust II's keyrings, inotify, shared
memory and forked CPU, issue 42). (Run with the repository's root on ``PYTHONPATH``
and as the working folder's parent: the hostile agents are ``tests.hostile.*``.)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SECRETS = {"OPENAI_API_KEY": "sk-canary-key", "HF_TOKEN": "hf-canary-token"}


def spy(name: str, cls: str, mode: str, **params: Any) -> dict[str, Any]:
    player: dict[str, Any] = {"name": name, "agent": f"tests.hostile.{cls}", "params": params}
    if mode != "none":
        player["isolation"] = mode
    return player


def run(players: list[dict[str, Any]], games: int, timeout: float = 120,
        prefix: tuple[str, ...] = (), **config: Any) -> dict[str, Any]:
    """Play a run in a subprocess: its records, time, exit, and what it left."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "canary"
        home.mkdir()
        folder = home / "canary-results"
        for index, player in enumerate(players):
            player.setdefault("name", f"p{index}")
        data = {"name": "canary", "seed": 0, "deck": "numbered-60", "records": "jsonl",
                "rules": {"preset": "classic", "options": config.pop("options",
                                                                     {"max_rounds": 6})},
                "players": players, "games": games, "executor": {"kind": "local"}, **config}
        path = home / "canary.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        env = {**os.environ, **SECRETS, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)),
               "DIXIT_TEST_IMPORTS": str(home / "imports.txt")}
        start = time.monotonic()
        process = subprocess.Popen([*prefix, sys.executable, "-m", "tests.hostile.engine",
                                    str(path), str(folder)], cwd=home, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        hung = False
        try:
            _, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            hung = True
            os.killpg(process.pid, signal.SIGKILL)
            _, stderr = process.communicate()
        seconds = time.monotonic() - start
        games_file = folder / "games.jsonl"
        parts = sorted((folder / "parts").glob("games-*.jsonl")) if (folder / "parts").is_dir() \
            else []
        lines = []
        for file in ([games_file] if games_file.is_file() else parts):
            lines += [line for line in file.read_text().splitlines() if line.strip()]
        marks = (home / "imports.txt").read_text().split() if (home / "imports.txt").is_file() \
            else []
        flood = sum(p.stat().st_size for p in home.rglob("flood.bin"))
        return {"records": [json.loads(line) for line in lines], "seconds": seconds,
                "code": process.returncode, "hung": hung, "stderr": stderr,
                "engine_imported": str(process.pid) in marks, "flood_bytes": flood}


def seat_of(record: dict[str, Any], name: str) -> int:
    return record["meta"]["players"].index(name)


def find_rate(result: dict[str, Any], name: str) -> str:
    hits = votes = 0
    for record in result["records"]:
        seat = seat_of(record, name)
        for rnd in record["rounds"]:
            vote = rnd["votes"][seat]
            if rnd["storyteller"] != seat and vote is not None:
                votes += 1
                hits += rnd["card_owner"][vote] == rnd["storyteller"]
    return f"{hits}/{votes}" + (f" = {hits / votes:.2f}" if votes else "")


def reports(result: dict[str, Any], name: str) -> list[dict[str, Any]]:
    out = []
    for record in result["records"]:
        seat = seat_of(record, name)
        out += [json.loads(r["clue"].removeprefix("report:")) for r in record["rounds"]
                if r["storyteller"] == seat and r["clue"].startswith("report:")]
    return out


def faults(result: dict[str, Any], name: str, kind: str | None = None) -> int:
    count = 0
    for record in result["records"]:
        seat = seat_of(record, name)
        count += sum(1 for rnd in record["rounds"] for f in rnd.get("faults", [])
                     if f["seat"] == seat and (kind is None or f["kind"] == kind))
    return count


def outcome(result: dict[str, Any], games: int) -> str:
    if result["hung"]:
        return f"hung (killed after {result['seconds']:.0f} s), {len(result['records'])} games"
    return (f"{len(result['records'])}/{games} games in {result['seconds']:.1f} s, "
            f"exit {result['code']}")


def orphans() -> int:
    count = 0
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "dixit-orphan":
                count += 1
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            continue
    return count


def _has_limits() -> bool:
    """Whether this version's configs have ``limits:`` (the code before them had none)."""
    import importlib

    for name in ("dixit_lab.run.experiment", "dixit_lab.experiment"):
        try:
            entry = importlib.import_module(name).PlayerEntry
        except (ImportError, AttributeError):
            continue
        return "limits" in entry.model_fields
    return False


def attacks(mode: str, games: int) -> list[tuple[str, str]]:
    rows = []
    random = {"agent": "random"}
    result = run([spy("proxy", "proxy:ProxyPatcher", mode), random, random, random], games)
    rows.append(("proxy patched from __init__: storyteller's card found",
                 f"{find_rate(result, 'proxy')}; engine imported it: "
                 f"{result['engine_imported']}"))
    result = run([spy("seeds", "seeds:SeedSpy", mode), spy("proc", "proc:ProcSpy", mode),
                  random, random], games)  # (apart: a patched proxy would play them too)
    rows.append(("seed brute force from a hand: card found", find_rate(result, "seeds")))
    leaks = sorted({leak for r in reports(result, "proc") for leak in r.get("leaks", [])})
    env = sorted({name for r in reports(result, "proc") for name in r.get("env", [])})
    rows.append(("/proc/<engine>: cmdline, cwd, environ, fd, mem; ptrace",
                 f"leaked: {', '.join(leaks) or 'nothing'}"))
    rows.append(("inherited environment (keys, tokens, exchanges)",
                 f"found: {', '.join(env) or 'nothing'}"))
    with tempfile.TemporaryDirectory() as tmp:
        target = str(Path(tmp))  # a folder like the results: files the engine wrote
        for name in ("games.jsonl", "deal_secret", "exchanges/a.json"):
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text("canary")
        result = run([spy("folder", "reach:FolderSpy", mode, target=target), random, random,
                      random], 1)
        read = max((r["read"] for r in reports(result, "folder")), default=0)
        rows.append(("results folder and exchanges/ read", f"{read} of 3 files"))
    for name in ("SIGKILL", "SIGSTOP", "SIGTERM"):
        victim = {"name": "victim", "agent": "random"}
        if mode != "none":
            victim["isolation"] = mode
        result = run([spy("attacker", "reach:SignalSpy", mode, signal=name), victim, random,
                      random], games, timeout=60)
        rows.append((f"{name} of other seats and of the parent",
                     f"{outcome(result, games)}; victim's crashed faults "
                     f"{faults(result, 'victim', 'crashed')}"))
    cpu = spy("cpu", "floods:FloodSpy", mode, kind="cpu", pause=0.3)
    if mode != "none" and _has_limits():
        cpu["limits"] = {"cpu_seconds": 1}  # a budget of 1 s of CPU a game
    memory = spy("memory", "floods:FloodSpy", mode, kind="memory")
    if mode != "none" and _has_limits():
        memory["limits"] = {"memory_mb": 1024}  # (the default, 4 GiB, holds a CLIP model)
    players = [memory,
               spy("file", "floods:FloodSpy", mode, kind="file"),
               spy("processes", "floods:FloodSpy", mode, kind="processes"), cpu]
    result = run(players, 1, options={})
    allocated = max((r.get("bytes", 0) for r in reports(result, "memory")), default=0)
    started = max((r.get("started", 0) for r in reports(result, "processes")), default=0)
    rows.append(("memory flood (2 GiB; limits.memory_mb 1024)",
                 f"{allocated / 2**30:.1f} GiB allocated"))
    rows.append(("file flood (256 MiB)", f"{result['flood_bytes'] / 2**20:.0f} MiB written"))
    rows.append(("process flood (64)", f"{started} started"))
    rows.append(("CPU between decisions (3 threads; budget 1 s a game)",
                 f"faults {faults(result, 'cpu')}; {outcome(result, 1)}"))
    orphans()
    run([spy("orphan", "reach:OrphanSpy", mode, seconds=60), random, random, random], games)
    time.sleep(0.5)
    rows.append(("double-forked grandchild", f"{orphans()} left after the run"))
    slow = spy("slow", "floods:SlowObserver", mode, seconds=3)
    deaf = spy("deaf", "floods:DeafSpy", mode)
    if mode != "none":
        slow["decision_timeout"], deaf["decision_timeout"] = 0.5, 1
    result = run([slow, random, random, random], 2, timeout=90)
    rows.append(("observe taking 3 s at decision_timeout 0.5 s",
                 f"{outcome(result, 2)}; observe faults {faults(result, 'slow')}"))
    if mode != "none":  # in the engine's process it would block the engine for good
        result = run([deaf, random, random, random], 2, timeout=90)
        rows.append(("a child that stops reading (and answers ahead)",
                     f"{outcome(result, 2)}; faults {faults(result, 'deaf')}"))
    result = run([spy("memory", "memory:MemorySpy", mode), random, random, random], 12,
                 schedule={"kind": "duplicate"}, options={})
    recalled = sum(r.get("recalled", False) for r in reports(result, "memory"))
    rows.append(("memory across games (schedule: duplicate)",
                 f"card found {find_rate(result, 'memory')}; deals recalled {recalled}"))
    return rows


def kernel_attacks(mode: str, games: int) -> list[tuple[str, str]]:
    """Trust II's kernel objects and limits (issue 42): keyrings, inotify, shared memory,
    forked CPU."""
    rows = []
    random = {"agent": "random"}
    host = (sys.executable, "-m", "tests.hostile.keyring_host")
    result = run([spy("keys", "kernel:KeyringSpy", mode), spy("partner", "kernel:KeyringSpy",
                                                              mode), random, random],
                 games, prefix=host)
    seen = reports(result, "keys") + reports(result, "partner")
    rows.append(("session keyring: the host's token read; a key of a game before",
                 f"token read in {sum(r['host_key'] for r in seen)}/{len(seen)} games, key "
                 f"recalled in {sum(r['recalled'] for r in seen)}; keyctl "
                 f"{sorted({r['listed'] for r in seen})}, add_key "
                 f"{sorted({r['added'] for r in seen})}"))
    result = run([spy("watch", "kernel:InotifySpy", mode), random, random, random], 1,
                 deck="dreams")
    seen = reports(result, "watch")
    rows.append(("inotify on its own file and the deck's images",
                 f"init {sorted({r['init'] for r in seen})}, watches "
                 f"{sorted({w for r in seen for w in r['watches']})}"))
    result = run([spy("opener", "kernel:ImageOpener", mode),
                  spy("watcher", "kernel:ImageWatcher", mode), random, random], games,
                 deck="dreams", options={})
    hits = votes = 0
    for record in result["records"]:
        opener, watcher = seat_of(record, "opener"), seat_of(record, "watcher")
        for rnd in record["rounds"]:
            if rnd["storyteller"] == opener and rnd["votes"][watcher] is not None:
                votes += 1
                hits += rnd["card_owner"][rnd["votes"][watcher]] == opener
    rows.append(("a storyteller opens its card's image, its partner watches (inotify)",
                 f"the partner found it {hits}/{votes}" + (f" = {hits / votes:.2f}" if votes
                                                           else "")))
    shared = spy("shared", "floods:FloodSpy", mode, kind="shared", gib=2)
    forked = spy("forked", "floods:FloodSpy", mode, kind="forked", pause=0.3)
    if mode != "none":
        shared["limits"] = {"memory_mb": 512}
        forked["limits"] = {"cpu_seconds": 2}
    result = run([shared, random, random, random], 1)
    touched = max((r.get("bytes", 0) for r in reports(result, "shared")), default=0)
    rows.append(("2 GiB through mmap(MAP_SHARED|MAP_ANONYMOUS), limits.memory_mb 512",
                 f"{touched / 2**20:.0f} MiB touched"))
    began = time.monotonic()
    result = run([forked, random, random, random], 1, options={})
    spent = max((r.get("spent", 0.0) for r in reports(result, "forked")), default=0.0)
    budget = sum(1 for record in result["records"] for rnd in record["rounds"]
                 for f in rnd.get("faults", []) if f["seat"] == seat_of(record, "forked")
                 and "CPU budget" in f["message"])
    rows.append(("4 forked spinners, limits.cpu_seconds 2",
                 f"{spent:.2f} s of CPU reaped by the agent; {budget} CPU-budget faults, "
                 f"{faults(result, 'forked')} in all; {time.monotonic() - began:.1f} s"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="none,process,sandbox")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--attacks", default="trust,kernel",
                        help="trust (issue 25's), kernel (issue 42's keyrings, inotify, limits)")
    args = parser.parse_args()
    suites = {"trust": attacks, "kernel": kernel_attacks}
    for mode in args.modes.split(","):
        for suite in args.attacks.split(","):
            for attack, figure in suites[suite](mode, args.games):
                print(f"{mode:8} | {attack:55} | {figure}", flush=True)


if __name__ == "__main__":
    main()
