"""What the compiled engine (:mod:`dixit_lab.engine.compiled`) needs to play a batched policy.

A batched policy that the compiled kernel can play returns a :class:`KernelPolicy` from
``kernel_policy()``: one named *rule* for each decision (tell, submit, vote) and the tables
those rules read. The rules are the built-in agents' decisions, written a third time, in
Numba, in :mod:`dixit_lab.engine.kernel_rules`, each one the exact counterpart of a policy of
:mod:`dixit_lab.policy.backends` (same float operations, same tie-breaking, one number of the
seat's stream per ``draws.next()``):

==================  =========================================================================
rule                the decision it plays
==================  =========================================================================
``TELL_RANDOM``     ``RandomPolicy.tell``: card ``below(u, h)``, word ``below(u, len(words))``
``TELL_BEST``       ``LiteralPolicy.tell``: the card with the highest ``card_value`` (first
                    of ties) and its ``card_clue``
``TELL_SOFTMAX``    ``SoftmaxPolicy.tell``: a card ∝ exp(``card_value`` / T), then the clue
                    at ``u * clue_total[card]`` of ``clue_cdf[card]``
``TELL_NEAR_BEST``  ``ModelStorytellerPolicy.tell``: ``NearBest.tell`` on its arrays
``SUBMIT_RANDOM``   ``RandomPolicy.submit``: without replacement, each ``uniform``
``SUBMIT_BEST``     ``LiteralPolicy.submit``: the best cards of ``listen[clue]``
``SUBMIT_SOFTMAX``  ``SoftmaxPolicy.submit``: without replacement, each ∝ exp(listen / T)
``VOTE_RANDOM``     ``RandomPolicy.vote``: a uniform position that is not its own
``VOTE_BEST``       ``LiteralPolicy.vote`` (and pragmatic's on its vote scores): the best
                    position of ``vote_table[clue]`` that is not its own
``VOTE_SOFTMAX``    ``SoftmaxPolicy.vote``: a position ∝ exp(vote_table / T), not its own
==================  =========================================================================

``tests/engine/test_compiled.py`` plays every built-in agent with the kernel and the reference
engine and compares the records byte for byte; ``benchmarks/check_batched.py --engine
compiled`` does it for many games.

**Whose decisions a description plays** follows the batched engine's rule
(:func:`dixit_lab.engine.batched.batch_blocker`): a description speaks for the policy class
that defines ``kernel_policy`` and its bases, so that class must be the most-derived definer
of ``tell``, ``submit`` and ``vote`` (:func:`kernel_blocker`); a subclass that overrides one
of them without its own ``kernel_policy`` is played by the NumPy batched engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["KERNEL_METHODS", "SUBMIT_BEST", "SUBMIT_RANDOM", "SUBMIT_SOFTMAX", "TELL_BEST",
           "TELL_NEAR_BEST", "TELL_RANDOM", "TELL_SOFTMAX", "VOTE_BEST", "VOTE_RANDOM",
           "VOTE_SOFTMAX", "KernelPolicy", "kernel_blocker"]

TELL_RANDOM, TELL_BEST, TELL_SOFTMAX, TELL_NEAR_BEST = 0, 1, 2, 3
SUBMIT_RANDOM, SUBMIT_BEST, SUBMIT_SOFTMAX = 0, 1, 2
VOTE_RANDOM, VOTE_BEST, VOTE_SOFTMAX = 0, 1, 2

#: the policy methods a description stands for
KERNEL_METHODS: tuple[str, ...] = ("tell", "submit", "vote")


@dataclass(frozen=True, eq=False)
class KernelPolicy:
    """One policy as the kernel plays it: a rule per decision and the tables the rules read
    (clue rows of the table's bank, card indices of the deck). Each table is needed only by
    the rules named beside it."""

    tell: int
    submit: int
    vote: int
    #: softmax temperature (``*_SOFTMAX``)
    temperature: float = 1.0
    #: (clues, cards): what ``SUBMIT_BEST`` / ``SUBMIT_SOFTMAX`` read
    listen: np.ndarray | None = None
    #: (clues, cards): what ``VOTE_BEST`` / ``VOTE_SOFTMAX`` read
    vote_table: np.ndarray | None = None
    #: (cards,): ``TELL_BEST``'s and ``TELL_SOFTMAX``'s value of each card
    card_value: np.ndarray | None = None
    #: (cards,): ``TELL_BEST``'s clue of each card
    card_clue: np.ndarray | None = None
    #: (cards, clues) cumulative weights and (cards,) their totals (``TELL_SOFTMAX``)
    clue_cdf: np.ndarray | None = None
    clue_total: np.ndarray | None = None
    #: the clue rows of ``TELL_RANDOM``'s words
    words: np.ndarray | None = None
    #: ``TELL_NEAR_BEST``: a ``NearBest`` (the kernel reads its ``card_best`` and its
    #: ``keys_by_best_card()``)
    near_best: Any = None


def kernel_blocker(policy: Any) -> str | None:
    """Why the compiled kernel may not play batched ``policy`` (a policy or its class; None:
    it may)."""
    cls = policy if isinstance(policy, type) else type(policy)
    mro = cls.__mro__
    owner = next((klass for klass in mro if "kernel_policy" in vars(klass)), None)
    if owner is None or not callable(getattr(cls, "kernel_policy", None)):
        return f"{cls.__name__} has no compiled form (kernel_policy)"
    for method in KERNEL_METHODS:
        definer = next((klass for klass in mro if method in vars(klass)), None)
        if definer is not None and mro.index(definer) < mro.index(owner):
            return (f"{definer.__name__} overrides {method}, which the compiled form of "
                    f"{owner.__name__} does not play")
    return None
