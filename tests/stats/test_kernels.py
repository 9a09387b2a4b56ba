"""Each metric's kernel gives, over batches of games, the samples a plain computation from the
records gives, game by game: the same values to the last bit, players, games and clusters;
its per-game samples (tune, sweep pairs) and the seat-game table follow from it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab.records.batches import record_batches
from dixit_lab.records.format import GameRecord, RoundRecord, player_names
from dixit_lab.stats.catalogue import CATALOGUE, per_game_samples, sample
from dixit_lab.stats.game_stats import METRIC_SUMS
from dixit_lab.stats.kernels import Seats
from dixit_lab.stats.metrics import seat_games_frame
from tests.stats.test_own_decisions import Flaky

#: a sample as the records give it: (game, cluster, player, value)
Row = tuple[int, object, str, float]


def _games(players: int, games: int, seed: int) -> list[GameRecord]:
    """Random games with faults (a flaky seat), a name filling two seats, ties."""
    names = ["flaky", "twice", "twice", *[f"r{i}" for i in range(players - 3)]]
    out = []
    for game in range(games):
        agents = [Flaky()] + [make_agent("random") for _ in range(players - 1)]
        out.append(play_game(agents, get_rules("classic", max_rounds=2 + game % 4),
                             Deck.numbered(96), game_seed(seed, game), on_illegal="fallback",
                             meta={"game": game, "players": names}))
    return out


@pytest.fixture(scope="module")
def records() -> list[GameRecord]:
    mixed = _games(3, 5, 11) + _games(5, 6, 12) + _games(4, 5, 13)
    rng = np.random.default_rng(7)
    return [mixed[i] for i in rng.permutation(len(mixed))]  # table sizes interleaved


def _target(rnd: RoundRecord) -> int:
    return rnd.display.index(rnd.storyteller_card)


def _chance(rnd: RoundRecord, seat: int) -> float:
    return 1 / max(len(rnd.display) - rnd.card_owner.count(seat), 1)


def _failed(rnd: RoundRecord, seat: int, action: str) -> bool:
    return any(f.seat == seat and f.action == action for f in rnd.faults)


def _reference(name: str, index: int, record: GameRecord) -> list[Row]:
    """The samples of metric ``name`` in one game, from the record alone."""
    names = player_names(record)
    rounds = list(enumerate(record.rounds))
    if name == "win_share":
        return [(index, (index, player), player,
                 min(1.0, sum(1 / len(record.winners) for s, n in enumerate(names)
                              if n == player and s in record.winners)))
                for player in dict.fromkeys(names)]
    if name == "points_per_game":
        return [(index, index, names[s], float(score))
                for s, score in enumerate(record.final_scores)]
    told: dict[str, Callable[[RoundRecord], float]] = {
        **{f"{o}_rate": (lambda r, o=o: float(r.outcome == o))
           for o in ("all_found", "some_found", "none_found")},
        "storyteller_points_per_turn": lambda r: float(r.points[r.storyteller]),
        "observed_find_rate": lambda r: len(r.finders) / (record.n_players - 1),
    }
    if name in told:
        return [(index, index, names[r.storyteller], told[name](r)) for _, r in rounds]
    if name == "some_found_rate_own":
        return [(index, index, names[r.storyteller], float(r.outcome == "some_found"))
                for _, r in rounds if not _failed(r, r.storyteller, "tell")]
    voted: dict[str, Callable[[RoundRecord, int], float]] = {
        "listener_accuracy": lambda r, s: float(r.votes[s] == _target(r)),
        "listener_chance": _chance,
        "decoy_votes_per_turn": lambda r, s: float(sum(
            1 for v, vote in enumerate(r.votes) if vote is not None and v != s
            and r.card_owner[vote] == s)),
    }
    base, own = name.removesuffix("_own"), name.endswith("_own")
    by_game = name == "decoy_votes_per_turn"
    return [(index, index if by_game else (index, number), names[s], voted[base](r, s))
            for number, r in rounds for s in range(record.n_players)
            if s != r.storyteller and not (own and _failed(r, s, "vote"))]


def _from_kernel(name: str, records: list[GameRecord]) -> list[tuple[Row, object]]:
    """The kernel's samples over batches of four games: each with its (batch, cluster)."""
    kernel = CATALOGUE[name].kernel
    assert kernel is not None
    rows = []
    for number, batch in enumerate(record_batches(records, batch_games=4)):
        seats = Seats(batch)
        found = kernel(seats)
        assert len(found.values) == len(found.game) == len(found.cluster) == len(found.player)
        for value, game, cluster, player in zip(found.values.tolist(), found.game.tolist(),
                                                found.cluster.tolist(),
                                                found.player.tolist(), strict=True):
            rows.append(((int(batch.record_index[game]), None, seats.names[player], value),
                         (number, cluster)))
    return rows


def test_every_metric_of_the_catalogue_has_a_kernel_or_is_derived_from_two():
    for name, metric in CATALOGUE.items():
        if metric.kernel is None:
            assert metric.derived_from is not None, f"{name}: no kernel"
            assert all(CATALOGUE[part].kernel is not None for part in metric.derived_from)
        else:
            assert metric.derived_from is None, name
        assert not metric.per_game or metric.kernel is not None, name
    assert tuple(n for n, m in CATALOGUE.items() if m.kernel is not None) == METRIC_SUMS


@pytest.mark.parametrize("name", [n for n, m in CATALOGUE.items() if m.kernel is not None])
def test_the_kernel_gives_the_samples_the_records_give(name, records):
    expected = [row for index, record in enumerate(records)
                for row in _reference(name, index, record)]
    found = _from_kernel(name, records)

    def key(row: Row) -> tuple[int, str]:
        return row[0], row[2]

    expected.sort(key=key)  # stable: within a game and player, in play order
    found.sort(key=lambda pair: key(pair[0]))
    assert [(g, p, v) for g, _, p, v in expected] == [(g, p, v) for (g, _, p, v), _ in found]
    assert len(expected) > len(records)
    # the same clusters: one kernel cluster is one cluster of the records, and back
    pairs = {(cluster, row[1]) for row, (_, cluster) in zip(expected, found, strict=True)}
    assert len({k for k, _ in pairs}) == len({r for _, r in pairs}) == len(pairs)


@pytest.mark.parametrize("name", [n for n, m in CATALOGUE.items() if m.per_game])
def test_a_players_sample_in_a_game_is_the_mean_of_its_samples_there(name, records):
    for index, record in enumerate(records):
        for player in dict.fromkeys(player_names(record)):
            values = [v for _, _, p, v in _reference(name, index, record) if p == player]
            assert sample(name, record, player) == (sum(values) / len(values) if values
                                                    else None)
    assert sample(name, records[0], "nobody") is None
    many = {}
    for batch in record_batches(records):
        many.update(per_game_samples(name, batch, "twice"))
    assert many == {i: sample(name, r, "twice") for i, r in enumerate(records)
                    if sample(name, r, "twice") is not None}


def test_a_metric_without_a_per_game_sample_says_so(records):
    with pytest.raises(KeyError, match="no per-game sample"):
        sample("listener_accuracy", records[0], "flaky")


def test_seat_games_frame_is_the_records_seat_by_seat(records):
    rows = []
    for index, record in enumerate(records):
        share = 1.0 / len(record.winners)
        for seat, player in enumerate(player_names(record)):
            won = seat in record.winners
            rows.append({"record_index": index, "game": record.meta["game"], "seat": seat,
                         "player": player, "agent": record.agents[seat],
                         "final_score": record.final_scores[seat], "won": won,
                         "win_share": share if won else 0.0, "rounds": len(record.rounds),
                         "end_reason": record.end_reason})
    expected = pd.DataFrame(rows)
    pd.testing.assert_frame_equal(seat_games_frame(records), expected)
    assert list(seat_games_frame([]).columns) == list(expected.columns)
    assert any(len(r.winners) > 1 for r in records)  # ties shared
