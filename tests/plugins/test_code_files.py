"""Where an import string's code lives (found, never imported) and the digests of files and
folders that a results folder records of it."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from dixit_lab.plugins.code_files import (
    import_string_paths,
    module_paths,
    package_digest,
    tree_digest,
)


def test_a_file_s_digest_is_its_sha256_and_a_folder_s_follows_every_file(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "sub" / "rules.py").write_text("B = 2\n")
    (tmp_path / "pkg" / "weights.bin").write_bytes(b"\0" * 10)
    assert tree_digest(tmp_path / "pkg" / "__init__.py") == hashlib.sha256(b"A = 1\n").hexdigest()
    assert tree_digest(tmp_path / "missing") is None
    folder = tree_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__").mkdir()  # byte code: left out
    (tmp_path / "pkg" / "__pycache__" / "x.pyc").write_bytes(b"compiled")
    assert tree_digest(tmp_path / "pkg") == folder
    python_only = tree_digest(tmp_path / "pkg", ".py")
    (tmp_path / "pkg" / "weights.bin").write_bytes(b"\1" * 10)
    assert tree_digest(tmp_path / "pkg") != folder  # any file of a folder
    assert tree_digest(tmp_path / "pkg", ".py") == python_only  # but the suffix's only
    (tmp_path / "pkg" / "sub" / "rules.py").write_text("B = 3\n")
    assert tree_digest(tmp_path / "pkg", ".py") != python_only
    changed = tree_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "sub" / "rules.py").rename(tmp_path / "pkg" / "sub" / "other.py")
    assert tree_digest(tmp_path / "pkg") != changed  # a renamed file too


def test_an_import_string_s_code_is_found_without_importing_it(tmp_path, monkeypatch):
    (tmp_path / "agents_here").mkdir()
    (tmp_path / "agents_here" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (tmp_path / "single.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert import_string_paths("agents_here.deep.module:Mine") == (
        "package", [(tmp_path / "agents_here").resolve()])
    assert "agents_here" not in sys.modules  # found, never run
    assert import_string_paths("single:X") == ("package", [(tmp_path / "single.py").resolve()])
    assert import_string_paths("sub/mine.py:Mine") == (  # from the current folder, even missing
        "file", [(tmp_path / "sub" / "mine.py").resolve()])
    assert import_string_paths("dixit_lab_agents.literal:LiteralAgent") is None  # own code
    assert import_string_paths("literal") is None
    assert import_string_paths("hf-hub:org/model") is None  # a parameter, not code
    assert import_string_paths("no_such_module_here:X") == ("package", [])
    assert module_paths("sys") == []  # built in: no file


def test_the_package_digest_covers_its_own_python_sources():
    digest = hashlib.sha256()
    for name, folder in (("dixit_lab", "dixit_lab"), ("dixit_lab_agents", "agents")):
        root = Path(__file__).resolve().parents[2] / folder
        lines = sorted((path.relative_to(root).as_posix(),
                        hashlib.sha256(path.read_bytes()).hexdigest())
                       for path in root.rglob("*.py") if "__pycache__" not in path.parts)
        inner = hashlib.sha256("".join(f"{rel}\0{sha}\n" for rel, sha in lines).encode())
        digest.update(f"{name}\0{inner.hexdigest()}\n".encode())
    assert package_digest() == digest.hexdigest()
