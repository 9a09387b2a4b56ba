"""The web app of ``dixit-lab view LEAGUE``: a league folder's leaderboard (the pool's members
and the entrants, their strengths and 95% intervals on the pool's scale, drawn as bars).

* ``GET /``: the page.
* ``GET /api/leaderboard``: the pool and the rows of ``leaderboard.csv``, read afresh from
  the entrants' records at each request (an entry playing in another process shows its
  progress on reload).

Nothing but the folder given is read; no URL names a path.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response

from dixit_lab.league.leaderboard import LEAGUE_FILE, leaderboard_rows, open_league
from dixit_lab.web.server import json_response, make_app, page

__all__ = ["is_league", "league_app"]


def is_league(folder: Path) -> bool:
    return (folder / LEAGUE_FILE).is_file()


def _plain(value: Any) -> Any:
    """A row's value for JSON: a number that is not finite is null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def league_app(folder: Path, allowed_hosts: list[str]) -> FastAPI:
    pool = open_league(folder)  # a damaged league.json: refused before serving
    app = make_app("dixit-lab view (league)", allowed_hosts)

    @app.get("/")
    def home() -> Response:
        return page("league.html")

    @app.get("/api/leaderboard")
    def leaderboard() -> JSONResponse:
        rows = [{key: _plain(value) for key, value in row.items()}
                for row in leaderboard_rows(folder, pool)]
        return json_response({"folder": folder.name, "pool": {
            "version": pool.version, "rules": pool.rules, "deck": pool.deck,
            "table_size": pool.table_size, "description": pool.description},
            "rows": rows}, headers={})

    return app
