"""In a real browser (Debian's chromium, driven by Playwright): a person plays a whole game
against three agents on the play page, partly with the keyboard, then browses it in the
viewer; the screenshots are checked (not blank, the expected elements visible)."""

from __future__ import annotations

import io
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
if not os.environ.get("CI"):  # in CI the browser tests must run: a missing browser fails
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip("chromium is not installed (apt-get install chromium)",
                    allow_module_level=True)

from PIL import Image, ImageStat  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from dixit_lab.records.format import read_jsonl  # noqa: E402
from dixit_lab.run.replay import replay_folder  # noqa: E402
from dixit_lab.web.play_app import play_app  # noqa: E402
from dixit_lab.web.server import bind, serve  # noqa: E402
from dixit_lab.web.view_app import ResultsIndex, view_app  # noqa: E402
from tests.web_support import BANK_CLUE, config_data, start_table  # noqa: E402


def served(app) -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a thread; yields the base URL."""
    sock = bind("127.0.0.1", 0)
    server = serve(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def check_screenshot(page: Page, path: Path) -> None:
    """A full-page screenshot that is not blank: many colours, real contrast."""
    page.wait_for_function("() => [...document.images].every((i) => i.complete"
                           " || i.loading === 'lazy')")
    data = page.screenshot(path=str(path), full_page=True)
    image = Image.open(io.BytesIO(data)).convert("RGB")
    assert image.width >= 300 and image.height >= 300
    assert max(ImageStat.Stat(image).stddev) > 25, f"{path.name} looks blank"
    assert len(image.getcolors(maxcolors=1 << 20) or []) > 500, f"{path.name} has few colours"


def images_shown(page: Page, selector: str) -> int:
    return page.eval_on_selector_all(
        f"{selector} img", "(images) => images.filter((i) => i.naturalWidth > 0).length")


def choose(page: Page, card: str, button: str) -> None:
    """Click ``card`` until ``button`` is enabled (a click on a card the page redraws at that
    moment, e.g. when the next view arrives, is lost)."""
    for _ in range(5):
        page.click(card)
        try:
            expect(page.locator(button)).to_be_enabled(timeout=3_000)
            return
        except AssertionError:
            continue
    raise AssertionError(f"clicking {card} never enabled {button}")


def play_whole_game(page: Page, shots: Path) -> set[str]:
    """Play the seat until the game is over; returns the kinds of screens met."""
    met: set[str] = set()
    for _ in range(200):
        page.wait_for_function("() => !document.querySelector('#status .spinner')",
                               timeout=30_000)
        if page.is_visible("#continue"):
            if "reveal" not in met:
                expect(page.locator("#reveal .card.teller")).to_have_count(1)
                check_screenshot(page, shots / "reveal.png")
            met.add("reveal")
            page.click("#continue")
        elif page.is_visible("#over"):
            # one winner or several: which, depends on the cards a person's clicks took
            expect(page.locator("#over")).to_contain_text(
                re.compile(r"Game over.*(wins|share the victory)\.", re.DOTALL))
            check_screenshot(page, shots / "over.png")
            met.add("over")
            return met
        elif page.is_visible("#tell-form"):
            check_screenshot(page, shots / "tell.png")
            assert images_shown(page, "#hand") == 6
            # by keyboard: the first card has the focus; Space picks it, the clue box gets
            # the focus, Enter tells
            expect(page.locator("#hand button.card").first).to_be_focused()
            page.keyboard.press("Space")
            expect(page.locator("#clue-input")).to_be_focused()
            page.keyboard.type(BANK_CLUE)
            page.keyboard.press("Enter")
            page.wait_for_selector("#status .spinner", timeout=5_000)  # the agents think
            check_screenshot(page, shots / "thinking.png")
            met.add("tell")
        elif page.is_visible("#submit-row"):
            choose(page, "#hand button.card >> nth=0", "#submit")
            if "submit" not in met:
                check_screenshot(page, shots / "submit.png")
            met.add("submit")
            page.click("#submit")
            # the move is sent: the next screen comes before the next choice (a second click
            # on a card the page is redrawing would toggle it off)
            expect(page.locator("#submit-row")).to_be_hidden(timeout=30_000)
        elif page.is_visible("#vote-row"):
            expect(page.locator("#display button.card:disabled")).to_have_count(1)  # own card
            choose(page, "#display button.card:not([disabled]) >> nth=0", "#vote")
            if "vote" not in met:
                check_screenshot(page, shots / "vote.png")
            met.add("vote")
            page.click("#vote")
            expect(page.locator("#vote-row")).to_be_hidden(timeout=30_000)
        else:
            page.wait_for_timeout(100)
    raise AssertionError(f"the game did not end; screens met: {met}")


def test_a_person_plays_a_whole_game_in_the_browser(browser, tmp_path):
    folder = tmp_path / "results"
    table, driver = start_table(folder, config_data())
    shots = tmp_path / "shots"
    shots.mkdir()
    for base in served(play_app(table, ["127.0.0.1"])):
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(f"{base}/play/{table.humans[0].token}")
        met = play_whole_game(page, shots)
        assert met == {"tell", "submit", "vote", "reveal", "over"}
        # a phone: the same page, one column, still readable
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.goto(f"{base}/play/{table.humans[0].token}")
        expect(phone.locator("#reveal")).to_be_visible()  # a new page: the last reveal first
        phone.click("#continue")
        expect(phone.locator("#over")).to_be_visible()
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        check_screenshot(phone, shots / "phone.png")
        expect(page.locator("#status")).to_have_attribute("role", "status")
        unknown = browser.new_page()
        unknown.goto(f"{base}/play/not-a-token")
        expect(unknown.locator("body")).to_contain_text("unknown seat token")
    driver.join(timeout=60)
    assert (folder / "report.md").is_file()
    (record,) = read_jsonl(folder)
    assert record.agents[0] == "human"
    assert replay_folder(folder, executor="local", show_progress=False) == (1, None)

    for base in served(view_app(ResultsIndex.open(folder), ["127.0.0.1"])):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/#run=0&game=0&round=1")  # rounds counted from 1, as on the page
        expect(page.locator("#round-title")).to_have_text("Round 1 of 4")
        expect(page.locator("#round .card")).to_have_count(4)
        expect(page.locator("#round .card.teller")).to_have_count(1)
        expect(page.locator("#round")).to_contain_text(record.rounds[0].clue)
        check_screenshot(page, shots / "viewer.png")
        page.keyboard.press("ArrowRight")
        expect(page.locator("#round-title")).to_have_text("Round 2 of 4")
        assert page.evaluate("location.hash") == "#run=0&game=0&round=2"
        expect(page.locator("#round")).to_contain_text(record.rounds[1].clue)
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.goto(f"{base}/#run=0&game=0&round=4")
        expect(phone.locator("#round-title")).to_have_text("Round 4 of 4")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        check_screenshot(phone, shots / "viewer-phone.png")



# agents that need no sentence encoder to perceive a person's clue; one slow enough to show
# the page thinking
RANDOM_TABLE = [{"name": "you", "agent": "human"},
                *({"name": f"random {k}", "agent": "random"} for k in range(2)),
                {"name": "slow", "agent": "test-slow", "isolation": "none"}]


def test_the_play_page_names_games_as_the_viewer_does(browser, tmp_path):
    """Two games: the page names them by their number in the results (from 0, as the viewer,
    `show` and `replay` do) and counts rounds from 1."""
    folder = tmp_path / "results"
    table, driver = start_table(folder, config_data(RANDOM_TABLE, games=2, max_rounds=1))
    for base in served(play_app(table, ["127.0.0.1"])):
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(f"{base}/play/{table.humans[0].token}")
        expect(page.locator("#where")).to_contain_text("Game 0 of games 0–1 · Round 1 · ")
        play_whole_game(page, tmp_path)
        expect(page.locator("#over")).to_contain_text("Game 0: ")
        expect(page.locator("#over")).to_contain_text("Game 1: ")
    driver.join(timeout=60)
    assert [record.meta["game"] for record in read_jsonl(folder)] == [0, 1]


def test_the_viewers_url_counts_rounds_from_one(browser, tmp_path):
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    folder = tmp_path / "results"
    data = config_data([{"agent": "random", "count": 4}], games=1, max_rounds=4)
    run_experiment(parse_config(data), folder, show_progress=False)
    for base in served(view_app(ResultsIndex.open(folder), ["127.0.0.1"])):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/#run=0&game=0&round=1")
        expect(page.locator("#round-title")).to_have_text("Round 1 of 4")
        page.keyboard.press("ArrowRight")
        expect(page.locator("#round-title")).to_have_text("Round 2 of 4")
        assert page.evaluate("location.hash") == "#run=0&game=0&round=2"
        last = browser.new_page(viewport={"width": 1280, "height": 900})
        last.goto(f"{base}/#run=0&game=0&round=4")
        expect(last.locator("#round-title")).to_have_text("Round 4 of 4")
