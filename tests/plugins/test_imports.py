"""Import strings: outside agent classes by module or file, with errors that say what is wrong."""

from __future__ import annotations

import sys

import pytest

from dixit_lab.core.agent import AgentSpecError, get_agent_class, make_agent
from dixit_lab.plugins.imports import is_import_string, load_class

AGENT = """
from dixit_lab.core.agent import Agent, Clue


class Mine(Agent):
    def __init__(self, depth: int = 1) -> None:
        self.depth = depth


def helper():
    pass
"""


def test_file_and_module_forms(tmp_path, monkeypatch):
    (tmp_path / "my_agent.py").write_text(AGENT)
    monkeypatch.chdir(tmp_path)
    agent = make_agent("my_agent.py:Mine(depth=3)")
    assert agent.depth == 3 and agent.spec == "my_agent.py:Mine(depth=3)"
    assert get_agent_class("./my_agent.py:Mine") is type(agent)  # one module per file
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agent", None)
    assert make_agent("my_agent:Mine").spec == "my_agent:Mine"
    assert is_import_string("a.b:C") and not is_import_string("literal")


@pytest.mark.parametrize(("target", "message"), [
    ("my_agent.py:Nope", "has no attribute 'Nope'"),
    ("my_agent.py:helper", "is a function, not a class"),
    ("missing.py:Mine", "file missing.py not found"),
    ("no_such_module_xyz:Mine", "no module named 'no_such_module_xyz'"),
    ("my_agent.py:", "is not 'package.module:ClassName'"),
    ("broken.py:Mine", "importing broken.py raised ZeroDivisionError"),
    ("dixit_lab.core.cards:Deck", "Deck is not a subclass of dixit_lab.Agent"),
])
def test_errors_name_the_problem(tmp_path, monkeypatch, target, message):
    (tmp_path / "my_agent.py").write_text(AGENT)
    (tmp_path / "broken.py").write_text("1 / 0\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentSpecError, match=message):
        get_agent_class(target)


def test_parameters_are_checked_as_for_registered_agents(tmp_path, monkeypatch):
    (tmp_path / "my_agent.py").write_text(AGENT)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentSpecError, match="parameter depth must be int"):
        make_agent("my_agent.py:Mine(depth=deep)")
    assert load_class("dixit_lab.core.cards:Deck").__name__ == "Deck"
