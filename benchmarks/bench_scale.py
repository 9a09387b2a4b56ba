"""A large run end to end: the whole ``dixit-lab run`` command against the time of its games,
its peak memory, and the bytes a game costs on disk.

    python benchmarks/bench_scale.py [--games 200000] [--workers 2] [--keep DIR]

The table is the one of the Scale issue: 2 ``literal``, 2 ``softmax(temperature=0.1)`` and 1
``ambiguity(target=0.4)``, classic rules, the bundled deck, the batched engine. Prints the game
time (as the command reports it), the whole command's time, their ratio, the peak resident
memory of the command and its workers, the size of the games file and of the round table per
game, and checks that the folder holds every file the quickstart's does. Targets
(issue 15): whole command <= 3x the game time, peak < 1.5 GB at 200,000 and 1,000,000 games.
"""

from __future__ import annotations

import argparse
import re
import resource
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
    parser.add_argument("--keep", help="write the results folder here (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "scale"
        config = {"name": "scale", "seed": 1, "rules": "classic", "deck": "dreams",
                  "games": args.games,
                  "players": [{"name": f"p{i}_{spec.split('(')[0]}", "agent": spec}
                              for i, spec in enumerate(TABLE)],
                  "executor": {"kind": "process", "workers": args.workers},
                  "records": args.records}
        path = Path(tmp) / "scale.yaml"
        path.write_text(yaml.safe_dump(config))
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(path), "--out",
                               str(folder), "--quiet"], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"the run failed:\n{done.stderr[-2000:]}")
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        match = re.search(r"in ([\d.]+) s of play", done.stdout)
        games_seconds = float(match.group(1)) if match else float("nan")
        games_file = folder / f"games.{args.records}"
        size = games_file.stat().st_size
        rounds = sum(p.stat().st_size for p in (folder / "rounds.parquet").glob("*.parquet"))
        expected = {"config.yaml", games_file.name, "rounds.parquet", "agents.csv",
                    "ratings.csv", "rating_pairs.csv", "find_calibration.csv", "summary.json",
                    "report.md", "plots"}
        missing = sorted(expected - {p.name for p in folder.iterdir()})
        print(f"{args.games:,} games, {args.workers} workers, table {', '.join(TABLE)}")
        print(f"  games (as the command reports them): {games_seconds:8.1f} s")
        print(f"  the whole command:                   {wall:8.1f} s  "
              f"({wall / games_seconds:.1f}x the games; target <= 3x)")
        print(f"  peak resident memory (largest process): {peak_mb:,.0f} MB  (target < 1,500)")
        print(f"  {games_file.name}: {size / 1e6:,.1f} MB, {size / args.games:,.0f} bytes a game;"
              f" rounds.parquet: {rounds / 1e6:,.1f} MB, {rounds / args.games:,.0f} bytes a game")
        print("  every output file of the quickstart: " + (
            "yes" if not missing else f"NO, missing {', '.join(missing)}"))


if __name__ == "__main__":
    main()
