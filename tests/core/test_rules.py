"""Scoring and rule sets, from the worked examples and common mistakes of docs/rules.md."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dixit_lab.core.rules import (
    PRESETS,
    IllegalAction,
    RuleSet,
    get_rules,
    round_points,
    score_round,
)

CLASSIC = get_rules("classic")

# --- worked example 000: five players -------------------------------------------------------
# Julien (storyteller) 0, Tom 1 (at Julien's left), Mathilde 2, Nicolas 3, Léa 4.
# Displayed 1..5 -> indices 0..4: card 1 Léa's, card 3 Tom's, card 4 Julien's,
# cards 2 and 5 Mathilde's and Nicolas's.
JULIEN, TOM, MATHILDE, NICOLAS, LEA = range(5)
OWNERS_000 = (LEA, MATHILDE, TOM, JULIEN, NICOLAS)


def _assignments_000():
    """Every way Mathilde, Nicolas and Tom can cast two votes on card 1 and one on card 3
    without voting for their own card."""
    voters = (MATHILDE, NICOLAS, TOM)
    for on_three in voters:
        if on_three == TOM:
            continue  # Tom may not vote for his own card
        votes = {LEA: 3, on_three: 2}
        for other in voters:
            if other != on_three:
                votes[other] = 0
        yield votes


@pytest.mark.parametrize("votes", list(_assignments_000()))
def test_worked_example_000(votes):
    score = score_round(CLASSIC, JULIEN, OWNERS_000, votes)
    assert score.points[LEA] == 5
    assert score.points[JULIEN] == 3
    assert score.points[TOM] == 1
    assert score.points[MATHILDE] == 0
    assert score.points[NICOLAS] == 0
    assert score.finders == (LEA,)
    assert score.outcome == "some_found"
    assert score.search[LEA] == 3 and score.bonus[LEA] == 2


@pytest.mark.parametrize("votes", list(_assignments_000())[:3])
def test_a_vote_bonus_of_two_points_a_vote(votes):
    """A rule variant is rules.py and this test: 000 with 2 points a vote on one's card.
    Léa's two decoy votes give her 4, Tom's one 2; the search points are unchanged; the
    records of the rule sets without it are unchanged (the option stays out of them)."""
    rules = get_rules("classic", vote_bonus_points=2)
    score = score_round(rules, JULIEN, OWNERS_000, votes)
    assert (score.bonus[LEA], score.bonus[TOM], score.points[LEA]) == (4, 2, 7)
    assert score.points[JULIEN] == 3 and score.search == score_round(
        CLASSIC, JULIEN, OWNERS_000, votes).search
    assert "vote_bonus_points" in rules.options() and "vote_bonus_points" not in \
        CLASSIC.options()
    capped = get_rules("classic", vote_bonus_points=2, vote_bonus_cap=3)
    assert score_round(capped, JULIEN, OWNERS_000, votes).bonus[LEA] == 3


# --- worked example 002: four players ---------------------------------------------------------
ALICE, BOB, CHLOE, DAVID = range(4)
REFRESH = get_rules("refresh")


def test_worked_example_002_card_four_is_bobs():
    owners = (CHLOE, ALICE, DAVID, BOB)  # Alice's card is number 2, card 4 is Bob's
    score = score_round(REFRESH, ALICE, owners, {BOB: 1, CHLOE: 1, DAVID: 3})
    assert score.points == (3, 4, 3, 0)


def test_worked_example_002_card_four_is_chloes():
    owners = (BOB, ALICE, DAVID, CHLOE)
    score = score_round(REFRESH, ALICE, owners, {BOB: 1, CHLOE: 1, DAVID: 3})
    assert score.points == (3, 3, 4, 0)
    assert score.search == (3, 3, 3, 0)


def test_worked_example_002_all_found():
    owners = (BOB, ALICE, DAVID, CHLOE)
    score = score_round(REFRESH, ALICE, owners, {BOB: 1, CHLOE: 1, DAVID: 1})
    assert score.points == (0, 2, 2, 2)
    assert score.outcome == "all_found"


def test_worked_example_002_none_found_keeps_bonuses():
    owners = (BOB, ALICE, DAVID, CHLOE)  # Bob 0, Alice 1, David 2, Chloé 3
    score = score_round(REFRESH, ALICE, owners, {BOB: 3, CHLOE: 0, DAVID: 0})
    assert score.outcome == "none_found"
    # everyone but Alice gets 2, plus one per vote on their own card: Bob has 2, Chloé 1
    assert score.points == (0, 4, 3, 2)


# --- DixitWorld's arena (experiments/parallel_model_comparison.py, _calculate_scores) ---------
# P1 (seat 0) tells; card 1 is P2's, card 2 P1's, card 3 P3's, card 4 P4's.
DIXITWORLD = get_rules("dixitworld")
P1, P2, P3, P4 = range(4)
OWNERS_DW = (P2, P1, P3, P4)


def test_dixitworld_some_found_one_bonus_point_however_many_votes():
    # P2 finds; P3 and P4 both vote for P2's card. DixitWorld: P2 3 + 1 (its card is "in
    # guess_names": one point, not two), P1 3. The rule books: P2 3 + 2 = 5.
    votes = {P2: 1, P3: 0, P4: 0}
    assert score_round(DIXITWORLD, P1, OWNERS_DW, votes).points == (3, 4, 0, 0)
    assert score_round(CLASSIC, P1, OWNERS_DW, votes).points == (3, 5, 0, 0)


def test_dixitworld_all_found_gives_the_finders_three():
    # every guesser "+3 for a correct guess", the storyteller 0; the rule books give 2 each
    votes = {P2: 1, P3: 1, P4: 1}
    score = score_round(DIXITWORLD, P1, OWNERS_DW, votes)
    assert score.points == (0, 3, 3, 3) and score.outcome == "all_found"
    assert score_round(CLASSIC, P1, OWNERS_DW, votes).points == (0, 2, 2, 2)


def test_dixitworld_none_found_two_each_and_capped_bonuses():
    # P2 votes for P3's card, P3 and P4 for P2's: every guesser 2, P2 +1 (2 votes, capped),
    # P3 +1; the rule books: P2 2 + 2, P3 2 + 1
    votes = {P2: 2, P3: 0, P4: 0}
    assert score_round(DIXITWORLD, P1, OWNERS_DW, votes).points == (0, 3, 3, 2)
    assert score_round(CLASSIC, P1, OWNERS_DW, votes).points == (0, 4, 3, 2)


def test_dixitworld_preset():
    rules = DIXITWORLD
    assert (rules.min_players, rules.max_players, rules.hand_size_for(4)) == (4, 4, 4)
    assert (rules.fixed_hands, rules.max_rounds, rules.target_score) == (True, 12, None)
    assert (rules.all_found_points, rules.vote_bonus_cap) == (3, 1)
    # P1 tells first in both phases (storyteller_index over the same agents, docs/vlm.md)
    assert rules.first_storyteller == "first_player"
    with pytest.raises(ValueError, match="allows 4 to 4 players"):
        rules.check_players(5)


# --- DixitWorld's arena as its code runs (docs/vlm.md cites the lines) -------------------------
AS_RUN = get_rules("dixitworld_as_run")


def test_dixitworld_as_run_pays_no_decoy_bonus():
    # the three cases above, scored as DixitWorld's runs scored them: selected_distractor is
    # None on the round's agents, so "its card is in guess_names" never pays
    assert score_round(AS_RUN, P1, OWNERS_DW, {P2: 1, P3: 0, P4: 0}).points == (3, 3, 0, 0)
    assert score_round(AS_RUN, P1, OWNERS_DW, {P2: 1, P3: 1, P4: 1}).points == (0, 3, 3, 3)
    score = score_round(AS_RUN, P1, OWNERS_DW, {P2: 2, P3: 0, P4: 0})
    assert score.points == (0, 2, 2, 2) and score.bonus == (0, 0, 0, 0)
    assert score.votes_received == (0, 2, 1, 0)  # the votes are still counted, just unpaid


def test_dixitworld_as_run_lets_a_listener_vote_for_its_own_card():
    # P2 votes for card 1, its own (DixitWorld's filter got an empty list and handed it every
    # candidate); P3 and P4 find: P2 missed, the storyteller scores
    votes = {P2: 0, P3: 1, P4: 1}
    score = score_round(AS_RUN, P1, OWNERS_DW, votes)
    assert score.points == (3, 0, 3, 3) and score.finders == (P3, P4)
    assert score.votes_received == (0, 0, 0, 0)  # one's own vote is nobody's
    with pytest.raises(IllegalAction, match="seat 1 voted for its own card"):
        score_round(DIXITWORLD, P1, OWNERS_DW, votes)


def test_dixitworld_as_run_preset_is_the_written_one_but_for_two_options():
    written, run = DIXITWORLD.options(), AS_RUN.options()
    assert {key for key in run if run[key] != written.get(key)} == {
        "name", "vote_bonus_points", "own_card_votes"}
    assert (run["vote_bonus_points"], run["own_card_votes"]) == (0, True)
    assert RuleSet(**run) == AS_RUN


def test_an_own_card_vote_finds_nothing_and_earns_no_bonus():
    """own_card_votes on the rule books' scoring (000's table): Léa votes for her own card,
    Mathilde for Léa's, Tom finds and Nicolas votes for Tom's. Léa's bonus is Mathilde's vote
    only; without the option the round is illegal."""
    rules = get_rules("classic", own_card_votes=True)
    votes = {LEA: 0, MATHILDE: 0, TOM: 3, NICOLAS: 2}
    score = score_round(rules, JULIEN, OWNERS_000, votes)
    assert score.points[JULIEN] == 3 and score.finders == (TOM,)
    assert (score.points[TOM], score.points[LEA], score.points[MATHILDE]) == (4, 1, 0)
    assert score.votes_received[LEA] == 1 and score.outcome == "some_found"
    assert round_points(rules, JULIEN, OWNERS_000, [votes.get(s) for s in range(5)]) \
        == score.points
    with pytest.raises(IllegalAction, match="seat 4 voted for its own card"):
        score_round(CLASSIC, JULIEN, OWNERS_000, votes)
    assert "own_card_votes" in rules.options() and "own_card_votes" not in CLASSIC.options()


def test_later_options_stay_out_of_the_records_at_their_default():
    """Records (rule_options) and results configs of rule sets that do not use an option added
    later are what they were before it existed; a rule set that uses it records it, and the
    options rebuild the rule set."""
    for preset in ("classic", "refresh", "quest"):
        options = get_rules(preset).options()
        assert "all_found_points" not in options and "fixed_hands" not in options
        assert "own_card_votes" not in options and "vote_bonus_points" not in options
        assert RuleSet(**options) == get_rules(preset)
    options = DIXITWORLD.options()
    assert (options["all_found_points"], options["fixed_hands"]) == (3, True)
    assert "own_card_votes" not in options and "vote_bonus_points" not in options
    assert RuleSet(**options) == DIXITWORLD
    assert "fixed_hands" in get_rules("classic", fixed_hands=True).options()


# --- common mistakes --------------------------------------------------------------------------
def test_vote_for_own_decoy_is_illegal():
    with pytest.raises(IllegalAction, match="seat 1 voted for its own card"):
        score_round(CLASSIC, 0, (1, 0, 2, 3), {1: 0, 2: 1, 3: 1})


def test_storyteller_may_not_vote():
    with pytest.raises(IllegalAction, match="storyteller .* may not vote"):
        score_round(CLASSIC, 0, (1, 0, 2, 3), {0: 0, 1: 1, 2: 1, 3: 1})


def test_no_reward_when_everyone_finds():
    score = score_round(CLASSIC, 2, (0, 1, 2, 3), {0: 2, 1: 2, 3: 2})
    assert score.points[2] == 0
    assert score.points == (2, 2, 0, 2)


def test_bonus_kept_when_nobody_finds():
    score = score_round(CLASSIC, 2, (0, 1, 2, 3), {0: 1, 1: 0, 3: 0})
    assert score.points == (2 + 2, 2 + 1, 0, 2)


def test_three_players_need_two_decoys_each():
    owners = (1, 0, 2, 1, 2)
    score = score_round(CLASSIC, 0, owners, {1: 1, 2: 3})
    assert score.points == (3, 3 + 1, 0)
    with pytest.raises(IllegalAction, match="seat 1 has 1 card"):
        score_round(CLASSIC, 0, (1, 0, 2, 2), {1: 1, 2: 1})


# --- other illegal input ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("storyteller", "owners", "votes", "message"),
    [
        (0, (1, 0, 2, 3), {1: 1, 2: 1}, "seat 3 has not voted"),
        (0, (1, 0, 2, 3), {1: 1, 2: 1, 3: 7}, "out of range"),
        (0, (1, 0, 2, 3), {1: 1, 2: 1, 3: -1}, "out of range"),
        (0, (1, 0, 0, 2, 3), {1: 1, 2: 1, 3: 1}, "storyteller has 2 card"),
        (0, (1, 0, 3, 4), {1: 1, 3: 1, 4: 1}, "seats 0..n-1"),
        (5, (1, 0, 2, 3), {1: 1, 2: 1, 3: 1}, "storyteller seat 5"),
        (0, (1, 0, 2, 3, 3), {1: 1, 2: 1, 3: 1}, "seat 3 has 2 card"),
        (0, (1, 0, 2, 3), {1: 1, 2: 1, 3: 1, 9: 1}, "unknown seat"),
    ],
)
def test_illegal_rounds(storyteller, owners, votes, message):
    with pytest.raises(IllegalAction, match=message):
        score_round(CLASSIC, storyteller, owners, votes)


def test_illegal_action_is_a_value_error():
    assert issubclass(IllegalAction, ValueError)


# --- variants ----------------------------------------------------------------------------------
def test_bonus_cap_three():
    quest = get_rules("quest")
    owners = (1, 0, 2, 3, 4, 5)  # seat 1 owns index 0 and finds; four voters pick its card
    votes = {1: 1, 2: 0, 3: 0, 4: 0, 5: 0}
    assert score_round(CLASSIC, 0, owners, votes).points[1] == 3 + 4
    assert score_round(quest, 0, owners, votes).points[1] == 3 + 3
    assert score_round(quest, 0, owners, votes).bonus[1] == 3


def test_bonus_cap_counts_both_cards_at_three_players():
    rules = get_rules("classic", vote_bonus_cap=1)
    owners = (1, 0, 1, 2, 2)
    score = score_round(rules, 0, owners, {1: 3, 2: 2})
    assert score.votes_received == (0, 1, 1)
    assert score.points == (0, 2 + 1, 2 + 1)


def test_lone_finder_bonus():
    rules = get_rules("classic", lone_finder_points=4)
    owners = (1, 0, 2, 3)
    score = score_round(rules, 0, owners, {1: 1, 2: 0, 3: 0})
    assert score.points == (4, 4 + 2, 0, 0)
    two = score_round(rules, 0, owners, {1: 1, 2: 1, 3: 0})
    assert two.points == (3, 3 + 1, 3, 0)


def test_lone_finder_at_three_players():
    rules = get_rules("classic", lone_finder_points=4)
    score = score_round(rules, 0, (1, 0, 2, 1, 2), {1: 1, 2: 0})
    assert score.points == (4, 4 + 1, 0)


# --- rule sets ---------------------------------------------------------------------------------
def test_presets_match_rules_md():
    classic, refresh, quest = (get_rules(name) for name in ("classic", "refresh", "quest"))
    assert (classic.max_players, classic.vote_bonus_cap, classic.target_score,
            classic.deck_exhausted) == (6, None, None, "end_when_last_drawn")
    assert (refresh.max_players, refresh.vote_bonus_cap, refresh.target_score,
            refresh.deck_exhausted) == (8, None, 30, "reshuffle_discard")
    assert (quest.max_players, quest.vote_bonus_cap, quest.target_score,
            quest.deck_exhausted) == (6, 3, 30, "end_when_cannot_refill")
    for rules in (classic, refresh, quest):
        assert rules.min_players == 3
        assert rules.hand_size == 6 and rules.hand_size_for(4) == 6
        assert rules.displayed_cards(3) == 5 and rules.displayed_cards(6) == 6
    # 000 and 002: seven cards at three players; 001 and 003 (quest): always six
    assert classic.hand_size_for(3) == refresh.hand_size_for(3) == 7
    assert quest.hand_size_for(3) == 6
    assert set(PRESETS) == {"classic", "refresh", "quest", "dixitworld", "dixitworld_as_run"}


def test_overrides_apply_on_top_of_a_preset():
    rules = get_rules("classic", lone_finder_points=4, max_rounds=10)
    assert rules.name == "classic" and rules.lone_finder_points == 4 and rules.max_rounds == 10


def test_unknown_preset_lists_presets():
    with pytest.raises(ValueError,
                       match="unknown rule preset 'odyssey'.*classic, dixitworld, "
                             "dixitworld_as_run, quest, refresh"):
        get_rules("odyssey")


def test_unknown_option_lists_options():
    with pytest.raises(ValueError, match="unknown rule option.*'bonus'.*vote_bonus_cap"):
        get_rules("classic", bonus=3)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"deck_exhausted": "never"}, "deck_exhausted must be one of"),
        ({"hand_size": 0}, "hand_size must be a positive integer"),
        ({"min_players": 2}, "min_players must be at least 3"),
        ({"max_players": 2}, "max_players"),
        ({"vote_bonus_cap": -1}, "vote_bonus_cap"),
        ({"target_score": 0}, "target_score"),
        ({"first_storyteller": "youngest"}, "first_storyteller must be one of"),
        ({"decoys_three_players": 7}, "decoys_three_players"),
        ({"all_found_points": -1}, "all_found_points"),
        ({"fixed_hands": "yes"}, "fixed_hands must be true or false"),
        ({"own_card_votes": 1}, "own_card_votes must be true or false"),
        # past the engines' integers (an attacker's 2**31 points: the batched engine's
        # records writer ran out of memory, the reference's rounds overflowed int64)
        ({"storyteller_points": 2**31 - 1}, "storyteller_points must be at most 1,000"),
        ({"vote_bonus_points": 2**31}, "vote_bonus_points must be at most 1,000"),
        ({"lone_finder_points": 4294967296}, "lone_finder_points must be at most 1,000"),
        ({"max_rounds": 10**11}, "max_rounds must be at most 100,000"),
        ({"target_score": 2**63 - 1}, "target_score must be at most 1,000,000,000"),
    ],
)
def test_impossible_values(override, message):
    with pytest.raises(ValueError, match=message):
        get_rules("classic", **override)


def test_ruleset_is_frozen():
    with pytest.raises(AttributeError):
        CLASSIC.hand_size = 5  # type: ignore[misc]
    assert isinstance(CLASSIC, RuleSet)


# --- properties over random legal rounds ------------------------------------------------------
@st.composite
def legal_rounds(draw):
    n = draw(st.integers(3, 8))
    per_player = 2 if n == 3 else 1
    storyteller = draw(st.integers(0, n - 1))
    owners = [storyteller] + [s for s in range(n) if s != storyteller for _ in range(per_player)]
    owners = draw(st.permutations(owners))
    own_votes = draw(st.booleans())
    votes = {}
    for seat in range(n):
        if seat != storyteller:
            allowed = [i for i, owner in enumerate(owners) if own_votes or owner != seat]
            votes[seat] = draw(st.sampled_from(allowed))
    cap = draw(st.sampled_from([None, 1, 3]))
    lone = draw(st.sampled_from([None, 4]))
    all_found = draw(st.sampled_from([None, 3]))
    bonus = draw(st.sampled_from([0, 1, 2]))
    rules = get_rules("refresh", vote_bonus_cap=cap, vote_bonus_points=bonus,
                      lone_finder_points=lone, all_found_points=all_found,
                      own_card_votes=own_votes)
    return rules, storyteller, tuple(owners), votes


@settings(max_examples=400, deadline=None)
@given(legal_rounds())
def test_scoring_invariants(case):
    rules, storyteller, owners, votes = case
    score = score_round(rules, storyteller, owners, votes)
    n = len(set(owners))
    assert len(score.points) == n
    by_seat = [votes.get(seat) for seat in range(n)]
    assert round_points(rules, storyteller, owners, by_seat) == score.points  # engine path
    allowed_teller = {0, rules.storyteller_points}
    if rules.lone_finder_points is not None:
        allowed_teller.add(rules.lone_finder_points)
    assert score.points[storyteller] in allowed_teller
    assert score.bonus[storyteller] == 0
    for seat in range(n):
        if rules.vote_bonus_cap is not None:
            assert score.bonus[seat] <= rules.vote_bonus_cap
        assert score.points[seat] == score.search[seat] + score.bonus[seat] >= 0
    finders = set(score.finders)
    assert finders == {seat for seat, index in votes.items() if owners[index] == storyteller}
    # a finder never scores less than a non-finder with the same bonus
    for a, b in itertools.permutations([s for s in range(n) if s != storyteller], 2):
        if a in finders and b not in finders and score.bonus[a] == score.bonus[b]:
            assert score.points[a] >= score.points[b]
    # every vote lands somewhere: finds, votes received on decoys, votes on one's own card
    on_own = sum(1 for seat, index in votes.items() if owners[index] == seat)
    assert on_own == 0 or rules.own_card_votes
    assert len(finders) + sum(score.votes_received) + on_own == n - 1
    if score.outcome == "some_found":
        assert 0 < len(finders) < n - 1 and score.points[storyteller] > 0
    else:
        assert score.points[storyteller] == 0
        listener = rules.all_or_none_points
        if score.outcome == "all_found" and rules.all_found_points is not None:
            listener = rules.all_found_points
        assert all(score.search[s] == listener for s in range(n) if s != storyteller)


def test_score_round_rejects_a_table_size_its_rules_do_not_allow():
    owners = list(range(7))
    votes = {seat: 0 for seat in range(1, 7)}
    for preset in ("classic", "quest"):
        with pytest.raises(IllegalAction, match=rf"rule set '{preset}' allows 3 to 6 players, "
                                                rf"got a round of 7"):
            score_round(get_rules(preset), 0, owners, votes)
    assert score_round(get_rules("refresh"), 0, owners, votes).outcome == "all_found"


def test_score_round_takes_numpy_integers_as_play_game_does():
    import numpy as np

    plain = score_round(get_rules("classic"), 0, [0, 1, 2, 3], {1: 0, 2: 3, 3: 1})
    numpy = score_round(get_rules("classic"), np.int64(0), [0, 1, 2, 3],
                        {np.int64(1): np.int64(0), np.int32(2): np.int64(3), 3: np.uint8(1)})
    assert numpy == plain
    with pytest.raises(IllegalAction, match="out of range"):
        score_round(get_rules("classic"), 0, [0, 1, 2, 3], {1: 0.0, 2: 3, 3: 1})


@settings(max_examples=150, deadline=None)
@given(st.lists(legal_rounds(), min_size=1, max_size=12))
def test_the_vectorised_scorer_agrees_with_the_scalar_one(cases):
    """The batched engine's scorer, over many rounds at once, equals round_points row by row
    (both read the point rule from search_points and vote_bonus)."""
    import numpy as np

    from dixit_lab.core.rules import score_batch

    by_table: dict = {}
    for rules, storyteller, owners, votes in cases:
        by_table.setdefault((rules, len(set(owners)), len(owners)), []).append(
            (storyteller, owners, votes))
    for (rules, n, shown), rounds in by_table.items():
        teller = np.array([r[0] for r in rounds])
        owners = np.array([r[1] for r in rounds])
        display = np.tile(np.arange(shown), (len(rounds), 1)) + 100  # cards 100.. in order
        cards = np.array([100 + r[1].index(r[0]) for r in rounds])
        votes = np.array([[r[2].get(seat, -1) for seat in range(n)] for r in rounds])
        batch = score_batch(rules, teller, display, owners, votes, cards)
        for row, (storyteller, owner, vote) in enumerate(rounds):
            by_seat = [vote.get(seat) for seat in range(n)]
            assert tuple(batch[row].tolist()) == round_points(rules, storyteller, owner, by_seat)
