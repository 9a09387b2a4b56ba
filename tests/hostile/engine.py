"""The engine of the attack tests: ``dixit-lab run CONFIG --out FOLDER`` without the tables and
the report (seconds of imports that no attack needs)."""

from __future__ import annotations

import sys

from dixit_lab.run.experiment import load_config
from dixit_lab.run.runner import run_experiment

if __name__ == "__main__":
    run_experiment(load_config(sys.argv[1]), sys.argv[2], show_progress=False,
                   write_outputs=False)
