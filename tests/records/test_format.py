"""Game records: lossless JSON Lines round trip and the tidy DataFrame."""

from __future__ import annotations

import dataclasses

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.records.batches import UNPARSED_GAME_FIELDS, _schema
from dixit_lab.records.format import (
    GAME_FIELDS,
    GAME_OPTIONAL_FIELDS,
    ROUND_FIELDS,
    ROUND_OPTIONAL_FIELDS,
    Fault,
    GameRecord,
    RoundRecord,
    game_json_keys,
    new_round,
    read_jsonl,
    write_jsonl,
)
from dixit_lab.stats.metrics import games_to_frame
from tests.engine.test_game import Cheater


def _records(n_games=6):
    deck = Deck.numbered(84)
    records = []
    for i in range(n_games):
        agents = [make_agent("random") for _ in range(4)]
        if i % 2:
            agents[2] = Cheater("vote_own")
        records.append(play_game(agents, get_rules(["classic", "quest", "refresh"][i % 3]),
                                 deck, game_seed(5, i), on_illegal="fallback",
                                 meta={"game": i}))
    return records


def test_jsonl_round_trip_is_lossless(tmp_path):
    records = _records()
    path = tmp_path / "games.jsonl"
    assert write_jsonl(records, path) == len(records)
    back = list(read_jsonl(path))
    assert back == records
    assert path.read_text().splitlines() == [r.to_json() for r in records]
    assert any(r.faults for rec in back for r in rec.rounds)
    assert back[3].spawn_key == (3,) and back[3].seed == 5


def test_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text(_records(1)[0].to_json() + "\n{\"seed\": 1}\n")
    with pytest.raises(ValueError, match=r"games.jsonl, line 2: not a game record"):
        list(read_jsonl(path))


def test_frame_has_one_row_per_seat_per_round():
    records = _records(3)
    frame = games_to_frame(records)
    assert len(frame) == sum(len(r.rounds) * r.n_players for r in records)
    first = records[0].rounds[0]
    rows = frame[(frame.game == 0) & (frame["round"] == 0)]
    assert list(rows.points) == list(first.points)
    teller = rows[rows.role == "storyteller"]
    assert list(teller.seat) == [first.storyteller]
    assert teller.found.isna().all()
    listeners = rows[rows.role == "listener"]
    target = first.display.index(first.storyteller_card)
    assert list(listeners.found) == [first.votes[s] == target for s in listeners.seat]
    assert set(frame.outcome) <= {"some_found", "all_found", "none_found"}


def test_record_properties():
    record = _records(1)[0]
    assert record.n_players == 4
    for rnd in record.rounds:
        target = rnd.display.index(rnd.storyteller_card)
        assert rnd.finders == tuple(s for s, v in enumerate(rnd.votes) if v == target)
    assert GameRecord.from_json(record.to_json()) == record


def test_the_round_fields_have_one_home():
    """The record class, its reader and the columnar schema all follow ROUND_FIELDS (then the
    optional fields): a field added to one and not the others fails here."""
    import dataclasses

    names = [name for name, _ in ROUND_FIELDS + ROUND_OPTIONAL_FIELDS]
    assert sorted(f.name for f in dataclasses.fields(RoundRecord)) == sorted(names)
    round_type = _schema().field("rounds").type.value_type
    assert [round_type.field(i).name for i in range(round_type.num_fields)] == names
    record = RoundRecord(0, "x", 5, (5, 6, 7), (0, 1, 2), (None, 0, 0), (3, 3, 0), (3, 3, 0),
                         storyteller_hand=(5, 9), unperceived=(2,))
    assert RoundRecord.from_dict(record.to_dict()) == record
    old = {k: v for k, v in record.to_dict().items() if k != "storyteller_hand"}
    assert RoundRecord.from_dict(old).storyteller_hand == ()  # a record from before the field


def test_the_game_fields_have_one_home():
    """The record class, its writer and reader, the columnar schema and the batched engine's
    keys (:func:`game_json_keys`; tests/engine/test_batched.py checks its lines against
    ``to_json``) all follow GAME_FIELDS (then the optional fields): a field added to one and
    not the others fails here."""
    import dataclasses
    import json

    names = [name for name, _ in GAME_FIELDS + GAME_OPTIONAL_FIELDS]
    assert [f.name for f in dataclasses.fields(GameRecord)] == names
    assert set(UNPARSED_GAME_FIELDS) < set(names)
    assert _schema().names == [name for name in names if name not in UNPARSED_GAME_FIELDS]
    record = _records(1)[0]
    assert list(record.to_dict()) == names and GameRecord.from_dict(record.to_dict()) == record
    assert list(dataclasses.replace(record, meta={}).to_dict()) == names[:len(GAME_FIELDS)]
    # the batched writer's keys around a value of each kind make a record's keys, in order
    sample = {"int": "1", "str": '"x"', "ints": "1,2", "strs": '["a"]', "options": "{}",
              "rounds": ""}
    text = "".join(opening + sample[kind] + closing for (_, kind), (opening, closing)
                   in zip(GAME_FIELDS, game_json_keys(), strict=True)) + "}"
    assert list(json.loads(text)) == names[:len(GAME_FIELDS)]


def test_new_round_is_the_dataclasss_record() -> None:
    fault = Fault(1, "random", "vote", "no", "illegal")
    values = (2, "dream", 7, (7, 1, 9), (2, 0, 1), (None, 0, 2), (3, 0, 1), (5, 2, 1),
              (fault,), (7, 8, 9, 10, 11, 12))
    made = new_round(*values)
    assert made == RoundRecord(*values) and hash(made) == hash(RoundRecord(*values))
    assert made.unperceived == () and made.to_dict() == RoundRecord(*values).to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.clue = "other"  # type: ignore[misc]
