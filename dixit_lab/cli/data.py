"""The commands that make data: ``embed`` (the shipped embeddings of a deck) and
``export-bench`` (a static listener set from played games)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_commands"]


def cmd_embed(args: argparse.Namespace) -> int:
    from dixit_lab.embeddings import regenerate_shipped

    for deck in args.deck:
        out = Path(args.out) if args.out else None
        for path in regenerate_shipped(deck, args.embedder, args.clues, out):
            print(f"wrote {path}")
    return 0


def cmd_export_bench(args: argparse.Namespace) -> int:
    from dixit_lab.report.bench_export import TIERS, export_bench

    counts = export_bench(args.results, args.out, per_tier=args.per_tier, seed=args.seed)
    print(f"wrote {sum(counts.values())} items to {args.out} ("
          + ", ".join(f"{tier} {counts[tier]}" for tier in TIERS) + ")")
    return 0


def add_embed(sub: Any) -> None:
    embed = sub.add_parser("embed", help="(re)compute the shipped embeddings of a deck")
    embed.add_argument("--deck", action="append", required=True,
                       help="deck name (repeat for several)")
    embed.add_argument("--embedder", default="conse")
    embed.add_argument("--clues", default="default")
    embed.add_argument("--out", help="folder (default: data/embeddings)")
    embed.set_defaults(func=cmd_embed)


def add_export_bench(sub: Any) -> None:
    bench = sub.add_parser("export-bench", help="a static listener set (clue, cards, answer, "
                                                "difficulty tier) from logged games")
    bench.add_argument("results", nargs="+", help="results folders or games.jsonl files")
    bench.add_argument("--out", required=True, help="the items, as JSON Lines")
    bench.add_argument("--per-tier", type=int, help="at most this many items of each tier")
    bench.add_argument("--seed", type=int, default=0, help="draws the --per-tier sample")
    bench.set_defaults(func=cmd_export_bench)


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    add_embed(sub)
    add_export_bench(sub)
