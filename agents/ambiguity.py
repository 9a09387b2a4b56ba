"""``ambiguity``: a storyteller with a knob for how obvious its clue is."""

from __future__ import annotations

import numpy as np

from dixit_lab.core.agent import register_agent
from dixit_lab_agents.model_storyteller import ModelStoryteller
from dixit_lab_agents.softmax_agent import DEFAULT_TEMPERATURE


@register_agent("ambiguity")
class AmbiguityAgent(ModelStoryteller):
    """Aims its clue at a chosen level of ambiguity.

    For every card of its hand and every clue of the bank it predicts ``p``, the probability
    that one listener finds its card: the other players each submit a card for the clue
    from their hand (drawn by a softmax, or their best match with ``decoys="best"``), hands
    whose cards follow the round's pool law (the cards that match clues well leave the hands
    first), and each listener votes by a softmax of similarities with temperature
    ``temperature`` (see :mod:`dixit_lab.listener.model`). It
    tells the pair whose ``p`` is closest to ``target`` (0 = nobody should find it, 1 =
    everybody), preferring, among near ties, the clue most similar to its card. As a listener
    it plays like ``literal``.

    With four listeners, ``target=0.5`` maximises the predicted chance that some but not all
    of them find the card.
    """

    def __init__(self, target: float = 0.5, temperature: float = DEFAULT_TEMPERATURE,
                 embedder: str = "conse", clues: str = "default", decoys: str = "softmax"
                 ) -> None:
        super().__init__(temperature, embedder, clues, decoys)
        if not 0.0 < target < 1.0:
            raise ValueError(f"target must be in (0, 1), got {target}")
        self.target = target

    def score_matrix(self, find: np.ndarray, variance: np.ndarray) -> np.ndarray:
        return -np.abs(find - np.float32(self.target))
