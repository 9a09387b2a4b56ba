"""What config.yaml records of the code that played: every kind of outside agent's files, how
a change is named, and the versions and engines that played."""

from __future__ import annotations

import hashlib
from importlib.metadata import EntryPoint
from pathlib import Path

from dixit_lab.core.agent import AGENTS, Agent, register_agent
from dixit_lab.plugins.code_files import package_digest
from dixit_lab.run.provenance import (
    agent_code_change,
    agents_played,
    code_note,
    plays_differently,
    what_plays,
)


@register_agent("test-provenance-registered")
class Registered(Agent):
    """An agent registered in code (a notebook's, a test's)."""


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_of(spec: str, files: list[str] | None = None) -> list[tuple[str, str]]:
    played = agents_played([{"name": "p", "spec": spec, "files": files or []}])
    return [(entry["kind"], entry["path"]) for entry in played[0]["code"]] if played else []


def test_each_kind_of_outside_code_is_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("X = 1\n")
    (tmp_path / "act.py").write_text("def act(o, m): return 0\n")
    (tmp_path / "their_pkg").mkdir()
    (tmp_path / "their_pkg" / "__init__.py").write_text("")
    (tmp_path / "data.bin").write_bytes(b"1")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = EntryPoint("test-theirs", "their_pkg.agent:Theirs", "dixit_lab.agents")
    real = AGENTS.entry_point
    monkeypatch.setattr(AGENTS, "entry_point",
                        lambda name: entry if name == "test-theirs" else real(name))
    assert code_of("literal") == code_of("softmax(temperature=0.5)") == []  # the package's
    assert code_of("dixit_lab_agents.literal:LiteralAgent") == []
    assert code_of("mine.py:Mine(depth=2)") == [("file", str(tmp_path / "mine.py"))]
    assert code_of("their_pkg.agent:Theirs") == [("package", str(tmp_path / "their_pkg"))]
    assert code_of("test-theirs") == [("entry point", str(tmp_path / "their_pkg"))]
    assert code_of("test-provenance-registered") == [("module", str(Path(__file__).resolve()))]
    assert code_of("policy(policy=act.py:act)") == [("parameter policy", str(tmp_path / "act.py"))]
    assert code_of("random", ["data.bin", "gone"]) == [("files", str(tmp_path / "data.bin")),
                                                       ("files", str(tmp_path / "gone"))]
    played = agents_played([{"name": "p", "spec": "mine.py:Mine", "files": []},
                            {"name": "q", "spec": "random", "files": ["gone"]}])
    assert played[0]["code"][0]["sha256"] == sha(tmp_path / "mine.py")
    assert played[1]["code"][0]["sha256"] is None  # nothing there: recorded as such


def test_a_change_names_the_player_and_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("X = 1\n")
    players = [{"name": "mine", "spec": "mine.py:Mine", "files": []}]
    then = agents_played(players)
    assert agent_code_change(then, agents_played(players)) is None
    assert agent_code_change(None, agents_played(players)) is None  # an old folder: no digests
    twice = players * 2  # two players of one name (the same spec, no name given)
    assert agent_code_change(agents_played(twice), agents_played(twice)) is None
    assert agent_code_change(then, agents_played(twice)) == (
        f"player 'mine' (mine.py:Mine): its agent file {tmp_path / 'mine.py'} was not "
        f"recorded when those games were played")
    assert agent_code_change(agents_played(twice), then) == (
        "player 'mine': the code it played then is no longer found")
    (tmp_path / "mine.py").write_text("X = 2\n")
    assert agent_code_change(then, agents_played(players)) == (
        f"player 'mine' (mine.py:Mine): its agent file {tmp_path / 'mine.py'} has changed")
    (tmp_path / "mine.py").unlink()
    assert agent_code_change(then, agents_played(players)) == (
        f"player 'mine' (mine.py:Mine): its agent file {tmp_path / 'mine.py'} is missing")
    (tmp_path / "other").mkdir()  # the same relative path from another folder
    (tmp_path / "other" / "mine.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path / "other")
    assert agent_code_change(then, agents_played(players)) is None  # the same code
    (tmp_path / "other" / "mine.py").write_text("X = 3\n")
    assert agent_code_change(then, agents_played(players)) == (
        f"player 'mine' (mine.py:Mine): its agent file is now {tmp_path / 'other' / 'mine.py'} "
        f"(then {tmp_path / 'mine.py'}), with other contents")


def test_what_plays_and_when_it_plays_differently():
    now = what_plays("batched")
    assert now["dixit_lab_code"] == package_digest() and now["engine"] == "batched"
    assert not plays_differently(dict(now), now)
    old = {"dixit_lab_version": now["dixit_lab_version"], "dixit_lab_code": None,
           "engine": None}  # a folder written before the code digest and the engine
    assert not plays_differently(old, now)
    assert plays_differently({**old, "dixit_lab_version": "0.0.1"}, now)
    assert plays_differently({**now, "dixit_lab_code": "0" * 64}, now)
    assert plays_differently({**now, "engine": "reference"}, now)


def test_the_note_of_a_replay_names_the_versions_that_played():
    now = what_plays("batched")
    header = {"dixit_lab_version": now["dixit_lab_version"],
              "dixit_lab_code": now["dixit_lab_code"], "engine_played": {"engine": "batched"}}
    assert code_note(header) is None
    assert code_note({"dixit_lab_version": now["dixit_lab_version"]}) is None  # no digest
    other = code_note({**header, "dixit_lab_code": "ab" * 32})
    assert other == (f"the games were played by dixit_lab {now['dixit_lab_version']} (code "
                     f"abababababab); this is dixit_lab {now['dixit_lab_version']} (code "
                     f"{now['dixit_lab_code'][:12]})")
