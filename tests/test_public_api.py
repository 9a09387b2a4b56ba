"""The top-level API (dixit_lab/__init__.py, docs/api.md): every exported name resolves, the
docs' table lists exactly them, its example runs, and `import dixit_lab` stays light."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import dixit_lab

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"


def test_every_exported_name_resolves():
    missing = [name for name in dixit_lab.__all__ if getattr(dixit_lab, name, None) is None]
    assert missing == []


def test_an_unknown_name_is_an_attribute_error():
    try:
        dixit_lab.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("dixit_lab.no_such_name resolved")


def test_the_docs_table_lists_exactly_the_exported_names():
    table = [line for line in API_DOC.read_text().splitlines() if line.startswith("| `")]
    documented = {name for line in table for name in re.findall(r"`(\w+)`", line.split("|")[1])}
    exported = set(dixit_lab.__all__) - {"__version__"}
    assert documented == exported


def test_importing_the_package_imports_no_experiment_machinery_or_optional_stack():
    code = ("import sys, dixit_lab; heavy = [m for m in ('dixit_lab.run', 'dixit_lab.env', "
            "'torch', 'pettingzoo', 'pyarrow') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_the_docs_example_runs(tmp_path, monkeypatch):
    example = API_DOC.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(example, str(API_DOC), "exec"), namespace)  # the docs' own example
    assert (tmp_path / "results" / "demo" / "report.md").exists()
