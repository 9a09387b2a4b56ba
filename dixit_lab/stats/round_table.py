"""The tidy per seat-round table (``rounds.parquet``) built from columnar batches of games.

Columns and types: docs/results.md. Text columns are dictionary-encoded (pandas reads them as
``category``: a million games' 110 million rows stay a few bytes a row); ``vote`` and
``found`` are nullable (pandas ``Int64`` and ``boolean``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.records.batches import OUTCOME_NAMES, GameBatch
from dixit_lab.records.decks import DeckLookup, by_name

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["ROUNDS_DATASET", "ROUND_COLUMNS", "part_stem", "round_table", "rounds_dataframe",
           "write_round_table"]

#: the columns of rounds.parquet, in order
ROUND_COLUMNS: tuple[str, ...] = (
    "game", "round", "seat", "agent", "n_players", "rules", "role", "clue", "outcome", "vote",
    "found", "votes_received", "points", "score", "faults", "unperceived", "record_index",
    "player",
    "storyteller_seat", "storyteller_card", "voted_card", "n_finders", "n_voters",
    "decoy_votes")
_TEXT = ("agent", "rules", "role", "clue", "outcome", "player", "storyteller_card",
         "voted_card")


#: the round table of a results folder: a Parquet dataset folder, one file per chunk, written
#: whole beside it and put in its place at once (:func:`dixit_lab.atomic.replace_folder`)
ROUNDS_DATASET = "rounds.parquet"


def part_stem(first: int, last: int) -> str:
    """The name stem of a chunk's files (its first and last game)."""
    return f"{first:07d}-{last:07d}"


class _CardNames:
    """Deck index -> card id (``dreams-042``), ``#41`` when the deck cannot be loaded; the
    deck of a record's name found by ``decks`` (a results folder's:
    :func:`~dixit_lab.records.decks.folder_decks`)."""

    def __init__(self, decks: DeckLookup = by_name) -> None:
        self._lookup = decks
        self._decks: dict[str, np.ndarray | None] = {}

    def dictionary(self, batch: GameBatch, per_row: np.ndarray, missing: np.ndarray,
                   game_of_row: np.ndarray) -> pa.DictionaryArray:
        """The card id of each row's deck index (null where ``missing``)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        names = pc.unique(batch.deck).to_pylist()  # a hash, not a sort of every game's name
        if len(names) == 1:
            ids = self._ids(str(names[0]))
            if ids is not None and per_row.max(initial=-1) < len(ids) and \
                    per_row.min(initial=0) >= 0:
                dictionary = pa.array(ids.tolist(), pa.string())
                indices = pa.array(per_row.astype(np.int32), pa.int32(), mask=missing)
                return pa.DictionaryArray.from_arrays(indices, dictionary)
        decks = batch.deck.to_numpy(zero_copy_only=False)
        texts = [None if gone else self._one(str(decks[g]), int(card))
                 for gone, g, card in zip(missing, game_of_row, per_row, strict=True)]
        return pa.array(texts, pa.string()).dictionary_encode()

    def _ids(self, deck: str) -> np.ndarray | None:
        if deck not in self._decks:
            found = self._lookup(deck)
            self._decks[deck] = None if found is None else np.array(
                [card.id for card in found.cards], dtype=object)
        return self._decks[deck]

    def _one(self, deck: str, card: int) -> str:
        ids = self._ids(deck)
        return str(ids[card]) if ids is not None and 0 <= card < len(ids) else f"#{card}"


def round_table(batch: GameBatch, cards: _CardNames | None = None) -> pa.Table:
    """The rows of ``rounds.parquet`` for one batch: one per seat per round."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cards = cards or _CardNames()
    n, r = batch.n, batch.rounds
    rows = r * n
    per_round = np.repeat(np.arange(r), n)
    seat = np.tile(np.arange(n, dtype=np.int64), r)
    storyteller = batch.is_storyteller.ravel()
    votes = batch.votes.ravel()
    listener = ~storyteller
    received = batch.votes_received.ravel()
    game_of_row = batch.round_game[per_round]

    def by_game(values: Any) -> pa.DictionaryArray:
        encoded = pc.dictionary_encode(values)
        return pa.DictionaryArray.from_arrays(
            pa.array(np.asarray(encoded.indices)[game_of_row].astype(np.int32)),
            encoded.dictionary)

    def by_seat(values: Any) -> pa.DictionaryArray:
        encoded = pc.dictionary_encode(values)
        index = np.asarray(encoded.indices)[game_of_row * n + seat].astype(np.int32)
        return pa.DictionaryArray.from_arrays(pa.array(index), encoded.dictionary)

    clue = pc.dictionary_encode(batch.clue)
    outcome = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(batch.outcome_codes, n).astype(np.int32)),
        pa.array(list(OUTCOME_NAMES)))
    role = pa.DictionaryArray.from_arrays(pa.array(storyteller.astype(np.int32) ^ 1),
                                          pa.array(["storyteller", "listener"]))
    own = batch.storyteller_card[per_round]
    safe_vote = np.maximum(votes, 0)
    voted = batch.display[per_round, safe_vote]
    n_finders = np.repeat(batch.n_finders, n)
    columns: dict[str, Any] = {
        "game": batch.game[game_of_row],
        "round": batch.round_number[per_round],
        "seat": seat,
        "agent": by_seat(batch.agents),
        "n_players": np.full(rows, n, dtype=np.int64),
        "rules": by_game(batch.rules),
        "role": role,
        "clue": pa.DictionaryArray.from_arrays(
            pa.array(np.asarray(clue.indices)[per_round].astype(np.int32)), clue.dictionary),
        "outcome": outcome,
        "vote": pa.array(votes, pa.int64(), mask=storyteller),
        "found": pa.array(batch.found.ravel(), pa.bool_(), mask=storyteller),
        "votes_received": received,
        "points": batch.points.ravel(),
        "score": batch.scores.ravel(),
        "faults": batch.faults.ravel(),
        "unperceived": batch.unperceived.ravel(),
        "record_index": batch.record_index[game_of_row],
        "player": by_seat(batch.players),
        "storyteller_seat": np.repeat(batch.storyteller, n),
        "storyteller_card": cards.dictionary(batch, own, np.zeros(rows, dtype=bool),
                                             game_of_row),
        "voted_card": cards.dictionary(batch, voted, storyteller, game_of_row),
        "n_finders": n_finders,
        "n_voters": np.full(rows, n - 1, dtype=np.int64),
        "decoy_votes": np.where(listener, received, 0),
    }
    arrays = [columns[name] if isinstance(columns[name], pa.Array)
              else pa.array(np.asarray(columns[name], dtype=np.int64)) for name in ROUND_COLUMNS]
    return pa.Table.from_arrays(arrays, names=list(ROUND_COLUMNS))


def _with_pandas_types(table: pa.Table) -> pa.Table:
    """The schema with pandas metadata, so that pandas reads ``vote`` as ``Int64`` and
    ``found`` as ``boolean`` (nullable) and the text columns as ``category``."""
    return table.replace_schema_metadata(_pandas_metadata())


@functools.cache
def _pandas_metadata() -> dict[bytes, bytes]:
    """:func:`_with_pandas_types`'s metadata, made once (a DataFrame each chunk was 2 µs a
    game)."""
    import pandas as pd
    import pyarrow as pa

    empty = pd.DataFrame({
        name: pd.Series(dtype="Int64" if name == "vote" else "boolean" if name == "found"
                        else "category" if name in _TEXT else "int64")
        for name in ROUND_COLUMNS})
    return pa.Schema.from_pandas(empty, preserve_index=False).metadata  # type: ignore[no-any-return]


#: the columns whose row groups carry min/max statistics in ``rounds.parquet``
_STATISTICS = ("game", "round", "seat", "record_index")


class RoundTableWriter:
    """Streams batches into ``rounds.parquet`` (one row group per batch); ``decks``: how the
    games' deck is found, for the card ids."""

    def __init__(self, path: Path, decks: DeckLookup = by_name) -> None:
        self.path = path
        self._writer: Any = None
        self._cards = _CardNames(decks)
        self.rows = 0

    def add(self, batch: GameBatch) -> None:
        import pyarrow.parquet as pq

        table = _with_pandas_types(round_table(batch, self._cards))
        if self._writer is None:
            self._schema = table.schema
            # zstd level 1: the size of the default level (3) at a quarter less time; min/max
            # statistics only for the keys a reader filters on (all of them cost a third of
            # the write)
            self._writer = pq.ParquetWriter(self.path, self._schema, compression="zstd",
                                            compression_level=1,
                                            write_statistics=list(_STATISTICS))
        self._writer.write_table(table.cast(self._schema))
        self.rows += table.num_rows

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        else:  # no game: an empty table with the columns
            import pyarrow.parquet as pq

            pq.write_table(_empty_table(), self.path)


def _empty_table() -> pa.Table:
    import pandas as pd
    import pyarrow as pa

    return pa.Table.from_pandas(pd.DataFrame(columns=list(ROUND_COLUMNS)), preserve_index=False)


def write_round_table(batches: Iterable[GameBatch], path: Path, decks: DeckLookup = by_name
                      ) -> int:
    """Write every batch's rows to ``path`` (``decks``: how the games' deck is found);
    returns the number of rows."""
    writer = RoundTableWriter(path, decks)
    try:
        for batch in batches:
            writer.add(batch)
    finally:
        writer.close()
    return writer.rows


def rounds_dataframe(batches: Iterable[GameBatch], decks: DeckLookup = by_name
                     ) -> pd.DataFrame:
    """The rows of every batch as one pandas DataFrame (for records held in memory; their
    deck by name unless ``decks`` says)."""
    import pandas as pd
    import pyarrow as pa

    cards = _CardNames(decks)
    tables = [_with_pandas_types(round_table(batch, cards)) for batch in batches]
    if not tables:
        return pd.DataFrame(columns=list(ROUND_COLUMNS))
    table = pa.concat_tables([t.cast(tables[0].schema) if t.schema != tables[0].schema
                              else t for t in tables], promote_options="permissive")
    return table.to_pandas()
