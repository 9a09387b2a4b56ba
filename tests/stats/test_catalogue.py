"""The metric catalogue: one definition that agents.csv, tune and the sweep reports read."""

from __future__ import annotations

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.stats.catalogue import CATALOGUE, agent_columns, per_game_metrics, sample
from dixit_lab.stats.metrics import AGENT_COLUMNS, agent_table
from dixit_lab.tune.search import METRICS


@pytest.fixture(scope="module")
def records():
    names = ["a", "b", "c", "d"]
    out = []
    for g in range(30):
        record = play_game([make_agent("random") for _ in names], get_rules("classic"),
                           Deck.numbered(84), game_seed(2, g), meta={"game": g, "players": names})
        out.append(record)
    return out


def test_agents_csv_columns_come_from_the_catalogue():
    for name, metric in CATALOGUE.items():
        if name == "observed_find_rate":
            continue  # joined from the find-rate table (dixit_lab.stats.find_rates)
        for column in agent_columns((name,)):
            assert (column in AGENT_COLUMNS) == metric.column, column
        assert metric.title and metric.axis and metric.description
    assert per_game_metrics() == METRICS
    assert set(METRICS) >= {"storyteller_points_per_turn", "points_per_game", "win_share",
                            "some_found_rate"}


def test_per_game_samples_average_to_the_table(records):
    table = agent_table(records).set_index("player")
    for player in "abcd":
        points = [sample("points_per_game", r, player) for r in records]
        assert sum(points) / len(points) == pytest.approx(table.loc[player, "points_per_game"])
        shares = [sample("win_share", r, player) for r in records]
        assert sum(shares) / len(shares) == pytest.approx(table.loc[player, "win_share"])
        rates = [sample("some_found_rate", r, player) for r in records]
        assert all(0 <= x <= 1 for x in rates if x is not None)
    with pytest.raises(KeyError, match="no per-game sample"):
        sample("listener_accuracy", records[0], "a")
