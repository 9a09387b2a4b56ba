"""Predicted vs observed find rates: is a storyteller's model of its listeners calibrated?

For every storyteller turn of a player whose agent predicts find probabilities (``ambiguity``,
``pragmatic``, ``calibrated``: agents with a ``predicted_find`` method), the agent is rebuilt
from its spec and asked what it predicted for the (card, clue) it told, given its hand; the
observed find rate of the turn is the share of listeners who voted for the card.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.agent import GameContext, make_agent
from dixit_lab.cards import load_deck
from dixit_lab.records import GameRecord, player_names
from dixit_lab.rules import RuleSet

__all__ = ["calibration_bins", "find_rate_table", "turn_predictions"]


def turn_predictions(records: Iterable[GameRecord]) -> pd.DataFrame:
    """One row per storyteller turn: game, round, player, agent, voters, finders,
    ``observed`` (finders / voters) and ``predicted`` (NaN for agents without a model)."""
    agents: dict[tuple[Any, ...], Any] = {}
    rows = []
    for game, record in enumerate(records):
        names = player_names(record)
        rules = RuleSet(**record.rule_options)
        for index, rnd in enumerate(record.rounds):
            seat = rnd.storyteller
            spec = record.agents[seat]
            voters = record.n_players - 1
            finders = len(rnd.finders)
            predicted = float("nan")
            key = (spec, record.deck, record.n_players, rules)
            agent = agents.get(key)
            if agent is None:
                agent = make_agent(spec)
                if callable(getattr(agent, "predicted_find", None)):
                    agent.begin_game(GameContext(seat, record.n_players, rules,
                                                 load_deck(record.deck), record.agents))
                agents[key] = agent
            predict = getattr(agent, "predicted_find", None)
            if callable(predict) and rnd.storyteller_hand:
                with contextlib.suppress(KeyError):  # a fallback clue outside the bank
                    predicted = predict(list(rnd.storyteller_hand), rnd.storyteller_card,
                                        rnd.clue)
            rows.append({"game": record.meta.get("game", game), "round": index,
                         "player": names[seat], "agent": spec, "voters": voters,
                         "finders": finders, "observed": finders / voters,
                         "predicted": predicted})
    return pd.DataFrame(rows)


def find_rate_table(turns: pd.DataFrame) -> pd.DataFrame:
    """Per player: mean predicted and observed find rate over its storyteller turns, with a
    95% interval for the observed rate clustered by game (Wilson at the effective sample
    size: it stays in [0, 1])."""
    from dixit_lab.intervals import bounded_mean_interval

    rows = []
    for player, group in turns.groupby("player", sort=False):
        mean, low, high = bounded_mean_interval(group["observed"].to_numpy(float),
                                                group["game"].to_numpy())
        predicted = group["predicted"].to_numpy(float)
        rows.append({"player": player,
                     "observed_find_rate": mean,
                     "observed_find_rate_ci_low": low,
                     "observed_find_rate_ci_high": high,
                     "predicted_find_rate": (float(np.nanmean(predicted))
                                             if np.isfinite(predicted).any() else float("nan"))})
    return pd.DataFrame(rows)


def calibration_bins(turns: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Turns with a prediction, binned by predicted find rate: mean predicted, mean observed
    and the number of turns per bin and player."""
    known = turns[np.isfinite(turns["predicted"].to_numpy(float))]
    if known.empty:
        return pd.DataFrame(columns=["player", "bin", "predicted", "observed", "turns"])
    edges = np.linspace(0, 1, bins + 1)
    labelled = known.assign(bin=np.clip(np.digitize(known["predicted"], edges) - 1, 0,
                                        bins - 1))
    grouped = labelled.groupby(["player", "bin"], sort=True)
    return grouped.agg(predicted=("predicted", "mean"), observed=("observed", "mean"),
                       turns=("observed", "size")).reset_index()
