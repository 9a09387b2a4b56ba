"""Trust II (issue 42), items 1, 2 and 6: kernel objects no namespace separates (keyrings,
inotify) and limits that count a game's every process (shared memory, forked CPU), each an
attack by a hostile agent of ``tests/hostile/`` against ``isolation: sandbox``
(docs/security.md)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from dixit_lab.isolation import syscall_filter
from tests.test_trust_attacks import RANDOM, needs_sandbox, run, sandboxed, spy

KEYRING_HOST = (sys.executable, "-m", "tests.hostile.keyring_host")


def test_no_keyring_is_shared_with_the_host_another_seat_or_the_next_game(tmp_path):
    """The engine's session keyring holds the user's token: no sandbox lists it, reads it or
    adds to it, and no key outlives a game (two spies, 3 games each)."""
    needs_sandbox()
    players = [sandboxed(spy("keys", "kernel:KeyringSpy")),
               sandboxed(spy("partner", "kernel:KeyringSpy")), RANDOM, RANDOM]
    result = run(tmp_path, players, games=3, prefix=KEYRING_HOST)
    assert result.code == 0, result.stderr
    reports = result.reports("keys") + result.reports("partner")
    assert len(reports) >= 4
    for report in reports:
        assert report["listed"] == "EPERM" and report["added"] == "EPERM", report
        assert not report["host_key"] and not report["recalled"], report


def test_no_sandbox_can_watch_the_files_it_reads(tmp_path):
    """inotify on its own module and the deck's images: refused (EPERM)."""
    needs_sandbox()
    players = [sandboxed(spy("watch", "kernel:InotifySpy")), RANDOM, RANDOM, RANDOM]
    result = run(tmp_path, players, games=1, deck="dreams")
    assert result.code == 0, result.stderr
    reports = result.reports("watch")
    assert reports and all(r["init"] == "EPERM" and r["watches"] == [] for r in reports)


def test_a_storyteller_opening_its_image_tells_its_partner_nothing(tmp_path):
    """The colluding pair: the storyteller opens its card's image, the partner watches the
    image folder (every vote of the partner for the storyteller's card, before)."""
    needs_sandbox()
    players = [sandboxed(spy("opener", "kernel:ImageOpener")),
               sandboxed(spy("watcher", "kernel:ImageWatcher")), RANDOM, RANDOM]
    result = run(tmp_path, players, games=3, deck="dreams", max_rounds=None)
    assert result.code == 0, result.stderr
    assert all(r["watch"] == "EPERM" for r in result.reports("watcher"))
    hits = votes = 0
    for record in result.records:
        opener, watcher = (record["meta"]["players"].index(n) for n in ("opener", "watcher"))
        for rnd in record["rounds"]:
            if rnd["storyteller"] == opener and rnd["votes"][watcher] is not None:
                votes += 1
                hits += rnd["card_owner"][rnd["votes"][watcher]] == opener
    assert votes >= 6 and hits < votes * 0.7, (hits, votes)  # chance (1/3), not 45/45


def test_shared_memory_counts_in_the_memory_limit(tmp_path):
    """2 GiB touched through mmap(MAP_SHARED | MAP_ANONYMOUS) under memory_mb: 512."""
    needs_sandbox()
    players = [sandboxed(spy("shared", "floods:FloodSpy", kind="shared", gib=2),
                         limits={"memory_mb": 512}), RANDOM, RANDOM, RANDOM]
    result = run(tmp_path, players, games=1)
    assert result.code == 0, result.stderr
    reports = result.reports("shared")
    assert reports and all(r["bytes"] == 0 for r in reports), reports


def test_the_cpu_budget_counts_every_process_of_the_game(tmp_path):
    """Four forked spinners under cpu_seconds: 2 (each spinner had a budget of its own):
    the game is killed at its budget, a fault that says so."""
    needs_sandbox()
    players = [sandboxed(spy("forked", "floods:FloodSpy", kind="forked", pause=0.3),
                         limits={"cpu_seconds": 2}), RANDOM, RANDOM, RANDOM]
    result = run(tmp_path, players, games=1, max_rounds=None, timeout=90)
    assert result.code == 0, result.stderr
    spent = [r["spent"] for r in result.reports("forked")]
    assert all(s < 2.5 for s in spent), spent  # reaped by itself: under its game's budget
    faults = result.faults("forked")
    assert any(f["kind"] == "timeout" and "CPU budget" in f["message"] for f in faults), [
        (f["kind"], f["message"]) for f in faults]


def test_without_libseccomp_binding_no_sandbox_starts_and_says_why(monkeypatch):
    def missing() -> None:
        raise ImportError("No module named 'pyseccomp'")

    syscall_filter.compiled.cache_clear()
    monkeypatch.setattr(syscall_filter, "_binding", missing)
    try:
        problem = syscall_filter.filter_problem()
    finally:
        syscall_filter.compiled.cache_clear()
    assert problem is not None and "\n" not in problem and "pyseccomp" in problem


_UNDER_FILTER = r"""
import ctypes, errno, os, signal, subprocess, sys, threading
from dixit_lab.isolation import syscall_filter
program, keyctl = syscall_filter.compiled()
libc = ctypes.CDLL(None, use_errno=True)
syscall_filter.join_new_keyring(libc, keyctl)
syscall_filter.load(libc, program)
libc.syscall.restype = ctypes.c_long
out = {}
for name, number, args in [("keyctl", 250, (0, -3, 0)), ("inotify_init1", 294, (0,)),
                           ("unshare", 272, (0x10000000,)), ("ptrace", 101, (0, 0, 0, 0)),
                           ("shmget", 29, (0, 4096, 0o1600)), ("memfd_create", 319, (b"x", 0)),
                           ("clone3", 435, (0, 0))]:
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) if isinstance(a, int)
                                                   else a for a in args])
    out[name] = "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
try:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    out["SIGCHLD"] = "set"
except OSError as error:
    out["SIGCHLD"] = errno.errorcode[error.errno]
thread = threading.Thread(target=lambda: out.setdefault("thread", "ok"))
thread.start()
thread.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
out["subprocess"] = subprocess.run([sys.executable, "-c", "pass"]).returncode
callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
out["callback"] = callback(41)
print(out)
"""


def test_the_filter_refuses_with_eperm_and_leaves_what_a_game_needs():
    """Loaded in a process of its own (as a game process loads it): the refused calls get
    EPERM (clone3 ENOSYS), threads, fork, subprocess and ctypes callbacks work."""
    problem = syscall_filter.filter_problem()
    if problem is not None and not os.environ.get("CI"):
        pytest.skip(problem)
    done = subprocess.run([sys.executable, "-c", _UNDER_FILTER], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert out == {"keyctl": "EPERM", "inotify_init1": "EPERM", "unshare": "EPERM",
                   "ptrace": "EPERM", "shmget": "EPERM", "memfd_create": "EPERM",
                   "clone3": "ENOSYS", "SIGCHLD": "EPERM", "thread": "ok", "fork": 7,
                   "subprocess": 0, "callback": 42}, out
