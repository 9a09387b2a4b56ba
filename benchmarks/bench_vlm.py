"""Model agents' throughput: decisions/s against the bound on concurrent requests.

    python benchmarks/bench_vlm.py [--latency 0.2] [--levels 1,4,16,64] [--rounds 2]

The stub server (``python -m dixit_lab.vlm.stub``) runs in its own process and answers every
request after a fixed ``latency``; five ``vlm`` agents per table play every game of a chunk at
once (``dixit_lab.vlm.driver``), with ``concurrency`` requests in flight at most. The ideal is
``concurrency / latency`` decisions/s; the target (issue 17) is at least 80 % of it. Replies
are requested fresh (record mode, in memory). Not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from dixit_lab.core.rules import get_rules
from dixit_lab.run.tournament import TableSetup, schedule_games
from dixit_lab.vlm.driver import play_remote_chunk
from dixit_lab.vlm.store import exchange_session


def start_stub(latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "dixit_lab.vlm.stub", "--latency",
                                str(latency)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("serving "):
        process.kill()
        raise SystemExit(f"the stub server did not start: {line!r}")
    return process, line.removeprefix("serving ")


def measure(base_url: str, concurrency: int, rounds: int, players: int = 5) -> tuple[int, float]:
    """(decisions, seconds) of enough games in flight to keep ``concurrency`` requests busy."""
    spec = (f"vlm(model=good, base_url={base_url}, concurrency={concurrency}, "
            f"http_retries=0, retries=0, timeout=30)")
    games = max(2, 2 * concurrency)  # a game offers ~3 decisions at once on average
    setup = TableSetup(seed=concurrency, rules=get_rules("classic", max_rounds=rounds),
                       deck="dreams", names=tuple(f"p{i}" for i in range(players)),
                       specs=(spec,) * players, on_illegal="fallback")
    chunk = schedule_games("rotation", players, players, games, concurrency)
    with exchange_session(None, "record"):
        play_remote_chunk(setup, chunk[:1])  # warm up: images encoded, connections open
        start = time.perf_counter()
        play_remote_chunk(setup, chunk)
        seconds = time.perf_counter() - start
    decisions = games * rounds * (1 + 2 * (players - 1))
    return decisions, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", default="1,4,16,64")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    process, base_url = start_stub(args.latency)
    try:
        print(f"stub at {base_url}, {args.latency * 1000:.0f} ms a reply, 5 vlm agents a table")
        print(f"{'concurrency':>11} {'decisions':>9} {'seconds':>8} {'decisions/s':>11} "
              f"{'ideal':>7} {'of ideal':>8}")
        for level in (int(x) for x in args.levels.split(",")):
            decisions, seconds = measure(base_url, level, args.rounds)
            rate, ideal = decisions / seconds, level / args.latency
            print(f"{level:>11} {decisions:>9} {seconds:>8.2f} {rate:>11.1f} {ideal:>7.1f} "
                  f"{rate / ideal:>8.0%}")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
