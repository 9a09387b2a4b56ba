"""Spy agents: each tries one route to what it may not know, and keeps score in a log file.

A spy that reconstructs a game key replays the whole game from it — the deal, every refill,
the owners revealed after each round — so that it knows every hand, its own next draws and the
storyteller's card on the display; it votes for that card. Without a key it votes at random,
so its find rate is chance (1 / the cards it may vote for). Entered by import string
(``tests/spies.py:KeySpy``), with ``log`` a file the spy appends its guesses to (one JSON
object a line), so that the test sees them even from another process.
"""

from __future__ import annotations

import contextlib
import gc
import json
import warnings
from typing import Any

import numpy as np

from dixit_lab.core.agent import (
    Agent,
    Clue,
    GameContext,
    PublicRound,
    SubmitView,
    TellView,
    VoteView,
)
from dixit_lab.core.seeding import Streams, game_key, permutation, stream_base_int


class _Spy(Agent):
    """Shared machinery: candidate keys in, a replayed game out, guesses logged."""

    def __init__(self, log: str = "") -> None:
        self.log = log

    # -- routes (subclasses) -----------------------------------------------------------------

    def candidates(self, context: GameContext) -> list[tuple[int, int]]:
        raise NotImplementedError

    # -- the game, replayed from a key --------------------------------------------------------

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self.key: tuple[int, int] | None = None
        self.hands: list[list[int]] = []
        self.pile: list[int] = []
        self.tried = self.candidates(context)
        self.predicted_next_draws: list[int] = []

    def _confirm(self, own_hand: tuple[int, ...]) -> None:
        """Keep the first candidate whose deal gives this seat the hand it holds."""
        ctx = self.context
        size = ctx.rules.hand_size_for(ctx.n_players)
        for key in self.tried:
            order = permutation(np.uint64(stream_base_int(*key, Streams.DEAL)),
                                len(ctx.deck)).tolist()
            if order[ctx.seat * size:(ctx.seat + 1) * size] == list(own_hand):
                self.key = key
                self.hands = [order[s * size:(s + 1) * size] for s in range(ctx.n_players)]
                self.pile = order[ctx.n_players * size:][::-1]
                break
        self.tried = []
        self._write(kind="hand", guess=[sorted(h) for h in self.hands] if self.key else None)

    def _write(self, **entry: Any) -> None:
        if self.log:
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")

    def tell(self, view: TellView) -> Clue:
        if view.round == 0:
            self._confirm(view.hand)
        return Clue(view.hand[0], "dream")

    def submit(self, view: SubmitView) -> list[int]:
        if view.round == 0:
            self._confirm(view.hand)
        elif self.predicted_next_draws:  # did the key tell which cards this seat would draw?
            drawn = [card for card in view.hand if card in self.predicted_next_draws]
            self._write(kind="draw", hit=len(drawn), of=len(self.predicted_next_draws))
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        allowed = [i for i in range(len(view.display)) if i not in view.own_positions]
        guess = None
        if self.key is not None:
            mine = [i for i in allowed if view.display[i] in self.hands[view.storyteller]]
            guess = mine[0] if len(mine) == 1 else None
        if guess is None:
            guess_or_draw = allowed[int(self.context.uniforms.next() * len(allowed))]
        else:
            guess_or_draw = guess
        self._write(kind="vote", guessed=guess is not None)
        return guess_or_draw

    def observe(self, result: PublicRound) -> None:
        if self.key is None:
            return
        ctx = self.context
        for card, owner in zip(result.display, result.card_owner, strict=True):
            self.hands[owner].remove(card)
        size = ctx.rules.hand_size_for(ctx.n_players)
        before = len(self.hands[ctx.seat])
        for offset in range(1, ctx.n_players + 1):
            hand = self.hands[(result.storyteller + offset) % ctx.n_players]
            while len(hand) < size and self.pile:
                hand.append(self.pile.pop())
        self.predicted_next_draws = self.hands[ctx.seat][before:]


def _ints(value: Any, depth: int = 0, seen: set[int] | None = None) -> list[int]:
    """Every integer (and SeedSequence-derived key) reachable from ``value``: attributes,
    slots, private ones too, containers, closures and bound ``__self__``."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 4:
        return []
    seen.add(id(value))
    if isinstance(value, bool):
        return []
    if isinstance(value, int | np.integer):
        return [int(value)]
    if isinstance(value, np.random.SeedSequence):
        found = list(game_key(value))
        entropy = value.entropy
        if isinstance(entropy, int):  # the old route: the agent's stream was a child sequence
            for cut in range(len(value.spawn_key) + 1):
                parent = np.random.SeedSequence(entropy, spawn_key=value.spawn_key[:cut])
                found += list(game_key(parent))
        return found
    if isinstance(value, np.ndarray):
        return [int(x) for x in value.ravel()[:64]] if value.dtype.kind in "iu" else []
    if isinstance(value, str | bytes | float):
        return []
    out: list[int] = []
    if isinstance(value, dict):
        for item in list(value.values())[:200]:
            out += _ints(item, depth + 1, seen)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        for item in list(value)[:200]:
            out += _ints(item, depth + 1, seen)
        return out
    for name in _attribute_names(value):
        try:
            out += _ints(object.__getattribute__(value, name), depth + 1, seen)
        except Exception:
            continue
    for cell in getattr(value, "__closure__", None) or ():
        try:
            out += _ints(cell.cell_contents, depth + 1, seen)
        except ValueError:
            continue
    return out


def _attribute_names(value: Any) -> list[str]:
    names = set(getattr(value, "__dict__", {}) or {})
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    names.update(n for n in ("__self__", "bit_generator", "seed_seq", "state", "_seed_seq")
                 if hasattr(value, n))
    return sorted(names)


def _pairs(numbers: list[int]) -> list[tuple[int, int]]:
    words = [n for n in dict.fromkeys(numbers) if 0 <= n < 2**64][:60]
    return [(a, b) for a in words for b in words]


class KeySpy(_Spy):
    """Reads everything its context holds — attributes (private and slots too), the rng's seed
    sequence and state, its counter stream, closures — and tries each integer pair as a game
    key and each seed sequence as the game's."""

    def candidates(self, context: GameContext) -> list[tuple[int, int]]:
        _ = context.rng, context.uniforms  # make both exist, then look inside
        return _pairs(_ints(context))


class GcSpy(_Spy):
    """Looks through the garbage collector for any seed sequence or pair of 64-bit words in
    the process (in the engine's process it finds the game; in its own it must not)."""

    def candidates(self, context: GameContext) -> list[tuple[int, int]]:
        found: list[int] = []
        with warnings.catch_warnings():  # touching some library objects warns
            warnings.simplefilter("ignore")
            for obj in gc.get_objects():
                if isinstance(obj, np.random.SeedSequence):
                    found += _ints(obj)
                elif (type(obj) is tuple and len(obj) == 2
                      and all(type(x) is int and x > 2**40 for x in obj)):
                    found += list(obj)
        return list(dict.fromkeys(zip(found[::2], found[1::2], strict=False))) + _pairs(found)


class MutatorSpy(Agent):
    """Tries to change the game for everyone: the rules, the deck and its random stream. It
    plays without randomness (first cards, first allowed vote), like :class:`PoliteSpy`."""

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        for target, field, value in ((context.rules, "vote_bonus_cap", 0),
                                     (context.rules, "all_or_none_points", 99),
                                     (context.deck, "cards", context.deck.cards[:10])):
            with contextlib.suppress(Exception):
                object.__setattr__(target, field, value)
        for slot in type(context).__slots__:  # and whatever its private slots hold
            with contextlib.suppress(Exception):
                held = object.__getattribute__(context, slot)
                object.__setattr__(held, "cards", context.deck.cards[:10])
        stream = context.uniforms
        for field in ("_base", "_buffer", "_next"):
            with contextlib.suppress(Exception):
                object.__setattr__(stream, field, type(object.__getattribute__(stream, field))())

    def tell(self, view: TellView) -> Clue:
        return Clue(view.hand[0], "dream")

    def submit(self, view: SubmitView) -> list[int]:
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        return next(i for i in range(len(view.display)) if i not in view.own_positions)


class PoliteSpy(MutatorSpy):
    """:class:`MutatorSpy`'s play without its tampering."""

    def begin_game(self, context: GameContext) -> None:
        Agent.begin_game(self, context)


class HangingAgent(Agent):
    """Plays first cards, but hangs forever in ``hang_in`` (a decision or hook name)."""

    def __init__(self, hang_in: str = "vote") -> None:
        self.hang_in = hang_in

    def _maybe_hang(self, where: str) -> None:
        if where == self.hang_in:
            import time

            while True:
                time.sleep(60)

    def tell(self, view: TellView) -> Clue:
        self._maybe_hang("tell")
        return Clue(view.hand[0], "dream")

    def submit(self, view: SubmitView) -> list[int]:
        self._maybe_hang("submit")
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        self._maybe_hang("vote")
        return next(i for i in range(len(view.display)) if i not in view.own_positions)


class CrashingAgent(HangingAgent):
    """Plays first cards, but its process dies in ``crash_in``."""

    def __init__(self, crash_in: str = "submit") -> None:
        super().__init__(hang_in="")
        self.crash_in = crash_in

    def _maybe_hang(self, where: str) -> None:
        if where == self.crash_in:
            import os

            os._exit(3)


def texts_and_numbers(value: Any, depth: int = 0, seen: set[int] | None = None
                      ) -> tuple[set[str], set[float]]:
    """Every string and float reachable from ``value`` — attributes (private and slots
    too), containers, dict keys, closures, bound ``__self__``, arrays — as an agent walking
    what it is handed would find them."""
    seen = set() if seen is None else seen
    texts: set[str] = set()
    numbers: set[float] = set()
    if id(value) in seen or depth > 8:
        return texts, numbers
    seen.add(id(value))
    if isinstance(value, str):
        return {value}, numbers
    if isinstance(value, bytes):
        return {value.decode("utf-8", "replace")}, numbers
    if isinstance(value, bool | int | np.integer):
        return texts, numbers
    if isinstance(value, float | np.floating):
        return texts, {float(value)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            numbers.update(float(x) for x in value.ravel()[:4096])
        elif value.dtype.kind in "US":
            texts.update(str(x) for x in value.ravel()[:4096])
        return texts, numbers
    items: list[Any] = []
    if isinstance(value, dict):
        items = [*list(value.keys())[:4096], *list(value.values())[:4096]]
    elif isinstance(value, list | tuple | set | frozenset):
        items = list(value)[:4096]
    else:
        for name in _attribute_names(value):
            with contextlib.suppress(Exception):
                items.append(object.__getattribute__(value, name))
        for cell in getattr(value, "__closure__", None) or ():
            with contextlib.suppress(ValueError):
                items.append(cell.cell_contents)
        if hasattr(value, "__fspath__"):
            texts.add(str(value))
    for item in items:
        more_texts, more_numbers = texts_and_numbers(item, depth + 1, seen)
        texts |= more_texts
        numbers |= more_numbers
    return texts, numbers


class SpecSpy(Agent):
    """Walks everything it is handed — its context, every view (with the public history),
    every public round — and logs every string and float it finds (one JSON object a line
    in ``log``), so that a test can look there for another seat's spec or parameters. It
    plays first cards and the first vote it may cast."""

    def __init__(self, log: str = "") -> None:
        self.log = log

    def _walk(self, where: str, value: Any) -> None:
        texts, numbers = texts_and_numbers(value)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"where": where, "texts": sorted(texts),
                                         "numbers": sorted(numbers)}) + "\n")

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        _ = context.rng, context.uniforms  # make both exist, then look inside
        self._walk("context", context)

    def tell(self, view: TellView) -> Clue:
        self._walk("tell", view)
        return Clue(view.hand[0], "dream")

    def submit(self, view: SubmitView) -> list[int]:
        self._walk("submit", view)
        return list(view.hand[:view.n_cards])

    def vote(self, view: VoteView) -> int:
        self._walk("vote", view)
        return next(i for i in range(len(view.display)) if i not in view.own_positions)

    def observe(self, result: PublicRound) -> None:
        self._walk("observe", result)
