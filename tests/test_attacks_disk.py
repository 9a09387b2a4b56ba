"""Attacks of a full disk, a quota or a read-only file system (issue 26): every write path
stops with one line ``FILE: reason`` naming the file it could not write (never a bare
``[Errno 28]``), and nothing already computed is lost: the saved parts resume, the games
file stays for `dixit-lab report`."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dixit_lab import atomic
from dixit_lab.cli.main import main
from tests.games_files import games_text

BASE = {"name": "disk", "seed": 8, "deck": "numbered-60", "players": ["random"] * 3,
        "games": 12, "executor": {"kind": "local", "chunk_size": 3}}
ERRORS = {errno.ENOSPC: "No space left on device", errno.EDQUOT: "Disk quota exceeded",
          errno.EROFS: "Read-only file system"}


def config_file(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**BASE, **changes}), encoding="utf-8")
    return path


def failing_fsync(monkeypatch, pattern: str, code: int) -> list[str]:
    """Make fsync fail with ``code`` (as a full disk reports delayed writes) for files whose
    name contains ``pattern``; returns the names it failed."""
    real = os.fsync
    failed: list[str] = []

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if pattern in Path(name).name:
            failed.append(name)
            raise OSError(code, os.strerror(code))  # no file name, as the kernel gives it
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    return failed


def one_line(capsys, *argv: str) -> str:
    """The command's error: one line, exit 2, no traceback (lines the run says before it, such
    as which engine plays a model's games, are not errors and are left out)."""
    code = main(list(argv))
    said = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in said if "error:" in line or "Traceback" in line]
    assert code == 2 and len(errors) == 1 and "Traceback" not in "\n".join(said), said
    return errors[0]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("code", list(ERRORS))
def test_a_full_disk_while_writing_the_tables_names_the_table(tmp_path, monkeypatch, capsys,
                                                             code):
    folder = tmp_path / "out"
    failed = failing_fsync(monkeypatch, "agents.csv", code)
    err = one_line(capsys, "run", str(config_file(tmp_path)), "--out", str(folder), "--quiet")
    assert failed and err.endswith(f"{folder / 'agents.csv'}: {ERRORS[code]}"), err
    monkeypatch.undo()  # space again: the games are there, report writes the tables
    assert main(["report", str(folder)]) == 0
    assert (folder / "agents.csv").is_file() and len(games_text(folder).splitlines()) == 12


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("code", list(ERRORS))
def test_a_full_disk_while_saving_a_chunk_keeps_the_saved_ones(tmp_path, monkeypatch, capsys,
                                                              code):
    folder = tmp_path / "out"
    failed = failing_fsync(monkeypatch, "games-0000006-0000008", code)
    err = one_line(capsys, "run", str(config_file(tmp_path)), "--out", str(folder), "--quiet")
    target = folder / "parts" / "games-0000006-0000008.jsonl.zst"
    assert failed and err.endswith(f"{target}: {ERRORS[code]}"), err
    saved = sorted(p.name for p in (folder / "parts").glob("games-*"))
    assert saved == ["games-0000000-0000002.jsonl.zst", "games-0000003-0000005.jsonl.zst"]
    monkeypatch.undo()
    assert main(["run", str(config_file(tmp_path)), "--out", str(folder), "--quiet"]) == 0
    clean = tmp_path / "clean"
    assert main(["run", str(config_file(tmp_path)), "--out", str(clean), "--quiet"]) == 0
    assert games_text(folder) == games_text(clean)


def limited(size: int) -> object:
    """A child process whose files may grow to ``size`` bytes (writes past it fail with
    EFBIG, as a full disk fails them with ENOSPC)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_a_file_that_cannot_grow_is_named_and_the_parts_resume(tmp_path):
    """A real failing write, from the kernel: the merged games file is over the limit."""
    config = config_file(tmp_path, games=300, executor={"kind": "local", "chunk_size": 30})
    folder = tmp_path / "out"
    command = [sys.executable, "-m", "dixit_lab.cli", "run", str(config), "--out",
               str(folder), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=limited(60_000),
                          timeout=300)
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1, err
    assert err.endswith(f"{folder / 'games.jsonl.zst'}: File too large"), err
    assert len(list((folder / "parts").glob("games-*"))) == 10  # every chunk still saved
    assert subprocess.run(command, capture_output=True, timeout=300).returncode == 0
    assert len(games_text(folder).splitlines()) == 300


def test_simulate_out_on_a_file_that_cannot_grow_is_named(tmp_path):
    out = tmp_path / "games.jsonl"
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "simulate", "--games", "40",
                           "--deck", "numbered-60", "--players", "3", "--out", str(out)],
                          capture_output=True, text=True, preexec_fn=limited(20_000),
                          timeout=300, env={**os.environ, "DIXIT_LAB_PROGRESS": "0"})
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and err and err[-1].endswith(f"{out}: File too large"), err
    assert not out.exists()  # no half file


def test_a_full_disk_while_storing_a_models_exchange_stops_the_run_naming_it(tmp_path,
                                                                          monkeypatch, capsys):
    """The exchange store (an append-only log) names its segment; the decision is no model's
    fault, and a run resumed with space again reuses what was stored: the games of a clean
    run."""
    pytest.importorskip("httpx")
    from dixit_lab.vlm import store as store_module
    from dixit_lab.vlm.stub import StubServer

    real = store_module.ExchangeStore._segment
    lines: list[int] = []

    class FullDisk:
        def __init__(self, handle):
            self.handle, self.name = handle, handle.name

        def write(self, text: str) -> int:
            lines.append(1)
            if len(lines) > 6:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # no file name
            return self.handle.write(text)

        def flush(self) -> None:
            self.handle.flush()

        def close(self) -> None:
            self.handle.close()

    monkeypatch.setattr(store_module.ExchangeStore, "_segment",
                        lambda self: FullDisk(real(self)))
    options = "timeout=5, backoff=0.01, http_retries=1, retries=1"
    with StubServer() as server:
        def config(folder: Path) -> Path:
            path = folder / "c.yaml"
            path.parent.mkdir(exist_ok=True)
            path.write_text(yaml.safe_dump({
                **BASE, "deck": "dreams", "games": 2, "rules": {"options": {"max_rounds": 2}},
                # a model seat is untrusted: its deals mix a secret, pinned here so that the
                # clean run deals what the resumed one did
                "deal_secret": "0123456789abcdef0123456789abcdef",
                "players": [{"name": "model", "agent": f"llm(model=good, base_url="
                                                       f"{server.base_url}, {options})"},
                            "random", "random"]}), encoding="utf-8")
            return path

        folder = tmp_path / "out"
        err = one_line(capsys, "run", str(config(tmp_path)), "--out", str(folder), "--quiet")
        segments = sorted((folder / "exchanges").glob("*.jsonl"))
        assert any(err.endswith(f"{s}: No space left on device") for s in segments), err
        assert sum(len(p.read_text().splitlines()) for p in segments) == 6  # kept
        monkeypatch.undo()
        assert main(["run", str(config(tmp_path)), "--out", str(folder), "--quiet"]) == 0
        clean = tmp_path / "clean"
        assert main(["run", str(config(tmp_path / "other")), "--out", str(clean),
                     "--quiet"]) == 0
    assert games_text(folder) == games_text(clean)
    records = [line for line in games_text(folder).split("\n") if line]
    assert len(records) == 2 and '"faults"' not in games_text(folder)
