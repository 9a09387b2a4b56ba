"""Trust II's attacks on the engine itself (issue 42, items 3-5), by hostile agents of
``tests/hostile/answers.py`` in ``isolation: process`` and ``sandbox``: an answer the engine's
own check could not read, a stderr that floods the engine's memory or repaints the operator's
terminal, clues and exception messages of a million characters. Each must end as faults of
the hostile seat, every game saved, and bounded memory, output and records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dixit_lab.text_rule import CLUE_CHARS, RECORD_MESSAGE_CHARS
from tests.test_trust_attacks import RANDOM, ROOT, needs_sandbox, run, spy

MODES = ["process", "sandbox"]


def _mode(mode: str) -> None:
    if mode == "sandbox":
        needs_sandbox()


def cli_run(tmp_path: Path, players: list[dict], games: int = 4, **config) -> tuple[int, str,
                                                                                      list]:
    """``dixit-lab run`` itself (its exit code as a user sees it) of these players."""
    folder = tmp_path / "out"
    for index, player in enumerate(players):
        player.setdefault("name", f"p{index}")
    data = {"name": "answers", "seed": 0, "deck": "numbered-60", "records": "jsonl",
            "rules": {"preset": "classic", "options": {"max_rounds": 6}}, "players": players,
            "games": games, "executor": {"kind": "local"}, **config}
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DIXIT_LAB_PROGRESS": "off"}
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(path), "--out",
                           str(folder), "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=180)
    games_file = folder / "games.jsonl"
    records = [json.loads(line) for line in games_file.read_text().splitlines()
               if line.strip()] if games_file.is_file() else []
    return done.returncode, done.stderr, records


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("share", [None, 1])
def test_a_nested_submission_is_a_fault_and_every_game_is_saved(tmp_path, mode, share):
    """``submit`` returning ``[[card]]`` stopped the run (exit 2, 0 of 4 games saved)."""
    _mode(mode)
    nested = {**spy("nested", "answers:NestedSubmit"), "isolation": mode}
    extra = {} if share is None else {"max_fault_share": share}
    code, stderr, records = cli_run(tmp_path, [nested, RANDOM, RANDOM, RANDOM], **extra)
    assert len(records) == 4, stderr
    faults = [f for r in records for rnd in r["rounds"] for f in rnd.get("faults", [])]
    seat_of = [r["meta"]["players"].index("nested") for r in records]
    listened = sum(rnd["storyteller"] != seat for r, seat in zip(records, seat_of, strict=True)
                   for rnd in r["rounds"])
    assert len(faults) == listened and {(f["action"], f["kind"]) for f in faults} == {
        ("submit", "illegal")}
    if share is None:  # over the default max_fault_share (0.05): the run fails, all saved
        assert code == 2 and "nested had" in stderr and "max_fault_share" in stderr, stderr
    else:
        assert code == 0, stderr


def _peak_kib(tmp_path: Path, name: str, players: list[dict]) -> tuple[int, str]:
    home = tmp_path / name
    home.mkdir()
    peak = home / "rss"
    os.environ["DIXIT_TEST_RSS"] = str(peak)
    try:
        result = run(home, players, games=2)
    finally:
        del os.environ["DIXIT_TEST_RSS"]
    assert result.code == 0, result.stderr[-2000:]
    assert len(result.records) == 2
    return int(peak.read_text()), result.stderr


@pytest.mark.parametrize("mode", MODES)
def test_a_stderr_flood_without_a_newline_leaves_the_engines_memory_alone(tmp_path, mode):
    """256 MiB on stderr without a newline: read in chunks, 1 MiB passed on, the rest
    dropped (an unbounded ``readline`` took the engine from 235 to 1,273 MB at 512 MiB)."""
    _mode(mode)

    def writer(mib: int) -> dict:
        return {**spy("flood", "answers:StderrWriter", mib=mib), "isolation": mode}

    quiet, _ = _peak_kib(tmp_path, "quiet", [writer(0), RANDOM, RANDOM, RANDOM])
    flooded, stderr = _peak_kib(tmp_path, "flood", [writer(256), RANDOM, RANDOM, RANDOM])
    assert flooded - quiet < 32 << 10, (quiet, flooded)  # KiB: not the flood's 256 MiB
    assert len(stderr) < (1 << 20) + (64 << 10)
    assert "[flood] (its stderr passed 1048576 bytes; the rest is dropped)" in stderr


@pytest.mark.parametrize("mode", MODES)
def test_escapes_on_stderr_reach_the_terminal_escaped_and_under_the_seats_name(tmp_path,
                                                                               mode):
    """A window title, an OSC 52 clipboard write and a forged coloured error line."""
    _mode(mode)
    painter = {**spy("painter", "answers:StderrWriter", kind="escapes"), "isolation": mode}
    result = run(tmp_path, [painter, RANDOM, RANDOM, RANDOM], games=1)
    assert result.code == 0, result.stderr
    assert not any(char in result.stderr for char in "\x1b\x07\r")
    lines = [line for line in result.stderr.splitlines() if "forged" in line]
    assert lines == ["[painter] \\x1b]0;owned title\\x07\\x1b]52;c;ZWNobyBvd25lZA==\\x07\\r"
                     "\\x1b[2K\\x1b[31mdixit-lab run: error: forged\\x1b[0m"]


@pytest.mark.parametrize("mode", MODES)
def test_clues_and_messages_of_a_million_characters_leave_small_records(tmp_path, mode):
    """1,000,000-character clues (8 games were a 27 MB folder) and 900,000-character
    exception messages (4 games, 42.6 MB of compressed records): a clue over 200 characters
    is illegal (the engine's substitute clue), a message is cut to 1,000."""
    _mode(mode)
    clue = {**spy("clue", "answers:LongText", what="clue", chars=1_000_000), "isolation": mode}
    message = {**spy("message", "answers:LongText", what="raise", chars=900_000),
               "isolation": mode}
    result = run(tmp_path, [clue, message, RANDOM, RANDOM], games=4, max_rounds=None,
                 max_fault_share=1)
    assert result.code == 0, result.stderr[-2000:]
    assert len(result.records) == 4
    faults = result.faults("clue")
    assert faults and all(f["action"] == "tell" and f"at most {CLUE_CHARS}" in f["message"]
                          for f in faults)
    assert all(len(f["message"]) <= RECORD_MESSAGE_CHARS for f in result.faults("message"))
    assert all(len(rnd["clue"]) <= CLUE_CHARS for r in result.records for rnd in r["rounds"])
    sizes = [len(json.dumps(r)) for r in result.records]
    assert max(sizes) < 64_000, sizes
