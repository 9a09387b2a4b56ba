"""Predicted vs observed find rates, from records."""

from __future__ import annotations

import numpy as np

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.stats.find_rates import calibration_bins, find_rate_table, turn_predictions


def _records(spec, games=20):
    deck = load_deck("dreams")
    records = []
    for i in range(games):
        agents = [make_agent(spec)] + [make_agent("softmax") for _ in range(3)]
        records.append(play_game(agents, get_rules("classic"), deck, game_seed(2, i),
                                 meta={"game": i, "players": ["teller", "s", "s", "s"]}))
    return records


def test_predictions_match_the_agents_own_model():
    records = _records("ambiguity(target=0.3)")
    turns = turn_predictions(records)
    teller = turns[turns.player == "teller"]
    # the ambiguity agent told pairs predicted close to its target
    assert abs(teller.predicted.mean() - 0.3) < 0.05
    assert turns[turns.player == "s"].predicted.isna().all()  # softmax has no model
    # observed = finders / voters, recomputed from the rounds
    first = records[0].rounds[0]
    row = turns[(turns.game == 0) & (turns["round"] == 0)].iloc[0]
    assert row.observed == len(first.finders) / 3


def test_find_rate_table_and_bins():
    turns = turn_predictions(_records("pragmatic"))
    table = find_rate_table(turns).set_index("player")
    assert 0 <= table.loc["teller", "observed_find_rate"] <= 1
    assert (table.loc["teller", "observed_find_rate_ci_low"]
            <= table.loc["teller", "observed_find_rate"]
            <= table.loc["teller", "observed_find_rate_ci_high"])
    assert np.isnan(table.loc["s", "predicted_find_rate"])
    bins = calibration_bins(turns)
    assert set(bins.player) == {"teller"}
    assert bins.turns.sum() == (turns.player == "teller").sum()
