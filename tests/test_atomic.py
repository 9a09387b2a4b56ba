"""Folders replaced whole (``rounds.parquet``): in one step where the system can swap two
paths, else in two renames that the next writer finishes if a kill came between them."""

from __future__ import annotations

import pytest

import dixit_lab.atomic as atomic
from dixit_lab.atomic import folder_staging, replace_folder, restore_folder


def contents(folder):
    return {p.name: p.read_text() for p in folder.iterdir()}


def leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))


@pytest.fixture(params=["exchange", "renames"])
def swap(request, monkeypatch):
    if request.param == "renames":  # a system or file system that cannot swap in one step
        monkeypatch.setattr(atomic, "_exchange", lambda first, second: False)
    return request.param


@pytest.mark.parametrize("before", ["a folder", "a file", "nothing"])
def test_a_folder_is_replaced_whole(tmp_path, swap, before):
    target = tmp_path / "rounds.parquet"
    if before == "a folder":
        target.mkdir()
        (target / "part-0.parquet").write_text("old")
        (target / "part-1.parquet").write_text("old")
    elif before == "a file":  # an older single-file table
        target.write_text("old")
    staging = folder_staging(target)
    (staging / "part-0.parquet").write_text("new")
    replace_folder(staging, target)
    assert contents(target) == {"part-0.parquet": "new"} and leftovers(tmp_path) == []


def test_this_machine_swaps_two_folders_in_one_step(tmp_path):
    """Linux's renameat2(RENAME_EXCHANGE), on the file system the tests write to."""
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / folder.name).write_text(folder.name)
    if atomic._renameat2() is None:
        pytest.skip("no renameat2 in this C library")
    assert atomic._exchange(first, second)
    assert contents(first) == {"b": "b"} and contents(second) == {"a": "a"}


def kill_state(tmp_path, moment: str):
    """The folder as a kill at ``moment`` of a replacement leaves it: which versions lie
    under which names."""
    names = {"while the new one was written": {"rounds.parquet": "old", ".new": None},
             "between the renames": {".old": "old", ".new": "new"},
             "after the swap": {"rounds.parquet": "new", ".new": "old"}}[moment]
    for name, text in names.items():
        folder = tmp_path / (name if name == "rounds.parquet" else f".rounds.parquet{name}")
        folder.mkdir()
        if text is not None:  # else half written: not a part yet
            (folder / "part-0.parquet").write_text(text)
    return tmp_path / "rounds.parquet"


@pytest.mark.parametrize(("moment", "kept"), [("while the new one was written", "old"),
                                              ("between the renames", "new"),
                                              ("after the swap", "new")])
def test_a_replacement_a_kill_stopped_leaves_one_whole_version(tmp_path, moment, kept):
    target = kill_state(tmp_path, moment)
    restore_folder(target)
    assert contents(target) == {"part-0.parquet": kept} and leftovers(tmp_path) == []
