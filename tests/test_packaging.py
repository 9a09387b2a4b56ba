"""The package as a user installs it: ``python -m build`` gives an sdist and a wheel (built from
the sdist) that ``twine check`` passes; the wheel carries the data the main job needs (decks,
the clue bank, the shipped embeddings with the clue vectors once, the listener models, the
example configs) and stays under 25 MB; and the wheel, the sdist and a ``git+file://`` of the
clone, each installed into a fresh virtual environment outside the clone with only the core
dependencies, run the quickstart (by name, and from a copy) and ``dixit-lab simulate`` from an
empty folder.

Slow (minutes: it builds, and installs the core dependencies from the package index): marked
``install``, run by the full suite (``scripts/test.sh --full``, CI) and skipped otherwise
(``DIXIT_LAB_INSTALL_TESTS=1`` runs it).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dixit_lab._version import __version__
from tests.packaging_support import (
    REPO,
    Timings,
    build,
    dixit_lab,
    folder_bytes,
    fresh_venv,
    install,
    run,
    uninstall,
)

pytestmark = pytest.mark.install

MAX_WHEEL_BYTES = 25_000_000
INFO = f"dixit_lab-{__version__}.dist-info"
README = (REPO / "README.md").read_text(encoding="utf-8")
TIMINGS = Timings()


@pytest.fixture(scope="module", autouse=True)
def _print_the_times():
    """Each step's time, printed at the end (``pytest -s``; benchmarks/bench_install.py)."""
    yield
    for step, seconds in TIMINGS.steps.items():
        print(f"\n{step}: {seconds:.1f} s", end="")


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    pytest.importorskip("build", reason="the build tool is not installed ([dev])")
    return build(tmp_path_factory.mktemp("dist"), TIMINGS)


@pytest.fixture(scope="module")
def wheel_files(dists) -> dict[str, bytes]:
    with zipfile.ZipFile(dists[0]) as wheel:
        return {name: wheel.read(name) for name in wheel.namelist()}


def _tracked(folder: str) -> list[str]:
    done = subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def test_twine_finds_the_metadata_complete(dists) -> None:
    pytest.importorskip("twine", reason="twine is not installed ([dev])")
    run([sys.executable, "-m", "twine", "check", "--strict", *dists])


def test_the_wheel_carries_the_data_and_examples_once_and_stays_lean(dists,
                                                                      wheel_files) -> None:
    size = dists[0].stat().st_size
    assert size < MAX_WHEEL_BYTES, f"the wheel is {size / 1e6:.1f} MB"
    names = set(wheel_files)
    data = {name.removeprefix("dixit_lab/_data/") for name in names
            if name.startswith("dixit_lab/_data/")}
    for deck in ("dreams", "dreams-quest"):
        assert f"decks/{deck}/cards.csv" in data
        assert sum(n.startswith(f"decks/{deck}/images/") for n in data) == 84
    assert {"clues/default.csv", "listener_models/softmax-conse.json"} <= data
    clue_vectors = sorted(n for n in data if re.fullmatch(r"embeddings/[^/]+/clues-.*\.npz", n))
    assert len(clue_vectors) == 1 and clue_vectors[0].startswith("embeddings/texts-")
    for embedder in ("conse", "ridge", "text"):
        assert any(re.fullmatch(rf"embeddings/{embedder}-\w+/deck-dreams\.npz", n) for n in data)
    # the same bytes as the repository's data/ and experiments/, and nothing else
    for folder, prefix in (("data", "dixit_lab/_data/"), ("experiments", "dixit_lab/_examples/")):
        tracked = {path.removeprefix(folder + "/"): path for path in _tracked(folder)}
        packed = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
        assert packed == set(tracked), set(tracked) ^ packed
        for relative, path in tracked.items():
            assert hashlib.sha256(wheel_files[prefix + relative]).digest() == \
                hashlib.sha256((REPO / path).read_bytes()).digest(), path
    tops = {name.split("/")[0] for name in names}
    assert tops == {"dixit_lab", "dixit_lab_agents", INFO}, tops
    assert "dixit_lab/py.typed" in names and "dixit_lab/web/static/play.html" in names
    metadata = wheel_files[f"{INFO}/METADATA"].decode()
    assert "License-Expression: MIT" in metadata and "Classifier: " in metadata
    assert f"{INFO}/licenses/LICENSE" in names


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("venv")
    assert not folder.is_relative_to(REPO)
    return fresh_venv(folder / "venv", TIMINGS)


def _quickstart_table() -> list[str]:
    shown = re.findall(r"^```\n(\$ .*?)^```", README, flags=re.M | re.S)[0].splitlines()
    return shown[2:]  # the command and its timing line first


@pytest.mark.parametrize("how", ["wheel", "sdist", "git+file"])
def test_installed_outside_the_clone_the_main_job_runs(how, dists, venv_python,
                                                       tmp_path) -> None:
    target = {"wheel": str(dists[0]), "sdist": str(dists[1]),
              "git+file": f"git+file://{REPO}"}[how]
    install(venv_python, target, how, TIMINGS)
    try:
        where = run([venv_python, "-c", "import dixit_lab, dixit_lab.bundled as b; "
                     "print(dixit_lab.__file__, b.data_root(), b.source_checkout())"],
                    cwd=tmp_path).split()
        assert "site-packages" in where[0] and where[1].endswith("dixit_lab/_data")
        assert where[2] == "None"
        empty = tmp_path / "empty"
        empty.mkdir()
        home = tmp_path / "home"
        printed = dixit_lab(venv_python, ["run", "quickstart", "--quiet"], empty,
                            home).splitlines()
        assert printed[0].startswith("quickstart: 1000 games"), printed[0]
        assert printed[1:] == _quickstart_table(), "the quickstart's table differs"
        assert (empty / "results" / "quickstart" / "report.md").is_file()
        if how == "wheel":  # the README's size of this environment, and a copy of the example
            size = folder_bytes(venv_python.parent.parent) / 1e6
            said = re.search(r"dependencies and the package take about (\d+) MB",
                             " ".join(README.split()))
            assert said, "the README no longer says the size of a core install"
            print(f"\nenvironment with the wheel: {size:.0f} MB", end="")
            assert 0.75 < int(said.group(1)) / size < 1.25, (said.group(0), size)
            dixit_lab(venv_python, ["examples", "copy", "quickstart", "mine"], empty, home)
            copied = dixit_lab(venv_python, ["run", "mine/quickstart.yaml", "--quiet",
                                             "--out", "copied"], empty, home).splitlines()
            assert copied[2:] == printed[2:]
        simulated = dixit_lab(venv_python, ["simulate", "--players", "4", "--games", "20",
                                            "--agents", "literal,softmax,pragmatic,random"],
                              empty, home)
        assert "games        20" in simulated, simulated
    finally:
        uninstall(venv_python)

