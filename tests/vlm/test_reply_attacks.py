"""Attacks on the model client with hostile reply bodies (Hardening, model replies): every
body is parsed, classified or refused by the size and depth limits before parsing, never an
exception inside the client; usage is validated; ``timeout`` bounds the whole request; what
is stored is capped; and a recorded run with every hostile body replays byte for byte."""

from __future__ import annotations

import json
import time

import pytest

from dixit_lab.core.agent import AgentFailure, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from dixit_lab.vlm.client import Endpoint, complete
from dixit_lab.vlm.replies import MAX_CONTENT_CHARS
from dixit_lab.vlm.store import current_store, exchange_session
from dixit_lab.vlm.stub import HOSTILE, StubServer

pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def stub():
    with StubServer(drip_seconds=0.05, huge_bytes=20_000_000) as server:
        yield server


def ask(stub, model, **options):
    endpoint = Endpoint(stub.base_url, **{"timeout": 5.0, "retries": 0, "backoff": 0.01,
                                          **options})
    return complete(endpoint, {"model": model, "messages": [{"role": "user", "content": "x"}]})


def test_a_body_nested_5000_deep_is_a_backend_error_not_an_exception(stub):
    outcome = ask(stub, "deep_body")
    assert outcome["error"]["kind"] == "backend"
    assert "nested 5001 levels deep" in outcome["error"]["message"]


@pytest.mark.parametrize(("model", "problem"), [
    ("usage_lots", "usage is a str"), ("usage_negative", "prompt_tokens is -3000000"),
    ("usage_bool", "prompt_tokens is true"),
])
def test_usage_that_is_not_token_counts_is_dropped_and_named(stub, model, problem):
    outcome = ask(stub, model)
    assert "error" not in outcome and outcome["message"]["content"].startswith("{")
    assert outcome["usage"] == {} and problem in outcome["usage_problem"]


def test_a_20_mb_reply_is_refused_before_it_is_read_whole(stub):
    started = time.perf_counter()
    outcome = ask(stub, "huge")
    assert outcome["error"]["kind"] == "backend" and "more than the 4,000,000" in \
        outcome["error"]["message"]
    assert len(json.dumps(outcome)) < 1000  # nothing of the body is kept
    assert time.perf_counter() - started < 5


def test_timeout_bounds_the_whole_request_not_each_read(stub):
    started = time.perf_counter()
    outcome = ask(stub, "drip", timeout=2.0)  # 400 bytes at a byte each 0.05 s: 20 s
    elapsed = time.perf_counter() - started
    assert outcome["error"]["kind"] == "timeout"
    assert elapsed < 2.6, elapsed


def test_the_text_kept_is_capped():
    from dixit_lab.vlm.replies import read_completion

    body = json.dumps({"choices": [{"message": {"content": "y" * 200_000}}]}).encode()
    assert len(read_completion(body)["message"]["content"]) == MAX_CONTENT_CHARS


def one_decision(stub, model):
    """A vote decision of an ``llm`` seat against ``model``: its answer or its fault kind."""
    agent = make_agent(f"llm(model={model}, base_url={stub.base_url}, timeout=5, retries=0, "
                       f"http_retries=0, response_format=json_schema, dialect=openai)")
    record = play_game([agent, make_agent("random"), make_agent("random")],
                       get_rules("classic", max_rounds=2), load_deck("dreams"), 3,
                       on_illegal="fallback")
    kinds = {f.kind for rnd in record.rounds for f in rnd.faults if f.seat == 0}
    return kinds, agent


@pytest.mark.parametrize(("model", "kind"), [
    ("deep_content", "unparsable"), ("superscript", "unparsable"), ("int_parts", "unparsable"),
    ("deep_body", "backend"), ("huge", "backend"),
])
def test_hostile_replies_are_classified_faults_never_raised(stub, tmp_path, model, kind):
    with exchange_session(tmp_path / "ex", "auto"):
        kinds, _ = one_decision(stub, model)
    assert kinds == {kind}


def test_bad_usage_never_gives_negative_tokens_or_cost(stub, tmp_path):
    with exchange_session(tmp_path / "ex", "auto"):
        for model in ("usage_negative", "usage_bool", "usage_lots"):
            agent = make_agent(f"llm(model={model}, base_url={stub.base_url}, timeout=5, "
                               f"price_in=1e6, price_out=1e6, dialect=openai)")
            play_game([agent, make_agent("random"), make_agent("random")],
                      get_rules("classic", max_rounds=1), load_deck("dreams"), 3,
                      on_illegal="fallback")
            rows = agent.drain_usage()
            assert rows and all(row["prompt_tokens"] == 0 and row["completion_tokens"] == 0
                                and row["cost_usd"] == 0.0 for row in rows), model
            assert all(row["unreported_usage"] == row["exchanges"] for row in rows)


def test_stored_exchanges_are_capped(stub, tmp_path):
    with exchange_session(tmp_path / "ex", "auto"):
        one_decision(stub, "huge")
        store = current_store()
    lines = [line for path in store.folder.glob("*.jsonl")
             for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines and max(len(line) for line in lines) < 100_000


def test_a_run_against_every_hostile_body_replays_byte_for_byte(tmp_path):
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.replay import replay_folder
    from dixit_lab.run.runner import run_experiment

    folder = tmp_path / "run"
    with StubServer(huge_bytes=5_000_000) as server:
        options = f"base_url={server.base_url}, timeout=5, http_retries=0, dialect=openai"
        config = parse_config({
            "name": "hostile", "seed": 4, "deck": "dreams", "games": 2,
            "rules": {"preset": "classic", "options": {"max_rounds": 3}},
            "players": [{"name": "a", "agent": f"llm(model=hostile, {options})"},
                        {"name": "b", "agent": f"llm(model=hostile, {options}, retries=0)"},
                        {"name": "c", "agent": "random"}],
            "executor": {"kind": "local"}, "min_model_share": 0})
        run_experiment(config, folder, show_progress=False)
        seen = set(server.behaviours)
    assert len(seen & set(HOSTILE)) >= 6, seen  # most attacks were met
    assert replay_folder(folder, executor="local", show_progress=False) == (2, None)


def test_the_agent_fault_message_names_the_problem(stub, tmp_path):
    with exchange_session(tmp_path / "ex", "auto"):
        agent = make_agent(f"llm(model=int_parts, base_url={stub.base_url}, retries=0, "
                           f"dialect=openai, response_format=json_schema)")
        game = play_game([agent, make_agent("random"), make_agent("random")],
                         get_rules("classic", max_rounds=1), load_deck("dreams"), 1,
                         on_illegal="fallback")
    messages = [f.message for rnd in game.rounds for f in rnd.faults]
    assert messages and all("a text part of the content is a int" in m for m in messages)
    assert AgentFailure  # the class the agent raised
