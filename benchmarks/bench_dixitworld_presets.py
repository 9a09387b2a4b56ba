"""DixitWorld's arena as its code is written (rule preset ``dixitworld``) against as it runs
(``dixitworld_as_run``), with offline agents: how far apart the two protocols put the same
players.

    python benchmarks/bench_dixitworld_presets.py [--games 4000] [--workers 2]

Two pragmatic storytellers and two softmax listeners (T 0.05) play the same deals under
three settings: as written; as run with the built-in agents (which never vote for their own
card: only the unpaid bonus differs); and as run with *blind* softmax listeners, which are not
told which card on the table is theirs and vote over all of them, as DixitWorld's models were
(its vote prompt does not say which candidate is the listener's own). Prints, per player,
points per game, listener accuracy and storyteller points per turn with 95% intervals.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.core.agent import VoteView
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.policy.backends import MANY
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.testing import batch_differences
from dixit_lab_agents.softmax_agent import SoftmaxAgent, SoftmaxPolicy


class BlindSoftmaxPolicy(SoftmaxPolicy):
    """softmax's decisions, but a vote is drawn over every displayed card, its own included."""

    def vote(self, display: Any, own: Any, clues: Any, draws: Any) -> Any:
        nobody = np.zeros_like(own) if self.on is MANY else ()
        return super().vote(display, nobody, clues, draws)


class BlindSoftmax(SoftmaxAgent):
    """A softmax listener that does not know which displayed card is its own."""

    def prepare(self, space: Any) -> None:
        super().prepare(space)
        self.decide = BlindSoftmaxPolicy(self, self.decide.on)

    def vote(self, view: VoteView) -> int:
        return self.decide.vote(view.display, (), view.clue, self._draws)

    def batch_policy(self) -> BlindSoftmaxPolicy:
        return BlindSoftmaxPolicy(self, MANY)


BLIND = f"{Path(__file__).resolve()}:BlindSoftmax"
COLUMNS = ("points_per_game", "listener_accuracy", "storyteller_points_per_turn")


def setting(preset: str, listener: str, games: int, workers: int) -> dict[str, Any]:
    return {"name": preset, "seed": 2510, "rules": preset, "deck": "dreams",
            "players": [{"name": "pragmatic_1", "agent": "pragmatic"},
                        {"name": "pragmatic_2", "agent": "pragmatic"},
                        {"name": "softmax_1", "agent": listener},
                        {"name": "softmax_2", "agent": listener}],
            "games": games, "schedule": {"kind": "duplicate"},
            "executor": {"kind": "process", "workers": workers}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    blind = f"{BLIND}(temperature=0.05)"
    bad = batch_differences(["pragmatic", "pragmatic", blind, blind],
                            get_rules("dixitworld_as_run"), load_deck("dreams"), 8)
    assert not bad, f"the blind listener's batched games {bad} differ from the reference's"
    settings = (("as written", "dixitworld", "softmax(temperature=0.05)"),
                ("as run", "dixitworld_as_run", "softmax(temperature=0.05)"),
                ("as run, blind listeners", "dixitworld_as_run", blind))
    with tempfile.TemporaryDirectory() as tmp:
        for label, preset, listener in settings:
            folder = Path(tmp) / label.replace(" ", "_").replace(",", "")
            run_experiment(parse_config(setting(preset, listener, args.games, args.workers)),
                           folder, show_progress=False)
            table = pd.read_csv(folder / "agents.csv")
            print(f"{label} ({preset}, {args.games} games):")
            for _, row in table.iterrows():
                cells = [f"{column} {row[column]:.3f} [{row[column + '_ci_low']:.3f}, "
                         f"{row[column + '_ci_high']:.3f}]" for column in COLUMNS]
                print(f"  {row['player']:<12} " + "; ".join(cells))


if __name__ == "__main__":
    main()
