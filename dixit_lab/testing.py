"""A reusable conformance check for agents (like PettingZoo's ``api_test``).

``check_agent("my-agent(x=1)")`` plays short games with the agent in every seat, under every
rule preset and at several player counts, and raises ``AssertionError`` saying what is wrong
if the agent: makes an illegal move, is not deterministic for a seed, lets one game change its
play in the next (the tournament runner reuses agent instances), or touches global random
state.
"""

from __future__ import annotations

import random

import numpy as np

from dixit_lab.agent import make_agent
from dixit_lab.cards import load_deck
from dixit_lab.game import play_game
from dixit_lab.rules import get_rules
from dixit_lab.seeding import game_seed

__all__ = ["check_agent"]


def _table(spec: str, others: str, n: int, seat: int) -> list:
    return [make_agent(spec if s == seat else others) for s in range(n)]


def check_agent(spec: str, *, deck: str = "dreams", others: str = "random",
                players: tuple[int, ...] = (3, 4, 6), max_rounds: int = 12) -> None:
    """Raise ``AssertionError`` if the agent ``spec`` breaks the agent contract."""
    cards = load_deck(deck)
    random.seed(12345)
    python_state = random.getstate()
    numpy_state = np.random.get_state()[1].copy()  # type: ignore[index]  # noqa: NPY002
    for preset in ("classic", "refresh", "quest"):
        rules = get_rules(preset, max_rounds=max_rounds)
        for n in players:
            if not rules.min_players <= n <= rules.max_players:
                continue
            seat = n - 1
            fresh = _table(spec, others, n, seat)
            first = play_game(fresh, rules, cards, game_seed(7, n), on_illegal="raise")
            second = play_game(fresh, rules, cards, game_seed(8, n), on_illegal="raise")
            again = play_game(_table(spec, others, n, seat), rules, cards, game_seed(8, n),
                              on_illegal="raise")
            assert second == again, (
                f"agent {spec!r} ({preset}, {n} players): a game played by a reused agent "
                f"differs from the same game played by a fresh one; begin_game must reset "
                f"everything a game can change")
            replay = play_game(_table(spec, others, n, seat), rules, cards, game_seed(7, n),
                               on_illegal="raise")
            assert first == replay, (f"agent {spec!r} ({preset}, {n} players) is not "
                                     f"deterministic for a seed")
            for rnd in first.rounds:
                assert not rnd.faults
    assert random.getstate() == python_state, f"agent {spec!r} used Python's global random"
    assert (np.random.get_state()[1] == numpy_state).all(), (  # type: ignore[index]  # noqa: NPY002
        f"agent {spec!r} used NumPy's global random state")
