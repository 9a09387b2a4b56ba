"""Fingerprints of every shipped experiment: the SHA-256 of each run's games, decompressed
(every point of a sweep), with the games capped so that the whole check takes a minute or two.

    python benchmarks/check_shipped.py [--games 60] > before.txt
    (refactor)
    python benchmarks/check_shipped.py [--games 60] | diff before.txt -

A refactor must leave every line unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import yaml

from dixit_lab.experiment import ConfigError, expand_sweep, parse_config
from dixit_lab.record_files import games_file, open_records
from dixit_lab.runner import run_experiment
from dixit_lab.seats import GameFailed

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="games per run (at most)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "experiments").glob("*.yaml")):
            data = yaml.safe_load(path.read_text())
            data.pop("tune", None)
            data["games"] = min(int(data["games"]), args.games)
            data["executor"] = {"kind": "local"}
            if data.get("sweep"):
                points = [(f"[{index}]", config) for index, _, config in
                          expand_sweep(data, str(path))]
            else:
                points = [("", parse_config(data, str(path)))]
            for label, config in points:
                folder = Path(tmp) / f"{path.stem}{label}"
                try:
                    run_experiment(config, folder, show_progress=False, write_outputs=False)
                except (ConfigError, GameFailed) as error:  # played by a person, or a
                    # seat needs a server (a VLM endpoint) that is not running here
                    print(f"{path.stem}{label or ''}: not run ({error})", flush=True)
                    continue
                with open_records(games_file(folder)) as games:  # .jsonl or .jsonl.zst
                    digest = hashlib.sha256(games.read()).hexdigest()
                print(f"{path.stem}{label or ''}: {digest[:16]}", flush=True)


if __name__ == "__main__":
    main()
