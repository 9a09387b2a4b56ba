"""Measure a reference pool of the league and write data/league/pool-<version>.json.

    python scripts/calibrate_pool.py --version 1

A shipped version is frozen: never rerun this over an existing file (the script refuses); a
change to a member, the rules, the deck or the table size is a new version
(dixit_lab/league/pool.py says why)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from dixit_lab.league.pool import PoolMember, calibrate

ROOT = Path(__file__).resolve().parents[1]

#: version 1: the built-ins at fixed parameters, weak to strong, on the bundled deck
MEMBERS = {
    "1": [PoolMember("random", "random"),
          PoolMember("softmax-0.3", "softmax", {"temperature": 0.3}),
          PoolMember("softmax-0.05", "softmax", {"temperature": 0.05}),
          PoolMember("literal", "literal"),
          PoolMember("ambiguity-0.5", "ambiguity", {"target": 0.5})],
}
DESCRIPTION = {
    "1": "five built-ins from random to the tuned ambiguity storyteller, four to a table, "
         "classic rules, the bundled dreams deck",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, choices=sorted(MEMBERS))
    parser.add_argument("--deals", type=int, default=1600, help="deals a table")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--force", action="store_true", help="overwrite (never a shipped one)")
    args = parser.parse_args()
    target = ROOT / "data" / "league" / f"pool-{args.version}.json"
    if target.exists() and not args.force:
        print(f"{target} exists: a shipped pool is frozen (make a new version)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        pool = calibrate(args.version, MEMBERS[args.version], rules="classic", deck="dreams",
                         table_size=4, deals=args.deals, seed=args.seed,
                         out=Path(folder) / "games",
                         description=DESCRIPTION[args.version], say=print)
    target.write_text(json.dumps(pool.to_json(), indent=2) + "\n", encoding="utf-8")
    for name in pool.names:
        low, high = pool.intervals[name]
        print(f"{name:>14}  {pool.strengths[name]:+.3f}  [{low:+.3f}, {high:+.3f}]")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
