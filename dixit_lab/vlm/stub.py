"""A local OpenAI-compatible stub server for tests, benchmarks and dry runs (no model).

``with StubServer() as server:`` serves ``POST {server.base_url}/chat/completions`` and
``GET {server.base_url}/models`` on a random port of 127.0.0.1 until the block ends. What it
answers depends on the request's ``model`` (every answer is a function of the request body,
so runs are reproducible):

- ``good``: a reply that conforms to the request's schema (a ``json_schema``, llama-cpp's
  ``json_object`` with ``schema``, or a ``grammar``);
- ``prose``: the same JSON inside prose and a code fence (for a tolerant reader);
- ``garbage``: prose with no JSON; ``illegal``: a card number that is not allowed;
- ``refuse``: a refusal (``message.refusal``); ``filter``: ``finish_reason: content_filter``;
- ``error500``: HTTP 500; ``reject``: HTTP 400 (a request the server refuses);
- ``flaky``: HTTP 429 the first time a body is seen, then ``good``;
- ``slow``: ``good`` after ``slow_seconds``;
- ``thinker``: a reasoning model: ``good``'s answer after a ``<think>...</think>`` scratchpad in
  the content, the same reasoning in ``message.reasoning_content``, and its tokens in
  ``usage.completion_tokens_details.reasoning_tokens``; the reasoning names the request's
  ``reasoning_effort``, ``top_p`` and ``chat_template_kwargs`` (so a test sees them sent);
- ``mixed``: per request, one of ``good`` (most), ``prose``, ``garbage``, ``illegal``,
  ``refuse``, ``error500``, ``flaky`` and ``slow``, drawn from the hash of the body (:data:`MIX`);
- hostile bodies (:data:`HOSTILE`, and ``hostile``: one of them per request, from the hash):
  ``deep_body`` (a body nested 5,000 deep), ``usage_lots`` (``"usage": "lots"``),
  ``usage_negative``, ``usage_bool``, ``deep_content`` (content nested 3,000 deep),
  ``superscript`` (``{"card": "\u00b2"}``), ``int_parts`` (a text part that is an integer),
  ``huge`` (content of ``huge_bytes``, sent chunked), and ``drip`` (a good reply sent one
  byte every ``drip_seconds``).

``dialect`` makes it answer as a kind of server does: ``openai`` (the default: ``json_schema``,
``json_object`` and none; a ``grammar`` field is refused, HTTP 400), ``llama-cpp-python``
(``json_schema`` refused with its HTTP 500; ``json_object`` with a ``schema``, and
``grammar``), ``plain`` (any ``response_format`` or ``grammar`` refused, HTTP 400). ``images``
says what a request with images gets: ``see`` (85 prompt tokens an image), ``drop`` (list
content dropped without an error, as llama-cpp-python's text chat formats do) or ``refuse``
(HTTP 400 naming ``image_url``). ``served_model`` is the model id its replies and
``/v1/models`` report (default: the model asked for). ``latency`` delays every reply.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["BEHAVIOURS", "DIALECTS", "HOSTILE", "StubServer"]

HOSTILE = ("deep_body", "usage_lots", "usage_negative", "usage_bool", "deep_content",
           "superscript", "int_parts", "huge")
BEHAVIOURS = ("good", "prose", "garbage", "illegal", "refuse", "filter", "error500", "reject",
              "flaky", "slow", "thinker", "mixed", *HOSTILE, "drip", "hostile")
DIALECTS = {"openai": "system", "llama-cpp-python": "me", "plain": "stub"}  # -> owned_by
#: ``mixed``: (behaviour, weight in percent)
MIX = (("good", 56), ("prose", 15), ("garbage", 7), ("illegal", 7), ("refuse", 4),
       ("error500", 4), ("flaky", 5), ("slow", 2))
WORDS = ("a quiet storm", "the long way home", "borrowed light", "what the moon forgot",
         "sunday", "an old promise", "echo", "too late", "the other side", "glass")
_LLAMA_CPP_500 = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                  "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                  "'json_object'\", 'input': 'json_schema'}")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        stub = self.server.stub
        if self.path != "/v1/models":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        ids = [stub.served_model] if stub.served_model else list(BEHAVIOURS)
        self._send(200, {"object": "list", "data": [
            {"id": name, "object": "model", "owned_by": DIALECTS[stub.dialect]}
            for name in ids]})

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
        elif behaviour == "hostile":
            behaviour = HOSTILE[digest[0] % len(HOSTILE)]
        with stub.lock:
            stub.requests += 1
            stub.seen[digest] = seen = stub.seen.get(digest, 0) + 1
            stub.behaviours[behaviour] = stub.behaviours.get(behaviour, 0) + 1
            stub.in_flight += 1
            stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
                if not self._refused(stub, request):
                    self._answer(stub, request, behaviour, digest, seen)
        finally:
            with stub.lock:
                stub.in_flight -= 1

    def _refused(self, stub: StubServer, request: dict[str, Any]) -> bool:
        """Answer as the dialect refuses a field (True), or leave the request be (False)."""
        kind = (request.get("response_format") or {}).get("type")
        images = any(isinstance(m.get("content"), list) and any(
            p.get("type") == "image_url" for p in m["content"])
            for m in request.get("messages", ()))
        if images and stub.images == "refuse":
            self._send(400, {"error": {"message": "image_url is not supported by this model"}})
        elif stub.dialect == "llama-cpp-python" and kind == "json_schema":
            self._send(500, {"error": {"message": _LLAMA_CPP_500,
                                       "type": "internal_server_error"}})
        elif stub.dialect == "openai" and "grammar" in request:
            self._send(400, {"error": {"message": "Unrecognized request argument supplied: "
                                                  "grammar"}})
        elif stub.dialect == "plain" and ("grammar" in request or kind not in (None, "text")):
            field = "grammar" if "grammar" in request else "response_format"
            self._send(400, {"error": {"message": f"{field} is not supported"}})
        else:
            return False
        return True

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
        completion = _completion(request, behaviour, digest, stub)
        if behaviour == "deep_body":
            self._send_bytes(200, b'{"choices":' + b"[" * 5000 + b"]" * 5000 + b"}")
        elif behaviour == "huge":
            self._send_chunked(json.dumps(completion).encode("utf-8"))
        elif behaviour == "drip":
            self._send_bytes(200, json.dumps(completion).encode("utf-8"), drip=stub.drip_seconds)
        else:
            self._send(200, completion)

    def _send(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None,
                    drip: float = 0.0) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not drip:
            self.wfile.write(data)
            return
        for index in range(len(data)):  # a byte at a time: every read gets something
            self.wfile.write(data[index:index + 1])
            self.wfile.flush()
            time.sleep(drip)

    def _send_chunked(self, data: bytes, size: int = 1 << 20) -> None:
        """A reply of no declared length (chunked transfer encoding)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(data), size):
            piece = data[start:start + size]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


def _mixed(digest: bytes) -> str:
    draw = int.from_bytes(digest[:4], "big") % 100
    for behaviour, weight in MIX:
        if draw < weight:
            return behaviour
        draw -= weight
    return "good"


def _asked(request: dict[str, Any]) -> tuple[list[int], bool, bool]:
    """(the card numbers allowed, several cards?, a clue?) by the request's schema or
    grammar; card 1 and a clue when it has neither."""
    format_ = request.get("response_format") or {}
    schema = (format_.get("json_schema") or {}).get("schema") or format_.get("schema")
    if schema:
        properties = schema.get("properties", {})
        if "cards" in properties:
            return list(properties["cards"]["items"]["enum"]), True, False
        return list(properties.get("card", {}).get("enum") or [1]), False, "clue" in properties
    grammar = request.get("grammar")
    if isinstance(grammar, str):
        line = re.search(r"^card ::= (.*)$", grammar, re.M)
        labels = [int(x) for x in re.findall(r'"(\d+)"', line.group(1))] if line else [1]
        return labels, '\\"cards\\"' in grammar, '\\"clue\\"' in grammar
    return [1], False, True


def _answer(request: dict[str, Any], digest: bytes) -> dict[str, Any]:
    """A schema-conforming answer chosen from the digest (card 1 without a schema)."""
    number = int.from_bytes(digest[4:12], "big")
    labels, several, clue = _asked(request)
    answer: dict[str, Any] = {}
    if several:
        rest = list(labels)
        first = rest.pop(number % len(rest))
        answer["cards"] = [first, rest[(number // 7) % len(rest)]]
    else:
        answer["card"] = labels[number % len(labels)]
    if clue:
        answer["clue"] = WORDS[(number // 11) % len(WORDS)]
    return answer


def _completion(request: dict[str, Any], behaviour: str, digest: bytes, stub: StubServer
                ) -> dict[str, Any]:
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
    elif behaviour == "deep_content":
        message["content"] = '{"card": ' + "[" * 3000 + "]" * 3000 + "}"
    elif behaviour == "superscript":
        message["content"] = '{"card": "\u00b2"}'
    elif behaviour == "int_parts":
        message["content"] = [{"type": "text", "text": 3}]
    elif behaviour == "huge":
        message["content"] = "x" * stub.huge_bytes
    elif behaviour == "thinker":
        thought = (f"Thinking (effort {request.get('reasoning_effort')}, top_p "
                   f"{request.get('top_p')}, template {request.get('chat_template_kwargs')}): "
                   f"the cards, one by one, and what the others will see in them.")
        message["content"] = f"<think>{thought}</think>\n{json.dumps(answer)}"
        message["reasoning_content"] = thought
    prompt_tokens = sum(_tokens(m.get("content"), stub.images)
                        for m in request.get("messages", ()))
    completion = message.get("content") or message.get("refusal") or ""
    usage: Any = {"prompt_tokens": prompt_tokens,
                  "completion_tokens": len(str(completion)) // 4 + 1}
    if behaviour == "thinker":
        usage["completion_tokens_details"] = {"reasoning_tokens": len(message[
            "reasoning_content"]) // 4 + 1}
    if behaviour == "usage_lots":
        usage = "lots"
    elif behaviour == "usage_negative":
        usage = {"prompt_tokens": -3_000_000, "completion_tokens": -1}
    elif behaviour == "usage_bool":
        usage = {"prompt_tokens": True, "completion_tokens": False}
    return {"id": "stub-" + digest[:6].hex(), "object": "chat.completion",
            "model": stub.served_model or request.get("model"), "created": 0,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage}


def _tokens(content: Any, images: str = "see") -> int:
    """A rough token count: 4 characters of text a token, 85 tokens an image; with images
    ``drop``, list content counts for nothing (as llama-cpp-python's text formats drop it)."""
    if isinstance(content, list):
        if images == "drop":
            return 0
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

    def __init__(self, latency: float = 0.0, slow_seconds: float = 2.0, port: int = 0, *,
                 dialect: str = "openai", images: str = "see",
                 served_model: str | None = None, drip_seconds: float = 0.05,
                 huge_bytes: int = 20_000_000) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        if images not in ("see", "drop", "refuse"):
            raise ValueError(f"images must be see, drop or refuse, got {images!r}")
        self.latency = latency
        self.port = port
        self.slow_seconds = slow_seconds
        self.dialect, self.images, self.served_model = dialect, images, served_model
        self.drip_seconds, self.huge_bytes = drip_seconds, huge_bytes
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
    """``python -m dixit_lab.vlm.stub [--port N] [--latency S] [--dialect D]``: serve until
    interrupted."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dixit_lab.vlm.stub", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--slow-seconds", type=float, default=2.0)
    parser.add_argument("--dialect", choices=list(DIALECTS), default="openai")
    parser.add_argument("--images", choices=["see", "drop", "refuse"], default="see")
    args = parser.parse_args(argv)
    stub = StubServer(args.latency, args.slow_seconds, port=args.port, dialect=args.dialect,
                      images=args.images).start()
    print(f"serving {stub.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
