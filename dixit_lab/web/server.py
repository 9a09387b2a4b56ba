"""What both web servers share: the app with secure defaults, static files, card images, and
running it under uvicorn on a socket bound up front (so a busy port is a one-line error).

Secure defaults: the server binds to loopback unless told otherwise; on loopback only
``localhost``/``127.0.0.1``/``::1`` Host headers are served (no DNS rebinding); request bodies
are capped at :data:`BODY_LIMIT` bytes; every response says ``no-referrer`` (the page URL holds
a seat's token), ``nosniff`` and a Content-Security-Policy that allows only this origin (no CDN,
nothing fetched from elsewhere); files are served from fixed lists, never from a path in a URL.

Every error is answered in one shape, ``{"error": what, "rule": which}`` (docs/humans.md):
a route, method or host not served, a query or path parameter that is not a number, a body
too large, and a bug (500, ``server``) too. Every JSON answer is written by
:func:`json_response`, which cannot fail on the text it holds.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dixit_lab.core.cards import Deck
from dixit_lab.errors import UserError

__all__ = ["BODY_LIMIT", "bind", "card_image", "error_response", "json_response",
           "loopback_hosts", "make_app", "page", "serve", "url_host"]

BODY_LIMIT = 4096  # bytes of a request body
_STATIC = {"play.html": "text/html", "view.html": "text/html", "style.css": "text/css",
           "common.js": "text/javascript", "play.js": "text/javascript",
           "view.js": "text/javascript", "league.html": "text/html",
           "league.js": "text/javascript"}
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; object-src 'none'; "
                               "base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


_NO_STORE = {"Cache-Control": "no-store"}
#: the rule of an HTTP error the routes do not name themselves
_RULES = {400: "malformed", 404: "not-found", 405: "method", 413: "body-size"}


class _JSONAnswer(JSONResponse):
    """A JSON response that cannot fail on its text: UTF-8, or, for content holding a lone
    surrogate (which UTF-8 cannot encode), ASCII with JSON's ``\\uXXXX`` escapes (which every
    JSON reader turns back into the same string)."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, indent=None,
                              separators=(",", ":")).encode("ascii")


def json_response(content: Any, status_code: int = 200,
                  headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON answer (``no-store`` unless ``headers`` say otherwise)."""
    return _JSONAnswer(content, status_code=status_code,
                       headers=_NO_STORE if headers is None else headers)


def error_response(status: int, message: str, rule: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """An error in the documented shape: ``{"error": message, "rule": rule}``."""
    return json_response({"error": message, "rule": rule or _RULES.get(status, "http")},
                         status, {**_NO_STORE, **(headers or {})})


def _host_name(header: bytes | None) -> str | None:
    """The host of a Host header, without its port (``[::1]`` keeps its brackets)."""
    if not header:
        return None
    host = header.decode("latin-1").strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[:end + 1] if end > 0 else None
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class _Limits:
    """ASGI middleware: the Host names served (``allowed_hosts``; ``*`` any), the security
    headers on every response, and request bodies capped at :data:`BODY_LIMIT` bytes (413
    beyond, whether or not a Content-Length was sent)."""

    def __init__(self, app: Any, allowed_hosts: list[str]) -> None:
        self.app = app
        self.hosts = None if "*" in allowed_hosts else {host.lower() for host in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.hosts is not None and _host_name(headers.get(b"host")) not in self.hosts:
            await _refuse(scope, receive, send, 400, "this server does not serve that Host "
                          "name (on loopback: localhost, 127.0.0.1 or ::1)", "host")
            return
        declared = headers.get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > BODY_LIMIT:
            await _refuse(scope, receive, send, 413, f"request body over {BODY_LIMIT} bytes",
                          "body-size")
            return
        received = 0

        async def limited_receive() -> MutableMapping[str, Any]:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > BODY_LIMIT:
                raise HTTPException(413, f"request body over {BODY_LIMIT} bytes")
            return message

        async def secured_send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, limited_receive, secured_send)


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str,
                  rule: str) -> None:
    await error_response(status, message, rule, _HEADERS)(scope, receive, send)


def loopback_hosts(host: str) -> list[str]:
    """The Host names served: on a loopback address only the loopback names, else any."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return ["localhost", "127.0.0.1", "::1", "[::1]"] if loopback else ["*"]


def make_app(title: str, allowed_hosts: list[str]) -> FastAPI:
    """An app with the secure defaults and the static files of ``dixit_lab/web/static``."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(_Limits, allowed_hosts=allowed_hosts)

    @app.exception_handler(StarletteHTTPException)  # fastapi's and the router's 404s, 405s
    def http_error(request: Any, error: StarletteHTTPException) -> JSONResponse:
        return error_response(error.status_code, str(error.detail),
                              headers=dict(error.headers or {}))

    @app.exception_handler(RequestValidationError)  # ?after=abc, /cards/abc
    def invalid_parameter(request: Any, error: RequestValidationError) -> JSONResponse:
        return error_response(400, _parameter_problem(error), "malformed")

    @app.exception_handler(Exception)  # a bug: the answer in the same shape (logged too)
    def server_error(request: Any, error: Exception) -> JSONResponse:
        return error_response(500, f"internal error ({type(error).__name__}); the server's "
                              f"log has the details", "server", _HEADERS)
    static = resources.files("dixit_lab.web") / "static"

    @app.get("/static/{name}")
    def static_file(name: str) -> Response:
        if name not in _STATIC:
            raise HTTPException(404, "no such file")
        return Response((static / name).read_bytes(), media_type=_STATIC[name],
                        headers={"Cache-Control": "no-cache"})

    return app


def _parameter_problem(error: RequestValidationError) -> str:
    """``after (query): must be an integer, got 'abc'``, for each parameter at fault."""
    problems = []
    for item in error.errors():
        where = [str(part) for part in item.get("loc", ())]
        name = where[-1] if where else "a parameter"
        place = f" ({where[0]})" if len(where) > 1 else ""
        given = repr(item.get("input"))
        given = given if len(given) <= 40 else given[:37] + "..."
        message = str(item.get("msg", "is not valid")).replace("Input should be", "must be")
        problems.append(f"{name}{place}: {message[0].lower()}{message[1:]}, got {given}")
    return "; ".join(problems) or "a parameter is not valid"


def page(name: str) -> Response:
    """A page of the static folder."""
    static = resources.files("dixit_lab.web") / "static"
    return Response((static / name).read_bytes(), media_type="text/html",
                    headers={"Cache-Control": "no-store"})


def card_image(deck: Deck, index: int) -> FileResponse:
    """The image of card ``index`` of ``deck`` (404 for an index outside the deck)."""
    image = deck.cards[index].image if 0 <= index < len(deck) else None
    if image is None:
        raise HTTPException(404, "no such card")
    return FileResponse(image, headers={"Cache-Control": "max-age=86400"})


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a :class:`~dixit_lab.errors.UserError` naming the address that
    cannot be used."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # inherited by accepted connections: without it a response written in two parts (headers,
    # then body) waits ~40 ms for a delayed ACK on every keep-alive request
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({error.strerror}); choose another "
                      f"--port or --host") from None
    sock.listen(1024)
    return sock


def url_host(host: str) -> str:
    """The host as written in a URL (brackets for IPv6; this machine's name for 0.0.0.0)."""
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def serve(app: FastAPI, on_stop: Callable[[], None] | None = None) -> Any:
    """A uvicorn server for ``app``; ``.run(sockets=[bind(host, port)])`` serves it.

    ``on_stop`` is called on the server's event loop when it begins to stop (a Ctrl-C, a
    SIGTERM, ``should_exit``), before it waits for the requests in flight: it must answer the
    ones that would wait (the play page's long polls), else uvicorn cancels them after its
    grace period and logs each one's traceback. The signal still reaches the caller once the
    server has stopped (uvicorn raises it again: a ``KeyboardInterrupt`` for Ctrl-C)."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if on_stop is not None:
                on_stop()
            await super().shutdown(sockets)

    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2,
                            access_log=False)
    return Server(config)
