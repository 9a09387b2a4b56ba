"""Random streams. One ``SeedSequence`` per game, split into independent streams.

An experiment seed and a game index give the game's ``SeedSequence`` (spawn key = game index).
From it come separate streams for the deal (the whole deck order and any reshuffle), the
display shuffles, each seat's agent and each seat's fallback actions. Streams are built from
explicit spawn keys rather than ``SeedSequence.spawn`` so that they do not depend on how often
anything was spawned before. No module of the project uses global random state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GameSeed", "GameStreams", "game_seed", "game_streams", "stream"]

GameSeed = int | np.random.SeedSequence

_DEAL, _DISPLAY, _AGENT, _FALLBACK = 0, 1, 2, 3


def game_seed(experiment_seed: int, game_index: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of game ``game_index`` of an experiment."""
    return np.random.SeedSequence(experiment_seed, spawn_key=(game_index,))


def as_seed_sequence(seed: GameSeed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"a game seed must be a non-negative int or a SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def stream(seed: GameSeed, *key: int) -> np.random.Generator:
    """A generator for the sub-stream ``key`` of ``seed``."""
    parent = as_seed_sequence(seed)
    child = np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, *key))
    return np.random.Generator(np.random.PCG64(child))


@dataclass(frozen=True)
class GameStreams:
    """The independent random streams of one game."""

    deal: np.random.Generator
    display: np.random.Generator
    agents: tuple[np.random.Generator, ...]
    fallbacks: tuple[np.random.Generator, ...]


def game_streams(seed: GameSeed, n_players: int) -> GameStreams:
    """Streams for the deal, the display shuffles and each seat (agent and fallback)."""
    seq = as_seed_sequence(seed)
    return GameStreams(
        deal=stream(seq, _DEAL),
        display=stream(seq, _DISPLAY),
        agents=tuple(stream(seq, _AGENT, seat) for seat in range(n_players)),
        fallbacks=tuple(stream(seq, _FALLBACK, seat) for seat in range(n_players)),
    )


def seed_fields(seed: GameSeed) -> tuple[int, tuple[int, ...]]:
    """(entropy, spawn_key) of a seed, as stored in a game record."""
    seq = as_seed_sequence(seed)
    entropy = seq.entropy
    if not isinstance(entropy, int):
        raise ValueError("game seeds must have integer entropy to be recorded")
    return entropy, tuple(int(k) for k in seq.spawn_key)
