"""Tournament throughput with 1 and 2 workers, and the quickstart's wall time.

    python benchmarks/bench_tournament.py [--games 2000]

Runs the quickstart players (a mixed table of embedding agents) through the runner into
temporary folders, with the local executor and with process pools of 1 and 2 workers, checks
that the records are byte-identical, then times the whole `dixit-lab run
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

from dixit_lab.experiment import parse_config
from dixit_lab.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    args = parser.parse_args()
    data = yaml.safe_load((ROOT / "experiments" / "quickstart.yaml").read_text())
    data["games"] = args.games
    outputs = {}
    print(f"# {args.games} games of the quickstart table (5 embedding agents, classic)")
    print(f"{'engine':<10} {'executor':<14} {'workers':>7} {'games/s':>8} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for engine in ("reference", "batched"):
            config = parse_config({**data, "engine": engine})
            for label, kind, workers in (("local", "local", 1), ("process pool", "process", 1),
                                         ("process pool", "process", 2)):
                folder = Path(tmp) / f"{engine}-{kind}{workers}"
                result = run_experiment(config, folder, executor=kind, workers=workers,
                                        show_progress=False, write_outputs=False)
                outputs[(engine, kind, workers)] = (folder / "games.jsonl").read_bytes()
                print(f"{engine:<10} {label:<14} {workers:>7} {result.games_per_second:>8.0f} "
                      f"{result.wall_seconds:>8.2f}")
        identical = len(set(outputs.values())) == 1
        print(f"records identical across engines, executors and worker counts: {identical}")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run",
                        str(ROOT / "experiments" / "quickstart.yaml"), "--out",
                        str(Path(tmp) / "quickstart"), "--quiet"], check=True,
                       capture_output=True)
        print(f"quickstart command, end to end: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
