"""``random``: uniform legal choices from the seat's stream. The floor every agent must beat."""

from __future__ import annotations

from typing import Any

import numpy as np

from dixit_lab.agent import Agent, Clue, GameContext, SubmitView, TellView, VoteView, register_agent
from dixit_lab_agents.batch_tools import nth_allowed

#: every word is in the default clue bank, so embedding agents perceive it without a model
WORDS: tuple[str, ...] = (
    "dream", "journey", "shadow", "light", "home", "secret", "time", "stormy", "silence",
    "wonder", "memory", "balance", "escape", "hope", "mystery", "childhood", "midnight",
    "freedom", "lost", "friendship", "lonely", "curious", "deep", "hidden", "falling",
    "waiting", "growing", "gentle", "strange", "beginning", "ending", "music",
)


_N_WORDS = len(WORDS)


@register_agent("random")
class RandomAgent(Agent):
    """Tells a random card with a random word from a small built-in list, submits random cards
    and votes for a random displayed card that is not its own.

    Each choice takes one number ``u`` of the seat's counter-based stream
    (``context.uniforms``) and picks item ``floor(u * n)`` of ``n``.
    """

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self._next = context.uniforms.next

    # each choice: item min(floor(u * n), n - 1) of n (u * n can round up to n)

    def tell(self, view: TellView) -> Clue:
        hand, draw = view.hand, self._next
        n = len(hand)
        card = hand[min(int(draw() * n), n - 1)]
        return Clue(card, WORDS[min(int(draw() * _N_WORDS), _N_WORDS - 1)])

    def submit(self, view: SubmitView) -> list[int]:
        hand, draw = view.hand, self._next
        n = len(hand)
        if view.n_cards == 1:
            return [hand[min(int(draw() * n), n - 1)]]
        remaining = list(hand)
        chosen = []
        for _ in range(view.n_cards):
            n = len(remaining)
            chosen.append(remaining.pop(min(int(draw() * n), n - 1)))
        return chosen

    def vote(self, view: VoteView) -> int:
        own = view.own_positions
        allowed = [i for i in range(len(view.display)) if i not in own]
        n = len(allowed)
        return allowed[min(int(self._next() * n), n - 1)]

    def batch_policy(self) -> RandomPolicy:
        """The same decisions over many games at once (dixit_lab.batched)."""
        return RandomPolicy()


class RandomPolicy:
    """``random``'s decisions over many games at once (see dixit_lab.batched)."""

    clue_texts = None
    words = WORDS

    def bind(self, texts: tuple[str, ...]) -> None:
        position = {text: i for i, text in enumerate(texts)}
        missing = [word for word in WORDS if word not in position]
        if missing:
            raise ValueError(f"the random agent's word {missing[0]!r} is not in the table's "
                             f"clue bank")
        self.word_rows = np.array([position[word] for word in WORDS], dtype=np.int64)

    @staticmethod
    def _below(uniform: np.ndarray, n: np.ndarray | int) -> np.ndarray:
        return np.minimum((uniform * n).astype(np.int64), np.asarray(n) - 1)

    def tell(self, hands: np.ndarray, draws: Any) -> tuple[np.ndarray, np.ndarray]:
        index = self._below(draws.next(), hands.shape[1])
        cards = np.take_along_axis(hands, index[:, None], axis=1)[:, 0]
        words = self._below(draws.next(), len(WORDS))
        return cards, self.word_rows[words]

    def submit(self, hands: np.ndarray, clues: np.ndarray, n_cards: int,
               draws: Any) -> np.ndarray:
        remaining = np.ones(hands.shape, dtype=bool)
        chosen = np.empty((hands.shape[0], n_cards), dtype=hands.dtype)
        for i in range(n_cards):
            index = self._below(draws.next(), hands.shape[1] - i)
            column = nth_allowed(remaining, index)
            chosen[:, i] = hands[np.arange(hands.shape[0]), column]
            remaining[np.arange(hands.shape[0]), column] = False
        return chosen

    def vote(self, display: np.ndarray, own: np.ndarray, clues: np.ndarray,
             draws: Any) -> np.ndarray:
        allowed = ~own
        index = self._below(draws.next(), allowed.sum(axis=1))
        return nth_allowed(allowed, index)
