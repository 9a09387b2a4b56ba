"""How long each install path takes, end to end, outside the clone: ``python -m build`` (the
sdist, then the wheel from it), a fresh virtual environment with the core dependencies from
the package index, then for the wheel, the sdist and a ``git+file://`` of the clone: ``pip
install --no-deps``, ``dixit-lab run quickstart`` and ``dixit-lab simulate`` from an empty
folder. Prints each step's seconds, the wheel's size and the environment's size.

    python benchmarks/bench_install.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.packaging_support import (
    REPO,
    Timings,
    build,
    dixit_lab,
    folder_bytes,
    fresh_venv,
    install,
    uninstall,
)


def main() -> None:
    timings = Timings()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wheel, sdist = build(root / "dist", timings)
        python = fresh_venv(root / "venv", timings)
        print(f"wheel: {wheel.name} {wheel.stat().st_size / 1e6:.1f} MB; sdist "
              f"{sdist.stat().st_size / 1e6:.1f} MB")
        for label, target in (("wheel", str(wheel)), ("sdist", str(sdist)),
                              ("git+file", f"git+file://{REPO}")):
            install(python, target, label, timings)
            if label == "wheel":
                print(f"environment with the wheel (no pip, no compiled files): "
                      f"{folder_bytes(root / 'venv') / 1e6:.0f} MB")
            folder = root / f"run-{label}"
            folder.mkdir()
            for args in (["run", "quickstart", "--quiet"], ["simulate", "--games", "20"]):
                start = time.perf_counter()
                dixit_lab(python, args, folder, root / "home")
                timings.steps[f"{label}: dixit-lab {args[0]}"] = time.perf_counter() - start
            uninstall(python)
    for step, seconds in timings.steps.items():
        print(f"{step}: {seconds:.1f} s")


if __name__ == "__main__":
    main()
