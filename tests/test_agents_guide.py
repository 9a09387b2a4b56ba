"""docs/agents.md, true to the letter: its agent, saved where the page says, passes
``check_agent`` and prints what the page shows; its other Python blocks run; its config plays
the agent; the similarity matrix is oriented as it says; a bad parameter is the one line it
promises; its class table is the registry's and its ``dixit-lab agents`` lines are printed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
GUIDE = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
AGENT_FILE = "my_agents/closest.py"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", GUIDE, flags=re.M | re.S)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A working folder holding the agent file the page tells you to save."""
    (agent,) = [block for block in _blocks("python") if "class Closest(Agent)" in block]
    path = tmp_path / AGENT_FILE
    path.parent.mkdir()
    path.write_text(agent, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_page_says_where_to_save_the_agent():
    assert f"Save this as `{AGENT_FILE}`:" in GUIDE


def test_the_python_blocks_run_and_the_agent_passes_check_agent(folder, capsys):
    others = [block for block in _blocks("python") if "class Closest(Agent)" not in block]
    assert any("check_agent(" in block for block in others)
    for block in others:
        exec(compile(block, "docs/agents.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "(4006, 84)" in printed  # the shape the perception block comments
    shown = _blocks("text")[0].splitlines()
    assert all(line in printed.splitlines() for line in shown), (shown, printed)


def test_the_similarity_matrix_is_a_row_per_clue_and_a_column_per_card():
    from dixit_lab import load_deck
    from dixit_lab.embeddings import get_space

    space = get_space("conse", load_deck("dreams"))
    assert space.similarity.shape == (len(space.clues), len(space.deck))
    moon, card = space.clue_index("moon"), 7
    expected = space.clue_vectors[moon].astype(np.float64) @ space.card_vectors[card]
    assert space.similarity[moon, card] == np.float32(expected)
    assert np.array_equal(space.text_similarity("moon"), space.similarity[moon])
    assert not space.similarity.flags.writeable


def test_the_config_plays_the_agent(folder):
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    (block,) = _blocks("yaml")
    data = yaml.safe_load(block)
    assert parse_config(data, "docs/agents.md").results_dir() == Path(
        "results/closest_vs_builtins")  # where the page says the results go
    small = parse_config({**data, "games": 2, "executor": {"kind": "local"}}, "docs/agents.md")
    result = run_experiment(small, folder / "out", show_progress=False)
    assert result.games == 2
    assert "closest" in (folder / "out" / "agents.csv").read_text(encoding="utf-8")


def test_a_bad_parameter_is_one_line_naming_the_agent(folder):
    from dixit_lab.errors import ConfigError
    from dixit_lab.run.experiment import parse_config

    data = yaml.safe_load(_blocks("yaml")[0])
    data["players"][0]["params"] = {"rank": 0}
    with pytest.raises(ConfigError, match=r"players\.0\.agent: agent 'my_agents/closest\.py:"
                                          r"Closest': rank must be at least 1, got 0$"):
        parse_config(data, "closest.yaml")


def test_the_class_table_is_the_registrys_and_the_listing_is_printed(capsys):
    from dixit_lab.cli.main import main
    from dixit_lab.core.agent import AGENTS, get_agent_class

    table = dict(re.findall(r"^\| `(\w+)` \| `([\w.]+:\w+)` \|$", GUIDE, flags=re.M))
    registered = {name: get_agent_class(name) for name in AGENTS._entry_points()}
    assert table == {name: f"{cls.__module__}:{cls.__qualname__}"
                     for name, cls in registered.items()}
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out.splitlines()
    shown = _blocks("text")[1].splitlines()
    assert shown and all(line in listing for line in shown), shown
    (toml,) = _blocks("toml")
    header = toml.splitlines()[0]
    assert header in (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()
