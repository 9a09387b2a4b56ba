"""The web app of ``dixit-lab play``: a page per human seat and the JSON API it is a client of.

* ``GET /play/TOKEN``: the seat's page.
* ``GET /api/play/TOKEN``: the seat's view (see :meth:`PlayTable.seat_view`); with
  ``?after=VERSION`` the answer waits (up to :data:`LONG_POLL` seconds) until the table has
  changed since that version, so a page learns of the agents' moves as they happen.
* ``POST /api/play/TOKEN``: a move, ``{"tell": {"card": ID, "clue": TEXT}}``,
  ``{"submit": [IDS]}`` or ``{"vote": POSITION}``; answers the new view, or a 4xx
  ``{"error": ..., "rule": ...}`` naming the rule the move breaks.
* ``GET /cards/INDEX``: the image of a card of the game's deck.

An unknown token is a 404 on every route; a token reaches only its own seat's view.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from dixit_lab.web.moves import IllegalMove
from dixit_lab.web.server import card_image, make_app, page
from dixit_lab.web.table import HumanSeat, PlayTable

__all__ = ["LONG_POLL", "play_app"]

LONG_POLL = 10.0  # seconds a GET with ?after= may wait for a change
_NO_STORE = {"Cache-Control": "no-store"}


def play_app(table: PlayTable, allowed_hosts: list[str]) -> FastAPI:
    app = make_app("dixit-lab play", allowed_hosts)

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
    def get_view(token: str, after: int | None = None) -> JSONResponse:
        human = seat_of(token)
        if after is not None:
            table.wait_for_change(after, LONG_POLL)
        return JSONResponse(table.seat_view(human), headers=_NO_STORE)

    @app.post("/api/play/{token}")
    async def post_move(token: str, request: Request) -> JSONResponse:
        human = seat_of(token)
        try:
            body: Any = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": "the body must be JSON", "rule": "malformed"},
                                status_code=400, headers=_NO_STORE)
        try:
            table.act(human, body)
        except IllegalMove as illegal:
            return JSONResponse({"error": illegal.message, "rule": illegal.rule},
                                status_code=illegal.status, headers=_NO_STORE)
        return JSONResponse(table.seat_view(human), headers=_NO_STORE)

    @app.get("/cards/{index}")
    def card(index: int) -> FileResponse:
        return card_image(table.deck, index)

    return app
