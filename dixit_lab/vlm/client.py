"""A small chat-completions client over httpx: one connection pool and one bound on requests
in flight per endpoint (``base_url``, ``timeout`` and ``concurrency``) in a process, bounded
retries with exponential backoff on 429, 5xx and timeouts.

:func:`complete` never raises for a failure that belongs to one decision (an HTTP error, a
timeout, a garbled, oversized or too deeply nested body: :mod:`dixit_lab.vlm.replies`): it
returns an *outcome* dict whose ``error`` names the class (``backend`` or ``timeout``). An
error that names a field of the request (``response_format``, ``grammar``, ``seed``, an image
part ...) carries it as ``error.field`` and is never retried: resending the same field gets
the same answer. :func:`complete` raises :class:`EndpointError` for what would fail every
decision of a run (server unreachable, bad API key, unknown route, HTTP 400 that names no
field), so that a misconfigured run stops with one clear line instead of playing a tournament
of fallbacks.

``timeout`` bounds the whole request, connection, upload and every byte of the reply: each
read of the socket waits at most the time the request has left, so a server that sends its
reply a byte at a time cannot hold a decision past ``timeout``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dixit_lab.errors import UserError, install_hint
from dixit_lab.vlm.replies import MAX_BODY_BYTES, read_completion, snippet

if TYPE_CHECKING:
    import httpx

__all__ = ["STOP", "Endpoint", "EndpointError", "RunInterrupted", "complete", "get_json",
           "refused_field"]

_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}
#: statuses that no retry or other prompt fixes: every decision of the run would fail alike
#: (a bad key, model or URL; a parameter or an image count the server rejects)
_FATAL = {400, 401, 403, 404, 422}
#: statuses with which a server refuses a field of the request it does not support
_REFUSING = {400, 415, 422, 500, 501}
#: the optional request fields a refusal may name (``image_url``: an image part)
_FIELDS = re.compile(r"\b(response_format|json_schema|grammar|seed|temperature|max_tokens|"
                     r"image_url|image)\b")
_MAX_WAIT = 30.0


class EndpointError(UserError, RuntimeError):
    """An endpoint that cannot serve any request (unreachable, unauthorised, wrong URL)."""


class RunInterrupted(BaseException):
    """The run was interrupted (Ctrl-C, SIGTERM): raised in the threads that were asking a
    model, so that they end instead of sending more requests (a ``BaseException``, so that no
    decision takes it for an agent's failure)."""


#: set when the run is interrupted (:func:`dixit_lab.vlm.driver.play_remote_chunk`): no
#: request starts, and a request in flight ends within a quarter of a second
STOP = threading.Event()
_SLICE = 0.25  # seconds a socket read waits before looking at STOP


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: ``base_url`` ends before ``/chat/completions`` (e.g.
    ``http://127.0.0.1:8000/v1``, or ``$NAME`` for an environment variable); the API key is
    read from ``$api_key_env`` when set."""

    base_url: str
    api_key_env: str | None = None
    timeout: float = 60.0
    concurrency: int = 8
    retries: int = 2
    backoff: float = 0.5

    @property
    def base(self) -> str:
        """``base_url``, a ``$NAME`` read from the environment (the server can move without
        changing the agent spec, which the records hold)."""
        base = self.base_url
        if base.startswith("$"):
            base = os.environ.get(base[1:], "")
            if not base:
                raise EndpointError(f"environment variable {self.base_url[1:]} is not set "
                                    f"(base_url={self.base_url} of a model agent)")
        return base.rstrip("/")

    @property
    def url(self) -> str:
        """The completions URL."""
        return self.base + "/chat/completions"

    def headers(self) -> dict[str, str]:
        # identity: a compressed reply could expand past every bound on the way in
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EndpointError(f"environment variable {self.api_key_env} is not set "
                                    f"(api_key_env of the agent calling {self.base_url})")
            headers["Authorization"] = f"Bearer {key}"
        return headers


# -- the whole request within its timeout ------------------------------------------------------

_DEADLINE = threading.local()  # .at: the monotonic time the current request must end by


def _bounded(timeout: float | None, kind: str) -> float | None:
    """``timeout`` of one socket operation, cut to the time the request has left."""
    at = getattr(_DEADLINE, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        import httpcore

        raise {"read": httpcore.ReadTimeout, "write": httpcore.WriteTimeout}.get(
            kind, httpcore.ConnectTimeout)("the request's time is up")
    return left if timeout is None else min(timeout, left)


def _deadline_backend(backend: Any) -> Any:
    """httpcore's network backend whose streams read, write and connect within the calling
    thread's deadline (the sync client does its I/O in the calling thread)."""
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            # in slices, so that an interrupted run ends its requests in flight at once (a
            # socket read that times out has read nothing: the next one carries on)
            until = None if timeout is None else time.monotonic() + timeout
            while True:
                left = _bounded(None if until is None else until - time.monotonic(), "read")
                if left is not None and left <= 0:
                    raise httpcore.ReadTimeout("timed out")
                step = _SLICE if left is None else min(left, _SLICE)
                try:
                    return self._stream.read(max_bytes, step)  # type: ignore[no-any-return]
                except httpcore.ReadTimeout:
                    if STOP.is_set():
                        raise RunInterrupted from None
                    if left is not None and left <= step:
                        raise

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _bounded(timeout, "write"))

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            return Stream(self._stream.start_tls(ssl_context, server_hostname,
                                                 _bounded(timeout, "connect")))

        def get_extra_info(self, info: str) -> Any:
            return self._stream.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None, socket_options: Any = None) -> Any:
            return Stream(backend.connect_tcp(host, port, _bounded(timeout, "connect"),
                                              local_address, socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Any = None) -> Any:
            return Stream(backend.connect_unix_socket(path, _bounded(timeout, "connect"),
                                                      socket_options))

        def sleep(self, seconds: float) -> None:
            backend.sleep(seconds)

    return Backend()


_CLIENTS: dict[tuple[str, float, int], httpx.Client] = {}
_LIMITS: dict[tuple[str, float, int], threading.BoundedSemaphore] = {}
_LOCK = threading.Lock()


def _client(endpoint: Endpoint) -> tuple[httpx.Client, threading.BoundedSemaphore]:
    try:
        import httpx
    except ImportError:
        raise EndpointError(f"the vlm and llm agents need httpx: "
                            f"{install_hint('vlm')}") from None
    key = (endpoint.base_url, endpoint.timeout, endpoint.concurrency)
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            limits = httpx.Limits(max_connections=endpoint.concurrency,
                                  max_keepalive_connections=endpoint.concurrency)
            transport = httpx.HTTPTransport(limits=limits)
            pool = getattr(transport, "_pool", None)  # httpcore's pool: its streams bounded
            if pool is not None and hasattr(pool, "_network_backend"):
                pool._network_backend = _deadline_backend(pool._network_backend)
            client = _CLIENTS[key] = httpx.Client(timeout=endpoint.timeout,
                                                  transport=transport)
        # the agents of a process that share base_url and concurrency share the bound
        limit = _LIMITS.get(key)
        if limit is None:
            limit = _LIMITS[key] = threading.BoundedSemaphore(endpoint.concurrency)
    return client, limit


class _TooLarge(Exception):
    pass


def _send(client: httpx.Client, method: str, url: str, body: bytes | None,
          headers: dict[str, str], timeout: float) -> tuple[int, bytes]:
    """(status, body) of one request that ends within ``timeout`` seconds; a body over
    :data:`MAX_BODY_BYTES` raises :class:`_TooLarge` as soon as it is seen to be."""
    _DEADLINE.at = time.monotonic() + timeout
    try:
        with client.stream(method, url, content=body, headers=headers) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise _TooLarge(f"{int(declared):,} bytes")
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_BODY_BYTES:
                    raise _TooLarge(f"more than {MAX_BODY_BYTES:,} bytes")
            return response.status_code, bytes(data)
    finally:
        _DEADLINE.at = None


def _wait(attempt: int, endpoint: Endpoint, retry_after: str | None) -> float:
    wait = endpoint.backoff * (2 ** attempt)
    if retry_after:
        with contextlib.suppress(ValueError):
            wait = max(wait, float(retry_after))
    return min(wait, _MAX_WAIT)


def refused_field(status: int, body: bytes, request: dict[str, Any] | None) -> str | None:
    """The optional field of ``request`` that an error reply names (None if it names none):
    ``response_format`` (also for ``json_schema``), ``grammar``, ``seed``, ``temperature``,
    ``max_tokens``, or ``image_url`` for an image part."""
    if status not in _REFUSING or request is None:
        return None
    sent = set(request)
    if any(isinstance(m.get("content"), list) for m in request.get("messages", ())
           if isinstance(m, dict)):
        sent.add("image_url")
    for match in _FIELDS.finditer(body[:4000].decode("utf-8", "replace")):
        name = {"json_schema": "response_format", "image": "image_url"}.get(match.group(1),
                                                                           match.group(1))
        if name in sent:
            return name
    return None


def complete(endpoint: Endpoint, payload: dict[str, Any] | bytes,
             request: dict[str, Any] | None = None) -> dict[str, Any]:
    """POST ``payload`` (a request, or its JSON body; ``request`` is the request the body was
    written from, to tell which of its fields an error names) to the endpoint; the outcome of
    the exchange (see the module doc): ``latency_s`` of the answered request, ``wall_s`` of
    every attempt and backoff (waits for the concurrency bound excluded), ``attempts``."""
    import httpx

    client, limit = _client(endpoint)
    headers = endpoint.headers()
    if isinstance(payload, bytes):
        body = payload
    else:
        body, request = json.dumps(payload).encode("utf-8"), request or payload
    started = time.perf_counter()
    queued = 0.0  # time spent waiting for the bound: not the endpoint's latency
    error: dict[str, Any] = {}
    attempt = 0
    for attempt in range(endpoint.retries + 1):
        if STOP.is_set():
            raise RunInterrupted
        retry_after = None
        asked = time.perf_counter()
        status, data = 0, b""
        with limit:
            if STOP.is_set():  # interrupted while waiting for the bound
                raise RunInterrupted
            sent = time.perf_counter()
            queued += sent - asked
            try:
                status, data = _send(client, "POST", endpoint.url, body, headers,
                                     endpoint.timeout)
            except httpx.TimeoutException as raised:
                error = {"kind": "timeout",
                         "message": f"no whole reply within {endpoint.timeout:g} s "
                                    f"({type(raised).__name__})"}
            except httpx.ConnectError as raised:
                raise EndpointError(f"cannot connect to {endpoint.url}: {raised}; is the "
                                    f"server running?") from None
            except _TooLarge as raised:
                error = {"kind": "backend", "message": f"a reply of {raised}: more than the "
                                                       f"{MAX_BODY_BYTES:,} read"}
            except httpx.TransportError as raised:
                error = {"kind": "backend", "message": f"{type(raised).__name__}: {raised}"}
            latency = time.perf_counter() - sent
        if status == 200:
            outcome = read_completion(data)
            if "error" not in outcome:
                return {**outcome, "latency_s": round(latency, 4), "attempts": attempt + 1,
                        "wall_s": round(time.perf_counter() - started - queued, 4)}
            error = outcome["error"]
        elif status:
            field = refused_field(status, data, request)
            if field is not None:  # the same field gets the same answer: never retried
                error = {"kind": "backend", "field": field,
                         "message": f"HTTP {status} naming {field}: {snippet(data)}"}
                break
            if status in _FATAL:
                raise EndpointError(f"{endpoint.url} answered HTTP {status}: "
                                    f"{snippet(data)}; check base_url, model, "
                                    f"api_key_env and the parameters the server accepts")
            error = {"kind": "backend", "message": f"HTTP {status}: {snippet(data)}"}
            if status not in _RETRYABLE:
                break
        if attempt < endpoint.retries:
            time.sleep(_wait(attempt, endpoint, retry_after))
    return {"error": error, "attempts": attempt + 1,
            "wall_s": round(time.perf_counter() - started - queued, 4)}


def get_json(endpoint: Endpoint, path: str) -> Any:
    """The JSON a ``GET {base_url}/{path}`` answers (e.g. ``models``), or None if it answers
    anything else (the route may not exist: discovery is best effort)."""
    import httpx

    client, limit = _client(endpoint)
    with limit:
        try:
            status, data = _send(client, "GET", f"{endpoint.base}/{path}", None,
                                 endpoint.headers(), min(endpoint.timeout, 10.0))
        except httpx.ConnectError as raised:
            raise EndpointError(f"cannot connect to {endpoint.base}: {raised}; is the "
                                f"server running?") from None
        except (httpx.TransportError, _TooLarge):
            return None
    if status != 200:
        return None
    from dixit_lab.vlm.replies import loads_bounded

    try:
        return loads_bounded(data)
    except ValueError:
        return None


def _reset_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _CLIENTS.clear()
    _LIMITS.clear()


os.register_at_fork(after_in_child=_reset_after_fork)
