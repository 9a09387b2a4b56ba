"""The one place that finds the bundled data and examples (dixit_lab/bundled.py), and the
build's map of the repository's data/ and experiments/ into the package: every file there is
in a package-data pattern, so nothing the main job needs is left out of a wheel."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dixit_lab import bundled
from dixit_lab.core.cards import available_decks
from dixit_lab.core.clues import ClueBank

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _tracked(folder: str) -> list[str]:
    done = subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return [line.removeprefix(folder + "/") for line in done.stdout.splitlines()]


def test_a_checkout_reads_its_own_data_and_examples(monkeypatch) -> None:
    monkeypatch.delenv("DIXIT_LAB_DATA", raising=False)
    assert bundled.source_checkout() == REPO
    assert bundled.data_root() == REPO / "data"
    assert bundled.examples_root() == REPO / "experiments"
    assert bundled.example_names() == sorted(p.stem for p in (REPO / "experiments").glob("*.yaml"))
    assert bundled.example_path("quickstart") == REPO / "experiments" / "quickstart.yaml"
    assert bundled.example_path("quickstart.yaml") == bundled.example_path("quickstart")


def test_the_data_override_moves_data_only(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DIXIT_LAB_DATA", str(tmp_path))
    assert bundled.data_path("decks") == tmp_path / "decks"
    assert available_decks() == []
    assert bundled.examples_root() == REPO / "experiments"


@pytest.mark.parametrize("name", ["nope", "../pyproject", "quickstart/x"])
def test_an_unknown_example_names_the_ones_there_are(name: str) -> None:
    with pytest.raises(bundled.UnknownExampleError, match=r"the examples are: .*quickstart"):
        bundled.example_path(name)


def test_every_data_file_and_example_is_mapped_into_the_package() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert setuptools["package-dir"]["dixit_lab._data"] == "data"
    assert setuptools["package-dir"]["dixit_lab._examples"] == "experiments"
    assert {"dixit_lab._data", "dixit_lab._examples"} <= set(setuptools["packages"])
    for package, folder in (("dixit_lab._data", "data"), ("dixit_lab._examples", "experiments")):
        patterns = setuptools["package-data"][package]
        left_out = [path for path in _tracked(folder)
                    if not any(fnmatch.fnmatchcase(path, pattern) and
                               path.count("/") == pattern.count("/") for pattern in patterns)]
        assert not left_out, f"{folder}/ files no package-data pattern ships: {left_out}"
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    assert {"graft data", "graft experiments"} <= set(manifest)


def test_the_clue_vectors_of_the_sentence_encoder_ship_once() -> None:
    files = sorted((REPO / "data" / "embeddings").glob("*/clues-*.npz"))
    assert [f.parent.name.split("-")[0] for f in files] == ["texts"], files


def test_the_data_is_found_from_any_working_folder(tmp_path) -> None:
    code = ("from dixit_lab.core.cards import available_decks, load_deck\n"
            "from dixit_lab.core.clues import ClueBank\n"
            "from dixit_lab.listener.fit import resolve_model_path\n"
            "assert available_decks() == ['dreams', 'dreams-quest'], available_decks()\n"
            "assert len(load_deck('dreams')) == 84 and len(ClueBank.load('default')) > 1000\n"
            "assert resolve_model_path('softmax-conse').is_file()\n")
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, timeout=120)
    assert len(ClueBank.load("default")) > 1000
