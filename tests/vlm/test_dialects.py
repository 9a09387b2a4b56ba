"""Meeting a server (vlm/session, vlm/dialects) against the stub's dialects: the response
format is discovered or falls back past a refused one once per run, recorded in the results;
a refused field is never retried; images a server refuses or drops stop the run on its first
request; the model the server reports is recorded, and a mismatch warns or errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.run.tournament import GameFailed
from dixit_lab.vlm.client import Endpoint, EndpointError, complete
from dixit_lab.vlm.session import read_sessions
from dixit_lab.vlm.store import exchange_session
from dixit_lab.vlm.stub import StubServer

pytest.importorskip("httpx")


def table(stub, kind="llm", model="good", games=1, options="", **extra):
    return parse_config({
        "name": "meet", "seed": 3, "deck": "dreams", "games": games,
        "rules": {"preset": "classic", "options": {"max_rounds": 2}},
        "players": [{"name": "m", "agent": f"{kind}(model={model}, base_url={stub.base_url}, "
                                           f"timeout=2, backoff=0.01, retries=0{options})"},
                    {"name": "a", "agent": "random"}, {"name": "b", "agent": "random"}],
        "executor": {"kind": "local"}, **extra})


def meet(stub, tmp_path, kind="llm", **params):
    options = ", ".join(f"{k}={v}" for k, v in {"timeout": 2, "backoff": 0.01, **params}.items())
    agent = make_agent(f"{kind}(model=good, base_url={stub.base_url}, {options})")
    with exchange_session(tmp_path / "exchanges", "auto"):
        return agent.server()


@pytest.mark.parametrize(("dialect", "told", "chosen", "refused"), [
    ("openai", "auto", "json_schema", []),
    ("llama-cpp-python", "auto", "json_object_schema", []),  # discovered from owned_by
    ("llama-cpp-python", "openai", "json_object", ["json_schema"]),  # told wrong: falls back
    ("llama-cpp-python", "llama-server", "grammar", ["json_schema"]),
    ("plain", "auto", "none", ["json_schema", "json_object_schema", "grammar", "json_object"]),
])
def test_the_format_is_discovered_or_falls_back_past_refusals(tmp_path, dialect, told, chosen,
                                                              refused):
    with StubServer(dialect=dialect) as stub:
        found = meet(stub, tmp_path, dialect=told)
        asked = stub.requests
    assert found.format == chosen
    assert [fmt for fmt, _ in found.refused] == refused
    assert asked == len(refused) + (chosen != "none")  # one probe a format, no retry
    recorded = read_sessions(tmp_path / "exchanges")
    assert [entry["format"] for entry in recorded] == [chosen]


def test_a_refused_field_is_never_retried():
    with StubServer(dialect="llama-cpp-python") as stub:
        outcome = complete(Endpoint(stub.base_url, retries=4, backoff=0.01), {
            "model": "good", "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "a", "strict": True, "schema": {"type": "object"}}}})
        assert stub.requests == 1  # was: 5 (an HTTP 500 retried four times)
    assert outcome["error"]["field"] == "response_format" and outcome["attempts"] == 1


def test_response_format_none_can_be_written_in_a_config():
    agent = make_agent("llm(model=good, base_url=http://127.0.0.1:9/v1, response_format=none)")
    assert agent.response_format == "none"


@pytest.mark.parametrize(("images", "message"), [("refuse", "refuses images"),
                                                  ("drop", "drops images")])
def test_images_a_text_only_server_refuses_or_drops_stop_the_run_at_once(tmp_path, images,
                                                                         message):
    with StubServer(images=images) as stub:
        with pytest.raises(GameFailed, match=message):
            run_experiment(table(stub, "vlm"), tmp_path / "run", show_progress=False)
        assert stub.requests <= 3  # the format probe and the two image probes, nothing more


def test_the_served_model_is_recorded_and_a_mismatch_warns_or_errors(tmp_path):
    with StubServer(served_model="other-model") as stub:
        with pytest.warns(RuntimeWarning, match="server reports 'other-model'"):
            found = meet(stub, tmp_path / "a")
        assert found.served_model == "other-model"
        with pytest.raises(EndpointError, match="other-model"):
            meet(stub, tmp_path / "b", on_model_mismatch="error")


def test_every_exchange_records_the_dialect_format_and_request(tmp_path):
    with StubServer(dialect="llama-cpp-python") as stub:
        run_experiment(table(stub), tmp_path / "run", show_progress=False)
    lines = [json.loads(line) for path in (tmp_path / "run" / "exchanges").glob("*.jsonl")
             for line in path.read_text().splitlines()]
    decisions = [entry for entry in lines if "probe" not in entry]
    assert decisions and all(entry["dialect"] == "llama-cpp-python" and
                             entry["format"] == "json_object_schema" and
                             entry["request"]["response_format"]["type"] == "json_object"
                             for entry in decisions)
    row = pd.read_csv(tmp_path / "run" / "agents.csv").set_index("player").loc["m"]
    assert row["response_format"] == "json_object_schema" and row["served_model"] == "good"
