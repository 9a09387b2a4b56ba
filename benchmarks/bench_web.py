"""The play page's load time, in Debian's chromium (headless, through Playwright), against
``dixit-lab play`` running as a person runs it (its own process, on loopback): the seat's
page at the start of a game against three agents.

    python benchmarks/bench_web.py [--loads 10] [--polls 300]

Prints, over ``--loads`` cold loads of the page (a new browser context each, so nothing is
cached): the time to the first drawn view (the page's ``dixit-lab:first-view`` mark), to every
card image of the hand shown, and the DOM's load event; then the latency of the API's GET,
fetched by the page. Then, with ``--polls`` long polls (``GET ...?after=VERSION`` while the
table waits for the person, so none is answered by a change) sent from this process, the
latency of the seat's plain GET, and how the polls were answered (waiting, or 429 ``busy``
beyond a seat's bound). ``--loads 0`` skips the browser. Not a test: figures depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

CONFIG = {"name": "bench_web", "seed": 1, "rules": "classic", "deck": "dreams",
          "players": [{"name": "you", "agent": "human"}, "literal", "softmax", "random"],
          "games": 1}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
DRAWN = """() => document.querySelectorAll('#hand img').length > 0
               && [...document.querySelectorAll('#hand img')].every((i) => i.naturalWidth > 0)"""
GETS = """async (url) => {
  const times = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    await (await fetch(url, {cache: "no-store"})).json();
    times.push(performance.now() - start);
  }
  return times;
}"""


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values):.0f} ms, max {max(values):.0f} ms"


async def _get(base: str, path: str, timeout: float) -> tuple[int, dict]:
    """GET on a new connection (asyncio streams: cheaper than an HTTP client's pool)."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                     .encode("ascii"))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


async def _settled(base: str, token: str) -> int:
    """The table's version once it waits for the person alone (no agent thinking)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, view = await _get(base, f"/api/play/{token}", 30)
        if view["phase"] in ("tell", "submit", "vote") and not view["waiting_for"]:
            return view["version"]
        await asyncio.sleep(0.1)
    raise SystemExit("the table never waited for the person")


async def long_polls(base: str, token: str, count: int) -> tuple[list[float], dict[str, int]]:
    """The plain GET's latency (5 fetches, one after another) with ``count`` long polls
    sent first, and how those polls had been answered by then."""
    version = await _settled(base, token)
    polls = [asyncio.create_task(_get(base, f"/api/play/{token}?after={version}", 120))
             for _ in range(count)]
    await asyncio.sleep(2.0)  # every poll has arrived
    times = []
    for _ in range(5):
        start = time.perf_counter()
        status, _ = await _get(base, f"/api/play/{token}", 300)
        times.append(1000 * (time.perf_counter() - start))
        assert status == 200, status
    answered = [poll.result()[0] for poll in polls if poll.done() and not poll.exception()]
    tally = {"busy (429)": answered.count(429), "answered 200": answered.count(200),
             "still waiting": count - len(answered)}
    for poll in polls:
        poll.cancel()
    await asyncio.gather(*polls, return_exceptions=True)
    return times, tally


def page_loads(base: str, token: str, loads: int) -> list[str]:
    from playwright.sync_api import sync_playwright

    first, drawn, loaded = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                             args=ARGS)
        for _ in range(loads + 1):  # the first load warms the server up: not counted
            context = browser.new_context()
            page = context.new_page()
            start = time.perf_counter()
            page.goto(f"{base}/play/{token}")
            page.wait_for_function(DRAWN)
            drawn.append(1000 * (time.perf_counter() - start))
            first.append(page.evaluate(
                "performance.getEntriesByName('dixit-lab:first-view')[0].startTime"))
            loaded.append(page.evaluate(
                "performance.getEntriesByType('navigation')[0].loadEventEnd"))
            context.close()
        page = browser.new_page()
        page.goto(f"{base}/play/{token}")
        gets = page.evaluate(GETS, f"/api/play/{token}")
        browser.close()
    return [f"play page, {loads} cold loads (new browser context each), loopback:",
            f"  first view drawn      {ms(first[1:])}",
            f"  hand images shown     {ms(drawn[1:])}",
            f"  DOM load event        {ms(loaded[1:])}",
            f"  GET /api/play/TOKEN   {ms(gets)} (50 fetches by the page)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--polls", type=int, default=300)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_web_"))
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "play", str(config),
                               "--no-browser", "--port", "0", "--out", str(folder / "out")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        match = re.search(r"(http://\S+)/play/(\S+)", server.stdout.readline())
        if not match:
            raise SystemExit("dixit-lab play did not print a seat URL")
        base, token = match.groups()
        lines = page_loads(base, token, args.loads) if args.loads else []
        if args.polls:
            times, tally = asyncio.run(long_polls(base, token, args.polls))
            lines += [f"GET /api/play/TOKEN with {args.polls} long polls of the seat sent "
                      f"first: {ms(times)} (5 fetches)",
                      "  the polls by then: " + ", ".join(f"{k} {v}" for k, v in tally.items())]
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
