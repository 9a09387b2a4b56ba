"""Regenerate the golden replays (only when a change alters games on purpose). They keep their
games as plain ``games.jsonl`` (``records: jsonl``), so that a change shows in a text diff."""

from __future__ import annotations

import shutil
from pathlib import Path

from dixit_lab.run.experiment import load_config
from dixit_lab.run.runner import run_experiment

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    for path in sorted(HERE.glob("*.yaml")):
        folder = HERE / path.stem
        shutil.rmtree(folder, ignore_errors=True)
        config = load_config(path).model_copy(update={"records": "jsonl"})
        run_experiment(config, folder, show_progress=False, write_outputs=False)
        for extra in folder.iterdir():  # what a replay reads: the config and the games
            if extra.name not in ("config.yaml", "games.jsonl"):
                shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        print(f"wrote {folder}")
