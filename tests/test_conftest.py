"""The suite's own settings (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import SERIAL_FILES, TESTS


def test_every_timing_sensitive_file_named_exists():
    missing = sorted(name for name in SERIAL_FILES if not (TESTS / name).is_file())
    assert not missing, f"tests/conftest.py SERIAL_FILES names files that do not exist: {missing}"


def _collected(marker: str, path: str) -> int:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", marker,
                           "-p", "no:cacheprovider", path], capture_output=True, text=True,
                          cwd=TESTS.parent)
    return sum(1 for line in done.stdout.splitlines() if "::" in line)


def test_the_serial_marker_splits_the_suite_as_scripts_test_sh_runs_it():
    assert _collected("serial", "tests/embeddings/test_cache.py") > 0
    assert _collected("not serial", "tests/embeddings/test_cache.py") == 0
    assert _collected("serial", "tests/core") == 0 < _collected("not serial", "tests/core")
