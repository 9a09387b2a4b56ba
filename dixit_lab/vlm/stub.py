"""A local OpenAI-compatible stub server for tests, benchmarks and dry runs (no model).

``with StubServer() as server:`` serves ``POST {server.base_url}/chat/completions`` on a
random port of 127.0.0.1 until the block ends. What it answers depends on the request's
``model`` (every answer is a function of the request body, so runs are reproducible):

- ``good``: a reply that conforms to the request's JSON schema;
- ``prose``: the same JSON inside prose and a code fence (for a tolerant reader);
- ``garbage``: prose with no JSON; ``illegal``: a card number that is not allowed;
- ``refuse``: a refusal (``message.refusal``); ``filter``: ``finish_reason: content_filter``;
- ``error500``: HTTP 500; ``reject``: HTTP 400 (a request the server refuses);
- ``flaky``: HTTP 429 the first time a body is seen, then ``good``;
- ``slow``: ``good`` after ``slow_seconds``;
- ``mixed``: per request, one of ``good`` (most), ``prose``, ``garbage``, ``illegal``,
  ``refuse``, ``error500``, ``flaky`` and ``slow``, drawn from the hash of the body (:data:`MIX`).

``latency`` delays every reply (the throughput benchmark uses 0.2 s).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["BEHAVIOURS", "StubServer"]

BEHAVIOURS = ("good", "prose", "garbage", "illegal", "refuse", "filter", "error500", "reject",
              "flaky", "slow", "mixed")
#: ``mixed``: (behaviour, weight in percent)
MIX = (("good", 56), ("prose", 15), ("garbage", 7), ("illegal", 7), ("refuse", 4),
       ("error500", 4), ("flaky", 5), ("slow", 2))
WORDS = ("a quiet storm", "the long way home", "borrowed light", "what the moon forgot",
         "sunday", "an old promise", "echo", "too late", "the other side", "glass")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            request = json.loads(body)
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        digest = hashlib.sha256(body).digest()
        stub = self.server.stub
        behaviour = str(request.get("model", "good"))
        if behaviour == "mixed":
            behaviour = _mixed(digest)
        with stub.lock:
            stub.requests += 1
            stub.seen[digest] = seen = stub.seen.get(digest, 0) + 1
            stub.behaviours[behaviour] = stub.behaviours.get(behaviour, 0) + 1
            stub.in_flight += 1
            stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
        try:
            self._answer(stub, request, behaviour, digest, seen)
        finally:
            with stub.lock:
                stub.in_flight -= 1

    def _answer(self, stub: StubServer, request: dict[str, Any], behaviour: str,
                digest: bytes, seen: int) -> None:
        time.sleep(stub.latency)
        if behaviour == "reject":
            self._send(400, {"error": {"message": "At most 1 image(s) may be provided"}})
            return
        if behaviour == "error500":
            self._send(500, {"error": {"message": "internal error (stub)"}})
            return
        if behaviour == "flaky" and seen == 1:
            self._send(429, {"error": {"message": "rate limited (stub)"}},
                       {"Retry-After": "0"})
            return
        if behaviour == "slow":
            time.sleep(stub.slow_seconds)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
            self._send(200, _completion(request, behaviour, digest))

    def _send(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _mixed(digest: bytes) -> str:
    draw = int.from_bytes(digest[:4], "big") % 100
    for behaviour, weight in MIX:
        if draw < weight:
            return behaviour
        draw -= weight
    return "good"


def _answer(request: dict[str, Any], digest: bytes) -> dict[str, Any]:
    """A schema-conforming answer chosen from the digest (card 1 without a schema)."""
    number = int.from_bytes(digest[4:12], "big")
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema")
    properties = (schema or {}).get("properties", {})
    answer: dict[str, Any] = {}
    if "cards" in properties:
        labels = list(properties["cards"]["items"]["enum"])
        first = labels.pop(number % len(labels))
        answer["cards"] = [first, labels[(number // 7) % len(labels)]]
    else:
        labels = properties.get("card", {}).get("enum") or [1]
        answer["card"] = labels[number % len(labels)]
    if "clue" in properties or not properties:
        answer["clue"] = WORDS[(number // 11) % len(WORDS)]
    return answer


def _completion(request: dict[str, Any], behaviour: str, digest: bytes) -> dict[str, Any]:
    answer = _answer(request, digest)
    message: dict[str, Any] = {"role": "assistant", "content": json.dumps(answer)}
    finish = "stop"
    if behaviour == "prose":
        message["content"] = (f"Let me think about the cards.\n```json\n{json.dumps(answer)}\n"
                              f"```\nThat is my choice.")
    elif behaviour == "garbage":
        message["content"] = "Hmm, the third picture speaks to me the most, I believe."
    elif behaviour == "illegal":
        key = "cards" if "cards" in answer else "card"
        answer[key] = [97, 98] if key == "cards" else 99
        message["content"] = json.dumps(answer)
    elif behaviour == "refuse":
        message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    elif behaviour == "filter":
        message["content"], finish = "", "content_filter"
    prompt_tokens = sum(_tokens(m.get("content")) for m in request.get("messages", []))
    completion = message.get("content") or message.get("refusal") or ""
    return {"id": "stub-" + digest[:6].hex(), "object": "chat.completion",
            "model": request.get("model"), "created": 0,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens,
                      "completion_tokens": len(completion) // 4 + 1}}


def _tokens(content: Any) -> int:
    """A rough token count: 4 characters of text a token, 85 tokens an image."""
    if isinstance(content, list):
        return sum(85 if part.get("type") == "image_url" else _tokens(part.get("text"))
                   for part in content if isinstance(part, dict))
    return len(content) // 4 + 1 if isinstance(content, str) else 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: StubServer

    def handle_error(self, request: Any, client_address: Any) -> None:  # a closed socket
        pass


class StubServer:
    """The stub on ``127.0.0.1:<random port>``; counts requests (``requests``, ``seen``,
    ``behaviours``, ``max_in_flight``)."""

    def __init__(self, latency: float = 0.0, slow_seconds: float = 2.0, port: int = 0) -> None:
        self.latency = latency
        self.port = port
        self.slow_seconds = slow_seconds
        self.lock = threading.Lock()
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests answered at once
        self.seen: dict[bytes, int] = {}
        self.behaviours: dict[str, int] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the stub server is not running"
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def start(self) -> StubServer:
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """``python -m dixit_lab.vlm.stub [--port N] [--latency S]``: serve until interrupted."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dixit_lab.vlm.stub", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--slow-seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    stub = StubServer(args.latency, args.slow_seconds, port=args.port).start()
    print(f"serving {stub.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
