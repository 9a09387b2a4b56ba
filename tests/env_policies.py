"""Deterministic policies for the environment tests, importable as ``tests.env_policies:NAME``
(the ``policy`` agent loads policies by import string)."""

from __future__ import annotations

import numpy as np


def first_legal(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The lowest legal action."""
    return int(np.flatnonzero(action_mask)[0])


def observation_driven(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A legal action that depends on every entry of the observation: two seats that build
    different observations for one view almost surely choose differently."""
    legal = np.flatnonzero(action_mask)
    digest = int(abs(float(np.dot(observation, np.arange(1, observation.size + 1) % 97))) * 1e3)
    return int(legal[digest % len(legal)])


def seeded(observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
    """A random legal action from the seat's stream (the ``rng`` keyword)."""
    legal = np.flatnonzero(action_mask)
    return int(legal[rng.integers(len(legal))])
