"""A large run end to end: the whole ``dixit-lab run`` command against the time of its games,
its peak memory, and the bytes a game costs on disk.

    python benchmarks/bench_scale.py [--games 200000] [--workers 2] [--engine batched]
                                     [--repeats 1] [--keep DIR]

The table is the one of the Scale issue: 2 ``literal``, 2 ``softmax(temperature=0.1)`` and 1
``ambiguity(target=0.4)``, classic rules, the bundled deck, the batched engine (``--engine
compiled``: the compiled kernel, which ``auto`` picks from 100,000 games). Prints the time
of the games alone (the same chunks played on the same pool, their records thrown away: what
the engine costs), the play phase as the command reports it (the games, and each chunk
summarised and saved where it was played), the whole command's time, its ratio to the games
alone (and the ratio of their CPU seconds, every process counted: what other load on a
shared machine moves least), the peak resident memory of the command and its workers, the
size of the games file and of the round table per game, and checks that the folder holds
every file the quickstart's does. With ``--repeats N`` the games alone and the whole command
run N times, alternating (a shared machine's load falls on both), each pair's ratio printed
and their median. Targets: whole command <= 3x the game time, peak < 1.5 GB at 200,000 and 1,000,000
games (the Scale issue); <= 1.5x at 1,000,000 games with the batched engine (the Speed
issue).
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

TABLE = ["literal", "literal", "softmax(temperature=0.1)", "softmax(temperature=0.1)",
         "ambiguity(target=0.4)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--records", default="jsonl.zst", choices=["jsonl.zst", "jsonl"])
    parser.add_argument("--engine", default="batched", choices=["batched", "compiled", "auto"])
    parser.add_argument("--repeats", type=int, default=1,
                        help="pairs of (games alone, whole command), alternating")
    parser.add_argument("--keep", help="write the results folder here (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "scale"
        config = {"name": "scale", "seed": 1, "rules": "classic", "deck": "dreams",
                  "games": args.games,
                  "players": [{"name": f"p{i}_{spec.split('(')[0]}", "agent": spec}
                              for i, spec in enumerate(TABLE)],
                  "executor": {"kind": "process", "workers": args.workers},
                  "records": args.records, "engine": args.engine}
        path = Path(tmp) / "scale.yaml"
        path.write_text(yaml.safe_dump(config))
        print(f"{args.games:,} games, {args.workers} workers, engine {args.engine}, table "
              f"{', '.join(TABLE)}")
        ratios, cpu_ratios = [], []
        for repeat in range(max(args.repeats, 1)):
            before = _children_cpu()
            alone = _games_alone(path, args.workers)
            alone_cpu = _children_cpu() - before
            shutil.rmtree(folder, ignore_errors=True)
            before = _children_cpu()
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(path),
                                   "--out", str(folder), "--quiet"], capture_output=True,
                                  text=True)
            wall = time.perf_counter() - start
            whole_cpu = _children_cpu() - before
            cpu_ratios.append(whole_cpu / alone_cpu)
            if done.returncode != 0:
                sys.exit(f"the run failed:\n{done.stderr[-2000:]}")
            match = re.search(r"in ([\d.]+) s of play", done.stdout)
            games_seconds = float(match.group(1)) if match else float("nan")
            ratios.append(wall / alone)
            if args.repeats > 1:
                print(f"  pair {repeat + 1}: games alone {alone:.1f} s, play phase "
                      f"{games_seconds:.1f} s, whole command {wall:.1f} s: "
                      f"{wall / alone:.2f}x (CPU of every process {alone_cpu:.0f} / "
                      f"{whole_cpu:.0f} s: {whole_cpu / alone_cpu:.2f}x)")
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        games_file = folder / f"games.{args.records}"
        size = games_file.stat().st_size
        rounds = sum(p.stat().st_size for p in (folder / "rounds.parquet").glob("*.parquet"))
        expected = {"config.yaml", games_file.name, "rounds.parquet", "agents.csv",
                    "ratings.csv", "rating_pairs.csv", "find_calibration.csv", "summary.json",
                    "report.md", "plots"}
        missing = sorted(expected - {p.name for p in folder.iterdir()})
        if args.repeats > 1:
            print(f"  the whole command, median of {len(ratios)} pairs: "
                  f"{statistics.median(ratios):.2f}x the games alone (pairs "
                  f"{min(ratios):.2f}-{max(ratios):.2f}x; targets <= 3x, <= 1.5x at "
                  f"1,000,000); its CPU {statistics.median(cpu_ratios):.2f}x theirs")
        else:
            print(f"  the games alone (same chunks, same pool): {alone:8.1f} s")
            print(f"  play phase as the command reports it:     {games_seconds:8.1f} s  "
                  f"(games, and each chunk summarised and saved by its worker)")
            print(f"  the whole command:                        {wall:8.1f} s  "
                  f"({wall / alone:.2f}x the games alone; targets <= 3x, <= 1.5x at "
                  f"1,000,000)")
            print(f"  CPU of every process: games alone {alone_cpu:.1f} s, whole command "
                  f"{whole_cpu:.1f} s ({whole_cpu / alone_cpu:.2f}x: what a loaded machine "
                  f"does not move)")
        print(f"  peak resident memory (largest process): {peak_mb:,.0f} MB  (target < 1,500)")
        print(f"  {games_file.name}: {size / 1e6:,.1f} MB, {size / args.games:,.0f} bytes a game;"
              f" rounds.parquet: {rounds / 1e6:,.1f} MB, {rounds / args.games:,.0f} bytes a game")
        print("  every output file of the quickstart: " + (
            "yes" if not missing else f"NO, missing {', '.join(missing)}"))


def _children_cpu() -> float:
    """User and system seconds of this process's finished children (and theirs)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _games_alone(path: Path, workers: int) -> float:
    """Seconds to play the config's games on a pool of ``workers``, chunk by chunk as the
    runner does, the records sent back and thrown away (no parts, no tables)."""
    code = f"""
import time
from dixit_lab.run.executors import chunked, run_chunks
from dixit_lab.run.experiment import load_config
from dixit_lab.run.runner import chunk_size_for, game_specs, table_setup
config = load_config({str(path)!r})
setup, specs = table_setup(config), game_specs(config)
chunks = chunked(specs, chunk_size_for(config, setup, None, {workers}))
start = time.perf_counter()
for _ in run_chunks(setup, chunks, "process", {workers}):
    pass
print(time.perf_counter() - start)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
