"""The reference engine: the game loop, end conditions, faults and view isolation."""

from __future__ import annotations

from collections import Counter

import pytest

from dixit_lab.core.agent import (
    Agent,
    Clue,
    PublicRound,
    SubmitView,
    TellView,
    VoteView,
    make_agent,
)
from dixit_lab.core.cards import Deck, DeckError
from dixit_lab.core.rules import IllegalAction, get_rules
from dixit_lab.engine.game import FALLBACK_CLUE, play_game

DECK = Deck.numbered(84)


def randoms(n: int) -> list[Agent]:
    return [make_agent("random") for _ in range(n)]


# --- deck exhaustion, worked out by hand (84 cards, no target score) -------------------------
# After the deal the draw pile holds 84 - n*hand cards; each round plays and redraws c cards
# (c = n, or 5 at three players where hands are 7).
#   n=3: pile 84-21=63, c=5 | n=4: pile 60, c=4 | n=5: pile 54, c=5 | n=6: pile 48, c=6
# end_when_last_drawn: the round whose refill draws the last card ends the game:
#   ceil(pile / c) -> 13, 15, 11, 8
# end_when_cannot_refill (quest: hands of 6 at three players too, so the pile holds 66 there):
# full refills while possible, then one more round with full hands:
#   floor(pile / c) + 1 -> floor(66/5)+1 = 14, 16, 11, 9
ROUNDS_LAST_DRAWN = {3: 13, 4: 15, 5: 11, 6: 8}
ROUNDS_CANNOT_REFILL = {3: 14, 4: 16, 5: 11, 6: 9}
# play_out_hands (001: once the pile is empty, play the hands out until a round cannot be
# played: the storyteller needs 1 card, each listener c' = 1 (2 at three players)):
#   n=4: the 15th refill empties the pile with full hands; 6 more rounds empty them: 21.
#   n=5: after 10 refills 4 cards are left; round 11's refill gives them to seats 1-4 (left of
#        storyteller 0), seat 0 keeps 5; rounds 12-16 leave seat 0 with none: 16.
#   n=6: the 8th refill empties the pile with full hands; 6 more rounds: 14.
#   n=3, classic (hands of 7): after 12 refills 3 are left; round 13's refill (storyteller 0)
#        gives seat 1 two and seat 2 one: hands 6, 7, 6. Rounds 14-16 leave hands 1, 2, 1 and
#        listener seat 2 of round 17 holds 1 < 2 cards: 16.
#   n=3, quest (hands of 6): after 13 refills 1 is left, for seat 2 (left of storyteller 1):
#        hands 4, 5, 5; rounds 15-16 leave 1, 1, 2 and listener seat 0 of round 17 holds 1: 16.
ROUNDS_PLAY_OUT = {3: 16, 4: 21, 5: 16, 6: 14}


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_rounds_until_last_card_drawn(n):
    for seed in range(3):
        record = play_game(randoms(n), get_rules("classic"), DECK, seed)
        assert len(record.rounds) == ROUNDS_LAST_DRAWN[n]
        assert record.end_reason == "deck_exhausted"


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_rounds_until_hands_cannot_be_refilled(n):
    rules = get_rules("quest", target_score=None)
    for seed in range(3):
        record = play_game(randoms(n), rules, DECK, seed)
        assert len(record.rounds) == ROUNDS_CANNOT_REFILL[n]
        assert record.end_reason == "deck_exhausted"


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_rounds_until_the_hands_are_played_out(n):
    rules = get_rules("classic", deck_exhausted="play_out_hands")
    for seed in range(3):
        record = play_game(randoms(n), rules, DECK, seed)
        assert len(record.rounds) == ROUNDS_PLAY_OUT[n]
        assert record.end_reason == "deck_exhausted"
        # every card was dealt, and each round's table was full
        assert all(len(rnd.display) == rules.displayed_cards(n) for rnd in record.rounds)


def test_quest_at_three_players_plays_out_six_card_hands():
    rules = get_rules("quest", target_score=None, deck_exhausted="play_out_hands")
    assert rules.hand_size_for(3) == 6
    for seed in range(3):
        record = play_game(randoms(3), rules, DECK, seed)
        assert len(record.rounds) == 16
        assert len(record.rounds[0].storyteller_hand) == 6


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_reshuffle_goes_on_until_max_rounds(n):
    rules = get_rules("refresh", target_score=None, max_rounds=40)
    record = play_game(randoms(n), rules, DECK, 7)
    assert len(record.rounds) == 40
    assert record.end_reason == "max_rounds"
    # 40 rounds use more cards than the deck holds: cards come back after a reshuffle
    played = Counter(card for rnd in record.rounds for card in rnd.display)
    assert max(played.values()) > 1
    for rnd in record.rounds:  # but never twice on one table
        assert len(set(rnd.display)) == len(rnd.display)


class HandChecker(Agent):
    """Random choices, but checks that its hand is always full and never shares a card with
    a card seen elsewhere on the table in the same round."""

    def __init__(self, expected_hand: int) -> None:
        self.expected_hand = expected_hand
        self.inner = make_agent("random")
        self.hand_sizes: list[int] = []

    def begin_game(self, context):
        super().begin_game(context)
        self.inner.begin_game(context)

    def tell(self, view):
        self.hand_sizes.append(len(view.hand))
        return self.inner.tell(view)

    def submit(self, view):
        self.hand_sizes.append(len(view.hand))
        return self.inner.submit(view)

    def vote(self, view):
        return self.inner.vote(view)


@pytest.mark.parametrize(("preset", "n"), [("refresh", 3), ("refresh", 8), ("quest", 4),
                                           ("classic", 6)])
def test_hands_are_full_every_round(preset, n):
    rules = get_rules(preset, target_score=None, max_rounds=30)
    agents = [HandChecker(rules.hand_size_for(n)) for _ in range(n)]
    play_game(agents, rules, DECK, 3)
    for agent in agents:
        assert set(agent.hand_sizes) == {rules.hand_size_for(n)}


def test_fixed_hands_play_every_round_from_the_dealt_hands():
    """DixitWorld's arena: the cards played go back, nobody draws, the game lasts max_rounds
    rounds (12) with the storyteller going round from the first player (P1: seat 0 here)."""
    rules = get_rules("dixitworld")
    agents = [Spy() for _ in range(4)]
    record = play_game(agents, rules, DECK, 21)
    assert len(record.rounds) == 12 and record.end_reason == "max_rounds"
    assert [rnd.storyteller for rnd in record.rounds] == [0, 1, 2, 3] * 3
    dealt = [agent.views[0].hand for agent in agents]
    assert all(len(hand) == 4 for hand in dealt) and len(set().union(*dealt)) == 16
    for seat, agent in enumerate(agents):
        assert len(agent.views) == 12 * 2 - 3  # tells 3 times, submits and votes 9 times
        # the hand before the seat plays (a vote view holds it without the card submitted)
        assert {view.hand for view in agent.views
                if not isinstance(view, VoteView)} == {dealt[seat]}
    for rnd in record.rounds:
        assert all(card in dealt[owner] for card, owner in zip(rnd.display, rnd.card_owner,
                                                                strict=True))
    assert play_game([Spy() for _ in range(4)], rules, DECK, 21) == record


# --- the three-player variant -----------------------------------------------------------------
class Spy(Agent):
    """Plays randomly and keeps every view it is given."""

    def __init__(self) -> None:
        self.inner = make_agent("random")
        self.views: list[object] = []
        self.observed: list[PublicRound] = []

    def begin_game(self, context):
        super().begin_game(context)
        self.inner.begin_game(context)

    def tell(self, view):
        self.views.append(view)
        return self.inner.tell(view)

    def submit(self, view):
        self.views.append(view)
        return self.inner.submit(view)

    def vote(self, view):
        self.views.append(view)
        return self.inner.vote(view)

    def observe(self, result):
        self.observed.append(result)


def test_three_players_use_seven_cards_and_two_decoys():
    agents = [Spy() for _ in range(3)]
    record = play_game(agents, get_rules("classic"), DECK, 11)
    for agent in agents:
        for view in agent.views:
            if isinstance(view, TellView | SubmitView):
                assert len(view.hand) == 7
            if isinstance(view, SubmitView):
                assert view.n_cards == 2
            if isinstance(view, VoteView):
                assert len(view.display) == 5 and len(view.own_positions) == 2
    for rnd in record.rounds:
        assert len(rnd.display) == 5
        counts = Counter(rnd.card_owner)
        assert counts[rnd.storyteller] == 1
        assert all(counts[s] == 2 for s in range(3) if s != rnd.storyteller)


# --- view isolation ---------------------------------------------------------------------------
def _cards_in(view) -> set[int]:
    cards = set(view.hand)
    if isinstance(view, VoteView):
        cards |= set(view.display)
    return cards


@pytest.mark.parametrize("n", [3, 5])
def test_views_hold_only_what_the_seat_may_know(n):
    agents = [Spy() for _ in range(n)]
    record = play_game(agents, get_rules("classic"), DECK, 5)
    assert TellView._fields == ("seat", "round", "hand", "scores", "history")
    assert SubmitView._fields == ("seat", "round", "storyteller", "clue", "hand", "n_cards",
                                  "scores", "history")
    assert VoteView._fields == ("seat", "round", "storyteller", "clue", "hand", "display",
                                "own_positions", "scores", "history")
    for seat, agent in enumerate(agents):
        for view in agent.views:
            assert view.seat == seat
            rnd = record.rounds[view.round]
            public_before = {c for r in record.rounds[:view.round] for c in r.display}
            others_cards_now = {c for i, c in enumerate(rnd.display) if rnd.card_owner[i] != seat}
            visible = _cards_in(view)
            if not isinstance(view, VoteView):
                # before the display, no card of another seat's hand this round may be visible
                assert not (visible & others_cards_now - public_before)
            # history holds only rounds already revealed
            assert len(view.history) == view.round
            if isinstance(view, VoteView):
                mine = {i for i, owner in enumerate(rnd.card_owner) if owner == seat}
                assert set(view.own_positions) == mine
                assert view.display == rnd.display
            assert view.scores == (record.rounds[view.round - 1].scores if view.round
                                   else (0,) * n)
        assert [r.round for r in agent.observed] == list(range(len(record.rounds)))


# --- determinism ------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["classic", "refresh", "quest"])
def test_same_seed_same_record(preset):
    rules = get_rules(preset)
    first = play_game(randoms(5), rules, DECK, 42).to_json()
    second = play_game(randoms(5), rules, DECK, 42).to_json()
    assert first == second
    assert play_game(randoms(5), rules, DECK, 43).to_json() != first


def test_agent_draws_do_not_change_the_deal():
    """The deal is drawn before any agent acts: a different agent population sees the same
    first hands."""
    spies = [Spy() for _ in range(4)]
    play_game(spies, get_rules("classic"), DECK, 9)
    hands = [agent.views[0].hand for agent in spies]
    again = [Spy() for _ in range(4)]
    for agent in again:
        agent.inner = Cheater("none")  # plays differently: its first choices differ
    play_game(again, get_rules("classic"), DECK, 9)
    assert [agent.views[0].hand for agent in again] == hands


def test_storytellers_rotate_to_the_left():
    record = play_game(randoms(5), get_rules("classic"), DECK, 1)
    assert [r.storyteller for r in record.rounds] == [i % 5 for i in range(len(record.rounds))]


def test_random_first_storyteller_is_seeded():
    rules = get_rules("classic", first_storyteller="random")
    firsts = {play_game(randoms(4), rules, DECK, seed).rounds[0].storyteller
              for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    record = play_game(randoms(4), rules, DECK, 3)
    first = record.rounds[0].storyteller
    assert [r.storyteller for r in record.rounds] == [(first + i) % 4
                                                      for i in range(len(record.rounds))]


def test_the_first_player_tells_first_from_the_seat_it_is_given():
    """``first_storyteller="first_player"``: round 1's storyteller is ``first_player_seat``
    (the seat a schedule put the config's first player in), then to the left."""
    rules = get_rules("classic", first_storyteller="first_player")
    for seat in range(4):
        record = play_game(randoms(4), rules, DECK, 3, first_player_seat=seat)
        assert [r.storyteller for r in record.rounds] == [(seat + i) % 4
                                                          for i in range(len(record.rounds))]
    seat0 = play_game(randoms(4), get_rules("classic"), DECK, 3, first_player_seat=2)
    assert seat0.rounds[0].storyteller == 0  # seat0 ignores it
    with pytest.raises(ValueError, match="first_player_seat 4 of a table of 4"):
        play_game(randoms(4), rules, DECK, 3, first_player_seat=4)


def test_display_is_shuffled():
    """The storyteller's card lands on every position about equally often."""
    positions = Counter()
    for seed in range(150):
        for rnd in play_game(randoms(5), get_rules("classic"), DECK, seed).rounds:
            positions[rnd.display.index(rnd.storyteller_card)] += 1
    total = sum(positions.values())
    assert set(positions) == set(range(5))
    for count in positions.values():
        assert abs(count / total - 0.2) < 0.03


# --- end of the game --------------------------------------------------------------------------
def test_target_score_ends_after_the_whole_round():
    rules = get_rules("refresh")
    for seed in range(20):
        record = play_game(randoms(6), rules, DECK, seed)
        assert record.end_reason == "target_score"
        assert max(record.final_scores) >= 30
        assert all(max(r.scores) < 30 for r in record.rounds[:-1])
        last = record.rounds[-1]
        assert last.scores == record.final_scores
        # every seat's points of the last round count, whoever reached 30 first
        previous = record.rounds[-2].scores
        assert last.scores == tuple(p + q for p, q in zip(previous, last.points, strict=True))
        assert sum(v is not None for v in last.votes) == 5


def test_ties_share_the_victory():
    shared = 0
    for seed in range(300):
        record = play_game(randoms(4), get_rules("classic"), DECK, seed)
        best = max(record.final_scores)
        assert record.winners == tuple(s for s in range(4) if record.final_scores[s] == best)
        shared += len(record.winners) > 1
    assert shared > 0


def test_scores_add_up():
    record = play_game(randoms(5), get_rules("quest"), DECK, 8)
    totals = [0] * 5
    for rnd in record.rounds:
        totals = [t + p for t, p in zip(totals, rnd.points, strict=True)]
        assert tuple(totals) == rnd.scores
    assert tuple(totals) == record.final_scores


def test_deck_too_small_is_a_clear_error():
    with pytest.raises(DeckError, match="has 30 cards; 5 players with 6-card hands need at "
                                        "least 35"):
        play_game(randoms(5), get_rules("classic"), Deck.numbered(30), 1)


def test_player_count_outside_the_rules():
    with pytest.raises(ValueError, match="allows 3 to 6 players, got 7"):
        play_game(randoms(7), get_rules("classic"), DECK, 1)


# --- illegal actions --------------------------------------------------------------------------
class Cheater(Agent):
    """Random, except for one illegal action of the chosen kind."""

    def __init__(self, mistake: str) -> None:
        self.mistake = mistake
        self.inner = make_agent("random")

    def begin_game(self, context):
        super().begin_game(context)
        self.inner.begin_game(context)

    def tell(self, view):
        if self.mistake == "tell_foreign_card":
            return Clue(max(range(84), key=lambda c: c not in view.hand), "x")
        if self.mistake == "raise":
            raise RuntimeError("boom")
        return self.inner.tell(view)

    def submit(self, view):
        if self.mistake == "submit_two":
            return list(view.hand[:2])
        return self.inner.submit(view)

    def vote(self, view):
        if self.mistake == "vote_own":
            return view.own_positions[0]
        if self.mistake == "vote_out_of_range":
            return len(view.display)
        if self.mistake == "none":  # legal, but not the random agent's choice
            return next(i for i in range(len(view.display)) if i not in view.own_positions)
        return self.inner.vote(view)


@pytest.mark.parametrize(
    ("mistake", "action", "message"),
    [
        ("tell_foreign_card", "tell", "is not in the storyteller's hand"),
        ("raise", "tell", "the agent raised RuntimeError: boom"),
        ("submit_two", "submit", "submitted 2 card"),
        ("vote_own", "vote", "voted for its own card"),
        ("vote_out_of_range", "vote", "out of range"),
    ],
)
def test_illegal_action_raises_naming_seat_agent_round_action(mistake, action, message):
    agents = randoms(4)
    cheater = Cheater(mistake)
    cheater.spec = "cheater"
    agents[1] = cheater
    with pytest.raises(IllegalAction, match=rf"seat 1 \(agent cheater\), round \d+, {action}: "
                                            rf".*{message}"):
        play_game(agents, get_rules("classic"), DECK, 2)


@pytest.mark.parametrize("mistake", ["tell_foreign_card", "raise", "submit_two", "vote_own",
                                     "vote_out_of_range"])
def test_fallback_records_the_fault_and_goes_on(mistake):
    agents = randoms(4)
    agents[1] = Cheater(mistake)
    record = play_game(agents, get_rules("classic"), DECK, 2, on_illegal="fallback")
    assert record.end_reason == "deck_exhausted"
    faults = [f for r in record.rounds for f in r.faults]
    assert faults and all(f.seat == 1 for f in faults)
    if mistake in ("tell_foreign_card", "raise"):
        told = [r for r in record.rounds if r.storyteller == 1]
        assert all(r.clue == FALLBACK_CLUE for r in told)
        assert len(faults) == len(told)
    for rnd in record.rounds:
        for seat, vote in enumerate(rnd.votes):
            if vote is not None:
                assert rnd.card_owner[vote] != seat
    again = play_game([make_agent("random"), Cheater(mistake), *randoms(2)],
                      get_rules("classic"), DECK, 2, on_illegal="fallback")
    assert again.to_json() == record.to_json()


def test_on_illegal_must_be_known():
    with pytest.raises(ValueError, match="on_illegal"):
        play_game(randoms(4), get_rules("classic"), DECK, 1, on_illegal="ignore")  # type: ignore[arg-type]


def test_random_agent_words_are_in_the_default_bank():
    from dixit_lab.core.clues import ClueBank
    from dixit_lab_agents.random_agent import WORDS

    bank = ClueBank.load("default")
    assert [word for word in WORDS if word not in bank] == []


class FailingHook(Agent):
    """Random play, but ``begin_game`` or ``observe`` raises (in round ``when`` for observe)."""

    def __init__(self, hook: str, when: int = 2) -> None:
        self.hook, self.when = hook, when
        self.inner = make_agent("random")

    def begin_game(self, context):
        super().begin_game(context)
        self.inner.begin_game(context)
        if self.hook == "begin_game":
            raise KeyError("no model")

    def observe(self, result):
        if self.hook == "observe" and result.round == self.when:
            raise ValueError("bad round")

    def tell(self, view):
        return self.inner.tell(view)

    def submit(self, view):
        return self.inner.submit(view)

    def vote(self, view):
        return self.inner.vote(view)


@pytest.mark.parametrize(("hook", "round_index", "message"),
                         [("begin_game", 0, "KeyError: 'no model'"),
                          ("observe", 2, "ValueError: bad round")])
def test_hooks_that_raise_are_illegal_actions_or_faults(hook, round_index, message):
    agents = randoms(4)
    agents[2] = FailingHook(hook)
    agents[2].spec = "hooked"
    with pytest.raises(IllegalAction, match=rf"seat 2 \(agent hooked\), round {round_index + 1}, "
                                            rf"{hook}: the agent raised {message}"):
        play_game(agents, get_rules("classic"), DECK, 3)
    record = play_game(agents, get_rules("classic"), DECK, 3, on_illegal="fallback")
    faults = [(index, f) for index, rnd in enumerate(record.rounds) for f in rnd.faults]
    assert [(index, f.seat, f.action, f.kind) for index, f in faults] == \
        [(round_index, 2, hook, "raised")]
    assert record.end_reason == "deck_exhausted"


def test_agents_may_report_a_failure_class():
    from dixit_lab.core.agent import AgentFailure

    class Unparsable(Cheater):
        def vote(self, view):
            raise AgentFailure("unparsable", "the reply held no number")

    agents = randoms(4)
    agents[1] = Unparsable("none")
    record = play_game(agents, get_rules("classic"), DECK, 2, on_illegal="fallback")
    faults = [f for rnd in record.rounds for f in rnd.faults]
    assert faults and {(f.kind, f.message) for f in faults} == \
        {("unparsable", "the reply held no number")}
