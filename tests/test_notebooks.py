"""The student notebooks: each runs top to bottom without an error, and none is committed with
outputs.

Every notebook runs in a fresh ``python3`` kernel whose working directory (and ``TMPDIR``) is
pytest's temporary folder, so the results folders the notebooks create, and anything a notebook
writes by mistake, land there and not in the repository.
``pytest tests/test_notebooks.py --durations=0`` shows how long each notebook takes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.optional import import_or_skip

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = ("01_rules_and_scoring", "02_perception", "03_tournament", "04_ambiguity",
            "05_environment")
REQUIRES = {"05_environment": ("pettingzoo", "gymnasium")}  # the optional packages it needs
CELL_TIMEOUT = 180  # seconds per cell; each notebook takes well under a minute in total


def test_the_notebooks_are_there():
    assert [path.stem for path in NOTEBOOKS] == list(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    dirty = [index for index, cell in enumerate(notebook["cells"])
             if cell["cell_type"] == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} have outputs or execution counts; clear "
                       f"them before committing (e.g. jupyter nbconvert --clear-output "
                       f"--inplace {path.relative_to(REPO)})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    nbformat = import_or_skip("nbformat")
    nbclient = import_or_skip("nbclient")
    import_or_skip("ipykernel")
    for package in REQUIRES.get(path.stem, ()):
        pytest.importorskip(package, reason=f"{path.name} needs {package} (pip install -e "
                            f"'.[env]')")
    # the kernel imports the project from this checkout even if it is not installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebooks' tempfile.mkdtemp() folders
    before = sorted(p.name for p in NOTEBOOK_DIR.iterdir())
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the traceback, on the first error
    assert sorted(p.name for p in NOTEBOOK_DIR.iterdir()) == before, (
        f"{path.name} wrote into {NOTEBOOK_DIR}; write results to tempfile.mkdtemp()")
