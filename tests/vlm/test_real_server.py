"""The model client against a real server: llama-cpp-python serving Gemma 3 270M, started by
``scripts/real_model.py``, which sets ``DIXIT_LAB_REAL_MODEL_URL`` (these tests skip without
it). The client discovers the server's dialect, falls back past the formats it refuses (it
answers ``json_schema`` with HTTP 500) once, never retries a refused field, and reads the
model served."""

from __future__ import annotations

import os

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.vlm.client import Endpoint, complete
from dixit_lab.vlm.store import exchange_session

URL = os.environ.get("DIXIT_LAB_REAL_MODEL_URL")
pytestmark = pytest.mark.skipif(not URL, reason="no real model server "
                                "(scripts/real_model.py starts one and sets "
                                "DIXIT_LAB_REAL_MODEL_URL)")
MODEL = "gemma-3-270m"


def session(tmp_path, **params):
    options = ", ".join(f"{k}={v}" for k, v in params.items())
    agent = make_agent(f"llm(model={MODEL}, base_url={URL}, temperature=0.0, max_tokens=16, "
                       f"timeout=300{', ' + options if options else ''})")
    with exchange_session(tmp_path / "exchanges", "auto"):
        return agent.server()


def test_the_dialect_is_discovered_and_the_schema_goes_inside_json_object(tmp_path):
    found = session(tmp_path)
    assert (found.dialect, found.dialect_source) == ("llama-cpp-python", "discovered")
    assert found.format == "json_object_schema" and found.refused == ()
    assert found.served_model == MODEL


@pytest.mark.parametrize(("dialect", "chosen"), [("openai", "json_object"),
                                                 ("llama-server", "grammar")])
def test_a_refused_json_schema_falls_back_once_to_the_next_format(tmp_path, dialect, chosen):
    found = session(tmp_path, dialect=dialect)
    assert found.format == chosen
    assert [fmt for fmt, _ in found.refused] == ["json_schema"]
    assert "HTTP 500" in found.refused[0][1]


def test_a_refused_field_is_not_retried():
    endpoint = Endpoint(URL, timeout=300.0, retries=3, backoff=0.01)
    outcome = complete(endpoint, {
        "model": MODEL, "messages": [{"role": "user", "content": "Say 1."}], "max_tokens": 2,
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "strict": True, "schema": {"type": "object"}}}})
    assert outcome["error"]["field"] == "response_format"
    assert outcome["attempts"] == 1  # HTTP 500, but naming the field: no retry


def test_a_vlm_seat_at_this_text_only_server_stops_on_its_first_request(tmp_path):
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment
    from dixit_lab.run.tournament import GameFailed

    experiment = parse_config({
        "name": "blind", "seed": 1, "deck": "dreams", "games": 1,
        "rules": {"preset": "classic", "options": {"max_rounds": 1}},
        "players": [{"name": "v", "agent": f"vlm(model={MODEL}, base_url={URL}, "
                                           f"temperature=0.0, max_tokens=16, timeout=300, "
                                           f"image_size=64)"},
                    {"name": "a", "agent": "random"}, {"name": "b", "agent": "random"}],
        "executor": {"kind": "local"}})
    with pytest.raises(GameFailed, match="drops images"):
        run_experiment(experiment, tmp_path / "run", show_progress=False)
    entries = [line for path in (tmp_path / "run" / "exchanges").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    assert all('"probe"' in line for line in entries)  # no decision was asked blind
