"""Which cards sit in the listeners' hands, round by round: the pool law of the listener model.

At the deal a slot of a hand holds any card of the deck alike. Then a card leaves a hand when
its holder submits it or tells it, and the cards that match many clues well are submitted
first: after a few rounds the hands hold more of the cards that rarely match, the decoys are
weaker and listeners find the storyteller's card more often than a model of random hands
predicts (+0.02 to +0.05 at 4 and 5 players by round 8, measured on the ambiguity sweep).

This module follows the law ``π_r`` of the card in one slot of a listener's hand at the start
of round ``r``, every slot and every hand alike (a mean-field model):

    π_{r+1}(d) = π_r(d) (1 − H(d)) + [Σ_l π_r(l) H(l)] f_r(d)

``H(d)`` is the chance that a slot holding ``d`` is emptied in a round: a listener
(``(n − 1) / n`` of the rounds) submits ``d`` with the chance ``σ(d)`` the listener model
gives it for a clue drawn from the whole bank (computed once, from dealt hands:
:func:`dixit_lab.listener.tables.softmax_tables`); a storyteller tells any card of its hand
alike (``1 / h``). The emptied slots are refilled from the pile; a drawn card follows
``f_r``: uniform while the pile holds cards never dealt (a random part of the deck), and,
after the discard is shuffled back in (``reshuffle_discard``), the law of a card outside the
hands, ∝ ``1 − n h π(d)``. The pile is counted exactly, so the rounds at which it runs out
are the engine's; the law stops at the last round the rules allow. With ``fixed_hands`` the
hands are the dealt ones every round: ``π_r`` stays uniform.

What it leaves out, on purpose: the storytellers' own choice of clues (a listener's chance to
submit a card is averaged over the bank, not over the clues actually told) and which cards
the storyteller tells (alike). ``tests/listener/test_model.py`` measures the result against
the hands of engine games.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dixit_lab.core.rules import RuleSet
from dixit_lab.listener.tables import softmax_submission

__all__ = ["HandDynamics", "pool_laws", "softmax_teller"]


class HandDynamics(NamedTuple):
    """What of a table's rules decides how its hands change: players, hand size, cards each
    listener submits, deck size, what happens when the pile runs out, fixed hands, and the
    safety bound on rounds."""

    n_players: int
    hand_size: int
    per_player: int
    deck_size: int
    deck_exhausted: str
    fixed_hands: bool
    max_rounds: int

    @classmethod
    def of(cls, rules: RuleSet, n_players: int, deck_size: int) -> HandDynamics:
        return cls(n_players, rules.hand_size_for(n_players), rules.cards_per_player(n_players),
                   deck_size, rules.deck_exhausted, bool(rules.fixed_hands), rules.max_rounds)


def softmax_teller(similarity: np.ndarray, temperature: float, hand: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """What a ``softmax`` storyteller with a dealt hand tells: (clues,) the law of its clue,
    and (cards,) the chance that a card of its hand is the one it tells. It tells a card
    ∝ exp(its best clue similarity / T), then a clue ∝ exp(similarity to that card / T)."""
    sims = np.asarray(similarity, dtype=np.float64)
    best = sims.max(axis=0)
    told = softmax_submission(best[None, :], temperature, hand)[0]    # P(card told)
    given = np.exp((sims - best[None, :]) / temperature)
    given /= given.sum(axis=0, keepdims=True)                         # P(clue | card)
    return given @ told, told * len(best) / hand


def pool_laws(hazard: np.ndarray, dynamics: HandDynamics,
              told: np.ndarray | None = None) -> np.ndarray:
    """(R, cards): ``π_r`` for every round ``r`` a game under ``dynamics`` can reach (R >= 1;
    row 0 is the deal's uniform law). ``hazard`` (cards,) is ``σ``: the chance that a slot
    holding the card is emptied when its holder listens; ``told`` the chance that it is
    emptied when its holder tells (default: any card alike, ``1 / h``)."""
    n, h, per, size = (dynamics.n_players, dynamics.hand_size, dynamics.per_player,
                       dynamics.deck_size)
    sigma = np.asarray(hazard, dtype=np.float64)
    if sigma.shape != (size,):
        raise ValueError(f"hazard has shape {sigma.shape}, expected ({size},)")
    law = np.full(size, 1.0 / size)
    if dynamics.fixed_hands:
        return law[None, :]
    telling = np.full(size, 1.0 / h) if told is None else np.asarray(told, dtype=np.float64)
    emptied = (n - 1) / n * sigma + telling / n
    drawn = np.full(size, 1.0 / size)   # the law of a card drawn from the pile
    pile, discard = size - n * h, 0
    played = 1 + (n - 1) * per          # cards played in a round, and drawn back
    mode = dynamics.deck_exhausted
    hand_left = float(h)                # play_out_hands: the average hand once nobody draws
    laws = [law]
    while len(laws) < dynamics.max_rounds:
        # the end of a round: its cards go to the discard, then the hands are refilled
        # (the engine's _refill); the law of the next round's slots, if there is one
        kept = law * (1.0 - emptied)    # a slot still holding its card
        discard += played
        if mode == "play_out_hands" and pile < played:
            hand_left -= played / n if not pile else (played - pile) / n
            pile = 0
            if hand_left < per:
                break
            law = kept / kept.sum()     # nobody draws: the hands only shrink
            laws.append(law)
            continue
        if pile < played and mode == "reshuffle_discard":
            outside = np.clip(1.0 - n * h * kept, 0.0, None)   # not in a hand
            drawn = outside / outside.sum()
            pile, discard = pile + discard, 0
        if pile < played or (pile == played and mode == "end_when_last_drawn"):
            break                       # the game ends with this refill
        pile -= played
        law = kept + (1.0 - kept.sum()) * drawn
        laws.append(law)
    return np.stack(laws)
