"""The agent registry, spec strings and parameter checking."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from dixit_lab.core.agent import (
    AGENTS,
    Agent,
    AgentSpecError,
    available_agents,
    canonical_spec,
    make_agent,
    register_agent,
)


@register_agent("test-typed")
class TypedAgent(Agent):
    """An agent with one parameter of each kind."""

    def __init__(self, temperature: float = 0.1, depth: int = 2, greedy: bool = False,
                 label: str = "x", model: str | None = None) -> None:
        self.temperature, self.depth, self.greedy = temperature, depth, greedy
        self.label, self.model = label, model


def test_random_is_registered():
    assert "random" in available_agents()


def test_make_agent_parses_and_types_parameters():
    agent = make_agent("test-typed(temperature=1, depth=3, greedy=true, label=a-b, model=None)")
    assert isinstance(agent, TypedAgent)
    assert agent.temperature == 1.0 and isinstance(agent.temperature, float)
    assert agent.depth == 3 and agent.greedy is True and agent.label == "a-b"
    assert agent.model is None
    assert agent.spec == "test-typed(depth=3, greedy=True, label=a-b, model=None, temperature=1.0)"


def test_make_agent_from_dict():
    agent = make_agent({"name": "test-typed", "depth": 4})
    assert agent.depth == 4 and agent.spec == "test-typed(depth=4)"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nobody", "unknown agent 'nobody'; available agents: .*random"),
        ("test-typed(speed=2)", "has no parameter.*speed; allowed: temperature: float"),
        ("test-typed(depth=2.5)", "parameter depth must be int, got 2.5"),
        ("test-typed(greedy=1)", "parameter greedy must be bool"),
        ("test-typed(depth=)", "bad agent spec"),
        ("softmax(temperature=0)", "temperature must be positive"),
        ("softmax(temperature=inf)", "parameter temperature must be a finite number, got inf"),
        ("softmax(noise=-inf)", "parameter noise must be a finite number, got -inf"),
        ("test-typed(temperature=nan)", "parameter temperature must be a finite number"),
        ({"name": "softmax", "noise": float("inf")}, "parameter noise must be a finite"),
        ({"depth": 1}, "has no 'name'"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec)


def test_spec_is_a_round_trip():
    agent = make_agent("test-typed(label='two words', temperature=0.5)")
    again = make_agent(agent.spec)
    assert (again.label, again.temperature) == ("two words", 0.5)
    assert again.spec == agent.spec
    assert canonical_spec("random", {}) == "random"
    # a string that looks like a number (or None) stays a string
    for text in ("0.05", "0", "None", "1e-3"):
        typed = make_agent(f"test-typed(label='{text}')")
        assert make_agent(typed.spec).label == text, typed.spec


def test_duplicate_registration_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        @register_agent("random")
        class Other(Agent):
            pass


def test_entry_point_plugins_are_loaded(monkeypatch, tmp_path):
    plugin = tmp_path / "my_plugin_agents.py"
    plugin.write_text(
        "from dixit_lab.core.agent import Agent, register_agent\n"
        "@register_agent('plugin-agent')\n"
        "class PluginAgent(Agent):\n"
        "    pass\n"
        "class Undecorated(Agent):\n"
        "    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entries = dict(AGENTS._entry_points())
    entries["plugin-agent"] = EntryPoint("plugin-agent", "my_plugin_agents", "dixit_lab.agents")
    entries["by-class"] = EntryPoint("by-class", "my_plugin_agents:Undecorated",
                                     "dixit_lab.agents")
    monkeypatch.setattr(AGENTS, "_entries", entries)
    assert {"plugin-agent", "by-class"} <= set(available_agents())
    assert make_agent("plugin-agent").name == "plugin-agent"
    assert make_agent("by-class").name == "by-class"


def test_broken_plugin_is_reported_but_builtins_stay(monkeypatch):
    entries = dict(AGENTS._entry_points())
    entries["broken"] = EntryPoint("broken", "no_such_module_xyz:Agent", "dixit_lab.agents")
    monkeypatch.setattr(AGENTS, "_entries", entries)
    assert "random" in available_agents() and "broken" in available_agents()
    with pytest.raises(AgentSpecError, match="agent 'broken' .* could not be loaded"):
        make_agent("broken")
    assert make_agent("random").name == "random"


def test_a_foreign_agents_package_changes_nothing(tmp_path):
    """Another project's top-level ``agents`` package on sys.path: the registry is intact."""
    import subprocess
    import sys

    foreign = tmp_path / "agents"
    foreign.mkdir()
    (foreign / "__init__.py").write_text("raise ImportError('a foreign agents package')\n")
    code = ("from dixit_lab.core.agent import available_agents, make_agent; "
            "print(','.join(available_agents())); print(make_agent('literal').spec)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(tmp_path),
                                                     "PATH": "/usr/bin:/bin"}).stdout
    names, spec = out.splitlines()
    assert {"literal", "softmax", "random", "ambiguity", "pragmatic", "calibrated"} <= \
        set(names.split(","))
    assert spec == "literal"
