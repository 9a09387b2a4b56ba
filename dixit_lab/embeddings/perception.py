"""Perception noise: one game's individually distorted view of an embedding space.

A :class:`NoisyView` is what an agent with ``noise = σ > 0`` perceives in one game:

    s'(k, c) = s(k, c) + σ · ε(k, c),   ε(k, c) ~ N(0, 1) independent,

for every clue ``k`` of the bank and card ``c`` of the deck, drawn once per game from the
agent's own stream (``context.rng``), so the same game gives the same view on any machine,
and two agents (or two games) see differently. A clue outside the bank gets its own row of
noise when it is first heard. Scale: on the shipped spaces a clue's similarities to the 84
cards have a standard deviation of about 0.07 (``conse``) and 0.06 (``text``), so σ = 0.03
blurs the ranking of close cards and σ = 0.1 scrambles most of it.

To a model of the votes, noise is a warmer temperature (:func:`effective_temperature`): a
softmax of temperature ``T`` chooses the card of highest ``s / T + G`` with ``G`` standard
Gumbel noise (variance π²/6), so a noisy softmax listener chooses by ``s + σ ε + T G``, whose
noise has the variance of a noiseless softmax at ``T_eff = sqrt(T² + 6 σ² / π²)``. Matching
the variance is the usual logit-probit correspondence:
``tests/embeddings/test_perception.py`` measures the choice probabilities of a noisy listener
against the softmax at ``T_eff`` on the shipped spaces.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["NoisyView", "effective_temperature"]


def effective_temperature(temperature: float, noise: float) -> float:
    """The noiseless softmax temperature whose choices are closest to those of a softmax at
    ``temperature`` perceiving with noise σ = ``noise``: ``sqrt(T² + 6 σ² / π²)`` (the Gumbel
    noise of the softmax and the perception noise, matched in variance)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    return math.sqrt(temperature * temperature + 6.0 * noise * noise / (math.pi * math.pi))


class NoisyView:
    """A space's similarities with per-game noise; every other attribute is the space's."""

    def __init__(self, space: Any, noise: float, rng: np.random.Generator) -> None:
        if not noise >= 0:
            raise ValueError(f"noise must be >= 0, got {noise}")
        self.base = space
        self.noise = float(noise)
        self._rng = rng
        shape = np.shape(space.similarity)
        distorted = (np.asarray(space.similarity, dtype=np.float32)
                     + np.float32(noise) * rng.standard_normal(shape, dtype=np.float32))
        distorted.flags.writeable = False
        self.similarity = distorted
        self._extra: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def text_similarity(self, text: str) -> np.ndarray:
        """(n_cards,) perceived similarity of ``text`` with every card."""
        if text in self.base.clues:
            return self.similarity[self.base.clue_index(text)]
        row = self._extra.get(text)
        if row is None:
            clean = np.asarray(self.base.text_similarity(text), dtype=np.float32)
            row = clean + np.float32(self.noise) * self._rng.standard_normal(
                clean.shape, dtype=np.float32)
            self._extra[text] = row
        return row
