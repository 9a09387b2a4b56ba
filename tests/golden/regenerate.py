"""Regenerate the golden replays (only when a change alters games on purpose)."""

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
        run_experiment(load_config(path), folder, show_progress=False, write_outputs=False)
        print(f"wrote {folder}")
