"""The reference game engine: ``play_game`` plays one seeded game between agents.

This is the readable definition of a game of Dixit (see ``shared/RULES.md``). Every random
draw comes from the game's seeded streams: the whole deck order and the first storyteller from
the deal stream before any agent acts, the display shuffles from the display stream, and each
agent's own draws from its seat's stream.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from dixit_lab.agent import Agent, Clue, GameContext, PublicRound, SubmitView, TellView, VoteView
from dixit_lab.cards import Deck
from dixit_lab.records import EndReason, Fault, GameRecord, RoundRecord
from dixit_lab.rules import IllegalAction, RuleSet, round_points
from dixit_lab.seeding import (
    GameSeed,
    SeatStreams,
    Streams,
    as_seed_sequence,
    game_key,
    permutation,
    seed_fields,
    stream,
    stream_base,
    stream_base_int,
    uniforms,
)

__all__ = ["FALLBACK_CLUE", "IllegalAction", "play_game"]

OnIllegal = Literal["raise", "fallback"]
FALLBACK_CLUE = "(no clue)"
_AGENT, _FALLBACK = 2, 3  # sub-streams of the game's SeedSequence: agents' rng, fallbacks
_DISPLAY_BLOCK = 16  # display orders computed at a time (any block size gives the same orders)


def play_game(
    agents: Sequence[Agent],
    rules: RuleSet,
    deck: Deck,
    seed: GameSeed,
    *,
    on_illegal: OnIllegal = "raise",
    meta: dict[str, Any] | None = None,
) -> GameRecord:
    """Play one game and return its record. Same inputs, same record, on every machine.

    ``seed`` is an int or a ``numpy.random.SeedSequence`` (see :mod:`dixit_lab.seeding`).
    With ``on_illegal="raise"`` an illegal action (or an exception inside an agent) raises
    :class:`IllegalAction` naming the seat, agent, round and action; with ``"fallback"`` the
    fault is recorded in the round and a legal action drawn from the seat's fallback stream
    replaces it.
    """
    if on_illegal not in ("raise", "fallback"):
        raise ValueError(f"on_illegal must be 'raise' or 'fallback', got {on_illegal!r}")
    game = _Game(list(agents), rules, deck, seed, on_illegal)
    return game.play(meta or {})


class _Game:
    def __init__(
        self, agents: list[Agent], rules: RuleSet, deck: Deck, seed: GameSeed, on_illegal: str
    ) -> None:
        n = len(agents)
        rules.check_players(n)
        self.hand_size = rules.hand_size_for(n)
        self.per_player = rules.cards_per_player(n)
        deck.check_playable(n, self.hand_size, rules.displayed_cards(n))
        self.agents = agents
        self.rules = rules
        self.deck = deck
        self.n = n
        self.on_illegal = on_illegal
        self.seq = as_seed_sequence(seed)
        self.names = tuple(getattr(a, "spec", None) or a.name for a in agents)
        self.fallback_rngs: dict[int, np.random.Generator] = {}
        self.key = game_key(self.seq)
        self.display_base = np.uint64(stream_base_int(*self.key, Streams.DISPLAY))
        self.displayed = rules.displayed_cards(n)
        self.permutations: list[list[int]] = []
        self.rounds_shown = 0
        self.reshuffles = 0

    def next_permutation(self) -> list[int]:
        """The display order of the next round: round r sorts numbers r*k .. r*k+k-1 of the
        display stream (k displayed cards); computed for a block of rounds at a time."""
        if not self.permutations:
            k, first = self.displayed, self.rounds_shown
            counters = np.arange(first * k, (first + _DISPLAY_BLOCK) * k, dtype=np.uint64)
            keys = uniforms(self.display_base, counters).reshape(_DISPLAY_BLOCK, k)
            self.permutations = keys.argsort(axis=1, kind="stable").tolist()
            self.permutations.reverse()
        self.rounds_shown += 1
        return self.permutations.pop()

    # -- faults -----------------------------------------------------------------------------

    def fault(self, faults: list[Fault], seat: int, round_index: int, action: str,
              message: str, cause: BaseException | None = None) -> np.random.Generator:
        """Raise, or record the fault and return the seat's fallback stream."""
        if self.on_illegal == "raise":
            raise IllegalAction(f"seat {seat} (agent {self.names[seat]}), round {round_index}, "
                                f"{action}: {message}") from cause
        faults.append(Fault(seat, self.names[seat], action, message))
        rng = self.fallback_rngs.get(seat)
        if rng is None:
            rng = self.fallback_rngs[seat] = stream(self.seq, _FALLBACK, seat)
        return rng

    # -- the game ---------------------------------------------------------------------------

    def play(self, meta: dict[str, Any]) -> GameRecord:
        n, rules, agents = self.n, self.rules, self.agents
        order = permutation(np.uint64(stream_base_int(*self.key, Streams.DEAL)),
                            len(self.deck)).tolist()
        hands = [order[s * self.hand_size:(s + 1) * self.hand_size] for s in range(n)]
        pile = order[n * self.hand_size:]
        pile.reverse()  # draw with pop() from the end: the next card is order[n*h + k]
        discard: list[int] = []
        if rules.first_storyteller == "seat0":
            storyteller = 0
        else:
            draw = uniforms(stream_base(*self.key, Streams.FIRST_STORYTELLER), 0)
            storyteller = min(int(float(draw[0]) * n), n - 1)
        seat_streams = SeatStreams(self.key, n)
        for seat, agent in enumerate(agents):
            agent.begin_game(GameContext(seat, n, rules, self.deck, self.names,
                                         _rng_factory(self.seq, seat), self.key, seat_streams))
        scores = [0] * n
        rounds: list[RoundRecord] = []
        history: tuple[PublicRound, ...] = ()
        end_reason: EndReason = "max_rounds"
        for round_index in range(rules.max_rounds):
            record = self.play_round(round_index, storyteller, hands, scores, history)
            rounds.append(record)
            for card in record.display:
                discard.append(card)
            public = PublicRound(round_index, storyteller, record.clue, record.display,
                                 record.card_owner, record.votes, record.points, record.scores)
            history = (*history, public)
            for agent in agents:
                agent.observe(public)
            if rules.target_score is not None and max(scores) >= rules.target_score:
                end_reason = "target_score"
                break
            if self.refill(hands, pile, discard, storyteller):
                end_reason = "deck_exhausted"
                break
            storyteller = (storyteller + 1) % n
        best = max(scores)
        return GameRecord(
            *seed_fields(self.seq),
            rules=rules.name,
            rule_options=_options(rules),
            agents=self.names,
            deck=self.deck.name,
            rounds=tuple(rounds),
            final_scores=tuple(scores),
            winners=tuple(seat for seat in range(n) if scores[seat] == best),
            end_reason=end_reason,
            meta=meta,
        )

    def refill(self, hands: list[list[int]], pile: list[int], discard: list[int],
               storyteller: int) -> bool:
        """Draw back up to hand size, from the storyteller's left. True if the game ends."""
        n, size, mode = self.n, self.hand_size, self.rules.deck_exhausted
        need = sum(size - len(hand) for hand in hands)
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
        for offset in range(1, n + 1):
            hand = hands[(storyteller + offset) % n]
            while len(hand) < size and pile:
                hand.append(pile.pop())
        return mode == "end_when_last_drawn" and not pile

    def play_round(self, round_index: int, storyteller: int, hands: list[list[int]],
                   scores: list[int], history: tuple[PublicRound, ...]) -> RoundRecord:
        n, agents, per_player = self.n, self.agents, self.per_player
        listeners = [(storyteller + offset) % n for offset in range(1, n)]
        faults: list[Fault] = []
        public_scores = tuple(scores)
        teller_hand = hands[storyteller]

        teller_view_hand = tuple(teller_hand)
        view = TellView(storyteller, round_index, teller_view_hand, public_scores, history)
        try:
            clue, error = agents[storyteller].tell(view), None
        except Exception as raised:  # an agent's exception is a fault like an illegal action
            clue, error = None, raised
        problem = _tell_problem(clue, teller_hand) if error is None else _raised(error)
        if problem:
            rng = self.fault(faults, storyteller, round_index, "tell", problem, error)
            clue = Clue(teller_hand[int(rng.integers(len(teller_hand)))], FALLBACK_CLUE)
        teller_card, text = operator.index(clue.card), clue.text
        teller_hand.remove(teller_card)

        table = [teller_card]
        owners = [storyteller]
        for seat in listeners:
            hand = hands[seat]
            view = SubmitView(seat, round_index, storyteller, text, tuple(hand), per_player,
                              public_scores, history)
            try:
                cards, error = agents[seat].submit(view), None
            except Exception as raised:
                cards, error = None, raised
            if (per_player == 1 and error is None and type(cards) is list and len(cards) == 1
                    and type(card := cards[0]) is int and card in hand):
                hand.remove(card)  # the common legal case, checked inline
                table.append(card)
                owners.append(seat)
                continue
            problem = _submit_problem(cards, hand, per_player) if error is None \
                else _raised(error)
            if problem:
                rng = self.fault(faults, seat, round_index, "submit", problem, error)
                cards = [hand[i] for i in rng.choice(len(hand), per_player, replace=False)]
            for card in cards:
                card = operator.index(card)
                hand.remove(card)
                table.append(card)
                owners.append(seat)

        permutation = self.next_permutation()
        display = tuple([table[i] for i in permutation])
        card_owner = tuple([owners[i] for i in permutation])

        k = len(display)
        positions: list[list[int]] = [[] for _ in range(n)]
        for position, owner in enumerate(card_owner):
            positions[owner].append(position)
        votes: list[int | None] = [None] * n
        for seat in listeners:
            own = tuple(positions[seat])
            view = VoteView(seat, round_index, storyteller, text, tuple(hands[seat]), display,
                            own, public_scores, history)
            try:
                vote, error = agents[seat].vote(view), None
            except Exception as raised:
                vote, error = None, raised
            if error is None and type(vote) is int and 0 <= vote < k and vote not in own:
                votes[seat] = vote  # the common legal case, checked inline
                continue
            problem = _vote_problem(vote, k, own) if error is None else _raised(error)
            if problem:
                rng = self.fault(faults, seat, round_index, "vote", problem, error)
                allowed = [i for i in range(k) if i not in own]
                vote = allowed[int(rng.integers(len(allowed)))]
            votes[seat] = operator.index(vote)

        points = round_points(self.rules, storyteller, card_owner, votes)
        for seat in range(n):
            scores[seat] += points[seat]
        return RoundRecord(storyteller, text, teller_card, display, card_owner, tuple(votes),
                           points, tuple(scores), tuple(faults), teller_view_hand)


_OPTIONS: dict[RuleSet, dict[str, Any]] = {}


def _options(rules: RuleSet) -> dict[str, Any]:
    """``rules.options()``, computed once per rule set (records share the dict read-only)."""
    options = _OPTIONS.get(rules)
    if options is None:
        options = _OPTIONS[rules] = rules.options()
    return options


def _rng_factory(seq: np.random.SeedSequence, seat: int) -> Callable[[], np.random.Generator]:
    return lambda: stream(seq, _AGENT, seat)


def _raised(error: BaseException) -> str:
    return f"the agent raised {type(error).__name__}: {error}"


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _tell_problem(clue: Any, hand: list[int]) -> str | None:
    if not isinstance(clue, Clue):
        return f"expected a Clue(card, text), got {clue!r}"
    card = _as_int(clue.card)
    if card is None or card not in hand:
        return f"card {clue.card!r} is not in the storyteller's hand {hand}"
    if not isinstance(clue.text, str) or not clue.text.strip():
        return f"the clue text must be a non-empty string, got {clue.text!r}"
    return None


def _submit_problem(cards: Any, hand: list[int], expected: int) -> str | None:
    if type(cards) is list and len(cards) == expected and len(set(cards)) == expected and all(
        type(card) is int and card in hand for card in cards
    ):
        return None  # the common, legal case, checked fast
    if not isinstance(cards, list | tuple):
        return f"expected a list of {expected} card(s), got {cards!r}"
    if len(cards) != expected:
        return f"submitted {len(cards)} card(s), expected {expected}"
    values = [_as_int(card) for card in cards]
    for card, value in zip(cards, values, strict=True):
        if value is None or value not in hand:
            return f"card {card!r} is not in the hand {hand}"
    if len(set(values)) != len(values):
        return f"submitted the same card twice: {list(cards)}"
    return None


def _vote_problem(vote: Any, n_displayed: int, own: tuple[int, ...]) -> str | None:
    value = _as_int(vote)
    if value is None or not 0 <= value < n_displayed:
        return f"vote {vote!r} is out of range 0..{n_displayed - 1}"
    if value in own:
        return f"voted for its own card (displayed position {value})"
    return None
