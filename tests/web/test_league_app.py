"""The league page of ``dixit-lab view LEAGUE``: its API gives the leaderboard's rows as the
files have them, a damaged league folder is refused before serving, and in a real browser
(Debian's chromium through Playwright) the page shows every row with its interval drawn."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")

from fastapi.testclient import TestClient

from dixit_lab.errors import ConfigError
from dixit_lab.league.entry import LeagueOptions, enter
from dixit_lab.league.leaderboard import open_league, write_leaderboard
from dixit_lab.web.league_app import league_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("league")
    pool = open_league(folder)
    for name, spec in (("strong", "ambiguity(target=0.4)"), ("weak", "softmax(temperature=0.5)")):
        enter(folder, name, spec, pool, LeagueOptions(max_games=40, deals=2), say=lambda _: None)
    write_leaderboard(folder, pool)
    return folder


def test_the_api_gives_the_leaderboard(league):
    client = TestClient(league_app(league, ["testserver"]))
    data = client.get("/api/leaderboard").json()
    assert data["pool"]["version"] == "1" and data["folder"] == league.name
    rows = data["rows"]
    assert [row["player"] for row in rows][:1] and len(rows) == 7
    with open(league / "leaderboard.csv") as handle:
        assert [line.split(",")[1] for line in handle.read().splitlines()[1:]] == \
            [row["player"] for row in rows]
    assert client.get("/").headers["content-type"].startswith("text/html")


def test_a_damaged_league_is_refused_before_serving(tmp_path):
    (tmp_path / "league.json").write_text("{not json")
    with pytest.raises(ConfigError, match="is not a league's file"):
        league_app(tmp_path, ["testserver"])


def test_the_page_draws_every_row_in_chromium(league, tmp_path):
    if not os.environ.get("CI"):  # in CI the browser tests must run
        pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
        if not Path(CHROMIUM).is_file():
            pytest.skip("chromium is not installed (apt-get install chromium)")
    from PIL import Image, ImageStat
    from playwright.sync_api import sync_playwright

    from tests.web.test_browser import ARGS, served

    for base in served(league_app(league, ["127.0.0.1"])):
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 700})
            page.goto(base + "/")
            page.wait_for_selector("#board tbody tr:nth-child(7)")
            assert page.locator("#board tbody tr").count() == 7
            assert page.locator("svg.interval circle.entrant").count() == 2
            assert page.locator("svg.interval line.bar").count() == 7
            assert "reference pool 1" in page.inner_text("#where")
            labels = page.eval_on_selector_all(
                "svg.interval", "(bars) => bars.map((b) => b.getAttribute('aria-label'))")
            assert any(label.startswith("strong: ") for label in labels)
            shot = page.screenshot(path=str(tmp_path / "league.png"), full_page=True)
            browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    assert max(ImageStat.Stat(image).stddev) > 20, "the page looks blank"
    json.dumps(labels)
