"""The engine survives any answer (issue 42, item 3): every answer of every decision, whatever
its type and size, is checked before the engine uses it; a bad one is a fault of its seat
(the engine's seeded legal move in its place) and the game goes on. In the engine's process
(hypothesis draws the answers) and through a real child (``isolation: process``, and
``sandbox`` where this machine makes one), whose agent answers anything and forges reply
frames."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dixit_lab.core.agent import Agent, Clue, PublicRound, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import GameSteps, Phase, play_game
from dixit_lab.isolation.isolated_agent import IsolatedAgent
from dixit_lab.isolation.sandbox import sandbox_problem
from dixit_lab.isolation.trust import Isolation
from dixit_lab.text_rule import CLUE_CHARS, RECORD_MESSAGE_CHARS
from tests.hostile.answers import any_value

DECK = Deck.numbered(84)
RULES = {"classic": get_rules("classic"), "two cards": get_rules("classic", max_rounds=4),
         "own votes": get_rules("classic", own_card_votes=True, max_rounds=4)}

_leaves = (st.none() | st.booleans()
           | st.integers(min_value=-3, max_value=90)
           | st.integers()  # any size
           | st.builds(lambda digits: 10 ** digits, st.integers(18, 6000))  # over repr's limit
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(max_size=300) | st.just("x" * 5000))
JSON = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4)
                    | st.tuples(inner, inner)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)


def _answer(data: st.DataObject, action: str, view) -> tuple[object, bool]:
    """(an answer, whether it is the legal one drawn to keep the game going)."""
    if data.draw(st.booleans()):
        if action == "tell":
            return Clue(view.hand[0], "a clue"), True
        if action == "submit":
            return list(view.hand[:view.n_cards]), True
        return next(i for i in range(len(view.display)) if i not in view.own_positions), True
    shapes = [JSON]
    if action == "tell":
        shapes.append(st.builds(Clue, st.sampled_from(view.hand) | JSON,
                                st.just("a clue") | st.text(min_size=CLUE_CHARS + 1,
                                                            max_size=CLUE_CHARS + 3) | JSON))
    elif action == "submit":
        cards = st.sampled_from(view.hand) | JSON
        shapes.append(st.lists(cards, min_size=view.n_cards, max_size=view.n_cards))
        shapes.append(st.lists(st.lists(st.sampled_from(view.hand), max_size=2),
                               min_size=view.n_cards, max_size=view.n_cards))  # [[card]]
    else:
        shapes.append(st.sampled_from(range(-1, len(view.display) + 1)))
    return data.draw(st.one_of(shapes)), False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), rules=st.sampled_from(sorted(RULES)), n=st.sampled_from([3, 4, 6]))
def test_any_answer_in_the_engine_is_a_fault_and_the_game_goes_on(data, rules, n):
    game = GameSteps([f"a{i}" for i in range(n)], RULES[rules], DECK, 7, on_illegal="fallback")
    event = game.start()
    wild: list[set[tuple[int, str]]] = []  # per round: (seat, action) answered with anything
    current: set[tuple[int, str]] = set()
    while event is not None:
        if isinstance(event, Phase):
            answers = []
            for decision in event.decisions:
                answer, legal = _answer(data, event.action, decision.view)
                answers.append(answer)
                if not legal:
                    current.add((decision.seat, event.action))
            event = game.send(answers)
        else:
            assert isinstance(event, PublicRound)
            wild.append(current)
            current = set()
            event = game.send(None)
    record = game.record
    assert record is not None and len(record.rounds) == len(wild)
    json.loads(record.to_json())  # it is saved as it is
    for played, answered in zip(record.rounds, wild, strict=True):
        assert len(played.clue) <= CLUE_CHARS and played.clue.isprintable()
        for fault in played.faults:
            assert fault.kind == "illegal" and (fault.seat, fault.action) in answered
            assert len(fault.message) <= RECORD_MESSAGE_CHARS
        assert all(v is None or 0 <= v < len(played.display) for v in played.votes)


def test_a_nested_submission_is_one_fault():
    """The exact answer that stopped runs: ``[[card]]`` (``set()`` of it raised TypeError)."""
    class Nested(Agent):
        name = "nested"

        def tell(self, view):
            return Clue(view.hand[0], "a clue")

        def submit(self, view):
            return [[view.hand[0]]]

        def vote(self, view):
            return next(i for i in range(len(view.display)) if i not in view.own_positions)

    agents = [make_agent("random"), Nested(), make_agent("random"), make_agent("random")]
    record = play_game(agents, RULES["classic"], DECK, game_seed(0, 0), on_illegal="fallback")
    faults = [f for rnd in record.rounds for f in rnd.faults]
    listened = sum(rnd.storyteller != 1 for rnd in record.rounds)
    assert len(faults) == listened and {(f.seat, f.action, f.kind) for f in faults} == {
        (1, "submit", "illegal")}
    assert "is not in the hand" in faults[0].message


def test_an_over_long_clue_is_a_fault_and_the_substitute_clue_is_played():
    class Long(Agent):
        name = "long"

        def tell(self, view):
            return Clue(view.hand[0], "y" * (CLUE_CHARS + 1))

        def submit(self, view):
            return list(view.hand[:view.n_cards])

        def vote(self, view):
            return next(i for i in range(len(view.display)) if i not in view.own_positions)

    agents = [Long(), *(make_agent("random") for _ in range(3))]
    record = play_game(agents, RULES["classic"], DECK, game_seed(0, 1), on_illegal="fallback")
    told = [rnd for rnd in record.rounds if rnd.storyteller == 0]
    assert told and all(rnd.clue == "(no clue)" for rnd in told)
    assert all(any(f.action == "tell" and "at most 200" in f.message for f in rnd.faults)
               for rnd in told)


def _modes() -> list[str]:
    return ["process"] + ([] if sandbox_problem() else ["sandbox"])


@pytest.mark.parametrize("mode", _modes())
@pytest.mark.parametrize("agent", ["AnyAnswer", "ForgedReply"])
def test_any_answer_from_a_child_is_a_fault_and_the_games_go_on(mode, agent):
    """Seeded children answer every decision with anything (and forge frames): four games
    each, every one played to its end, every fault the seat's."""
    isolated = IsolatedAgent(f"tests.hostile.answers:{agent}(seed=11)",
                             Isolation(mode, timeout=5.0))
    kinds: set[str] = set()
    try:
        for g in range(4):
            table = [make_agent("random"), isolated, make_agent("random"), make_agent("random")]
            record = play_game(table, RULES["classic"], DECK, game_seed(5, g),
                               on_illegal="fallback")
            assert record.end_reason in ("deck_exhausted", "target_score")
            faults = [f for rnd in record.rounds for f in rnd.faults]
            assert faults and {f.seat for f in faults} == {1}
            assert all(len(f.message) <= RECORD_MESSAGE_CHARS for f in faults)
            kinds |= {f.kind for f in faults}
    finally:
        isolated.close()
    assert kinds <= {"illegal", "crashed", "timeout"}, kinds  # (it never raises: "raised"
    # was the engine misreading a forged reply)
    assert "illegal" in kinds or "crashed" in kinds, kinds


def test_the_answers_drawn_for_children_cover_every_kind():
    """The children's generator draws what the property test draws: nested lists, dicts,
    huge ints, inf and nan, strings, bools and None."""
    rng = random.Random(0)
    seen = {type(any_value(rng)).__name__ for _ in range(500)}
    assert {"list", "dict", "int", "float", "str", "bool", "NoneType"} <= seen
    values = [any_value(rng) for _ in range(2000)]
    assert any(isinstance(v, float) and math.isnan(v) for v in values)
    assert any(isinstance(v, int) and abs(v) > 10 ** 100 for v in values)
