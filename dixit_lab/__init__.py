"""dixit_lab: a research harness for agents that play Dixit through image-text embeddings.

What a researcher imports lives here, so that ``import dixit_lab as dl`` is enough for the
common work (docs/api.md lists it):

* the game: :class:`Deck`/:func:`load_deck`, :class:`RuleSet`/:func:`get_rules`,
  :func:`score_round`, :func:`play_game` and :class:`GameSteps` (a game one decision at a time);
* agents: :class:`Agent`, :class:`Clue`, :func:`register_agent`, :func:`make_agent`,
  :func:`available_agents`, and :func:`check_agent` (the conformance check of a new agent);
* experiments: :func:`load_config`/:func:`parse_config`, :func:`run_experiment`,
  :func:`replay_folder`; records: :func:`read_jsonl`, :func:`write_jsonl`, :func:`show_game`;
* embeddings: :func:`make_embedder`, :class:`EmbeddingSpace`;
* learning: :func:`parallel_env`, :func:`single_agent_env` and :func:`vector_env` (``pip
  install 'dixit-lab[env]'``; the AEC form is ``dixit_lab.env.env``).

The experiment, embedding and environment names are imported when first used, so ``import
dixit_lab`` stays light and never imports an optional stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dixit_lab import _clock  # noqa: F401 - first: starts the clock of the whole command
from dixit_lab._version import __version__
from dixit_lab.core.agent import Agent, Clue, available_agents, make_agent, register_agent
from dixit_lab.core.cards import Card, Deck, load_deck
from dixit_lab.core.rules import IllegalAction, RoundScore, RuleSet, get_rules, score_round
from dixit_lab.engine.game import GameSteps, play_game
from dixit_lab.errors import UserError
from dixit_lab.records.format import GameRecord, RoundRecord, read_jsonl, write_jsonl

if TYPE_CHECKING:
    from dixit_lab.embeddings import EmbeddingSpace, make_embedder
    from dixit_lab.env import parallel_env, single_agent_env, vector_env
    from dixit_lab.report.show import show_game
    from dixit_lab.run.experiment import ExperimentConfig, load_config, parse_config
    from dixit_lab.run.replay import replay_folder
    from dixit_lab.run.runner import run_experiment
    from dixit_lab.testing import check_agent


# name -> module that defines it, imported on first use (PEP 562)
_LAZY = {
    "EmbeddingSpace": "dixit_lab.embeddings",
    "make_embedder": "dixit_lab.embeddings",
    "parallel_env": "dixit_lab.env",
    "single_agent_env": "dixit_lab.env",
    "vector_env": "dixit_lab.env",
    "show_game": "dixit_lab.report.show",
    "ExperimentConfig": "dixit_lab.run.experiment",
    "load_config": "dixit_lab.run.experiment",
    "parse_config": "dixit_lab.run.experiment",
    "replay_folder": "dixit_lab.run.replay",
    "run_experiment": "dixit_lab.run.runner",
    "check_agent": "dixit_lab.testing",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dixit_lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Agent",
    "Card",
    "Clue",
    "Deck",
    "EmbeddingSpace",
    "ExperimentConfig",
    "GameRecord",
    "GameSteps",
    "IllegalAction",
    "RoundRecord",
    "RoundScore",
    "RuleSet",
    "UserError",
    "__version__",
    "available_agents",
    "check_agent",
    "get_rules",
    "load_config",
    "load_deck",
    "make_agent",
    "make_embedder",
    "parallel_env",
    "parse_config",
    "play_game",
    "read_jsonl",
    "register_agent",
    "replay_folder",
    "run_experiment",
    "score_round",
    "show_game",
    "single_agent_env",
    "vector_env",
    "write_jsonl",
]
