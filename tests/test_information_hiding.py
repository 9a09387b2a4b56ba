"""Information hiding: spies that try every route to what a seat may not know stay at chance.

Each spy reconstructs the game key if it can, and then knows every hand and the storyteller's
card (see ``tests/spies.py``). The positive controls hand a spy the key (or let it search the
engine's own process) and check that it then finds the storyteller's card every time, so that
"at chance" means the route is closed, not that the spy is broken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dixit_lab.core.agent import GameContext, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine import game as game_module
from dixit_lab.engine.game import play_game

SPIES = Path(__file__).with_name("spies.py")
RULES = get_rules("classic")
DECK = Deck.numbered(84)


def spy_spec(cls: str, log: Path) -> str:
    return f"{SPIES}:{cls}(log={json.dumps(str(log))})"


def play(spy, games: int = 30, seat: int = 2) -> list:
    records = []
    for g in range(games):
        table = [make_agent("random") for _ in range(5)]
        table[seat] = spy
        records.append(play_game(table, RULES, DECK, game_seed(11, g)))
    return records


def find_rate(records, seat: int) -> tuple[int, int]:
    found = votes = 0
    for record in records:
        for rnd in record.rounds:
            if rnd.storyteller != seat:
                votes += 1
                found += rnd.votes[seat] == rnd.display.index(rnd.storyteller_card)
    return found, votes


def log_entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def assert_at_chance(records, log: Path, seat: int = 2) -> float:
    found, votes = find_rate(records, seat)
    entries = log_entries(log)
    assert votes > 200
    assert not any(e["guessed"] for e in entries if e["kind"] == "vote")
    assert all(e["guess"] is None for e in entries if e["kind"] == "hand")
    assert not any(e["hit"] for e in entries if e["kind"] == "draw")
    # chance: 1 of the 4 cards a listener may vote for at 5 players (99.9% binomial band)
    rate = found / votes
    assert abs(rate - 0.25) < 3.3 * (0.25 * 0.75 / votes) ** 0.5
    return rate


def test_a_spy_reading_its_context_rng_streams_and_closures_is_at_chance(tmp_path):
    log = tmp_path / "key.jsonl"
    assert_at_chance(play(make_agent(spy_spec("KeySpy", log))), log)


class LeakyContext(GameContext):
    """A context as it was before Integrity: carrying the game key."""

    __slots__ = ("_key",)


def test_the_key_spy_works_when_a_context_leaks_the_key(tmp_path, monkeypatch):
    original = game_module.GameSteps.__init__

    def leaky_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        contexts = []
        for ctx in self._contexts:
            leaky = LeakyContext(*ctx.to_state())
            leaky._key = self.key
            contexts.append(leaky)
        self._contexts = tuple(contexts)

    monkeypatch.setattr(game_module.GameSteps, "__init__", leaky_init)
    log = tmp_path / "leak.jsonl"
    records = play(make_agent(spy_spec("KeySpy", log)), games=10)
    found, votes = find_rate(records, 2)
    assert found == votes  # every vote finds the storyteller's card
    hands = [e for e in log_entries(log) if e["kind"] == "hand"]
    for record, entry in zip(records, hands, strict=True):  # every hand, before round 0
        assert entry["guess"][0] == sorted(record.rounds[0].storyteller_hand)
    draws = [e for e in log_entries(log) if e["kind"] == "draw"]
    assert draws and all(e["hit"] == e["of"] for e in draws)  # its own next draws, foreseen


def test_a_gc_spy_in_the_engines_process_finds_the_game(tmp_path):
    """Why ``isolation: process`` exists: in-process, the garbage collector reaches the engine."""
    log = tmp_path / "gc.jsonl"
    records = play(make_agent(spy_spec("GcSpy", log)), games=10)
    found, votes = find_rate(records, 2)
    assert found == votes


def test_a_gc_spy_in_its_own_process_is_at_chance(tmp_path):
    from dixit_lab.isolation.isolated_agent import IsolatedAgent

    log = tmp_path / "gc.jsonl"
    spy = IsolatedAgent(spy_spec("GcSpy", log), decision_timeout=30)
    try:
        assert_at_chance(play(spy), log)
    finally:
        spy.close()


def test_a_spy_cannot_change_the_game_for_others():
    """Rules, deck and its own stream tampered with: every other seat plays the same game."""
    seeds = range(8)
    tampered = [play_game(_table("MutatorSpy"), RULES, DECK, game_seed(5, g)) for g in seeds]
    polite = [play_game(_table("PoliteSpy"), RULES, DECK, game_seed(5, g)) for g in seeds]
    for a, b in zip(tampered, polite, strict=True):
        assert a.rounds == b.rounds and a.final_scores == b.final_scores
    # and the next game, with fresh contexts, is unaffected too
    after = play_game([make_agent("random") for _ in range(5)], RULES, DECK, game_seed(5, 0))
    before = play_game([make_agent("random") for _ in range(5)], RULES, DECK, game_seed(5, 0))
    assert after == before
    assert get_rules("classic") == RULES and len(DECK) == 84


def _table(spy: str) -> list:
    table = [make_agent("random") for _ in range(4)]
    table.insert(1, make_agent(f"{SPIES}:{spy}"))
    return table


@pytest.mark.parametrize("attribute", ["_key", "_seat_streams", "_rng_factory"])
def test_contexts_hold_no_route_to_the_key(attribute):
    record_game = game_module.GameSteps(("random",) * 4, RULES, DECK, 3)
    context = record_game.context(1)
    assert not hasattr(context, attribute)
    seq = context.rng.bit_generator.seed_seq
    assert record_game.key[0] not in (seq.entropy, *seq.spawn_key)
    other = record_game.context(2)
    assert context.uniforms is not other.uniforms
    assert context.rules is not other.rules and context.deck is not other.deck
    with pytest.raises(TypeError):  # the deck's card index is shared, so it is read-only
        context.deck._index["c000"] = 5  # type: ignore[index]
