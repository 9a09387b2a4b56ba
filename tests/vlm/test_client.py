"""The chat-completions client against the stub server: retries, backoff and error classes."""

from __future__ import annotations

import socket

import pytest

from dixit_lab.vlm.client import Endpoint, EndpointError, complete
from dixit_lab.vlm.stub import StubServer

pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def stub():
    with StubServer(slow_seconds=1.0) as server:
        yield server


def payload(model, note="x"):
    return {"model": model, "messages": [{"role": "user", "content": note}]}


def endpoint(stub, **options):
    return Endpoint(stub.base_url, **{"timeout": 0.5, "retries": 2, "backoff": 0.01,
                                      **options})


def test_a_good_reply_carries_message_usage_and_latency(stub):
    outcome = complete(endpoint(stub), payload("good"))
    assert outcome["message"]["content"].startswith("{")
    assert outcome["usage"]["prompt_tokens"] > 0 and outcome["usage"]["completion_tokens"] > 0
    assert outcome["attempts"] == 1 and outcome["latency_s"] >= 0


def test_http_500_is_a_backend_error_after_bounded_retries(stub):
    before = stub.requests
    outcome = complete(endpoint(stub, retries=2), payload("error500", "500"))
    assert outcome["error"]["kind"] == "backend" and "HTTP 500" in outcome["error"]["message"]
    assert outcome["attempts"] == 3 and stub.requests - before == 3


def test_429_backs_off_and_succeeds(stub):
    outcome = complete(endpoint(stub), payload("flaky", "429"))
    assert "message" in outcome and outcome["attempts"] == 2
    assert outcome["wall_s"] >= 0.01  # it waited the backoff


def test_a_slow_reply_is_a_timeout(stub):
    outcome = complete(endpoint(stub, retries=0, timeout=0.2), payload("slow"))
    assert outcome["error"]["kind"] == "timeout"


def test_what_fails_every_call_stops_the_run(stub, monkeypatch):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(EndpointError, match="cannot connect"):
        complete(Endpoint(f"http://127.0.0.1:{port}/v1", retries=0), payload("good"))
    with pytest.raises(EndpointError, match="HTTP 404"):
        complete(Endpoint(stub.base_url + "/wrong"), payload("good"))
    with pytest.raises(EndpointError, match="HTTP 400.*parameters the server accepts"):
        complete(endpoint(stub), payload("reject"))  # e.g. too many images for the server
    monkeypatch.delenv("DIXIT_TEST_KEY", raising=False)
    with pytest.raises(EndpointError, match="DIXIT_TEST_KEY is not set"):
        complete(endpoint(stub, api_key_env="DIXIT_TEST_KEY"), payload("good"))
