"""``dixit-lab agents``: every registered agent with its parameters and its class."""

from __future__ import annotations

import re

from dixit_lab.cli.main import main
from dixit_lab.core.agent import AGENTS, available_agents, get_agent_class


def test_agents_lists_every_agents_class_as_an_import_string(capsys):
    """Each agent's second line is ``class module:Class``, an import string that names the
    very class (what a subclass imports, what a config may name instead of the agent): every
    entry point's (an agent registered by code the tests ran may live in no module)."""
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out
    classes = dict(re.findall(r"^(\S+?)\(.*\)\n    class (\S+)$", listing, flags=re.M))
    assert set(classes) == set(available_agents())
    for name in AGENTS._entry_points():
        assert get_agent_class(classes[name]) is get_agent_class(name), (name, classes[name])
    assert classes["pragmatic"] == "dixit_lab_agents.pragmatic:PragmaticAgent"
