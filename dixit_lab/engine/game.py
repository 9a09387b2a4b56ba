"""The reference game engine: :class:`GameSteps` holds one seeded game and asks for decisions
phase by phase; :func:`play_game` plays it by calling the agents.

This is the readable definition of a game of Dixit (see ``docs/rules.md``). Every random draw
comes from the game's seeded streams: the whole deck order and the first storyteller from the
deal stream before any agent acts, the display shuffles from the display stream, and each
agent's own draws from its seat's one-way stream (:mod:`dixit_lab.core.seeding`).

The engine never calls an agent: it yields a :class:`Phase` (every decision of one phase, each
with the view its seat may see) and takes the answers back, then yields the revealed round.
That one loop serves every kind of player — built-in agents (:func:`play_game`), agents in
their own process, models behind an HTTP endpoint, people at a web page and learning policies
— and what a seat learns is exactly its view.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Generator, Sequence
from typing import Any, Literal

import numpy as np

from dixit_lab.core.agent import (
    Agent,
    AgentFailure,
    GameContext,
    PublicRound,
    SubmitView,
    TellView,
    VoteView,
    seat_names,
)
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import (
    IllegalAction,
    RuleSet,
    point_tables,
    record_options,
    rule_values,
    table_points,
)
from dixit_lab.core.seeding import (
    GameSeed,
    Streams,
    as_seed_sequence,
    first_numbers,
    game_key,
    permutation,
    seat_bases,
    seed_fields,
    stream,
    stream_base,
    stream_base_int,
    uniforms,
)
from dixit_lab.engine.answer_checks import submit_problem, tell_problem, vote_problem
from dixit_lab.engine.decisions import Decision, Failure, Phase, agent_answer, observes
from dixit_lab.engine.decisions import raised_message as _raised
from dixit_lab.records.format import EndReason, Fault, GameRecord, RoundRecord, new_round
from dixit_lab.text_rule import safe_message

__all__ = [
    "FALLBACK_CLUE",
    "Decision",
    "Failure",
    "GameSteps",
    "IllegalAction",
    "Phase",
    "agent_answer",
    "play_game",
]

OnIllegal = Literal["raise", "fallback"]
FALLBACK_CLUE = "(no clue)"
_FALLBACK = 3  # sub-stream of the game's SeedSequence for fallback actions
_DISPLAY_BLOCK = 16  # display orders computed at a time (any block size gives the same orders)
_SEAT_BLOCK = 32     # numbers of each seat's stream computed at the start of a game


def play_game(
    agents: Sequence[Agent],
    rules: RuleSet,
    deck: Deck,
    seed: GameSeed,
    *,
    on_illegal: OnIllegal = "raise",
    meta: dict[str, Any] | None = None,
    players: Sequence[str] | None = None,
    first_player_seat: int = 0,
) -> GameRecord:
    """Play one game and return its record. Same inputs, same record, on every machine.

    ``seed`` is an int or a ``numpy.random.SeedSequence`` (see :mod:`dixit_lab.core.seeding`).
    With ``on_illegal="raise"`` an illegal action, or an exception raised by an agent in any
    of its methods (``begin_game`` and ``observe`` included), raises :class:`IllegalAction`
    naming the seat, agent, round and action; with ``"fallback"`` the fault is recorded in the
    round and, for an action, a legal action drawn from the seat's fallback stream replaces it.
    ``players`` are the public names the agents know each other by (default ``seat 0`` ...;
    the record keeps the specs); ``first_player_seat`` as :class:`GameSteps`.
    """
    agents = list(agents)
    names = tuple(getattr(agent, "spec", None) or agent.name for agent in agents)
    game = GameSteps(names, rules, deck, seed, on_illegal=on_illegal, meta=meta,
                     players=players, first_player_seat=first_player_seat)
    for seat, agent in enumerate(agents):
        try:
            agent.begin_game(game.context(seat))
        except Exception as error:  # an agent's exception is a fault like an illegal action
            game.hook_failed(seat, "begin_game", error)
    # the seats whose ``observe`` does something (the base class's does nothing)
    observers = [(seat, agent) for seat, agent in enumerate(agents) if observes(agent)]
    # the game's generator, driven here without ``send``'s bookkeeping: one game is ~45
    # events, and each answer is what ``agent_answer`` gives (written out: ~100 decisions)
    steps = game._begin()
    try:
        event = steps.send(None)
        while True:
            if type(event) is Phase:
                answers: list[Any] = []
                action = event.action
                for decision in event.decisions:
                    try:
                        answers.append(getattr(agents[decision.seat], action)(decision.view))
                    except AgentFailure as failure:
                        answers.append(Failure(failure.kind, str(failure), failure))
                    except Exception as error:
                        answers.append(Failure("raised", _raised(error), error))
                event = steps.send(answers)
            else:
                for seat, agent in observers:
                    try:
                        agent.observe(event)
                    except Exception as error:
                        game.hook_failed(seat, "observe", error)
                event = steps.send(None)
    except StopIteration as stop:
        game.record = stop.value
    assert game.record is not None
    return game.record


class GameSteps:
    """One game, stepped phase by phase (see the module docstring).

    ``start()`` returns the first event and ``send(answers)`` the next: a :class:`Phase`, to
    be answered with one answer per decision (a :class:`Clue`, a list of card indices, a
    display position, or a :class:`Failure`); a :class:`PublicRound`, the reveal of the round
    just scored, answered with ``None``; and ``None`` once the game is over, when ``record``
    holds its :class:`GameRecord`. ``names`` (the agents' specs) go into the record;
    ``players``, the public names of the seats (default ``seat 0`` ...), into the contexts.
    ``first_player_seat``: the seat of the config's first player, who tells first under
    ``first_storyteller="first_player"`` (its ``GameSpec`` knows it; default 0).
    """

    def __init__(self, names: Sequence[str], rules: RuleSet, deck: Deck, seed: GameSeed, *,
                 on_illegal: OnIllegal = "raise", meta: dict[str, Any] | None = None,
                 players: Sequence[str] | None = None, first_player_seat: int = 0) -> None:
        if on_illegal not in ("raise", "fallback"):
            raise ValueError(f"on_illegal must be 'raise' or 'fallback', got {on_illegal!r}")
        n = len(names)
        if not 0 <= first_player_seat < n:
            raise ValueError(f"first_player_seat {first_player_seat} of a table of {n}")
        self._first = first_player_seat if rules.first_storyteller == "first_player" else 0
        rules.check_players(n)
        self.hand_size = rules.hand_size_for(n)
        self.per_player = rules.cards_per_player(n)
        self.displayed = rules.displayed_cards(n)
        deck.check_playable(n, self.hand_size, self.displayed)
        self.names = tuple(names)
        self.rules = rules
        self.n = n
        self.on_illegal = on_illegal
        self.meta = meta or {}
        self.deck_size, self.deck_name = len(deck), deck.name
        self.seq = as_seed_sequence(seed)
        self.key = game_key(self.seq)
        bases = seat_bases(self.key, n)
        # every number the game needs first, in one NumPy call: the deal (one number per
        # card), a block of display orders and each seat's first block
        k, deck_size = self.displayed, len(deck)
        display_base = stream_base_int(*self.key, Streams.DISPLAY)
        numbers = first_numbers(
            [stream_base_int(*self.key, Streams.DEAL), display_base, *bases],
            (deck_size, _DISPLAY_BLOCK * k, *(_SEAT_BLOCK,) * n))
        self._deal_numbers = numbers[:deck_size]
        end = deck_size + _DISPLAY_BLOCK * k
        self.permutations: list[list[int]] = self._display_orders(numbers[deck_size:end])
        firsts = numbers[end:].reshape(n, _SEAT_BLOCK).tolist()
        # each seat gets its own copies of the rules and the deck: nothing it can change for
        # the others, and nothing of the engine; the others are their public names (the
        # record's ``names`` are specs: how a seat thinks is not public)
        public = tuple(str(name) for name in players) if players is not None else \
            seat_names(n)
        if len(public) != n:
            raise ValueError(f"{len(public)} public names for {n} players")
        values = rule_values(rules)  # each seat's RuleSet, made when the seat reads it
        deck_state = deck.state()  # and its Deck
        self._contexts = tuple(
            GameContext(seat, n, values, deck_state, public, bases[seat], firsts[seat])
            for seat in range(n))
        self.display_base = np.uint64(display_base)
        self._points = point_tables(rules, n)
        self._listeners = _listeners(n)
        self.rounds_shown = 0
        self.reshuffles = 0
        self.round_index = 0
        self.fallback_rngs: dict[int, np.random.Generator] = {}
        self.faults: list[Fault] = []
        self.record: GameRecord | None = None
        self._steps: Generator[Any, Any, GameRecord] | None = None
        self._hands: list[list[int]] = []
        self._dealt: list[list[int]] = []

    # -- the stepping interface -------------------------------------------------------------

    def context(self, seat: int) -> GameContext:
        """What seat ``seat`` learns at the start of the game (for ``Agent.begin_game``)."""
        return self._contexts[seat]

    def start(self) -> Phase | PublicRound | None:
        self._begin()
        return self._advance(None)

    def _begin(self) -> Generator[Any, Any, GameRecord]:
        """The game's generator, once (``start`` advances it; ``play_game`` drives it)."""
        if self._steps is not None:
            raise RuntimeError("this game has already started")
        self._steps = self._play()
        return self._steps

    def send(self, answers: Sequence[Any] | None) -> Phase | PublicRound | None:
        if self._steps is None:
            raise RuntimeError("call start() before send()")
        return self._advance(answers)

    def _advance(self, answers: Sequence[Any] | None) -> Phase | PublicRound | None:
        assert self._steps is not None
        try:
            return self._steps.send(answers)
        except StopIteration as stop:
            self.record = stop.value
            return None

    def hand(self, seat: int) -> tuple[int, ...]:
        """Seat ``seat``'s hand now (for a driver that shows each seat its own cards while
        others decide, such as the PettingZoo environment); never another seat's."""
        return tuple(self._hands[seat]) if self._hands else ()

    def hook_failed(self, seat: int, hook: str, error: BaseException) -> None:
        """An agent's ``begin_game`` or ``observe`` raised: a fault of the current round."""
        if isinstance(error, AgentFailure):
            self._fault(seat, hook, str(error), error.kind, error)
        else:
            self._fault(seat, hook, _raised(error), "raised", error)

    # -- faults -----------------------------------------------------------------------------

    def _fault(self, seat: int, action: str, message: str, kind: str,
               cause: BaseException | None = None) -> np.random.Generator:
        """Raise, or record the fault and return the seat's fallback stream."""
        if self.on_illegal == "raise":
            raise IllegalAction(f"seat {seat} (agent {self.names[seat]}), round "
                                f"{self.round_index + 1}, {action}: {message}") from cause
        self.faults.append(Fault(seat, self.names[seat], action, safe_message(message), kind))
        rng = self.fallback_rngs.get(seat)
        if rng is None:
            rng = self.fallback_rngs[seat] = stream(self.seq, _FALLBACK, seat)
        return rng

    def _problem(self, seat: int, action: str, answer: Any, problem: str
                 ) -> np.random.Generator:
        """The fault of ``answer``, a failure or illegal (``problem`` says why): raised, or
        recorded and the seat's fallback stream returned."""
        if type(answer) is Failure:
            return self._fault(seat, action, answer.message, answer.kind, answer.error)
        return self._fault(seat, action, problem, "illegal")

    def _next_permutation(self) -> list[int]:
        """The display order of the next round: round r sorts numbers r*k .. r*k+k-1 of the
        display stream (k displayed cards); computed for a block of rounds at a time (the
        first block with the game's first numbers)."""
        if not self.permutations:
            k, first = self.displayed, self.rounds_shown
            counters = np.arange(first * k, (first + _DISPLAY_BLOCK) * k, dtype=np.uint64)
            self.permutations = self._display_orders(uniforms(self.display_base, counters))
        self.rounds_shown += 1
        return self.permutations.pop()

    def _display_orders(self, numbers: np.ndarray) -> list[list[int]]:
        """The display orders of a block of rounds from their numbers, the last round first
        (taken with ``pop()``)."""
        orders: list[list[int]] = numbers.reshape(_DISPLAY_BLOCK, self.displayed).argsort(
            axis=1, kind="stable").tolist()
        orders.reverse()
        return orders

    # -- the game ---------------------------------------------------------------------------

    def _deal(self) -> tuple[list[list[int]], list[int], int]:
        """The hands, the draw pile (drawn with ``pop()``) and the first storyteller."""
        n, size = self.n, self.hand_size
        order: list[int] = self._deal_numbers.argsort(kind="stable").tolist()
        hands = self._hands = [order[s * size:(s + 1) * size] for s in range(n)]
        self._dealt = [list(hand) for hand in hands]  # what fixed_hands restores every round
        pile = order[n * size:]
        pile.reverse()  # draw with pop() from the end: the next card is order[n*h + k]
        if self.rules.first_storyteller != "random":  # seat 0, or the first player's seat
            return hands, pile, self._first
        draw = uniforms(stream_base(*self.key, Streams.FIRST_STORYTELLER), 0)
        return hands, pile, min(int(float(draw[0]) * n), n - 1)

    def _play(self) -> Generator[Any, Any, GameRecord]:
        """The game: round after round, each its three phases and its reveal, in one loop;
        every answer goes through the checks of :mod:`dixit_lab.engine.answer_checks`
        (``_clue``, ``_cards``, ``_vote``)."""
        n, rules, per_player = self.n, self.rules, self.per_player
        hands, pile, storyteller = self._deal()
        discard: list[int] = []
        scores = [0] * n
        perceived = [context.perceived for context in self._contexts]
        said = [context.unperceived_now for context in self._contexts]  # ask only if any
        rounds: list[RoundRecord] = []
        history: tuple[PublicRound, ...] = ()
        end_reason: EndReason = "max_rounds"
        for round_index in range(rules.max_rounds):
            self.round_index = round_index
            listeners = self._listeners[storyteller]
            public_scores = tuple(scores)
            # -- the storyteller tells
            teller_hand = hands[storyteller]
            teller_view_hand = tuple(teller_hand)
            view = _new(TellView, (storyteller, round_index, teller_view_hand, public_scores,
                                   history))
            (clue,) = yield _new(Phase, ("tell", (_new(Decision, (storyteller, "tell", view)),)))
            teller_card, text = self._clue(storyteller, clue, teller_hand)
            teller_hand.remove(teller_card)
            # -- the listeners submit
            answers = yield _new(Phase, ("submit", tuple([
                _new(Decision, (seat, "submit", _new(SubmitView, (
                    seat, round_index, storyteller, text, tuple(hands[seat]), per_player,
                    public_scores, history))))
                for seat in listeners])))
            table, owners = [teller_card], [storyteller]
            for seat, cards in zip(listeners, answers, strict=True):
                for card in self._cards(seat, cards, hands[seat]):
                    hands[seat].remove(card)
                    table.append(card)
                    owners.append(seat)
            # -- the display, shuffled, and the votes
            order = self._next_permutation()
            display = tuple([table[i] for i in order])
            card_owner = tuple([owners[i] for i in order])
            k = len(display)
            positions: list[list[int]] = [[] for _ in range(n)]
            for position, owner in enumerate(card_owner):
                positions[owner].append(position)
            answers = yield _new(Phase, ("vote", tuple([
                _new(Decision, (seat, "vote", _new(VoteView, (
                    seat, round_index, storyteller, text, tuple(hands[seat]), display,
                    tuple(positions[seat]), public_scores, history))))
                for seat in listeners])))
            votes: list[int | None] = [None] * n
            for seat, vote in zip(listeners, answers, strict=True):
                votes[seat] = self._vote(seat, vote, k, rules.barred_votes(positions[seat]))
            # -- the scores, the record and the reveal
            points = table_points(self._points, storyteller, card_owner, votes)
            scores[:] = map(operator.add, scores, points)
            faults: tuple[Fault, ...] = ()
            if self.faults:
                faults, self.faults = tuple(self.faults), []
            record = new_round(storyteller, text, teller_card, display, card_owner,
                               tuple(votes), points, tuple(scores), faults, teller_view_hand)
            public = _new(PublicRound, (round_index, storyteller, text, display, card_owner,
                                        record.votes, points, record.scores))
            history = (*history, public)
            yield public
            if self.faults:  # faults of the agents' ``observe`` of this round
                record = record.with_faults(tuple(self.faults))
                self.faults = []
            if any(said) and (unheard := tuple([
                    seat for seat in range(n)
                    if seat != storyteller and not perceived[seat](text)])):
                # seats that could not perceive the clue (counted in agents.csv)
                record = record.with_unperceived(unheard)
            rounds.append(record)
            # -- the end, or the next round
            discard.extend(display)
            if rules.target_score is not None and max(scores) >= rules.target_score:
                end_reason = "target_score"
                break
            if self._refill(hands, pile, discard, storyteller):
                end_reason = "deck_exhausted"
                break
            storyteller = (storyteller + 1) % n
        best = max(scores)
        return GameRecord(*seed_fields(self.seq), rules=rules.name,
                          rule_options=record_options(rules), agents=self.names,
                          deck=self.deck_name, rounds=tuple(rounds),
                          final_scores=tuple(scores),
                          winners=tuple(seat for seat in range(n) if scores[seat] == best),
                          end_reason=end_reason, meta=self.meta)

    def _clue(self, storyteller: int, clue: Any, hand: list[int]) -> tuple[int, str]:
        """The storyteller's card and clue: ``clue``'s, if it is legal (an int-like card
        read as an int), else a fault (or :class:`IllegalAction`) and the fallback clue on a
        card from the seat's fallback stream."""
        problem = "" if type(clue) is Failure else tell_problem(clue, hand)
        if problem is None:
            return operator.index(clue.card), clue.text
        rng = self._problem(storyteller, "tell", clue, problem)
        return hand[int(rng.integers(len(hand)))], FALLBACK_CLUE

    def _cards(self, seat: int, cards: Any, hand: list[int]) -> list[int]:
        """A listener's cards: ``cards``, if legal, else cards drawn from the seat's
        fallback stream (see ``_clue``)."""
        problem = "" if type(cards) is Failure else submit_problem(cards, hand,
                                                                   self.per_player)
        if problem is None:
            return list(map(operator.index, cards))
        rng = self._problem(seat, "submit", cards, problem)
        return [hand[i] for i in rng.choice(len(hand), self.per_player, replace=False)]

    def _vote(self, seat: int, vote: Any, k: int, own: Sequence[int]) -> int:
        """A listener's vote: ``vote``, if legal, else a position drawn from the seat's
        fallback stream (see ``_clue``)."""
        problem = "" if type(vote) is Failure else vote_problem(vote, k, own)
        if problem is None:
            return operator.index(vote)
        rng = self._problem(seat, "vote", vote, problem)
        allowed = [i for i in range(k) if i not in own]
        return allowed[int(rng.integers(len(allowed)))]

    def _refill(self, hands: list[list[int]], pile: list[int], discard: list[int],
                storyteller: int) -> bool:
        """Draw back up to hand size, from the storyteller's left. True if the game ends."""
        if self.rules.fixed_hands:  # the next round is played from the hands as dealt
            for hand, dealt in zip(hands, self._dealt, strict=True):
                hand[:] = dealt
            return False
        n, size, mode = self.n, self.hand_size, self.rules.deck_exhausted
        need = n * size - sum(map(len, hands))
        if len(pile) < need:
            if mode == "end_when_cannot_refill":
                return True
            if mode == "reshuffle_discard":
                combined = pile + discard
                discard.clear()
                base = stream_base(*self.key, Streams.RESHUFFLE + self.reshuffles)
                self.reshuffles += 1
                pile[:] = [combined[i] for i in permutation(base, len(combined)).tolist()]
                if len(pile) < need:
                    return True
        for offset in range(1, n + 1):  # from the storyteller's left, the storyteller last
            hand = hands[(storyteller + offset) % n]
            while len(hand) < size and pile:
                hand.append(pile.pop())
        if mode == "end_when_last_drawn":
            return not pile
        if mode == "play_out_hands" and not pile:
            following = (storyteller + 1) % n  # can the next round be played from the hands?
            return any(len(hands[seat]) < (1 if seat == following else self.per_player)
                       for seat in range(n))
        return False


@functools.cache
def _listeners(n: int) -> tuple[tuple[int, ...], ...]:
    """The listeners of each storyteller, in play order from the storyteller's left."""
    return tuple(tuple((teller + offset) % n for offset in range(1, n)) for teller in range(n))


#: builds a view, a decision or a phase (named tuples) from a tuple of its fields in C,
#: without the Python-level ``__new__`` of a named tuple: ~20 of them a round, 14 % of a
#: game of random players (the reference engine's one speed device; measured 2026-12-07)
_new = tuple.__new__
