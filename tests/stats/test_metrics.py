"""Metrics: hand-computed values on tiny games, engine games recomputed another way, intervals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dixit_lab import Deck, GameRecord, RoundRecord, get_rules, make_agent, play_game, score_round
from dixit_lab.stats.metrics import (
    AGENT_COLUMNS,
    agent_table,
    mean_interval,
    player_names,
    rounds_frame,
    seat_games_frame,
    summary_stats,
    t_quantile,
    wilson_interval,
)

NAMES = ["x", "y", "y", "z"]


def _round(storyteller, display, owners, votes, points, before):
    """A round whose points are checked against the rules (classic, four players)."""
    teller_card = display[owners.index(storyteller)]
    scored = score_round(get_rules("classic"), storyteller, tuple(owners),
                         {s: v for s, v in enumerate(votes) if v is not None})
    assert scored.points == tuple(points), "hand-computed points disagree with the rules"
    scores = tuple(b + p for b, p in zip(before, points, strict=True))
    return RoundRecord(storyteller, f"clue-{storyteller}-{display[0]}", teller_card,
                       tuple(display), tuple(owners), tuple(votes), tuple(points), scores), scores


def _game(index, rounds_spec):
    rounds, scores = [], (0, 0, 0, 0)
    for spec in rounds_spec:
        rnd, scores = _round(*spec, scores)
        rounds.append(rnd)
    best = max(scores)
    return GameRecord(seed=1, spawn_key=(index,), rules="classic", rule_options={},
                      agents=("random", "random(block=8)", "random(block=8)", "random"),
                      deck="numbered-84", rounds=tuple(rounds), final_scores=scores,
                      winners=tuple(s for s in range(4) if scores[s] == best),
                      end_reason="max_rounds", meta={"game": index, "players": NAMES})


@pytest.fixture
def tiny():
    """Two hand-made games; seats: 0 = x, 1 and 2 = y, 3 = z.

    Game 0: r0 teller 0, some found (seat 1), points (3,4,0,1); r1 teller 1, all found,
    points (2,0,2,2); totals (5,4,2,3): x wins alone.
    Game 1: r0 teller 2, none found, points (3,2,0,4); r1 teller 3, some found (seats 0, 2),
    points (4,0,3,3); totals (7,2,3,7): x and z tie.
    """
    game0 = _game(0, [
        (0, [10, 11, 12, 13], [0, 1, 2, 3], [None, 0, 3, 1], [3, 4, 0, 1]),
        (1, [20, 21, 22, 23], [2, 1, 0, 3], [1, None, 1, 1], [2, 0, 2, 2]),
    ])
    game1 = _game(1, [
        (2, [30, 31, 32, 33], [3, 2, 1, 0], [0, 0, None, 3], [3, 2, 0, 4]),
        (3, [40, 41, 42, 43], [3, 0, 1, 2], [0, 1, 0, None], [4, 0, 3, 3]),
    ])
    assert game0.winners == (0,) and game1.winners == (0, 3)
    return [game0, game1]


def _row(table, player):
    rows = table[table.player == player]
    assert len(rows) == 1
    return rows.iloc[0]


def test_agent_table_matches_hand_computation(tiny):
    table = agent_table(tiny)
    assert list(table.columns) == list(AGENT_COLUMNS)
    assert list(table.player) == ["x", "y", "z"]

    x = _row(table, "x")
    assert (x.seats, x.games, x.agent) == (2, 2, "random")
    assert x.win_share == pytest.approx(0.75)  # 1 + 1/2 over 2 games
    assert x.points_per_game == pytest.approx(6.0)
    assert (x.storyteller_turns, x.some_found_rate, x.all_found_rate) == (1, 1.0, 0.0)
    assert x.storyteller_points_per_turn == pytest.approx(3.0)
    assert x.listener_turns == 3
    assert x.listener_accuracy == pytest.approx(2 / 3)
    assert x.decoy_votes_per_turn == pytest.approx(2 / 3)

    y = _row(table, "y")  # two seats in each game
    assert (y.seats, y.games, y.agent) == (4, 2, "random(block=8)")
    assert y.win_share == 0.0
    assert y.points_per_game == pytest.approx((4 + 2 + 2 + 3) / 4)
    assert y.storyteller_turns == 2
    assert (y.all_found_rate, y.some_found_rate, y.none_found_rate) == (0.5, 0.0, 0.5)
    assert y.storyteller_points_per_turn == 0.0
    assert y.listener_turns == 6
    assert y.listener_accuracy == pytest.approx(0.5)
    assert y.decoy_votes_per_turn == pytest.approx(1 / 6)

    z = _row(table, "z")
    assert z.win_share == pytest.approx(0.25)  # 0 + 1/2 over 2 games
    assert z.win_share_per_seat == pytest.approx(0.25)
    assert z.points_per_game == pytest.approx(5.0)
    assert z.storyteller_points_per_turn == pytest.approx(3.0)
    assert z.listener_accuracy == pytest.approx(1 / 3)
    assert z.decoy_votes_per_turn == pytest.approx(1.0)
    assert table.faults.sum() == 0


def test_win_shares_of_a_game_add_up_to_one(tiny):
    seats = seat_games_frame(tiny)
    assert seats.groupby("record_index").win_share.sum().tolist() == [1.0, 1.0]
    assert seats[seats.record_index == 1].win_share.tolist() == [0.5, 0.0, 0.0, 0.5]
    table = agent_table(tiny)
    assert (table.win_share * table.games).sum() == pytest.approx(len(tiny))


def test_rounds_frame_adds_player_and_decoy_votes(tiny):
    frame = rounds_frame(tiny)
    assert len(frame) == 2 * 2 * 4
    assert frame.player.tolist()[:4] == NAMES
    teller = frame[frame.role == "storyteller"]
    assert (teller.decoy_votes == 0).all()
    listener = frame[frame.role == "listener"]
    assert (listener.decoy_votes == listener.votes_received).all()
    first = frame[(frame.record_index == 0) & (frame["round"] == 0)]
    assert first.decoy_votes.tolist() == [0, 1, 0, 1]
    assert first.n_finders.tolist() == [1] * 4


def test_player_names_fall_back_to_agents(tiny):
    assert player_names(tiny[0]) == tuple(NAMES)
    bare = GameRecord.from_dict({**tiny[0].to_dict(), "meta": {"game": 0}})
    assert player_names(bare) == bare.agents
    table = agent_table([bare])
    assert set(table.player) == {"random", "random(block=8)"}


def _engine_games(n_games=30, names=("solo", "crowd", "crowd", "crowd", "other")):
    deck = Deck.numbered(84)
    rules = get_rules("quest")
    return [play_game([make_agent("random") for _ in names], rules, deck, seed=i,
                      meta={"game": i, "players": list(names)}) for i in range(n_games)]


def test_agent_table_agrees_with_a_direct_count_on_engine_games():
    records = _engine_games()
    table = agent_table(records)
    for player in ("solo", "crowd", "other"):
        row = _row(table, player)
        told_points, told, finds, votes, decoys, share, final = [], {}, 0, 0, 0, 0.0, []
        for record in records:
            seats = [s for s, name in enumerate(record.meta["players"]) if name == player]
            share += sum(1 / len(record.winners) for s in seats if s in record.winners)
            final += [record.final_scores[s] for s in seats]
            for rnd in record.rounds:
                target = rnd.display.index(rnd.storyteller_card)
                if rnd.storyteller in seats:
                    told_points.append(rnd.points[rnd.storyteller])
                    told[rnd.outcome] = told.get(rnd.outcome, 0) + 1
                for seat in seats:
                    if seat == rnd.storyteller:
                        continue
                    votes += 1
                    finds += rnd.votes[seat] == target
                    own = {i for i, owner in enumerate(rnd.card_owner) if owner == seat}
                    decoys += sum(v in own for v in rnd.votes if v is not None)
        assert row.seats == len(final)
        assert row.games == len(records)
        assert row.points_per_game == pytest.approx(np.mean(final))
        assert row.win_share == pytest.approx(share / len(records))
        assert row.storyteller_turns == len(told_points)
        assert row.storyteller_points_per_turn == pytest.approx(np.mean(told_points))
        for outcome in ("all_found", "some_found", "none_found"):
            assert row[f"{outcome}_rate"] == pytest.approx(told.get(outcome, 0) / len(told_points))
        assert row.listener_turns == votes
        assert row.listener_accuracy == pytest.approx(finds / votes)
        assert row.decoy_votes_per_turn == pytest.approx(decoys / votes)
    assert (table.win_share * table.games).sum() == pytest.approx(len(records))
    some = table.some_found_rate + table.all_found_rate + table.none_found_rate
    assert np.allclose(some, 1.0)


def test_every_interval_contains_its_estimate():
    table = agent_table(_engine_games(20))
    for name in ("win_share", "points_per_game", "all_found_rate", "some_found_rate",
                 "none_found_rate", "storyteller_points_per_turn", "listener_accuracy",
                 "decoy_votes_per_turn"):
        low, high = table[f"{name}_ci_low"], table[f"{name}_ci_high"]
        assert (low <= table[name] + 1e-12).all() and (table[name] <= high + 1e-12).all(), name
        assert (high > low).all() or name == "all_found_rate", name
    for name in ("all_found_rate", "some_found_rate", "none_found_rate", "listener_accuracy"):
        assert ((table[f"{name}_ci_low"] >= 0) & (table[f"{name}_ci_high"] <= 1)).all()


def test_wilson_interval_known_values():
    low, high = wilson_interval(8, 10)
    assert (low, high) == (pytest.approx(0.4902, abs=1e-4), pytest.approx(0.9433, abs=1e-4))
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    assert 0.0 < wilson_interval(0, 20)[1] < 0.2
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    wide, narrow = wilson_interval(5, 10, 0.99), wilson_interval(5, 10, 0.9)
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


@pytest.mark.parametrize(("df", "expected"), [(1, 12.7062), (2, 4.3027), (3, 3.1824),
                                              (4, 2.7764), (10, 2.2281), (30, 2.0423)])
def test_t_quantile_matches_tables(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, rel=2e-3)
    assert t_quantile(0.025, df) == pytest.approx(-expected, rel=2e-3)


def test_mean_interval_unclustered_is_the_textbook_t_interval():
    values = np.array([1.0, 4.0, 2.0, 8.0, 5.0, 3.0])
    mean, low, high = mean_interval(values)
    half = t_quantile(0.975, 5) * values.std(ddof=1) / math.sqrt(6)
    assert (mean, low, high) == (pytest.approx(3.8333333), pytest.approx(mean - half),
                                 pytest.approx(mean + half))
    assert mean_interval(values, clusters=np.arange(6)) == (mean, low, high)


def test_mean_interval_clusters_widen_correlated_samples():
    rng = np.random.default_rng(0)
    game_effect = np.repeat(rng.normal(0, 3, 20), 5)  # five strongly correlated turns per game
    values = game_effect + rng.normal(0, 0.5, 100)
    _, low, high = mean_interval(values)
    _, c_low, c_high = mean_interval(values, clusters=np.repeat(np.arange(20), 5))
    assert c_high - c_low > 1.5 * (high - low)
    assert math.isnan(mean_interval([1.0, 2.0], clusters=[0, 0])[1])
    assert all(math.isnan(v) for v in mean_interval([]))


def test_summary_stats_is_json_and_right(tiny):
    stats = summary_stats(tiny)
    json.dumps(stats)
    assert stats["games"] == 2 and stats["rounds_mean"] == 2.0
    assert stats["end_reasons"] == {"max_rounds": 2}
    assert stats["faults"] == 0
    assert stats["win_share"] == {"x": 0.75, "y": 0.0, "z": 0.25}


def test_faults_are_counted_per_player():
    from tests.engine.test_game import Cheater

    deck, rules = Deck.numbered(84), get_rules("quest")
    records = [play_game([make_agent("random"), Cheater("vote_own"), make_agent("random")],
                         rules, deck, seed=i, on_illegal="fallback",
                         meta={"game": i, "players": ["a", "cheat", "b"]}) for i in range(3)]
    table = agent_table(records)
    expected = sum(len(rnd.faults) for record in records for rnd in record.rounds)
    assert expected > 0
    assert _row(table, "cheat").faults == expected
    assert _row(table, "a").faults == 0 and _row(table, "b").faults == 0
    assert summary_stats(records)["faults"] == expected


def test_rounds_frame_types_and_card_ids() -> None:
    """Votes are nullable integers, found a nullable boolean, cards named by their ids."""
    from dixit_lab.core.cards import load_deck
    from dixit_lab.core.seeding import game_seed

    deck = load_deck("dreams")
    agents = [make_agent("literal") for _ in range(4)]
    records = [play_game(agents, get_rules("classic", max_rounds=3), deck,
                         game_seed(5, i)) for i in range(2)]
    frame = rounds_frame(records)
    assert str(frame["vote"].dtype) == "Int64" and str(frame["found"].dtype) == "boolean"
    assert frame["faults"].dtype.kind == "i" and "fault" not in frame.columns
    teller = frame[frame.role == "storyteller"]
    assert teller["vote"].isna().all() and teller["found"].isna().all()
    assert teller["voted_card"].isna().all()
    listener = frame[frame.role == "listener"]
    assert listener["vote"].notna().all() and listener["found"].notna().all()
    for _, line in frame.iterrows():
        rnd = records[line.record_index].rounds[line["round"]]
        assert line.storyteller_card == deck.cards[rnd.storyteller_card].id
        if line.role == "listener":
            assert line.voted_card == deck.cards[rnd.display[line.vote]].id
            assert bool(line.found) == (line.voted_card == line.storyteller_card)
