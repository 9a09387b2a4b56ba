"""A reusable conformance check for agents (like PettingZoo's ``api_test``).

``check_agent("my-agent(x=1)")`` plays short games with the agent in every seat, under every
rule preset and at several player counts, prints what it checked and its verdict, and raises
``AssertionError`` naming the fault if the agent: makes an illegal move or raises, touches
global random state, is not deterministic for a seed, lets one game change its play in the
next (the tournament runner reuses agent instances), or has a batched policy that plays other
games than its methods. It says which engine plays the agent: one that inherits a batched
policy it does not implement (it overrides a decision method) is played by the reference
engine, and the check says so.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.core.rules import IllegalAction, RuleSet, get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.records.format import GameRecord

__all__ = ["CHECKS", "check_agent"]

CHECKS = (
    "legal moves: no illegal action and no fault in any game",
    "no global random state: neither Python's random nor NumPy's np.random is used",
    "deterministic: the same seed gives the same game",
    "no state carried between games: a reused agent plays like a fresh one",
    "its own decisions on every engine: a batched policy it has plays the games its methods "
    "play, and one it inherits but does not implement is never used",
)


def _table(spec: str, others: str, n: int, seat: int) -> list:
    return [make_agent(spec if s == seat else others) for s in range(n)]


def _global_states() -> tuple[object, np.ndarray]:
    numpy_state = cast(tuple, np.random.get_state())  # noqa: NPY002 - watching it
    return random.getstate(), numpy_state[1].copy()


def _play(spec: str, where: str, agents: list, rules, cards, seed) -> GameRecord:
    """One game, with the global random states pinned before and compared after it."""
    random.seed(12345)
    np.random.seed(12345)  # noqa: NPY002 - pinned so that a change is seen
    before_python, before_numpy = _global_states()
    try:
        record = play_game(agents, rules, cards, seed, on_illegal="raise")
    except IllegalAction as error:
        raise AssertionError(f"agent {spec!r} ({where}) made an illegal move: {error}") from error
    except Exception as error:
        raise AssertionError(f"agent {spec!r} ({where}) raised {type(error).__name__}: "
                             f"{error}") from error
    after_python, after_numpy = _global_states()
    assert after_python == before_python, (
        f"agent {spec!r} ({where}) used Python's global random module (random.random(), "
        "random.choice(), ...); draw from self.rng, the seat's seeded stream, instead")
    assert (after_numpy == before_numpy).all(), (
        f"agent {spec!r} ({where}) used NumPy's global random state (np.random.rand(), "
        "np.random.choice(), ...); draw from self.rng, the seat's seeded stream, instead")
    faults = [fault for rnd in record.rounds for fault in rnd.faults]
    assert not faults, f"agent {spec!r} ({where}): faults recorded: {faults}"
    return record


def check_agent(spec: str, *, deck: str = "dreams", others: str = "random",
                players: tuple[int, ...] = (3, 4, 6), max_rounds: int = 12,
                log: Callable[[str], None] | None = print) -> list[str]:
    """Check that the agent ``spec`` keeps the agent contract (:data:`CHECKS`).

    Prints what it checked and the verdict (``log=None``: silent) and returns the checks;
    raises ``AssertionError`` naming the first fault, the table and the rule preset.
    """
    cards = load_deck(deck)
    tables: list[str] = []
    try:
        for preset in ("classic", "refresh", "quest"):
            rules = get_rules(preset, max_rounds=max_rounds)
            for n in players:
                if not rules.min_players <= n <= rules.max_players:
                    continue
                where, seat = f"{preset}, {n} players", n - 1
                tables.append(where)
                fresh = _table(spec, others, n, seat)
                first = _play(spec, where, fresh, rules, cards, game_seed(7, n))
                replay = _play(spec, where, _table(spec, others, n, seat), rules, cards,
                               game_seed(7, n))
                assert first == replay, (
                    f"agent {spec!r} ({where}) is not deterministic: the same seed gave "
                    "another game; every random draw must come from self.rng")
                second = _play(spec, where, fresh, rules, cards, game_seed(8, n))
                again = _play(spec, where, _table(spec, others, n, seat), rules, cards,
                              game_seed(8, n))
                assert second == again, (
                    f"agent {spec!r} ({where}): a game played by a reused agent differs from "
                    "the same game played by a fresh one; begin_game must reset everything a "
                    "game can change")
        engine = _check_engines(spec, cards)
    except AssertionError as error:
        if log is not None:
            log(f"check_agent({spec!r}): FAILED: {error}")
        raise
    if log is not None:
        log(f"check_agent({spec!r}): {len(tables)} tables ({'; '.join(tables)}), 4 games each "
            f"(agent in the last seat, {others!r} elsewhere):")
        for check in CHECKS:
            log(f"  ok  {check}")
        log(f"  engine: {engine}")
        log("verdict: PASSED")
    return list(CHECKS)


def _check_engines(spec: str, cards: Deck) -> str:
    """Which engine plays the agent, as a sentence; raises ``AssertionError`` if its batched
    policy plays other games than its methods (a few games at one table)."""
    from dixit_lab.engine.batched import batch_blocker

    blocker = batch_blocker(make_agent(spec))
    if blocker is not None:
        inherited = callable(getattr(make_agent(spec), "batch_policy", None))
        return (f"reference only: {blocker}" + (
            " (engine: auto plays it on the reference engine, engine: batched refuses it; "
            "define batch_policy in the class to vouch for one)" if inherited else ""))
    rules = get_rules("classic", max_rounds=12)
    bad = batch_differences([spec] * 4, rules, cards, 4)  # it tells, submits and votes
    assert not bad, (f"agent {spec!r}: the batched engine's games {bad} differ from the "
                     f"reference engine's (classic, 4 players): its batch_policy() does not "
                     f"play its decisions; fix it, or set batch_policy = None in its class")
    return "batched and reference: its batched policy plays the same games"


def batch_differences(specs: list[str], rules: RuleSet, deck: Deck, games: int,
                      seed: int = 17, engine: str = "batched") -> list[int]:
    """The games (of ``games`` rotating tables of ``specs``) whose record from the batched
    engine (``engine="compiled"``: the compiled kernel) differs from the reference engine's,
    byte for byte. The first of ``specs`` is the tables' first player (the seat that tells
    first under ``first_storyteller="first_player"``)."""
    if engine == "compiled":
        from dixit_lab.engine.compiled import play_compiled as play_batch
    else:
        from dixit_lab.engine.batched import play_batch

    n = len(specs)
    seatings = [[specs[(seat + g) % n] for seat in range(n)] for g in range(games)]
    seeds = [game_seed(seed, g) for g in range(games)]
    metas: list[dict[str, Any]] = [{"game": g} for g in range(games)]
    firsts = [-g % n for g in range(games)]  # where the seating puts specs[0]
    shared = {spec: make_agent(spec) for spec in set(specs)}
    batched = play_batch([[shared[s] for s in seating] for seating in seatings], rules, deck,
                         seeds, metas, first_player_seats=firsts)
    reference: dict[tuple[int, str], Any] = {}  # reused across games, as the runner does
    differing = []
    for g, seating in enumerate(seatings):
        table = []
        for seat, spec in enumerate(seating):
            if (seat, spec) not in reference:
                reference[seat, spec] = make_agent(spec)
            table.append(reference[seat, spec])
        if play_game(table, rules, deck, seeds[g], meta=metas[g],
                     first_player_seat=firsts[g]).to_json() != batched[g]:
            differing.append(g)
    return differing


def check_batch_policy(spec: str, *, deck: str = "dreams", games: int = 8,
                       players: tuple[int, ...] = (3, 5), others: str = "random") -> None:
    """Raise ``AssertionError`` unless the agent ``spec``'s batched policy plays exactly the
    games of its per-game methods, under every preset, alone at the table and mixed with
    ``others``. The check an agent author runs after writing ``batch_policy()``."""
    cards = load_deck(deck)
    for preset in ("classic", "refresh", "quest"):
        rules = get_rules(preset)
        for n in players:
            for specs in ([spec] * n, [spec, *[others] * (n - 1)]):
                bad = batch_differences(specs, rules, cards, games)
                assert not bad, (f"agent {spec!r} ({preset}, table {specs}): the batched "
                                 f"engine's games {bad} differ from the reference engine's")
