"""Agents receive public information only: another seat is its public name (and seat), never
its spec, parameters, embedder or temperature — in the engine's process, in its own process,
at the web table and in a model's prompt.

A spy (``tests/spies.py:SpecSpy``) walks everything it is handed (its context, every view with
its public history, every public round: attributes, slots, containers, closures) and logs
every string and float it finds; the test looks there for the other seats' specs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from tests.spies import texts_and_numbers

SPIES = Path(__file__).with_name("spies.py")
#: the other seats, with parameters no game would otherwise hold (0.0731, 0.3517)
OTHERS = [{"agent": "softmax", "params": {"embedder": "text", "temperature": 0.0731}},
          {"name": "lit", "agent": "literal", "params": {"embedder": "ridge"}},
          {"name": "amb", "agent": "ambiguity", "params": {"target": 0.3517}}]
SECRET_NUMBERS = (0.0731, 0.3517)
SECRET_TEXTS = ("temperature=", "embedder=", "target=", "softmax(", "literal(", "ambiguity(")
PUBLIC_NAMES = ("spy", "player 2", "lit", "amb")  # the unnamed softmax is "player 2"


def _config(log: Path, isolation: str = "none") -> dict:
    spy = {"name": "spy", "agent": f"{SPIES}:SpecSpy", "params": {"log": str(log)},
           "isolation": isolation}
    return {"name": "public", "seed": 3, "rules": {"preset": "classic",
                                                   "options": {"max_rounds": 4}},
            "deck": "dreams", "players": [spy, *OTHERS], "games": 4,
            "executor": {"kind": "local"}}


def _specs(config: dict) -> list[str]:
    return [spec for _, spec in parse_config(config).seats()][1:]


def assert_public(texts: set[str], numbers: set[float], specs: list[str]) -> None:
    leaked = sorted(t for t in texts if any(s in t for s in (*specs, *SECRET_TEXTS)))
    assert not leaked, f"another seat's spec reached an agent: {leaked[:3]}"
    assert not any(abs(x - secret) < 1e-9 for x in numbers for secret in SECRET_NUMBERS)


@pytest.mark.parametrize("isolation", ["none", "process"])
def test_a_spy_that_walks_what_it_is_handed_finds_no_other_seats_spec(tmp_path, isolation):
    log = tmp_path / "spy.jsonl"
    config = _config(log, isolation)
    run_experiment(parse_config(config), tmp_path / "run", show_progress=False,
                   write_outputs=False)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert {e["where"] for e in entries} == {"context", "tell", "submit", "vote", "observe"}
    texts = {t for e in entries for t in e["texts"]}
    numbers = {x for e in entries for x in e["numbers"]}
    assert_public(texts, numbers, _specs(config))
    # the walk reaches what is there: the table's public names, the deck's captions, clues
    assert set(PUBLIC_NAMES) <= texts
    assert any("glass-like flower" in t for t in texts) and "dream" in texts


def test_the_walk_finds_a_spec_where_one_is_handed():
    """A positive control: the spy's walk reaches the table names a context holds."""
    from dixit_lab.core.agent import GameContext
    from dixit_lab.core.cards import Deck
    from dixit_lab.core.rules import get_rules

    context = GameContext(0, 2, get_rules("classic"), Deck.numbered(84),
                          ("me", "softmax(temperature=0.0731)"))
    texts, _ = texts_and_numbers(context)
    with pytest.raises(AssertionError, match="another seat's spec"):
        assert_public(texts, set(), ["softmax(temperature=0.0731)"])


def _needs_sentence_encoder() -> None:
    """People and models write free text: the embedding agents at their table need it."""
    from dixit_lab.embeddings.encoder import sentence_encoder_problem

    problem = sentence_encoder_problem()
    if problem is not None:
        pytest.skip(f"{problem[0]} (the web and vlm extras install it)")


def test_a_person_at_the_web_table_sees_the_others_by_their_public_names(tmp_path):
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    _needs_sentence_encoder()
    pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")
    from fastapi.testclient import TestClient

    from dixit_lab.web.play_app import play_app
    from tests.web_support import config_data, play_seat, start_table

    data = config_data([{"name": "you", "agent": "human"}, *OTHERS])
    table, thread = start_table(tmp_path, data)
    views = play_seat(TestClient(play_app(table, ["testserver"])), table.humans[0].token)
    thread.join(timeout=60)
    texts, numbers = texts_and_numbers(views)
    assert_public(texts, numbers, _specs(data))
    assert set(views[-1]["players"]) == {"you", "player 2", "lit", "amb"}


def test_a_models_prompts_name_no_other_seats_spec(tmp_path):
    pytest.importorskip("httpx")
    _needs_sentence_encoder()
    from dixit_lab.vlm.stub import StubServer

    with StubServer() as stub:
        model = {"name": "model", "agent": "llm",
                 "params": {"model": "good", "base_url": stub.base_url}}
        data = {**_config(tmp_path / "unused.jsonl"), "players": [model, *OTHERS]}
        run_experiment(parse_config(data), tmp_path / "run", show_progress=False,
                       write_outputs=False)
    exchanges = [json.loads(line) for path in (tmp_path / "run" / "exchanges").glob("*.jsonl")
                 for line in path.read_text(encoding="utf-8").splitlines()]
    assert exchanges
    texts, numbers = texts_and_numbers(exchanges)
    assert_public(texts, numbers, _specs(data))


def test_the_environments_observations_infos_and_contexts_hold_no_spec():
    pytest.importorskip("pettingzoo", reason="the env extra is not installed")
    from dixit_lab import env as dixit_env
    from dixit_lab.env import AgentPolicy

    env = dixit_env.parallel_env(4, max_rounds=2)
    specs = ["softmax(temperature=0.0731)", "ambiguity(target=0.3517)", "literal"]
    policies = {agent: AgentPolicy(env, agent, spec)
                for agent, spec in zip(env.possible_agents[1:], specs, strict=True)}
    observations, infos = env.reset(seed=2)
    seen = [observations, infos, env.context("player_0")]
    while env.agents:
        actions = {agent: policies[agent](observations[agent]["observation"],
                                          observations[agent]["action_mask"])
                   if agent in policies else 0 for agent in env.agents}
        learner = observations["player_0"]["action_mask"]
        actions["player_0"] = 0 if learner[0] else int(learner.argmax())
        observations, _, _, _, infos = env.step(actions)
        seen += [observations, infos, list(env.public_rounds)]
    texts, numbers = texts_and_numbers(seen)
    assert_public(texts, numbers, specs[:2])
    assert {"player_1", "player_2", "player_3"} <= texts
