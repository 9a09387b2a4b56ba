"""The compiled kernel vs the NumPy batched engine vs a bare C Dixit loop, on one core.

    python benchmarks/bench_compiled.py [--games 100000] [--repeats 3]

Needs the ``fast`` extra (Numba) and gcc. Each repeat measures, in this one process (games
per CPU second, ``time.process_time``, so that other load on the machine does not count):

1. ``kernel``: :func:`dixit_lab.engine.compiled.play_keys`, the games of 5 seats of each table
   (``--games`` games in chunks of 5,000, as the runner's chunks): the seats' streams, the
   kernel, its round arrays (kept from chunk to chunk, as the engine keeps them); no records.
2. ``kernel + records``: :func:`dixit_lab.engine.compiled.play_compiled`, the same games and
   their JSON lines (the records writer is the batched engine's, in NumPy and Python).
3. ``numpy batched``: :func:`dixit_lab.engine.batched.play_batch`, the same games and lines.
4. ``bare C`` (``5 random`` only): ``benchmarks/bare_dixit.c``, compiled now with ``gcc -O2``:
   classic rules, 5 random players, full scoring, nothing recorded (its CPU time).

It prints each figure's median over the repeats and its ratio to the others measured in the
same run, and the cold and warm start of the kernel (a fresh process: import, then a first
batch; cold with Numba's cache emptied first).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.batched import _keys, play_batch, prepare_tables
from dixit_lab.engine.compiled import agent_blocker, kernel_problem, play_compiled, play_keys

TABLES = {"5 random": "random", "5 literal": "literal", "5 softmax": "softmax",
          "5 pragmatic": "pragmatic", "5 ambiguity": "ambiguity"}
CHUNK = 5000
_START = """
import time
start = time.perf_counter()
from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.compiled import play_compiled
agents = [make_agent("random")] * 5
imported = time.perf_counter()
play_compiled([agents] * 10, get_rules("classic"), load_deck("dreams"),
              [game_seed(1, g) for g in range(10)])
print(imported - start, time.perf_counter() - imported)
"""


def kernel_rate(spec: str, games: int) -> float:
    rules, deck = get_rules("classic"), load_deck("dreams")
    agent = make_agent(spec)
    seeds = [game_seed(1, g) for g in range(CHUNK)]
    table = prepare_tables([[agent] * 5] * CHUNK, rules, deck, seeds)
    chunks = [_keys([game_seed(1, g) for g in range(first, first + CHUNK)])
              for first in range(0, games, CHUNK)]
    play_keys(table, rules, chunks[0], reuse=True)  # compiled or loaded before the clock
    start = time.process_time()
    for keys in chunks:
        play_keys(table, rules, keys, reuse=True)  # as the engine plays: its round arrays kept
    return CHUNK * len(chunks) / (time.process_time() - start)


def records_rate(spec: str, games: int, play) -> float:  # type: ignore[no-untyped-def]
    rules, deck = get_rules("classic"), load_deck("dreams")
    agent = make_agent(spec)
    play([[agent] * 5] * 20, rules, deck, [game_seed(9, g) for g in range(20)])
    chunk = min(games, CHUNK)
    start = time.process_time()
    for first in range(0, games, chunk):
        play([[agent] * 5] * chunk, rules, deck,
             [game_seed(1, g) for g in range(first, first + chunk)])
    return games / (time.process_time() - start)


def bare_c_rate(binary: Path, games: int) -> float:
    out = subprocess.run([str(binary), str(games)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def start_costs() -> tuple[tuple[float, float], tuple[float, float]]:
    """(import s, first batch s) of a fresh process, cold (Numba's cache emptied) and warm."""
    import dixit_lab.engine

    cache = Path(dixit_lab.engine.__file__).parent / "__pycache__"
    for pattern in ("kernel.*.nb*", "kernel_bases.*.nb*"):  # the kernel's and the seat bases'
        for stale in cache.glob(pattern):
            stale.unlink()
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True,
                             check=True)
        first, second = out.stdout.split()
        runs.append((float(first), float(second)))
    return runs[0], runs[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--records-games", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold start")
    args = parser.parse_args()
    problem = kernel_problem()
    if problem is not None:
        sys.exit(problem)
    gcc = shutil.which("gcc")
    if gcc is None:
        sys.exit("the bare C baseline needs gcc")
    with tempfile.TemporaryDirectory() as folder:
        binary = Path(folder) / "bare_dixit"
        subprocess.run([gcc, "-O2", "-o", str(binary),
                        str(Path(__file__).with_name("bare_dixit.c"))], check=True)
        if not args.no_cold:
            (cold_import, cold_first), (warm_import, warm_first) = start_costs()
            print(f"start (a fresh process, 10 games): cold import {cold_import:.2f} s + first "
                  f"batch {cold_first:.1f} s (compiling); warm import {warm_import:.2f} s + "
                  f"first batch {warm_first:.2f} s (Numba's cache)", flush=True)
        bare = [bare_c_rate(binary, 4 * args.games) for _ in range(args.repeats)]
        c = statistics.median(bare)
        print(f"bare C (5 random, no records): {c:,.0f} games/CPU s "
              f"(runs: {', '.join(f'{x:,.0f}' for x in bare)})", flush=True)
        print(f"{'table':<12} {'kernel':>10} {'+records':>10} {'numpy':>10} "
              f"{'kernel/numpy':>12} {'+rec/numpy':>10} {'kernel/C':>9}")
        for name, spec in TABLES.items():
            blocker = agent_blocker(make_agent(spec))
            if blocker is not None:
                print(f"{name:<12} refused by the kernel: {blocker}", flush=True)
                continue
            kernel, records, numpy, ratio_c = [], [], [], []
            for _ in range(args.repeats):
                kernel.append(kernel_rate(spec, args.games))
                if spec == "random":
                    ratio_c.append(kernel[-1] / bare_c_rate(binary, 4 * args.games))
                records.append(records_rate(spec, args.records_games, play_compiled))
                numpy.append(records_rate(spec, args.records_games, play_batch))
            k, r, m = (statistics.median(x) for x in (kernel, records, numpy))
            versus_c = f"{statistics.median(ratio_c):.2f}" if ratio_c else "-"
            print(f"{name:<12} {k:>10,.0f} {r:>10,.0f} {m:>10,.0f} {k / m:>12.1f} "
                  f"{r / m:>10.1f} {versus_c:>9}", flush=True)
    print("games per CPU second, medians of", args.repeats, "repeats; ratios of medians, "
          "kernel/C of each repeat's pair")


if __name__ == "__main__":
    main()
