"""The web app of ``dixit-lab play``: a page per human seat and the JSON API it is a client of.

* ``GET /play/TOKEN``: the seat's page.
* ``GET /api/play/TOKEN``: the seat's view (see :meth:`PlayTable.seat_view`); with
  ``?after=VERSION`` the answer waits (up to :data:`LONG_POLL` seconds) until the table has
  changed since that version, so a page learns of the agents' moves as they happen. A seat
  has at most :data:`LONG_POLLS_PER_SEAT` such requests waiting; one more is answered at once,
  429 ``busy``.
* ``POST /api/play/TOKEN``: a move, ``{"tell": {"card": ID, "clue": TEXT}}``,
  ``{"submit": [IDS]}`` or ``{"vote": POSITION}``; answers the new view, or a 4xx
  ``{"error": ..., "rule": ...}`` naming the rule the move breaks.
* ``GET /cards/INDEX``: the image of a card of the game's deck.

An unknown token is a 404 on every route; a token reaches only its own seat's view.

A waiting request holds no thread: it awaits a future of the event loop, which the table
resolves when it changes (:class:`_Waits`), so hundreds of long polls leave the server's
threads to the requests that need them and every other request is answered at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from dixit_lab.web.moves import IllegalMove, read_move
from dixit_lab.web.server import card_image, error_response, json_response, make_app, page
from dixit_lab.web.table import HumanSeat, PlayTable

__all__ = ["LONG_POLL", "LONG_POLLS_PER_SEAT", "play_app"]

LONG_POLL = 10.0  # seconds a GET with ?after= may wait for a change
LONG_POLLS_PER_SEAT = 8  # a seat's page keeps one waiting; a few tabs, a bot: a few more

Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class _Waits:
    """The long polls waiting for the table to change, at most :data:`LONG_POLLS_PER_SEAT` a
    seat. Each waits on a future of its event loop; :meth:`wake` (a table listener, called
    from the thread that changed the table) resolves them all through their loops."""

    def __init__(self, table: PlayTable) -> None:
        self.table = table
        self.lock = threading.Lock()
        self.waiters: set[Waiter] = set()
        self.per_seat: Counter[str] = Counter()
        table.listeners.append(self.wake)

    def wake(self) -> None:
        with self.lock:
            waiters = list(self.waiters)
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # its loop is closed: its request is gone
                loop.call_soon_threadsafe(_resolve, future)

    async def wait(self, token: str, after: int, timeout: float) -> bool:
        """Wait until the table has moved past ``after``, at most ``timeout`` seconds; False
        at once if the seat already has its share of waiting requests."""
        with self.lock:
            if self.per_seat[token] >= LONG_POLLS_PER_SEAT:
                return False
            self.per_seat[token] += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while not self.table.moved_past(after):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                waiter: Waiter = (loop, loop.create_future())
                with self.lock:
                    self.waiters.add(waiter)
                try:
                    if self.table.moved_past(after):  # changed while it was being added
                        break
                    await asyncio.wait_for(waiter[1], remaining)
                except TimeoutError:
                    break
                finally:
                    with self.lock:
                        self.waiters.discard(waiter)
        finally:
            with self.lock:
                self.per_seat[token] -= 1
        return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def play_app(table: PlayTable, allowed_hosts: list[str]) -> FastAPI:
    app = make_app("dixit-lab play", allowed_hosts)
    waits = _Waits(table)

    def seat_of(token: str) -> HumanSeat:
        try:
            return table.seat(token)
        except KeyError:
            raise HTTPException(404, "unknown seat token") from None

    @app.get("/play/{token}")
    def seat_page(token: str) -> Response:
        seat_of(token)
        return page("play.html")

    @app.get("/api/play/{token}")
    async def get_view(token: str, after: int | None = None) -> JSONResponse:
        human = seat_of(token)
        if after is not None and not await waits.wait(token, after, LONG_POLL):
            return error_response(429, f"this seat already has {LONG_POLLS_PER_SEAT} requests "
                                       f"waiting for the table to change; retry in a second",
                                  "busy", {"Retry-After": "1"})
        return json_response(table.seat_view(human))

    @app.post("/api/play/{token}")
    async def post_move(token: str, request: Request) -> JSONResponse:
        human = seat_of(token)
        try:
            table.act(human, read_move(await request.body()))
        except IllegalMove as illegal:
            return error_response(illegal.status, illegal.message, illegal.rule)
        return json_response(table.seat_view(human))

    @app.get("/cards/{index}")
    def card(index: int) -> FileResponse:
        return card_image(table.deck, index)

    return app
