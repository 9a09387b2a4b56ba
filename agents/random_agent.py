"""``random``: uniform legal choices from the seat's stream. The floor every agent must beat."""

from __future__ import annotations

from dixit_lab.agent import Agent, Clue, GameContext, SubmitView, TellView, VoteView, register_agent

WORDS: tuple[str, ...] = (
    "dream", "journey", "shadow", "light", "home", "secret", "time", "storm", "silence",
    "wonder", "memory", "balance", "escape", "hope", "mystery", "childhood", "night",
    "freedom", "lost", "together", "alone", "curious", "deep", "hidden", "falling",
    "waiting", "growing", "gentle", "strange", "beginning", "ending", "music",
)


@register_agent("random")
class RandomAgent(Agent):
    """Tells a random card with a random word from a small built-in list, submits random cards
    and votes for a random displayed card that is not its own.

    Random numbers are drawn from the seat's stream in blocks (``block`` draws at a time) to
    keep the engine fast; the choices depend only on the seed.
    """

    def __init__(self, block: int = 64) -> None:
        if block < 1:
            raise ValueError(f"block must be at least 1, got {block}")
        self.block = block
        self._uniform: list[float] = []

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self._uniform = []

    def _below(self, n: int) -> int:
        """A uniform integer in 0..n-1."""
        if not self._uniform:
            self._uniform = self.rng.random(self.block).tolist()
            self._uniform.reverse()
        return int(self._uniform.pop() * n)

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
