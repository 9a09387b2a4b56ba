"""The registries: entry points of installed metadata, and of a checkout's own pyproject.toml
(an entry point added there after ``pip install -e .`` needs no reinstall)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dixit_lab.core.agent import AGENTS, Agent
from dixit_lab.plugins.registry import Registry, UnknownName, declared_entry_points

REPO = Path(__file__).resolve().parents[2]


def _checkout(tmp_path: Path, entries: dict[str, str], name: str = "dixit-lab") -> Path:
    """A checkout whose pyproject.toml declares ``entries`` as agents of project ``name``."""
    lines = [f'[project]\nname = "{name}"\n\n[project.entry-points."dixit_lab.agents"]']
    lines += [f'{key} = "{value}"' for key, value in entries.items()]
    (tmp_path / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_an_agent_added_to_the_checkouts_pyproject_is_found_without_a_reinstall(
        tmp_path, monkeypatch):
    """The installed metadata (written at ``pip install -e .``) does not list ``fresh``; the
    checkout's pyproject.toml does, and it is the one read: the project's entry points are
    the file's, other projects' plugins stay."""
    (tmp_path / "fresh_agent.py").write_text(
        "from dixit_lab.core.agent import Agent\nclass Fresh(Agent):\n    pass\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    checkout = _checkout(tmp_path, {"fresh": "fresh_agent:Fresh",
                                    "random": "dixit_lab_agents.random_agent:RandomAgent"})
    installed = Registry("dixit_lab.agents", "agent", Agent)
    with pytest.raises(UnknownName, match="unknown agent 'fresh'"):
        installed.get("fresh")
    registry = Registry("dixit_lab.agents", "agent", Agent, lambda: checkout)
    assert registry.names() == ["fresh", "random"]  # the file's, not the stale metadata's
    assert registry.get("fresh").__name__ == "Fresh"
    other = Registry("dixit_lab.agents", "agent", Agent,
                     lambda: _checkout(tmp_path, {"fresh": "fresh_agent:Fresh"}, "elsewhere"))
    assert set(other.names()) == set(installed.names()) | {"fresh"}  # another project's file


def test_a_declared_entry_point_whose_module_is_not_installed_says_to_reinstall(tmp_path):
    checkout = _checkout(tmp_path, {"brand-new": "brand_new_package_xyz.agent:New"})
    registry = Registry("dixit_lab.agents", "agent", Agent, lambda: checkout)
    with pytest.raises(UnknownName, match=r"agent 'brand-new' .* could not be loaded: "
                                          r"ModuleNotFoundError: .*declared in .*pyproject\.toml "
                                          r"but not installed: .*rerun pip install -e \. there"):
        registry.get("brand-new")


def test_an_unreadable_pyproject_leaves_the_installed_entry_points(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nname = ", encoding="utf-8")
    assert declared_entry_points(tmp_path / "pyproject.toml", "dixit_lab.agents") == ("", {})
    registry = Registry("dixit_lab.agents", "agent", Agent, lambda: tmp_path)
    assert registry.names() == Registry("dixit_lab.agents", "agent", Agent).names()


def test_the_agents_registry_reads_this_checkouts_entry_points():
    """Run from this checkout, the agents are exactly those its pyproject.toml declares."""
    project, declared = declared_entry_points(REPO / "pyproject.toml", "dixit_lab.agents")
    assert project == "dixit-lab" and "pragmatic" in declared
    assert {name: entry.value for name, entry in AGENTS._entry_points().items()} == {
        name: entry.value for name, entry in declared.items()}
