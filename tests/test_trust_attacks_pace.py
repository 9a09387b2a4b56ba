"""Trust II's timing channel (issue 42, item 9): a storyteller that takes longer to tell for
one card than another tells its partner which card is its own, through the delay of the
partner's next call. ``pace`` holds every call of the storyteller's seat until a fixed
interval has passed since it was made: the partner's clock then reads the same for every
card, and its votes find the storyteller's card at chance."""

from __future__ import annotations

import json
import time

import pytest

from tests.test_trust_attacks import RANDOM, spy
from tests.test_trust_attacks_answers import cli_run

STEP = 0.03


def found(records: list) -> tuple[int, int]:
    """(votes of the partner for the teller's card, the partner's votes at the teller's
    turns)."""
    hits = votes = 0
    for record in records:
        players = record["meta"]["players"]
        teller, partner = players.index("teller"), players.index("partner")
        for rnd in record["rounds"]:
            if rnd["storyteller"] == teller and rnd["votes"][partner] is not None:
                votes += 1
                hits += rnd["display"][rnd["votes"][partner]] == rnd["storyteller_card"]
    return hits, votes


def reads(records: list) -> list[tuple[int, int]]:
    """(the residue the partner read, the teller's card's residue) at each of the teller's
    turns that a later clue of the partner reported."""
    pairs = []
    for record in records:
        players = record["meta"]["players"]
        teller, partner = players.index("teller"), players.index("partner")
        cards = [rnd["storyteller_card"] % 3 for rnd in record["rounds"]
                 if rnd["storyteller"] == teller]
        told = [json.loads(rnd["clue"].removeprefix("report:"))["reads"]
                for rnd in record["rounds"] if rnd["storyteller"] == partner]
        if told:
            pairs += list(zip(told[-1], cards, strict=False))
    return pairs


def play(tmp_path, pace: float | None, games: int = 8) -> tuple[list, int, int, float]:
    teller = {**spy("teller", "timing:DelayTeller", step=STEP), "isolation": "process"}
    if pace is not None:
        teller["pace"] = {"seconds": pace}
    partner = {**spy("partner", "timing:DelayPartner", step=STEP), "isolation": "process"}
    began = time.monotonic()
    code, stderr, records = cli_run(tmp_path, [teller, partner, RANDOM, RANDOM], games=games)
    assert code == 0 and len(records) == games, stderr[-3000:]
    return (reads(records), *found(records), time.monotonic() - began)


@pytest.mark.parametrize("pace", [None, 0.1])
def test_pace_closes_the_timing_channel(tmp_path, pace):
    """Without pace the partner read the teller's card's residue from its clock at nearly
    every turn; with a pace above the longest delay (0.06 s), its clock
    read the same for every card: the channel carries nothing."""
    pairs, hits, votes, _ = play(tmp_path, pace)
    assert votes >= 10 and len(pairs) >= 5, (votes, pairs)
    right = sum(read == card for read, card in pairs)
    if pace is None:
        # (its votes then find the card where the residue is the display's only one: 15/18)
        assert right >= 0.75 * len(pairs), (pairs, hits, votes)
    else:
        assert len({read for read, _ in pairs}) == 1, pairs


def test_pace_needs_an_untrusted_seat(tmp_path):
    code, stderr, _ = cli_run(tmp_path, [{**RANDOM, "pace": {"seconds": 0.1}}, RANDOM, RANDOM])
    assert code == 2 and "pace needs isolation" in stderr, stderr
