"""dixit_lab: a research harness for agents that play Dixit through image-text embeddings."""

from __future__ import annotations

from dixit_lab import _clock  # noqa: F401 - first: starts the clock of the whole command
from dixit_lab.core.agent import Agent, Clue, available_agents, make_agent, register_agent
from dixit_lab.core.cards import Card, Deck, load_deck
from dixit_lab.core.rules import IllegalAction, RoundScore, RuleSet, get_rules, score_round
from dixit_lab.engine.game import play_game
from dixit_lab.records.format import GameRecord, RoundRecord, read_jsonl, write_jsonl

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Card",
    "Clue",
    "Deck",
    "GameRecord",
    "IllegalAction",
    "RoundRecord",
    "RoundScore",
    "RuleSet",
    "__version__",
    "available_agents",
    "get_rules",
    "load_deck",
    "make_agent",
    "play_game",
    "read_jsonl",
    "register_agent",
    "score_round",
    "write_jsonl",
]
