"""The cost of isolation: the same games with every agent in the engine's process, in its own
process (``isolation: process``) and in a sandbox (``isolation: sandbox``, a fresh game process
forked from the sandbox's template every game), per decision (tell, submit or vote) and per
game start-up (``begin_game``: for a sandbox, the game process handed over, its agent made,
the context sent).

    python benchmarks/bench_isolation.py [--games 100]

The Speed issue's targets for a sandboxed seat: at most 1 ms a decision and 50 ms a game's
start-up. ``random`` isolates the sandbox's own cost (its agent costs nothing to make); the
built-in agents' rows add what a fresh process costs them (making the agent again each game).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dixit_lab.core.agent import Agent, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.isolation.isolated_agent import IsolatedAgent
from dixit_lab.isolation.trust import Isolation


class Timed(Agent):
    """An agent, with the time its ``begin_game`` took."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.spec, self.begin_seconds = agent, agent.spec, 0.0

    def begin_game(self, context: Any) -> None:
        start = time.perf_counter()
        self.agent.begin_game(context)
        self.begin_seconds += time.perf_counter() - start

    def tell(self, view: Any) -> Any:
        return self.agent.tell(view)

    def submit(self, view: Any) -> Any:
        return self.agent.submit(view)

    def vote(self, view: Any) -> Any:
        return self.agent.vote(view)

    def observe(self, result: Any) -> None:
        self.agent.observe(result)


def timed(table: list[Timed], games: int, first: int = 0) -> tuple[float, int, list[float]]:
    """(seconds, decisions, each seat's seconds in begin_game) of ``games`` games."""
    rules, deck = get_rules("classic"), load_deck("dreams")
    for agent in table:
        agent.begin_seconds = 0.0
    decisions = 0
    start = time.perf_counter()
    for g in range(first, first + games):
        record = play_game(table, rules, deck, game_seed(1, g))  # type: ignore[arg-type]
        decisions += sum(len(record.agents) * 2 - 1 for _ in record.rounds)
    return time.perf_counter() - start, decisions, [a.begin_seconds for a in table]


def round_trips(modes: tuple[str, ...], calls: int = 300, batches: int = 7
                ) -> dict[str, tuple[float, float]]:
    """(seconds a vote, seconds a game's start-up) of ``random``, in the engine and in each
    mode: the fastest of ``batches`` batches (the least disturbed by other work on the
    machine)."""
    from dixit_lab.core.agent import VoteView
    from dixit_lab.engine.game import GameSteps

    deck, rules = load_deck("dreams"), get_rules("classic")
    view = VoteView(1, 3, 0, "dream", (1, 2, 3, 4, 5), (7, 8, 9, 10), (2,), (0, 0, 0, 0), ())
    out = {}
    for mode in ("in-process", *modes):
        agent = make_agent("random") if mode == "in-process" else IsolatedAgent(
            "random", Isolation(mode))  # type: ignore[arg-type]
        games = [GameSteps(("random",) * 4, rules, deck, game_seed(3, g)) for g in range(20)]
        agent.begin_game(games[0].context(1))
        vote = start = float("inf")
        for _ in range(batches):
            began = time.perf_counter()
            for _ in range(calls):
                agent.vote(view)
            vote = min(vote, (time.perf_counter() - began) / calls)
            began = time.perf_counter()
            for game in games:
                agent.begin_game(game.context(1))
                time.sleep(0.01)  # a game goes on meanwhile (the template forks the next)
            start = min(start, (time.perf_counter() - began) / len(games) - 0.01)
        out[mode] = (vote, start)
        close = getattr(agent, "close", None)
        if close:
            close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    args = parser.parse_args()
    specs = ["literal", "softmax", "ambiguity(target=0.4)", "random", "random"]
    tables: dict[str, list[Timed]] = {"in-process": [Timed(make_agent(s)) for s in specs]}
    startup: dict[str, float] = {}
    for mode in ("process", "sandbox"):
        start = time.perf_counter()
        tables[mode] = [Timed(IsolatedAgent(s, Isolation(mode))) for s in specs]  # type: ignore[arg-type]
        startup[mode] = time.perf_counter() - start
    results = {}
    for mode, table in tables.items():
        timed(table, 2, first=10_000)  # children start, spaces load
        results[mode] = timed(table, args.games)
    for table in tables.values():
        for agent in table:
            close = getattr(agent.agent, "close", None)
            if close:
                close()
    base, decisions, base_begin = results["in-process"]
    print(f"{args.games} games, {decisions} decisions, 5 seats ({', '.join(specs)}); "
          f"every seat isolated at once, the children beside the engine on this machine")
    print(f"{'':24}{'whole':>9}{'games/s':>9}{'per decision':>15}{'per game start-up':>19}")
    for mode, (seconds, _, begins) in results.items():
        extra_begin = sum(begins) - sum(base_begin)
        per_decision = (seconds - base - extra_begin) / decisions * 1e3
        per_start = [(b - b0) / args.games * 1e3 for b, b0 in zip(begins, base_begin,
                                                                     strict=True)]
        label = "in the engine" if mode == "in-process" else f"isolation: {mode}"
        decision = "" if mode == "in-process" else f"{per_decision:9.3f} ms"
        start = "" if mode == "in-process" else f"{max(per_start):10.1f} ms (max)"
        print(f"  {label:22}{seconds:8.2f}s{args.games / seconds:9.1f}{decision:>15}{start:>19}")
        if mode == "sandbox":
            rows = ", ".join(f"{spec} {ms:.1f}" for spec, ms in zip(specs, per_start,
                                                                     strict=True))
            print(f"    start-up per game and seat (ms): {rows}")
    print("  random alone, fastest of 7 batches (the least disturbed by the machine's load):")
    trips = round_trips(("process", "sandbox"))
    vote0, start0 = trips["in-process"]
    for mode, (vote, start) in trips.items():
        if mode != "in-process":
            print(f"    isolation: {mode:8}  +{(vote - vote0) * 1e3:.3f} ms a decision, "
                  f"+{(start - start0) * 1e3:.1f} ms a game's start-up")
    for mode, seconds in startup.items():
        note = "; a sandbox takes a second or two to start" if mode == "sandbox" else ""
        print(f"  isolation: {mode}: the specs checked in {seconds:.2f} s for 5 seats (one "
              f"child each, once a run{note})")


if __name__ == "__main__":
    main()
