"""Building the package and installing it into a fresh environment outside the clone: the steps
of tests/test_packaging.py, timed (benchmarks/bench_install.py prints the times)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: what a fresh environment must not inherit: the clone on the path, another data folder
_INHERITED = ("PYTHONPATH", "DIXIT_LAB_DATA", "VIRTUAL_ENV", "PYTHONHOME")


@dataclass
class Timings:
    """Seconds per step, in the order they ran."""

    steps: dict[str, float] = field(default_factory=dict)

    def timed(self, name: str, command: list[str], **kwargs: object) -> str:
        start = time.perf_counter()
        out = run(command, **kwargs)  # type: ignore[arg-type]
        self.steps[name] = self.steps.get(name, 0.0) + time.perf_counter() - start
        return out


def clean_env(home: Path | None = None) -> dict[str, str]:
    """This process's environment without the clone or another data folder on it, with its
    own embedding cache (nothing computed before is reused)."""
    env = {key: value for key, value in os.environ.items() if key not in _INHERITED}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if home is not None:
        env["DIXIT_LAB_CACHE"] = str(home / "cache")
    return env


def run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 900) -> str:
    """Run ``command``; its output, or an AssertionError with the end of it."""
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} failed ({done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def core_dependencies() -> list[str]:
    """The package's own requirements (no extra), as pyproject.toml states them."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def build(out: Path, timings: Timings) -> tuple[Path, Path]:
    """``python -m build``: the sdist, then the wheel built from the sdist."""
    timings.timed("build (sdist, then the wheel from it)",
                  [sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out)
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, (wheels, sdists)
    return wheels[0], sdists[0]


def pip(python: Path) -> list[str]:
    """This process's pip, working on the environment of ``python`` (a fresh environment
    needs no pip of its own: ``venv --without-pip`` saves the half minute of ensurepip)."""
    return [sys.executable, "-m", "pip", "--python", str(python)]


def fresh_venv(folder: Path, timings: Timings) -> Path:
    """A clean virtual environment (no system site-packages) with the core dependencies from
    the package index; its python. ``--no-compile``: the modules a command imports are
    compiled as they are imported, not all of SciPy's and pandas' ahead (minutes here)."""
    timings.timed("venv", [sys.executable, "-m", "venv", "--without-pip", folder])
    python = folder / "bin" / "python"
    timings.timed("core dependencies", [*pip(python), "install", "-q", "--no-compile",
                                        *core_dependencies()])
    return python


def install(python: Path, target: str, label: str, timings: Timings) -> None:
    """``pip install --no-deps`` of a wheel, an sdist or a ``git+file://`` URL (the core
    dependencies are there already)."""
    timings.timed(f"install {label}", [*pip(python), "install", "-q", "--no-deps",
                                       "--force-reinstall", target])


def uninstall(python: Path) -> None:
    run([*pip(python), "uninstall", "-q", "-y", "dixit-lab"])


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` without Python's compiled files (which grow
    with what has been imported)."""
    return sum(path.stat().st_size for path in folder.rglob("*")
               if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts)


def dixit_lab(python: Path, args: list[str], folder: Path, home: Path) -> str:
    """The installed ``dixit-lab`` command, run in ``folder``."""
    command = python.parent / "dixit-lab"
    return run([command, *args], cwd=folder, env=clean_env(home), timeout=600)
