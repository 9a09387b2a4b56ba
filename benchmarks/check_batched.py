"""Equivalence of the batched and reference engines at scale (the CI test runs a sample).

    python benchmarks/check_batched.py [--games 1000] [--workers 2] [--engine compiled]
                                       [--deck-exhausted play_out_hands]

For every agent with a batched policy, every rule preset and 3 to 6 players (and 8 under
refresh, the only preset that allows 8), plays ``--games`` games with every seat held by that
agent, once with the reference engine and once with the batched engine
(``--engine compiled``: the compiled kernel, the ``fast`` extra), and compares the JSON lines
byte for byte (the agents the compiled kernel refuses are named, not played);
``--deck-exhausted`` plays every preset with that end of the pile instead of its own. Prints
one line per case and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import DECK_EXHAUSTED_MODES, get_rules
from dixit_lab.testing import batch_differences

AGENTS = ["random", "literal", "softmax", "ambiguity(target=0.5)", "pragmatic"]


def check(case: tuple[str, str, int, int, str, dict[str, str]]
          ) -> tuple[str, str, int, int, int, float]:
    spec, preset, n, games, engine, options = case
    start = time.perf_counter()
    differing = len(batch_differences([spec] * n, get_rules(preset, **options),
                                      load_deck("dreams"), games, seed=2026, engine=engine))
    return spec, preset, n, games, differing, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine", choices=["batched", "compiled"], default="batched")
    parser.add_argument("--deck-exhausted", choices=DECK_EXHAUSTED_MODES, default=None)
    args = parser.parse_args()
    agents = AGENTS
    if args.engine == "compiled":  # the agents the kernel refuses are said, not checked
        from dixit_lab.engine.compiled import agent_blocker

        refused = {spec: agent_blocker(make_agent(spec)) for spec in AGENTS}
        for spec, blocker in refused.items():
            if blocker is not None:
                print(f"{spec}: refused by the compiled engine ({blocker})")
        agents = [spec for spec in AGENTS if refused[spec] is None]
    options = {"deck_exhausted": args.deck_exhausted} if args.deck_exhausted else {}
    cases = [(spec, preset, n, args.games, args.engine, options) for spec in agents
             for preset in ("classic", "refresh", "quest")
             for n in ((3, 4, 5, 6, 8) if preset == "refresh" else (3, 4, 5, 6))]
    total = bad = 0
    print(f"{'agent':<24} {'rules':<8} {'players':>7} {'games':>6} {'differ':>6} {'s':>6}")
    with ProcessPoolExecutor(args.workers) as pool:
        for spec, preset, n, games, differing, seconds in pool.map(check, cases):
            total += games
            bad += differing
            print(f"{spec:<24} {preset:<8} {n:>7} {games:>6} {differing:>6} {seconds:>6.1f}",
                  flush=True)
    print(f"{len(cases)} cases, {total} games compared, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
