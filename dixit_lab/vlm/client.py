"""A small chat-completions client over httpx: one connection pool and one bound on requests
in flight per endpoint (``base_url``, ``timeout`` and ``concurrency``) in a process, bounded
retries with exponential backoff on 429, 5xx and timeouts.

:func:`complete` never raises for a failure that belongs to one decision (an HTTP error, a
timeout, a garbled body): it returns an *outcome* dict whose ``error`` names the class
(``backend`` or ``timeout``). It raises :class:`EndpointError` for what would fail every
decision of a run (server unreachable, bad API key, unknown route, HTTP 400: a parameter or
an image count the server rejects), so that a misconfigured run stops with one clear line
instead of playing a tournament of fallbacks.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dixit_lab.errors import UserError, install_hint

if TYPE_CHECKING:
    import httpx

__all__ = ["Endpoint", "EndpointError", "complete"]

_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}
#: statuses that no retry or other prompt fixes: every decision of the run would fail alike
#: (a bad key, model or URL; a parameter or an image count the server rejects)
_FATAL = {400, 401, 403, 404, 422}
_MAX_WAIT = 30.0


class EndpointError(UserError, RuntimeError):
    """An endpoint that cannot serve any request (unreachable, unauthorised, wrong URL)."""


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
    def url(self) -> str:
        """The completions URL; a ``base_url`` of ``$NAME`` is read from the environment (the
        server can move without changing the agent spec, which the records hold)."""
        base = self.base_url
        if base.startswith("$"):
            base = os.environ.get(base[1:], "")
            if not base:
                raise EndpointError(f"environment variable {self.base_url[1:]} is not set "
                                    f"(base_url={self.base_url} of a model agent)")
        return base.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EndpointError(f"environment variable {self.api_key_env} is not set "
                                    f"(api_key_env of the agent calling {self.base_url})")
            headers["Authorization"] = f"Bearer {key}"
        return headers


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
            client = _CLIENTS[key] = httpx.Client(timeout=endpoint.timeout, limits=limits)
        # the agents of a process that share base_url and concurrency share the bound
        limit = _LIMITS.get(key)
        if limit is None:
            limit = _LIMITS[key] = threading.BoundedSemaphore(endpoint.concurrency)
    return client, limit


def _wait(attempt: int, endpoint: Endpoint, retry_after: str | None) -> float:
    wait = endpoint.backoff * (2 ** attempt)
    if retry_after:
        with contextlib.suppress(ValueError):
            wait = max(wait, float(retry_after))
    return min(wait, _MAX_WAIT)


def complete(endpoint: Endpoint, payload: dict[str, Any] | bytes) -> dict[str, Any]:
    """POST ``payload`` (a request, or its JSON body) to the endpoint; the outcome of the
    exchange (see the module doc): ``latency_s`` of the answered request, ``wall_s`` of every
    attempt and backoff (waits for the concurrency bound excluded), ``attempts``."""
    import httpx

    client, limit = _client(endpoint)
    headers = endpoint.headers()
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    started = time.perf_counter()
    queued = 0.0  # time spent waiting for the bound: not the endpoint's latency
    error: dict[str, str] = {}
    attempt = 0
    for attempt in range(endpoint.retries + 1):
        retry_after = None
        asked = time.perf_counter()
        with limit:
            sent = time.perf_counter()
            queued += sent - asked
            try:
                response = client.post(endpoint.url, content=body, headers=headers)
            except httpx.TimeoutException as raised:
                error = {"kind": "timeout",
                         "message": f"no reply within {endpoint.timeout:g} s "
                                    f"({type(raised).__name__})"}
                response = None
            except httpx.ConnectError as raised:
                raise EndpointError(f"cannot connect to {endpoint.url}: {raised}; is the "
                                    f"server running?") from None
            except httpx.TransportError as raised:
                error = {"kind": "backend", "message": f"{type(raised).__name__}: {raised}"}
                response = None
            latency = time.perf_counter() - sent
        if response is not None:
            status = response.status_code
            if status == 200:
                parsed = _parse_body(response)
                if "error" not in parsed:
                    return {**parsed, "latency_s": round(latency, 4), "attempts": attempt + 1,
                            "wall_s": round(time.perf_counter() - started - queued, 4)}
                error = parsed["error"]
            elif status in _FATAL:
                raise EndpointError(f"{endpoint.url} answered HTTP {status}: "
                                    f"{_snippet(response)}; check base_url, model, "
                                    f"api_key_env and the parameters the server accepts")
            else:
                error = {"kind": "backend", "message": f"HTTP {status}: {_snippet(response)}"}
                if status not in _RETRYABLE:
                    break
                retry_after = response.headers.get("retry-after")
        if attempt < endpoint.retries:
            time.sleep(_wait(attempt, endpoint, retry_after))
    return {"error": error, "attempts": attempt + 1,
            "wall_s": round(time.perf_counter() - started - queued, 4)}


def _snippet(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text[:200] + ("..." if len(text) > 200 else "")


def _parse_body(response: httpx.Response) -> dict[str, Any]:
    """The first choice's message, finish reason and usage of a 200 reply."""
    try:
        body = response.json()
        choice = body["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
    except (ValueError, KeyError, IndexError, TypeError) as error:
        return {"error": {"kind": "backend",
                          "message": f"not a chat-completions reply ({error}): "
                                     f"{_snippet(response)}"}}
    usage = body.get("usage") or {}
    return {
        "message": {key: message.get(key) for key in ("content", "refusal") if key in message},
        "finish_reason": choice.get("finish_reason"),
        "model": body.get("model"),
        "usage": {key: usage[key] for key in ("prompt_tokens", "completion_tokens")
                  if isinstance(usage.get(key), int)},
    }


def _reset_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _CLIENTS.clear()
    _LIMITS.clear()


os.register_at_fork(after_in_child=_reset_after_fork)
