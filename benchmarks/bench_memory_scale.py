"""Memory of a sweep of many points and a tune of many candidates, end to end (the Hardening II
issue: +25-87 MB a sweep point and +81 MB a tune candidate, never freed).

Runs ``dixit-lab run`` on a sweep config of ``--points`` points and ``dixit-lab tune`` on a
config of ``--candidates`` candidates (each in a process of its own, the local executor), and
samples the command's resident memory (its process and children) every 0.2 s. It prints the
memory at each tenth of the command's time, its peak, and the ratio of the last tenth's to the
second tenth's (1.0: flat). ``--agent ambiguity`` sweeps a storyteller whose tables are tens of
MB (the case that grew); the default ``softmax`` keeps 1,000 points affordable.

    python benchmarks/bench_memory_scale.py --points 1000 --candidates 1000
    python benchmarks/bench_memory_scale.py --points 40 --candidates 40 --agent ambiguity
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _measure(command: list[str], cwd: Path) -> tuple[float, list[float]]:
    """(seconds, RSS samples in MB) of ``command``, which must succeed."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    samples = []
    while process.poll() is None:
        rss = _rss_mb(process.pid)
        if rss > 0:  # not the moment it ended
            samples.append(rss)
        time.sleep(0.2)
    err = process.stderr.read() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{err[-2000:]}")
    return time.perf_counter() - start, samples


def _report(label: str, seconds: float, samples: list[float]) -> None:
    tenths = [samples[min(len(samples) - 1, int(len(samples) * k / 10))] for k in range(1, 11)]
    second = max(samples[len(samples) // 10: max(len(samples) // 5, len(samples) // 10 + 1)])
    last = max(samples[len(samples) * 9 // 10:])
    print(f"{label}: {seconds:.0f} s, peak {max(samples):.0f} MB; at each tenth of the time: "
          + " ".join(f"{v:.0f}" for v in tenths)
          + f" MB; last tenth / second tenth {last / second:.2f}")


def _players(agent: str) -> list[dict]:
    if agent == "ambiguity":
        return [{"name": "teller", "agent": "ambiguity", "params": {"target": 0.5}},
                {"name": "l", "agent": "softmax(temperature=0.05)", "count": 3}]
    return [{"name": "teller", "agent": "softmax", "params": {"temperature": 0.05}},
            {"name": "l", "agent": "literal", "count": 3}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=1000, help="sweep points (0: none)")
    parser.add_argument("--candidates", type=int, default=1000,
                        help="tune candidates (0: none)")
    parser.add_argument("--games", type=int, default=4, help="games a sweep point")
    parser.add_argument("--agent", choices=("softmax", "ambiguity"), default="softmax")
    args = parser.parse_args()
    parameter = "target" if args.agent == "ambiguity" else "temperature"
    low, high = (0.05, 0.95) if args.agent == "ambiguity" else (0.01, 1.0)
    base = {"name": "memory", "seed": 1, "deck": "dreams",
            "rules": {"preset": "classic", "options": {"max_rounds": 6}},
            "players": _players(args.agent), "executor": {"kind": "local"}}
    env = {**os.environ, "DIXIT_LAB_PROGRESS": "0"}
    os.environ.update(env)
    cli = [sys.executable, "-m", "dixit_lab.cli"]
    print(f"machine: {os.cpu_count()} cores; agent {args.agent}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if args.points:
            values = [round(low + (high - low) * i / max(args.points - 1, 1), 9)
                      for i in range(args.points)]
            config = {**base, "games": args.games,
                      "sweep": {f"players.0.params.{parameter}": values}}
            path = folder / "sweep.yaml"
            path.write_text(yaml.safe_dump(config), encoding="utf-8")
            seconds, samples = _measure([*cli, "run", str(path), "--out",
                                         str(folder / "sweep"), "--quiet"], folder)
            _report(f"sweep of {args.points} points ({args.games} games each)", seconds,
                    samples)
        if args.candidates:
            config = {**base, "games": 4, "tune": {
                "parameter": f"players.0.params.{parameter}", "low": low, "high": high,
                "points": args.candidates, "player": "teller", "games_per_round": 2,
                "max_games": 4 * args.candidates, "confirm_games": 0}}
            path = folder / "tune.yaml"
            path.write_text(yaml.safe_dump(config), encoding="utf-8")
            seconds, samples = _measure([*cli, "tune", str(path), "--out",
                                         str(folder / "tune")], folder)
            _report(f"tune of {args.candidates} candidates (2 games a look)", seconds,
                    samples)


if __name__ == "__main__":
    main()
