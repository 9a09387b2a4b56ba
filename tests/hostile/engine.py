"""The engine of the attack tests: ``dixit-lab run CONFIG --out FOLDER`` without the tables and
the report (seconds of imports that no attack needs). With ``DIXIT_TEST_RSS`` set, the engine's
peak resident memory (KiB, its own process only) is written to that file when it ends."""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

from dixit_lab.run.experiment import load_config
from dixit_lab.run.runner import run_experiment

if __name__ == "__main__":
    try:
        run_experiment(load_config(sys.argv[1]), sys.argv[2], show_progress=False,
                       write_outputs=False)
    finally:
        if os.environ.get("DIXIT_TEST_RSS"):
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            Path(os.environ["DIXIT_TEST_RSS"]).write_text(str(peak))
