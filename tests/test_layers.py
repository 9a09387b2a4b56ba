"""The layers of docs/architecture.md are a contract: import-linter checks the code against
``[tool.importlinter]`` in pyproject.toml, and the table in the docs states the same layers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _contracts() -> list[dict]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["tool"]["importlinter"]["contracts"]


def _docs_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # no header
    layers = []
    for row in rows:
        cell = row.split("|")[2]
        names = re.findall(r"`([\w.]+/|[\w]+\.py)`", cell)
        layers.append({"dixit_lab." + name.removesuffix("/").removesuffix(".py")
                       for name in names})
    return layers


def test_the_docs_table_states_the_contracts_layers_in_order():
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    expected = [{part.strip() for part in layer.split("|")} for layer in layers]
    assert _docs_layers() == expected


def test_every_package_and_module_of_dixit_lab_is_in_a_layer():
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    named = {part.strip() for layer in layers for part in layer.split("|")}
    found = {f"dixit_lab.{p.name}" for p in (ROOT / "dixit_lab").iterdir()
             if p.is_dir() and (p / "__init__.py").is_file()}
    found |= {f"dixit_lab.{p.stem}" for p in (ROOT / "dixit_lab").glob("*.py")
              if not p.stem.startswith("_")}
    assert found == named


def test_every_package_of_dixit_lab_is_built_into_the_wheel():
    """setuptools' package list is written out: a package missing from it is missing from every
    install (the wheel ran into ModuleNotFoundError: dixit_lab.isolation after its move)."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        listed = set(tomllib.load(handle)["tool"]["setuptools"]["packages"])
    found = {f"dixit_lab.{p.name}" for p in (ROOT / "dixit_lab").iterdir()
             if p.is_dir() and (p / "__init__.py").is_file()}
    assert found <= listed, f"not built into the wheel: {sorted(found - listed)}"


def test_at_most_twelve_modules_directly_in_the_package():
    modules = sorted(p.name for p in (ROOT / "dixit_lab").glob("*.py"))
    assert len(modules) <= 12, modules


@pytest.mark.skipif(shutil.which("lint-imports") is None
                    and not Path(sys.executable).with_name("lint-imports").exists()
                    and os.environ.get("CI") != "true",  # in CI a missing tool fails
                    reason="import-linter is not installed ([dev])")
def test_the_import_contracts_hold():
    command = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "broken" not in result.stdout.split("Contracts:")[-1].replace("0 broken", "")
