"""``random``: uniform legal choices from the seat's stream. The floor every agent must beat."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.core.agent import (
    Agent,
    Clue,
    GameContext,
    SubmitView,
    TellView,
    VoteView,
    register_agent,
)
from dixit_lab.policy import kernel
from dixit_lab.policy.backends import MANY, ONE, Backend, without_replacement

#: every word is in the default clue bank, so embedding agents perceive it without a model
WORDS: tuple[str, ...] = (
    "dream", "journey", "shadow", "light", "home", "secret", "time", "stormy", "silence",
    "wonder", "memory", "balance", "escape", "hope", "mystery", "childhood", "midnight",
    "freedom", "lost", "friendship", "lonely", "curious", "deep", "hidden", "falling",
    "waiting", "growing", "gentle", "strange", "beginning", "ending", "music",
)
_WORD_COUNT = len(WORDS)


@register_agent("random")
class RandomAgent(Agent):
    """Tells a random card with a random word from a small built-in list, submits random cards
    and votes for a random displayed card that is not its own.

    Each choice takes one number ``u`` of the seat's counter-based stream
    (``context.uniforms``) and picks item ``floor(u * n)`` of ``n``. Its decisions are
    :class:`RandomPolicy`'s, for one game here and for many in the batched engine.
    """

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self._draws = context.uniforms
        self._next = context.uniforms.next

    # RandomPolicy's decisions on the ONE backend, with its builtins written out (a game
    # is ~100 decisions; the generic calls were a fifth of a random game): the same numbers
    # in the same order (tests/agents/test_random_agent.py; the batched engine, which plays
    # RandomPolicy itself, gives the same records)

    def tell(self, view: TellView) -> Clue:
        hand, draw = view.hand, self._next
        count = len(hand)
        index = int(draw() * count)  # min(floor(u * n), n - 1), without the call
        word = int(draw() * _WORD_COUNT)
        return Clue(hand[index if index < count else count - 1],
                    WORDS[word if word < _WORD_COUNT else _WORD_COUNT - 1])

    def submit(self, view: SubmitView) -> list[int]:
        if view.n_cards != 1:
            return _ONE.submit(view.hand, view.clue, view.n_cards, self._draws)
        hand = view.hand
        count = len(hand)
        index = int(self._next() * count)
        return [hand[index if index < count else count - 1]]

    def vote(self, view: VoteView) -> int:
        own = view.own_positions
        count = len(view.display) - len(own)
        vote = int(self._next() * count)  # the vote-th position not own
        if vote == count:
            vote -= 1
        for position in own if len(own) < 2 else sorted(own):
            if position <= vote:
                vote += 1
        return vote

    def batch_policy(self) -> RandomPolicy:
        """The same decisions over many games at once (dixit_lab.engine.batched)."""
        return RandomPolicy(MANY)


class RandomPolicy:
    """``random``'s decisions, written once for both backends (:mod:`.backends`). Its words
    are rows of :data:`WORDS` for ``ONE``, of the table's clue bank for ``MANY``
    (:meth:`bind`)."""

    clue_texts = None
    words = WORDS

    def __init__(self, on: Backend = MANY) -> None:
        self.on = on
        self.word_rows = on.vector(range(len(WORDS)))

    def bind(self, texts: tuple[str, ...]) -> None:
        position = {text: i for i, text in enumerate(texts)}
        missing = [word for word in WORDS if word not in position]
        if missing:
            raise ValueError(f"the random agent's word {missing[0]!r} is not in the table's "
                             f"clue bank")
        self.word_rows = self.on.vector([position[word] for word in WORDS])

    def tell(self, hands: Any, draws: Any) -> tuple[Any, Any]:
        on = self.on
        cards = on.pick(hands, on.below(draws.next(), on.length(hands)))
        return cards, on.at(self.word_rows, on.below(draws.next(), len(WORDS)))

    def submit(self, hands: Any, clues: Any, n_cards: int, draws: Any) -> Any:
        return without_replacement(self.on, hands, n_cards, draws, self.on.uniform)

    def vote(self, display: Any, own: Any, clues: Any, draws: Any) -> Any:
        return self.on.uniform(self.on.others(own, display), draws.next())

    def kernel_policy(self) -> kernel.KernelPolicy:
        """The same decisions for the compiled engine (:mod:`dixit_lab.policy.kernel`)."""
        return kernel.KernelPolicy(kernel.TELL_RANDOM, kernel.SUBMIT_RANDOM, kernel.VOTE_RANDOM,
                                   words=np.asarray(self.word_rows, dtype=np.int64))


_ONE = RandomPolicy(ONE)  # keeps no state: one for every seat
