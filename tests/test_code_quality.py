"""The code stays clean: ruff and mypy over the package (each skips, with a reason, when the
tool is not installed; CI's full install has both)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _module_available(name: str) -> bool:
    """Whether the tool is installed; in CI (``CI=true``) it must be, so the test runs and a
    missing tool fails it instead of skipping it."""
    import importlib.util

    return importlib.util.find_spec(name) is not None or os.environ.get("CI") == "true"


@pytest.mark.skipif(not _module_available("mypy"), reason="mypy is not installed ([dev])")
def test_mypy_finds_no_type_errors_in_the_package_and_the_built_in_agents():
    result = subprocess.run([sys.executable, "-m", "mypy", "dixit_lab", "agents"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.skipif(shutil.which("ruff") is None and not _module_available("ruff"),
                    reason="ruff is not installed ([dev])")
def test_ruff_finds_nothing():
    command = ["ruff"] if shutil.which("ruff") else [sys.executable, "-m", "ruff"]
    result = subprocess.run([*command, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


def _imports(module: str, path: Path, modules: set[str]) -> set[str]:
    import ast

    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names if a.name in modules)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                found.update(name for name in names if name in modules)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8")))
    return found - {module}


def test_no_import_circles_not_even_through_imports_inside_functions_or_for_types():
    paths = {}
    for path in (ROOT / "dixit_lab").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        paths[name.removesuffix(".__init__")] = path
    graph = {name: _imports(name, path, set(paths)) for name, path in paths.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                raise AssertionError("import circle: " + " -> ".join(
                    [*trail[trail.index(target):], target]))
            if target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


#: a module past this many lines is a prompt to look for a second job (docs/architecture.md,
#: "Long modules"), not a limit: one thought is never split to meet a number
LONG_MODULE = 600


def test_every_long_module_says_why_it_is_one_job():
    """Files with one job: a module of the package or of the built-in agents past
    LONG_MODULE lines is named in docs/architecture.md's "Long modules", with why it holds
    one job (or it is split by job)."""
    sizes = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
             for folder in ("dixit_lab", "agents") for path in (ROOT / folder).rglob("*.py")}
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = architecture.split("## Long modules", 1)[1].split("\n## ", 1)[0] \
        if "## Long modules" in architecture else ""
    long = {path: n for path, n in sizes.items() if n > LONG_MODULE}
    assert {path: n for path, n in long.items() if f"`{path}`" not in listed} == {}
