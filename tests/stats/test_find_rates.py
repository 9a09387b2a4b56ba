"""Predicted vs observed find rates, from records."""

from __future__ import annotations

import dataclasses

import numpy as np

from dixit_lab.core.agent import GameContext, make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import RuleSet, get_rules
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


def test_a_batchs_predictions_are_each_turns_own():
    """turn_predictions (every turn of a batch at once, the clues dictionary-encoded) gives
    each turn what its storyteller's ``predicted_find`` gives it alone: two model tellers, two
    rule sets in one batch, and a clue outside the bank (NaN)."""
    deck = load_deck("dreams")
    records = []
    for i in range(12):
        rules = get_rules("classic" if i % 2 else "refresh")
        agents = [make_agent("ambiguity(target=0.3)"), make_agent("pragmatic"),
                  make_agent("softmax"), make_agent("softmax")]
        records.append(play_game(agents, rules, deck, game_seed(4, i),
                                 meta={"game": i, "players": ["amb", "prag", "s", "s"]}))
    first = records[0].rounds[0]
    records[0] = dataclasses.replace(records[0], rounds=(
        dataclasses.replace(first, clue="a clue in no bank"), *records[0].rounds[1:]))
    turns = turn_predictions(records)
    assert set(turns.player) == {"amb", "prag", "s"} and np.isnan(turns.loc[0, "predicted"])
    checked = 0
    for record in records:
        for number, played in enumerate(record.rounds):
            spec = record.agents[played.storyteller]
            row = turns[(turns.game == record.meta["game"]) & (turns["round"] == number)]
            predicted = float(row.predicted.iloc[0])
            if spec == "softmax":
                assert np.isnan(predicted)
                continue
            agent = make_agent(spec)
            agent.begin_game(GameContext(0, 4, RuleSet(**record.rule_options), deck))
            try:
                alone = agent.predicted_find(list(played.storyteller_hand),
                                             played.storyteller_card, played.clue, number)
            except KeyError:  # outside the bank
                assert np.isnan(predicted)
                continue
            assert predicted == alone
            checked += 1
    assert checked > 40


def test_the_prediction_cache_keeps_a_bounded_number_of_storytellers(monkeypatch):
    """Each rebuilt storyteller holds its tables (tens of MB): a sweep's points must not keep
    them all. The most recently asked PredictionCache.AGENTS are kept, and asking one of
    them again gives the same agent."""
    from dixit_lab.records.decks import by_name
    from dixit_lab.stats.find_rates import PredictionCache

    monkeypatch.setattr(PredictionCache, "AGENTS", 3)
    cache = PredictionCache()
    specs = [f"ambiguity(target={t})" for t in (0.2, 0.3, 0.4, 0.5)]
    rules = get_rules("classic")
    agents = [cache.agent(spec, "dreams", by_name, 4, rules) for spec in specs]
    assert all(agent is not None for agent in agents) and len(cache.agents) == 3
    assert cache.agent(specs[-1], "dreams", by_name, 4, rules) is agents[-1]
    assert cache.agent(specs[0], "dreams", by_name, 4, rules) is not agents[0]  # dropped


def test_a_predictor_that_cannot_be_set_up_is_one_line_naming_it():
    """Its own code failing when the report sets it up to predict: a UserError naming the
    spec (the command's one line), not a traceback."""
    import pytest

    from dixit_lab.core.agent import register_agent
    from dixit_lab.errors import UserError
    from dixit_lab.records.decks import by_name
    from dixit_lab.stats.find_rates import PredictionCache
    from dixit_lab_agents.ambiguity import AmbiguityAgent

    @register_agent("test-unset-predictor")
    class Unset(AmbiguityAgent):
        def begin_game(self, context):  # type: ignore[no-untyped-def]
            raise RuntimeError("no table for me")

    with pytest.raises(UserError, match="test-unset-predictor could not be set up to predict "
                                        "its find rates at 4 players under 'classic': "
                                        "RuntimeError: no table for me"):
        PredictionCache().agent("test-unset-predictor", "dreams", by_name, 4,
                                get_rules("classic"))
