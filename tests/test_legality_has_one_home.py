"""Who may vote for what has one home, ``RuleSet.barred_votes`` (and its array form,
``barred_vote_mask``, beside it): a change to that rule alone reaches the reference engine's
check, the play server's move check and the page it tells, the environment's masks (one
table and many) and the model seats' card numbers. Before, each of them (and the page's
JavaScript) spelled "not one's own card unless own_card_votes" itself."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dixit_lab.core.agent import Agent, VoteView, make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet, get_rules
from dixit_lab.engine.game import play_game
from dixit_lab.web.moves import IllegalMove, check_move

CLASSIC = get_rules("classic")
VIEW = VoteView(seat=2, round=0, storyteller=0, clue="echo", hand=(1, 2, 3),
                display=(10, 11, 12, 13), own_positions=(1,), scores=(0, 0, 0, 0), history=())


def _bar_the_first_card(monkeypatch: pytest.MonkeyPatch) -> None:
    """A made-up rule, written where a new one would be: the first displayed card is barred
    to every listener too."""
    plain_list, plain_mask = RuleSet.barred_votes, RuleSet.barred_vote_mask

    def barred_votes(self, own_positions):  # type: ignore[no-untyped-def]
        return tuple(sorted({0, *plain_list(self, own_positions)}))

    def barred_vote_mask(self, own):  # type: ignore[no-untyped-def]
        mask = plain_mask(self, own).copy()
        mask[..., 0] = True
        return mask

    monkeypatch.setattr(RuleSet, "barred_votes", barred_votes)
    monkeypatch.setattr(RuleSet, "barred_vote_mask", barred_vote_mask)


class _VotesFirst(Agent):
    """random's tell and submit; always votes for the first displayed card it may."""

    def __init__(self) -> None:
        self.random = make_agent("random")

    def begin_game(self, context):  # type: ignore[no-untyped-def]
        self.random.begin_game(context)

    def tell(self, view):  # type: ignore[no-untyped-def]
        return self.random.tell(view)

    def submit(self, view):  # type: ignore[no-untyped-def]
        return self.random.submit(view)

    def vote(self, view):  # type: ignore[no-untyped-def]
        return 0 if 0 not in view.own_positions else 1


def _engine_faults() -> int:
    agents = [make_agent("random"), _VotesFirst(), make_agent("random"), make_agent("random")]
    record = play_game(agents, CLASSIC, Deck.numbered(84), 3, on_illegal="fallback")
    return sum(fault.seat == 1 for rnd in record.rounds for fault in rnd.faults)


def _model_labels() -> list[int]:
    agent = make_agent("llm(model=m, base_url='http://127.0.0.1:9/v1')")
    agent.context = SimpleNamespace(rules=CLASSIC)
    seen: dict[str, list[int]] = {}

    def decide(action, round_index, labels, n_cards, cards, fields):  # type: ignore[no-untyped-def]
        seen["labels"] = labels
        return {"card": labels[0]}

    agent._decide = decide
    agent.vote(VIEW)
    return seen["labels"]


def _env_mask() -> list[int]:
    from dixit_lab.env.encoding import Encoder
    from tests.tiny_space import one_clue_per_card

    encoder = Encoder(one_clue_per_card(60), 4, CLASSIC)
    mask = encoder.mask(encoder.state_of_view(VIEW))
    start = encoder.actions.display_offset
    return np.flatnonzero(mask[start:start + 4]).tolist()


def test_the_engine_the_server_and_the_model_seats_follow_the_one_rule(monkeypatch):
    assert _engine_faults() == 0
    assert check_move("vote", VIEW, {"vote": 0}, CLASSIC) == 0
    assert _model_labels() == [1, 3, 4]  # card numbers: position + 1, not one's own (2)
    _bar_the_first_card(monkeypatch)
    assert _engine_faults() > 0
    with pytest.raises(IllegalMove, match="never vote"):
        check_move("vote", VIEW, {"vote": 0}, CLASSIC)
    assert _model_labels() == [3, 4]


def _vector_votes(steps: int = 120) -> set[int]:
    """The display positions the vector environment's masks allow at its vote steps."""
    from dixit_lab.env.vector import DixitVectorEnv

    env = DixitVectorEnv(3, 4, "classic")
    observations, _ = env.reset(seed=2)
    start = env.encoder.actions.display_offset
    rng, legal = np.random.default_rng(2), set()
    for _ in range(steps):
        masks = observations["action_mask"]
        legal |= set(np.flatnonzero(masks[:, start:start + 4].any(axis=0)).tolist())
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        observations, *_ = env.step(actions)
    return legal


def test_the_environments_masks_follow_the_one_rule(monkeypatch):
    pytest.importorskip("gymnasium", reason="the environment needs the env extra")
    assert _env_mask() == [0, 2, 3] and _vector_votes() == {0, 1, 2, 3}
    _bar_the_first_card(monkeypatch)
    assert _env_mask() == [2, 3] and _vector_votes() == {1, 2, 3}


def test_the_two_forms_of_the_rule_agree_under_every_preset():
    rng = np.random.default_rng(5)
    for preset in ("classic", "refresh", "quest", "dixitworld", "dixitworld_as_run"):
        for own_votes in (False, True):
            rules = get_rules(preset, own_card_votes=own_votes)
            own = rng.random((20, 7)) < 0.3
            mask = rules.barred_vote_mask(own)
            for row, barred in zip(own, mask, strict=True):
                listed = rules.barred_votes(np.flatnonzero(row).tolist())
                assert np.flatnonzero(barred).tolist() == list(listed)
