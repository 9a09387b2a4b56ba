"""The code stays clean: ruff and mypy over the package (each skips, with a reason, when the
tool is not installed; CI's full install has both)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _module_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@pytest.mark.skipif(not _module_available("mypy"), reason="mypy is not installed ([dev])")
def test_mypy_finds_no_type_errors_in_the_package():
    result = subprocess.run([sys.executable, "-m", "mypy", "dixit_lab"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.skipif(shutil.which("ruff") is None and not _module_available("ruff"),
                    reason="ruff is not installed ([dev])")
def test_ruff_finds_nothing():
    command = ["ruff"] if shutil.which("ruff") else [sys.executable, "-m", "ruff"]
    result = subprocess.run([*command, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
