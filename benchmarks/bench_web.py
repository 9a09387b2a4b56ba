"""The play page's load time, in Debian's chromium (headless, through Playwright), against
``dixit-lab play`` running as a person runs it (its own process, on loopback): the seat's
page at the start of a game against three agents.

    python benchmarks/bench_web.py [--loads 10]

Prints, over ``--loads`` cold loads of the page (a new browser context each, so nothing is
cached): the time to the first drawn view (the page's ``dixit-lab:first-view`` mark), to every
card image of the hand shown, and the DOM's load event; then the latency of the API's GET,
fetched by the page. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from playwright.sync_api import sync_playwright

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10)
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
        first, drawn, loaded = [], [], []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                                 args=ARGS)
            for _ in range(args.loads + 1):  # the first load warms the server up: not counted
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
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"play page, {args.loads} cold loads (new browser context each), loopback:")
    print(f"  first view drawn      {ms(first[1:])}")
    print(f"  hand images shown     {ms(drawn[1:])}")
    print(f"  DOM load event        {ms(loaded[1:])}")
    print(f"  GET /api/play/TOKEN   {ms(gets)} (50 fetches by the page)")


if __name__ == "__main__":
    main()
