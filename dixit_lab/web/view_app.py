"""The web app of ``dixit-lab view RESULTS``: browse a results folder (a sweep's points too)
game by game and round by round, with the card images, the clue, owners, votes and points.

* ``GET /``: the page.
* ``GET /api/runs``: the runs of the folder (one, or one per sweep point, with its settings).
* ``GET /api/runs/RUN/games?start=0&count=100``: a page of game summaries.
* ``GET /api/runs/RUN/games/INDEX``: one game, every round revealed.
* ``GET /cards/DECK/INDEX``: a card image of one of the decks the games use.

Games are located by their byte offset in ``games.jsonl`` (read once) and parsed on request,
so a folder of many thousands of games opens at once. Nothing but the folder given is read:
runs, games and cards are numbers, never paths taken from a URL.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, JSONResponse, Response

from dixit_lab.core.cards import Deck
from dixit_lab.records.decks import DeckLookup, folder_decks
from dixit_lab.records.files import find_records, is_compressed, open_records
from dixit_lab.records.format import GameRecord, player_names
from dixit_lab.records.manifest import check_games_file
from dixit_lab.records.sweeps import sweep_points
from dixit_lab.web.server import card_image, json_response, make_app, page
from dixit_lab.web.views import record_json

__all__ = ["ResultsIndex", "view_app"]

_PAGE_LIMIT = 500


@dataclass
class _Run:
    label: str
    games_path: Path
    #: the deck its games were played with (its folder's config.yaml), checked at opening
    decks: DeckLookup
    #: its cards by number, when its deck cannot be loaded any more
    numbered: Deck | None = None
    offsets: list[int] | None = None
    #: a compressed games file, decompressed once into a temporary file to seek in
    plain: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _open(self) -> Any:
        if not is_compressed(self.games_path):
            return self.games_path.open("rb")
        if self.plain is None:
            self.plain = tempfile.TemporaryFile()  # noqa: SIM115 (kept open while served)
            with open_records(self.games_path) as source:
                shutil.copyfileobj(source, self.plain, 1 << 20)
        return contextlib.nullcontext(self.plain)

    def index(self) -> list[int]:
        """Byte offsets of the game lines (computed on first use)."""
        with self.lock:
            if self.offsets is None:
                offsets, position = [], 0
                with self._open() as handle:
                    handle.seek(0)
                    for line in handle:
                        if line.strip():
                            offsets.append(position)
                        position += len(line)
                self.offsets = offsets
            return self.offsets

    def record(self, number: int) -> GameRecord:
        offsets = self.index()
        if not 0 <= number < len(offsets):
            raise HTTPException(404, f"no game {number} in this run")
        with self.lock, self._open() as handle:
            handle.seek(offsets[number])
            line = handle.readline().decode("utf-8")
        try:
            return GameRecord.from_json(line)
        except (ValueError, KeyError, TypeError) as error:
            raise HTTPException(500, f"{self.games_path}, game {number}: not a game record "
                                     f"({error})") from None


@dataclass
class ResultsIndex:
    """The runs of a results folder and the decks their games use."""

    folder: Path
    runs: list[_Run] = field(default_factory=list)
    decks: list[Deck] = field(default_factory=list)

    @classmethod
    def open(cls, folder: str | Path) -> ResultsIndex:
        root = Path(folder)
        index = cls(root)
        points = sweep_points(root)  # a damaged sweep.csv, a point without games: refused
        if points is not None:
            for point in points:
                games = find_records(point.folder)
                assert games is not None  # sweep_points checked
                index.runs.append(_Run(f"point {point.point}: {point.label}", games,
                                       folder_decks(point.folder)))
        elif (games := find_records(root)) is not None:
            index.runs.append(_Run(root.name, games, folder_decks(root)))
        if not index.runs:
            raise FileNotFoundError(f"{root} holds no games.jsonl (nor a sweep.csv of points "
                                    f"with games): is it a results folder?")
        for run in index.runs:  # another size or digest than recorded: refused before serving
            check_games_file(run.games_path)
        return index

    def run(self, number: int) -> _Run:
        if not 0 <= number < len(self.runs):
            raise HTTPException(404, f"no run {number}")
        return self.runs[number]

    def deck_number(self, run: _Run, record: GameRecord) -> int:
        """The number of the deck a record of ``run`` was played with (its folder's, loaded
        once; a deck that cannot be loaded any more shows its cards by number)."""
        deck = run.decks(record.deck)
        if deck is None:
            if run.numbered is None:
                cards = [c for rnd in record.rounds
                         for c in (*rnd.display, *rnd.storyteller_hand)]
                run.numbered = Deck.numbered(max(cards, default=0) + 1, record.deck)
            deck = run.numbered
        for number, known in enumerate(self.decks):
            if known is deck:
                return number
        self.decks.append(deck)
        return len(self.decks) - 1


def _summary(number: int, record: GameRecord) -> dict[str, Any]:
    return {"index": number, "game": record.meta.get("game", number),
            "players": list(player_names(record)), "rounds": len(record.rounds),
            "final_scores": list(record.final_scores), "winners": list(record.winners)}


def view_app(index: ResultsIndex, allowed_hosts: list[str]) -> FastAPI:
    app = make_app("dixit-lab view", allowed_hosts)

    @app.get("/")
    def home() -> Response:
        return page("view.html")

    @app.get("/api/runs")
    def runs() -> JSONResponse:
        return json_response({"folder": str(index.folder.name), "runs": [
            {"run": number, "label": run.label, "games": len(run.index())}
            for number, run in enumerate(index.runs)]}, headers={})

    @app.get("/api/runs/{run}/games")
    def games(run: int, start: int = 0, count: int = 100) -> JSONResponse:
        chosen = index.run(run)
        total = len(chosen.index())
        start = max(0, start)
        stop = min(total, start + max(1, min(count, _PAGE_LIMIT)))
        return json_response({"total": total, "start": start, "games": [
            _summary(number, chosen.record(number)) for number in range(start, stop)]},
            headers={})

    @app.get("/api/runs/{run}/games/{number}")
    def game(run: int, number: int) -> JSONResponse:
        chosen = index.run(run)
        record = chosen.record(number)
        deck_number = index.deck_number(chosen, record)
        return json_response(record_json(record, index.decks[deck_number],
                                         prefix=f"/cards/{deck_number}"), headers={})

    @app.get("/cards/{deck}/{card}")
    def card(deck: int, card: int) -> FileResponse:
        if not 0 <= deck < len(index.decks):
            raise HTTPException(404, "no such deck")
        return card_image(index.decks[deck], card)

    return app
