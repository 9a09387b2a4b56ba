"""The rows of rounds.parquet, computed from columnar batches, against the records read
another way (one Python loop per seat and round, as the table was first defined)."""

from __future__ import annotations

import pandas as pd

from dixit_lab.core.cards import load_deck
from dixit_lab.records.format import player_names
from dixit_lab.stats.metrics import rounds_frame
from dixit_lab.stats.round_table import ROUND_COLUMNS
from tests.records.test_batches import mixed  # noqa: F401 (a fixture)


def _expected(records: list) -> pd.DataFrame:
    ids = [card.id for card in load_deck("dreams").cards]
    rows = []
    for index, record in enumerate(records):
        names = player_names(record)
        for number, rnd in enumerate(record.rounds):
            target = rnd.display.index(rnd.storyteller_card)
            finders = sum(1 for v in rnd.votes if v == target)
            for seat in range(record.n_players):
                vote = rnd.votes[seat]
                own = [i for i, owner in enumerate(rnd.card_owner) if owner == seat]
                received = sum(1 for v in rnd.votes if v is not None and v in own)
                teller = seat == rnd.storyteller
                rows.append({
                    "game": record.meta.get("game", index), "round": number, "seat": seat,
                    "agent": record.agents[seat], "n_players": record.n_players,
                    "rules": record.rules, "role": "storyteller" if teller else "listener",
                    "clue": rnd.clue, "outcome": rnd.outcome, "vote": vote,
                    "found": None if vote is None else vote == target,
                    "votes_received": received, "points": rnd.points[seat],
                    "score": rnd.scores[seat],
                    "faults": sum(1 for f in rnd.faults if f.seat == seat),
                    "unperceived": int(seat in rnd.unperceived),
                    "record_index": index, "player": names[seat],
                    "storyteller_seat": rnd.storyteller,
                    "storyteller_card": ids[rnd.storyteller_card],
                    "voted_card": None if vote is None else ids[rnd.display[vote]],
                    "n_finders": finders, "n_voters": record.n_players - 1,
                    "decoy_votes": 0 if teller else received})
    return pd.DataFrame(rows, columns=list(ROUND_COLUMNS))


def test_rounds_frame_is_the_table_row_by_row(mixed) -> None:  # noqa: F811
    table = rounds_frame(mixed).sort_values(["record_index", "round", "seat"],
                                            ignore_index=True)
    expected = _expected(mixed)
    assert list(table.columns) == list(ROUND_COLUMNS)
    for column in ROUND_COLUMNS:
        got = table[column].astype(object).where(table[column].notna(), None).tolist()
        assert got == expected[column].astype(object).where(expected[column].notna(),
                                                             None).tolist(), column
    assert str(table["vote"].dtype) == "Int64" and str(table["found"].dtype) == "boolean"
    assert str(table["clue"].dtype) == "category"
