"""The game's one array state machine (dixit_lab.engine.table_states).

The batched engine and the vector environment are checked against the reference engine byte
for byte (tests/engine/test_batched.py, tests/env/test_vector.py); here: that the machine's rows
are independent (tables at different rounds, stepped together, play as each would alone), that
its cards are conserved, and that the mechanics have no second copy in its two drivers.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from dixit_lab.core.rules import PRESETS, get_rules
from dixit_lab.core.seeding import game_key
from dixit_lab.engine import batched, table_states
from dixit_lab.engine.table_states import END_REASONS, GOING, TableStates
from dixit_lab.env import vector_tables

DECK = 84


def _keys(seeds: list[int]) -> np.ndarray:
    return np.array([game_key(s) for s in seeds], dtype=np.uint64)


def _play_round(state: TableStates, rows: np.ndarray, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    """One round of the games ``rows`` with decisions from ``rng`` (legal: the cards in hand,
    a display position that is not the voter's own card)."""
    n, per = state.n, state.per
    teller = state.storyteller[rows]
    length = state.hand_len[rows]
    slots = (rng.random(len(rows)) * length[np.arange(len(rows)), teller]).astype(np.int64)
    state.tell(rows, slots, rng.integers(0, 1000, len(rows)))
    picks = np.zeros((len(rows), n, per), dtype=np.int64)
    for at, row_length in enumerate(state.hand_len[rows]):
        for seat in range(n):
            if seat != teller[at]:
                picks[at, seat] = rng.permutation(int(row_length[seat]))[:per]
    state.lay_out(rows, picks)
    return state.score(rows, _votes(state, rows, rng))


def _votes(state: TableStates, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each listener's vote, a display position that is not its own card (the teller's -1)."""
    votes = np.full((len(rows), state.n), -1, dtype=np.int64)
    owners, teller = state.card_owner[rows], state.storyteller[rows]
    for at in range(len(rows)):
        for seat in range(state.n):
            if seat != teller[at]:
                allowed = np.flatnonzero(owners[at] != seat)
                votes[at, seat] = allowed[rng.integers(len(allowed))]
    return votes


def _snapshot(state: TableStates, row: int) -> tuple[object, ...]:
    pile = state.pile[row, :state.pile_len[row]].tolist()
    hands = [state.hands[row, s, :state.hand_len[row, s]].tolist() for s in range(state.n)]
    return (pile, hands, state.scores[row].tolist(), int(state.storyteller[row]),
            int(state.round[row]), int(state.reshuffles[row]))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_rows_at_different_rounds_play_as_each_alone(preset: str) -> None:
    rules = get_rules(preset)
    n = max(rules.min_players, 4)
    seeds = [11, 12, 13]
    alone = [TableStates(1, n, rules, DECK) for _ in seeds]
    alone[0].deal(np.array([0]), _keys(seeds[:1]))
    # table 0 plays three rounds alone before the others are dealt: then all step together,
    # each from its own round, with the decisions each would get alone
    rngs = [np.random.default_rng(s) for s in seeds]
    for _ in range(3):
        _play_round(alone[0], np.array([0]), rngs[0])
    together = TableStates(3, n, rules, DECK)
    together.deal(np.array([0]), _keys(seeds[:1]))
    replay = np.random.default_rng(seeds[0])
    for _ in range(3):
        _play_round(together, np.array([0]), replay)
    together.deal(np.array([1, 2]), _keys(seeds[1:]))
    for index in (1, 2):
        alone[index].deal(np.array([0]), _keys(seeds[index:index + 1]))
    live = [True, True, True]
    for _ in range(60):
        rows = np.flatnonzero(live)
        if not rows.size:
            break
        # step each alone, then the same decisions on the machine of three rows
        decided = {}
        for row in rows:
            before = rngs[row].bit_generator.state
            points, ending = _play_round(alone[row], np.array([0]), rngs[row])
            decided[row] = (before, points[0].tolist(), int(ending[0]))
        for row in rows:
            rng = np.random.default_rng()
            rng.bit_generator.state = decided[row][0]
            points, ending = _play_round(together, np.array([row]), rng)
            assert points[0].tolist() == decided[row][1]
            assert int(ending[0]) == decided[row][2]
            if ending[0] != GOING:
                live[row] = False
        for row in range(3):
            assert _snapshot(together, row) == _snapshot(alone[row], 0)
    assert not any(live), "every game ends within 60 rounds"


def test_rows_stepped_in_one_call_match_rows_stepped_apart() -> None:
    """One call over several rows (what the batched engine does) changes each row as a call
    over that row alone would."""
    rules = get_rules("refresh")
    n, seeds, deck = 5, [3, 4, 5, 6], 40  # a small deck: the pile runs short in 2 rounds
    one = TableStates(len(seeds), n, rules, deck)
    one.deal(np.arange(len(seeds)), _keys(seeds))
    apart = TableStates(len(seeds), n, rules, deck)
    apart.deal(np.arange(len(seeds)), _keys(seeds))
    for round_index in range(40):
        rng = np.random.default_rng(round_index)
        rows = np.flatnonzero(one.clue == -1)  # all rows; a finished game is dealt again
        teller = one.storyteller[rows]
        slots = (rng.random(len(rows)) * one.hand_len[rows, teller]).astype(np.int64)
        clues = rng.integers(0, 100, len(rows))
        one.tell(rows, slots, clues)
        for at, row in enumerate(rows):
            apart.tell(np.array([row]), slots[at:at + 1], clues[at:at + 1])
        picks = np.zeros((len(rows), n, one.per), dtype=np.int64)
        for at, row in enumerate(rows):
            for seat in range(n):
                picks[at, seat] = rng.permutation(int(one.hand_len[row, seat]))[:one.per]
        one.lay_out(rows, picks)
        for at, row in enumerate(rows):
            apart.lay_out(np.array([row]), picks[at:at + 1])
        assert (one.display == apart.display).all()
        votes = _votes(one, rows, rng)
        points, ending = one.score(rows, votes)
        for at, row in enumerate(rows):
            alone_points, alone_ending = apart.score(np.array([row]), votes[at:at + 1])
            assert alone_points[0].tolist() == points[at].tolist()
            assert int(alone_ending[0]) == int(ending[at])
        for row in range(len(seeds)):
            assert _snapshot(one, row) == _snapshot(apart, row)
        over = rows[ending != GOING]
        if over.size:
            fresh = _keys([1000 + round_index + int(r) for r in over])
            one.deal(over, fresh)
            apart.deal(over, fresh)
    assert one.reshuffles.sum() > 0, "the run reaches a reshuffle of the discard"


@pytest.mark.parametrize("mode", ["end_when_last_drawn", "end_when_cannot_refill",
                                  "reshuffle_discard", "play_out_hands"])
def test_cards_are_conserved(mode: str) -> None:
    """Every card is in exactly one place: a hand, the pile, the discard or (where no
    reshuffle reads the discard) out of play; never two."""
    rules = get_rules("classic", deck_exhausted=mode)
    n = 4
    state = TableStates(2, n, rules, DECK)
    state.deal(np.arange(2), _keys([21, 22]))
    rng = np.random.default_rng(0)
    rows = np.arange(2)
    for _ in range(200):
        if not rows.size:
            break
        _points, ending = _play_round(state, rows, rng)
        for row in rows:
            hands = [c for s in range(n) for c in state.hands[row, s, :state.hand_len[row, s]]]
            pile = state.pile[row, :state.pile_len[row]].tolist()
            discard = state.discard[row, :state.discard_len[row]].tolist()
            held = hands + pile + discard
            assert len(held) == len(set(held)), "no card in two places"
            assert set(held) <= set(range(DECK))
            # a display goes to the discard where a reshuffle may read it, else out of play
            kept = DECK if mode == "reshuffle_discard" else DECK - state.shown * state.round[row]
            assert len(held) == kept
        rows = rows[ending == GOING]
    if mode == "reshuffle_discard":  # no target score: the games go on, reshuffling
        assert state.reshuffles.min() > 3
    else:
        assert not rows.size, "both games end"


def test_end_reasons_name_every_ending() -> None:
    assert END_REASONS[GOING] == ""
    assert set(END_REASONS[1:]) == {"target_score", "deck_exhausted", "max_rounds"}


def _defined_functions(module: object) -> set[str]:
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _names_used(module: object) -> set[str]:
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)} | {
        node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def test_the_mechanics_have_one_home() -> None:
    """The batched engine and the vector environment drive the machine; neither deals,
    refills, reshuffles, lays out the display or scores a round itself."""
    assert {"deal", "tell", "lay_out", "score", "_refill", "_reshuffle"} <= _defined_functions(
        table_states)
    for driver in (batched, vector_tables):
        names = _names_used(driver)
        assert "TableStates" in names or "VectorTables" in names
        for mechanic in ("DEAL", "DISPLAY", "RESHUFFLE", "FIRST_STORYTELLER", "score_batch",
                         "score_round"):
            assert mechanic not in names, f"{driver.__name__} uses {mechanic} itself"
        assert not {"_refill", "_reshuffle", "refill", "reshuffle"} & _defined_functions(driver)
