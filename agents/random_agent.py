"""``random``: uniform legal choices from the seat's stream. The floor every agent must beat."""

from __future__ import annotations

from dixit_lab.agent import Agent, Clue, GameContext, SubmitView, TellView, VoteView, register_agent

#: every word is in the default clue bank, so embedding agents perceive it without a model
WORDS: tuple[str, ...] = (
    "dream", "journey", "shadow", "light", "home", "secret", "time", "stormy", "silence",
    "wonder", "memory", "balance", "escape", "hope", "mystery", "childhood", "midnight",
    "freedom", "lost", "friendship", "lonely", "curious", "deep", "hidden", "falling",
    "waiting", "growing", "gentle", "strange", "beginning", "ending", "music",
)


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

    def _below(self, n: int) -> int:
        """A uniform integer in 0..n-1."""
        return min(int(self._next() * n), n - 1)

    def tell(self, view: TellView) -> Clue:
        card = view.hand[self._below(len(view.hand))]
        return Clue(card, WORDS[self._below(len(WORDS))])

    def submit(self, view: SubmitView) -> list[int]:
        hand = list(view.hand)
        chosen = []
        for _ in range(view.n_cards):
            chosen.append(hand.pop(self._below(len(hand))))
        return chosen

    def vote(self, view: VoteView) -> int:
        allowed = [i for i in range(len(view.display)) if i not in view.own_positions]
        return allowed[self._below(len(allowed))]
