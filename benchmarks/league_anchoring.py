"""Is a league's rating anchored? Members of the reference pool entered again, and two new
agents, each in several leagues dealt from fresh secrets.

    python benchmarks/league_anchoring.py [--leagues 2] [--target-width 0.3]

A member entered again meets the other members, as it did when the pool was measured, so its
95% interval should hold its shipped strength about 95% of the time; a new agent's ratings
from two leagues should agree within their intervals, and a strong one sit above a weak one.
With ``--nearest`` it also seats each member with the three members nearest its strength (the
opponents whose comparisons tell most, were Dixit's odds the same in every company) to show
why the league does not: the ratings leave the pool's scale. Prints one line per entry and
the share of member intervals that hold their strength. docs/league.md quotes these figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from scipy.special import expit

from dixit_lab.league import entry as league_entry
from dixit_lab.league.entry import LeagueOptions, enter, same_member
from dixit_lab.league.pool import Pool, load_pool

NEW = {"strong": "ambiguity(target=0.4)", "weak": "softmax(temperature=0.5)"}


def _nearest(pool: Pool, spec: str) -> list[tuple[str, ...]]:
    """One set: the members nearest the entrant's pool strength (by p (1 - p))."""
    same = same_member(pool, spec)
    names = [name for name in pool.names if name != same]
    target = pool.strengths[same] if same else 0.0
    ranked = sorted(names, key=lambda n: -expit(target - pool.strengths[n])
                    * expit(pool.strengths[n] - target))
    chosen = set(ranked[:pool.table_size - 1])
    return [tuple(name for name in names if name in chosen)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leagues", type=int, default=2)
    parser.add_argument("--target-width", type=float, default=0.3)
    parser.add_argument("--max-games", type=int, default=4000)
    parser.add_argument("--nearest", action="store_true",
                        help="also seat each member with the members nearest it")
    args = parser.parse_args()
    pool = load_pool()
    options = LeagueOptions(target_width=args.target_width, max_games=args.max_games)
    entrants = [(f"again-{m.name}", m.spec) for m in pool.members] + list(NEW.items())
    held = total = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        designs = [("balanced", league_entry.opponent_sets)]
        if args.nearest:
            designs.append(("nearest", _nearest))
        for design, sets in designs:
            league_entry.opponent_sets = sets  # type: ignore[assignment]
            for league in range(args.leagues):
                secret = os.urandom(16).hex()
                for name, spec in entrants:
                    if design == "nearest" and name in NEW:
                        continue
                    record = enter(Path(folder) / f"{design}-{league}", name, spec, pool,
                                   options, deal_secret=secret, say=lambda _: None)
                    member = same_member(pool, spec)
                    line = (f"{design:>8} league {league + 1} {name:>20}: "
                            f"{record.strength:+.3f} [{record.ci_low:+.3f}, "
                            f"{record.ci_high:+.3f}] {record.games:>5} games")
                    if member is not None:
                        inside = record.ci_low <= pool.strengths[member] <= record.ci_high
                        line += f"  pool {pool.strengths[member]:+.3f} " + (
                            "held" if inside else "MISSED")
                        if design == "balanced":
                            held, total = held + inside, total + 1
                    print(line, flush=True)
    print(f"balanced: member intervals holding their pool strength: {held}/{total}; "
          f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
