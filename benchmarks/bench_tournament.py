"""Tournament throughput with 1 and 2 workers, and the quickstart's wall time.

    python benchmarks/bench_tournament.py [--games 2000] [--batched-games 20000]

Runs the quickstart players (a mixed table of embedding agents) through the runner into
temporary folders, with the local executor and with process pools of 1 and 2 workers (the
batched engine on more games: it plays a thousand in a tenth of a second, so that start-up
does not hide how it scales), prints games/s and the speed-up of 2 workers over 1 (the play
phase as the runner times it: playing, summarising each chunk where it was played, writing
its parts), checks that the records are the same, then times the whole `dixit-lab run
experiments/quickstart.yaml` command (imports, games, tables, ratings, report).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from dixit_lab.records.files import games_file, open_text
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000, help="reference engine")
    parser.add_argument("--batched-games", type=int, default=20000)
    args = parser.parse_args()
    data = yaml.safe_load((ROOT / "experiments" / "quickstart.yaml").read_text())
    data["games"] = args.games
    outputs = {}
    print("# the quickstart table (5 embedding agents, classic)")
    print(f"{'engine':<10} {'games':>7} {'executor':<14} {'workers':>7} {'games/s':>8} "
          f"{'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for engine in ("reference", "batched"):
            games = args.games if engine == "reference" else args.batched_games
            config = parse_config({**data, "engine": engine, "games": games})
            speeds = {}
            for label, kind, workers in (("local", "local", 1), ("process pool", "process", 1),
                                         ("process pool", "process", 2)):
                folder = Path(tmp) / f"{engine}-{kind}{workers}"
                result = run_experiment(config, folder, executor=kind, workers=workers,
                                        show_progress=False, write_outputs=False)
                with open_text(games_file(folder)) as handle:
                    outputs[(engine, kind, workers)] = handle.read()
                speeds[(kind, workers)] = result.games_per_second
                print(f"{engine:<10} {games:>7} {label:<14} {workers:>7} "
                      f"{result.games_per_second:>8.0f} {result.wall_seconds:>8.2f}")
            print(f"{engine}: 2 workers {speeds[('process', 2)] / speeds[('process', 1)]:.2f}x "
                  f"one worker (target >= 1.6x)")
        identical = all(len({v for (e, *_), v in outputs.items() if e == engine}) == 1
                        for engine in ("reference", "batched"))
        print(f"records identical across executors and worker counts: {identical} (the two "
              f"engines' records are compared in tests/engine/test_batched.py)")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run",
                        str(ROOT / "experiments" / "quickstart.yaml"), "--out",
                        str(Path(tmp) / "quickstart"), "--quiet"], check=True,
                       capture_output=True)
        print(f"quickstart command, end to end: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
