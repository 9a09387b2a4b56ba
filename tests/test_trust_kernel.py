"""Trust II (issue 42), items 1, 2 and 6: kernel objects no namespace separates (keyrings,
inotify) and limits that count a game's every process (shared memory, forked CPU), each an
attack by a hostile agent of ``tests/hostile/`` against ``isolation: sandbox``
(docs/security.md)."""

from __future__ import annotations

import sys

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
