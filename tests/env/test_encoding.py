"""Observations, masks and actions of the environment (NumPy only: no PettingZoo needed)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dixit_lab.core.agent import Clue, SubmitView, TellView, VoteView
from dixit_lab.core.rules import get_rules
from dixit_lab.env.encoding import SUBMIT, TELL_CARD, TELL_CLUE, VOTE, Encoder, SeatState
from tests.tiny_space import one_clue_per_card

SPACE = one_clue_per_card(60)


def encoder(n=4, **options):
    return Encoder(SPACE, n, get_rules("classic"), **options)


def test_action_numbering():
    enc = encoder(4)
    actions = enc.actions
    assert (actions.hand_size, actions.n_displayed, actions.n_clues) == (6, 4, 60)
    assert actions.size == 1 + 6 + 4 + 60
    assert [actions.describe(a) for a in (0, 1, 6, 7, 10, 11, 70, 71)] == [
        "pass", "hand slot 0", "hand slot 5", "display position 0", "display position 3",
        "clue 0", "clue 59", "action 71 (out of range 0..70)"]


def test_observation_of_a_vote():
    enc = encoder(4)
    view = VoteView(seat=2, round=3, storyteller=1, clue="clue 7", hand=(10, 11, 12, 13, 14),
                    display=(7, 20, 30, 40), own_positions=(2,), scores=(1, 2, 3, 4), history=())
    state = enc.state_of_view(view)
    obs, layout = enc.observation(2, state), enc.layout
    assert obs.shape == (layout.size,) and obs.dtype == np.float32
    assert obs[layout.slice("step")].tolist() == [0, 0, 0, 1]
    assert obs[layout.slice("acting")].tolist() == [1]
    assert obs[layout.slice("storyteller")].tolist() == [0, 0, 0, 1]  # seat 1 = 3 to my left
    assert obs[layout.slice("scores")].tolist() == [3, 4, 1, 2]  # from my seat on
    assert obs[layout.slice("round")].tolist() == [3]
    assert obs[layout.slice("hand_present")].tolist() == [1, 1, 1, 1, 1, 0]
    assert obs[layout.slice("display_own")].tolist() == [0, 0, 1, 0]
    hand = obs[layout.slice("hand")].reshape(6, -1)
    assert np.array_equal(hand[:5], SPACE.card_vectors[[10, 11, 12, 13, 14]])
    assert not hand[5].any()
    display = obs[layout.slice("display")].reshape(4, -1)
    assert np.array_equal(display, SPACE.card_vectors[[7, 20, 30, 40]])
    assert np.array_equal(obs[layout.slice("clue")], SPACE.clue_vectors[7])
    similarity = obs[layout.slice("display_similarity")]
    assert np.array_equal(similarity, SPACE.similarity[7, [7, 20, 30, 40]])
    assert int(np.argmax(similarity)) == 0  # clue 7 describes card 7 best
    mask = enc.mask(state)
    assert np.flatnonzero(mask).tolist() == [7, 8, 10]  # positions 0, 1, 3: not my own
    low, high = enc.bounds()
    assert (low <= obs).all() and (obs <= high).all()


def test_own_card_votes_unmask_ones_own_card_and_no_bonus_lowers_the_score_bound():
    view = VoteView(seat=2, round=3, storyteller=1, clue="clue 7", hand=(10, 11, 12, 13, 14),
                    display=(7, 20, 30, 40), own_positions=(2,), scores=(1, 2, 3, 4), history=())
    allowed = Encoder(SPACE, 4, get_rules("classic", own_card_votes=True))
    state = allowed.state_of_view(view)
    assert np.flatnonzero(allowed.mask(state)).tolist() == [7, 8, 9, 10]
    assert allowed.observation(2, state)[allowed.layout.slice("display_own")].tolist() == \
        [0, 0, 1, 0]  # still flagged: the seat knows its card
    scores = allowed.layout.slice("scores")
    as_run = Encoder(SPACE, 4, get_rules("dixitworld_as_run"))
    written = Encoder(SPACE, 4, get_rules("dixitworld"))
    # 12 rounds of at most 3 points (no bonus), against 3 + 1 a round as written
    assert as_run.bounds()[1][scores].tolist() == [36.0] * 4
    assert written.bounds()[1][scores].tolist() == [48.0] * 4


def test_the_storyteller_picks_a_card_then_a_clue():
    enc = encoder(4)
    view = TellView(seat=0, round=0, hand=(5, 6, 7, 8, 9, 10), scores=(0,) * 4, history=())
    card = enc.state_of_view(view)
    assert card.step == TELL_CARD
    assert np.flatnonzero(enc.mask(card)).tolist() == [1, 2, 3, 4, 5, 6]
    clue = enc.state_of_view(view, chosen=[2], clue_step=True)
    assert clue.step == TELL_CLUE
    assert np.flatnonzero(enc.mask(clue)).tolist() == list(range(11, 71))
    obs = enc.observation(0, clue)
    assert obs[enc.layout.slice("hand_chosen")].tolist() == [0, 0, 1, 0, 0, 0]
    assert not obs[enc.layout.slice("clue_known")].any()
    assert enc.answer(view, [3, 11 + 42]) == Clue(7, "clue 42")
    assert enc.actions_of(view, Clue(7, "clue 42")) == [3, 53]
    with pytest.raises(ValueError, match="not one of the environment's 60 clue actions"):
        enc.actions_of(view, Clue(7, "not a clue"))


def test_three_players_submit_two_cards():
    enc = encoder(3)
    view = SubmitView(seat=1, round=0, storyteller=0, clue="clue 3", hand=tuple(range(7)),
                      n_cards=2, scores=(0, 0, 0), history=())
    assert enc.steps_of(view) == 2
    second = enc.state_of_view(view, chosen=[4])
    assert second.step == SUBMIT
    assert np.flatnonzero(enc.mask(second)).tolist() == [1, 2, 3, 4, 6, 7]
    assert enc.answer(view, [5, 1]) == [4, 0]
    assert enc.actions_of(view, [4, 0]) == [5, 1]


def test_a_seat_that_does_not_decide_may_only_pass():
    enc = encoder(4)
    state = SeatState(VOTE, False, 1, (0, 0, 0, 0), 0, display=(1, 2, 3, 4))
    assert np.flatnonzero(enc.mask(state)).tolist() == [0]
    obs = enc.observation(1, state)
    assert not obs[enc.layout.slice("hand_present")].any()
    assert not obs[enc.layout.slice("display_own")].any()


def test_clue_texts_restrict_the_clue_actions():
    enc = encoder(4, clue_texts=["clue 9", "clue 2"])
    assert enc.actions.size == 1 + 6 + 4 + 2
    view = TellView(0, 0, (1, 2, 3, 4, 5, 6), (0,) * 4, ())
    assert enc.answer(view, [1, 12]) == Clue(1, "clue 2")
    with pytest.raises(ValueError, match="not in clue bank"):
        encoder(4, clue_texts=["clue 99"])
    with pytest.raises(ValueError, match="listed twice"):
        encoder(4, clue_texts=["clue 1", "CLUE 1"])
    assert encoder(4, clue_texts=["Clue 3"]).clue_texts == ("clue 3",)  # the bank's spelling


def test_a_clue_outside_the_bank_has_zero_features_and_one_warning():
    enc = encoder(4)
    state = SeatState(SUBMIT, True, 0, (0,) * 4, 0, hand=(1, 2), clue="something new")
    with pytest.warns(UserWarning, match="cannot embed clue 'something new'"):
        obs = enc.observation(1, state)
    assert not obs[enc.layout.slice("clue")].any()
    assert obs[enc.layout.slice("clue_known")].tolist() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.observation(1, state)  # warned once only
