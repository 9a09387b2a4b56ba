"""Fingerprints of every shipped experiment: the SHA-256 of each run's ``games.jsonl`` (every
point of a sweep), with the games capped so that the whole check takes a minute or two.

    python benchmarks/check_shipped.py [--games 60] [--skip NAMES] > before.txt
    (refactor)
    python benchmarks/check_shipped.py [--games 60] | diff before.txt -

A refactor must leave every line unchanged. Configs that need a person (``agent: human``) or
a model server (model agents) are listed as skipped. The games are compared decompressed
(``games.jsonl.zst`` and ``games.jsonl`` give the same fingerprint).
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import yaml

from dixit_lab.errors import UserError
from dixit_lab.isolation.seats import seat_info
from dixit_lab.records.files import games_file, open_records
from dixit_lab.run.experiment import expand_sweep, parse_config
from dixit_lab.run.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="games per run (at most)")
    parser.add_argument("--skip", default="", metavar="NAMES",
                        help="configs to leave out, by name, comma-separated (e.g. the 72 "
                             "points of theory_of_mind_table, which take the longest)")
    args = parser.parse_args()
    skipped = {name.strip() for name in args.skip.split(",") if name.strip()}
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "experiments").glob("*.yaml")):
            if path.stem in skipped:
                print(f"{path.stem}: skipped (--skip)")
                continue
            data = yaml.safe_load(path.read_text())
            data.pop("tune", None)
            data["games"] = min(int(data["games"]), args.games)
            data["executor"] = {"kind": "local"}
            try:  # a config this install cannot play (play.yaml without torch) is said
                if data.get("sweep"):
                    points = [(f"[{index}]", config) for index, _, config in
                              expand_sweep(data, str(path))]
                else:
                    points = [("", parse_config(data, str(path)))]
            except UserError as error:
                print(f"{path.stem}: skipped ({error})")
                continue
            for label, config in points:
                if any(seat_info(spec).untrusted for _, spec in config.seats()):
                    print(f"{path.stem}{label}: skipped (needs a person or a model server)")
                    continue
                folder = Path(tmp) / f"{path.stem}{label}"
                run_experiment(config, folder, show_progress=False, write_outputs=False)
                with open_records(games_file(folder)) as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
                print(f"{path.stem}{label or ''}: {digest[:16]}", flush=True)


if __name__ == "__main__":
    main()
