"""``dixit-lab export-bench``: a static listener set (DixitBench-style) from logged games.

Every scored round of a results folder becomes an item: the clue, the displayed cards (the
storyteller's card and the decoys the other players chose for that clue), and the position of
the storyteller's card. An item's **tier** is how hard the round was for the listeners who
played it: the share of voters who found the card, ``easy`` at 2/3 or more, ``hard`` at 1/3
or less, ``medium`` between. Rounds whose clue the engine had to replace (a storyteller
fault) are left out. A model's listener skill can then be measured on the items without
playing a game.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.atomic import atomic_write_text
from dixit_lab.records.decks import DeckLookup, by_name, folder_decks
from dixit_lab.records.files import games_file
from dixit_lab.records.format import GameRecord, read_jsonl

__all__ = ["TIERS", "bench_items", "export_bench", "tier_of"]

TIERS = ("easy", "medium", "hard")


def tier_of(find_rate: float) -> str:
    """``easy`` (>= 2/3 of the voters found the card), ``hard`` (<= 1/3) or ``medium``."""
    if find_rate >= 2 / 3:
        return "easy"
    return "hard" if find_rate <= 1 / 3 else "medium"


def bench_items(records: Iterable[GameRecord], source: str = "",
                decks: DeckLookup = by_name) -> Iterator[dict[str, Any]]:
    """One item per round whose storyteller told (no ``tell`` fault); ``decks``: how the
    games' deck is found (a results folder's :func:`~dixit_lab.records.decks.folder_decks`;
    a deck that cannot be loaded names its cards by deck index)."""
    found: dict[str, Any] = {}
    for number, record in enumerate(records):
        if record.deck not in found:
            found[record.deck] = decks(record.deck)
        deck = found[record.deck]
        game = record.meta.get("game", number)
        for index, rnd in enumerate(record.rounds):
            if any(f.seat == rnd.storyteller and f.action == "tell" for f in rnd.faults):
                continue
            voters = [v for v in rnd.votes if v is not None]
            answer = rnd.display.index(rnd.storyteller_card)
            rate = sum(1 for v in voters if v == answer) / len(voters)
            names = [deck[c].id if deck is not None else c for c in rnd.display]
            yield {
                "id": f"{source}{game}-{index}",
                "deck": record.deck,
                "clue": rnd.clue,
                "candidates": names,
                "answer": answer,
                "target": names[answer],
                "tier": tier_of(rate),
                "find_rate": round(rate, 4),
                "storyteller": record.agents[rnd.storyteller],
                "n_players": record.n_players,
            }


def export_bench(sources: list[str | Path], out: str | Path, *, per_tier: int | None = None,
                 seed: int = 0) -> Counter[str]:
    """Write the items of ``sources`` (results folders or games.jsonl files) to ``out`` as
    JSON Lines; with ``per_tier``, at most that many items of each tier, drawn with ``seed``.
    Returns the number of items written per tier."""
    items: list[dict[str, Any]] = []
    for position, source in enumerate(sources):
        path = games_file(source)
        prefix = f"{position}:" if len(sources) > 1 else ""
        items.extend(bench_items(read_jsonl(path), prefix, folder_decks(path)))
    if per_tier is not None:
        rng = np.random.default_rng(seed)
        chosen: list[dict[str, Any]] = []
        for tier in TIERS:
            pool = [item for item in items if item["tier"] == tier]
            keep = sorted(rng.permutation(len(pool))[:per_tier].tolist())
            chosen.extend(pool[i] for i in keep)
        items = sorted(chosen, key=lambda item: (TIERS.index(item["tier"]), item["id"]))
    atomic_write_text(out, "".join(json.dumps(item, ensure_ascii=False) + "\n"
                                   for item in items))
    return Counter(item["tier"] for item in items)
