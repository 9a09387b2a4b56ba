"""Per-player sums added batch by batch give the agent table that the samples themselves give
(the intervals computed on the whole arrays, as the table was first defined), in any batching;
the sums survive JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dixit_lab.records.batches import record_batches
from dixit_lab.records.format import player_names
from dixit_lab.stats.game_stats import GameStats, batch_stats
from dixit_lab.stats.intervals import bounded_mean_interval, clustered_rate_interval
from dixit_lab.stats.metrics import AGENT_COLUMNS, agent_table, mean_interval, rounds_frame
from dixit_lab.stats.tables import agent_frame
from tests.records.test_batches import mixed  # noqa: F401 (a fixture)


def _oracle(records: list) -> pd.DataFrame:
    """The agent table from whole arrays: per-seat-game and per-seat-round samples."""
    rounds = rounds_frame(records)
    seat_rows = []
    for index, record in enumerate(records):
        share = 1.0 / len(record.winners) if record.winners else 0.0
        for seat, name in enumerate(player_names(record)):
            won = seat in record.winners
            seat_rows.append({"record_index": index, "player": name,
                              "agent": record.agents[seat],
                              "final_score": record.final_scores[seat],
                              "win_share": share if won else 0.0})
    seats = pd.DataFrame(seat_rows)
    rows = []
    for player in pd.unique(seats["player"]):
        mine = seats[seats["player"] == player]
        turns = rounds[rounds["player"] == player]
        told = turns[turns["role"] == "storyteller"]
        listened = turns[turns["role"] == "listener"]
        row = {"player": player, "agent": " | ".join(dict.fromkeys(mine["agent"])),
               "seats": len(mine), "games": int(mine["record_index"].nunique())}

        def put(name, triple, row=row):
            row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = triple

        per_game = mine.groupby("record_index")["win_share"].sum().to_numpy()
        put("win_share", bounded_mean_interval(np.clip(per_game, 0, 1)))
        row["win_share_per_seat"] = mine["win_share"].sum() / len(mine)
        put("points_per_game", mean_interval(mine["final_score"], mine["record_index"]))
        row["storyteller_turns"] = len(told)
        for outcome in ("all_found", "some_found", "none_found"):
            put(f"{outcome}_rate", clustered_rate_interval(
                (told["outcome"] == outcome).to_numpy(float), told["record_index"]))
        put("storyteller_points_per_turn", mean_interval(told["points"], told["record_index"]))
        row["listener_turns"] = len(listened)
        round_ids = listened["record_index"].to_numpy() * 10_000 + listened["round"].to_numpy()
        put("listener_accuracy", clustered_rate_interval(
            listened["found"].astype(bool).to_numpy(float), round_ids))
        put("decoy_votes_per_turn", mean_interval(listened["decoy_votes"],
                                                  listened["record_index"]))
        row["faults"] = int(turns["faults"].sum())
        row["unperceived_clues"] = int(turns["unperceived"].sum())
        _own_and_chance(records, player, row, put)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(AGENT_COLUMNS))


def _own_and_chance(records: list, player: str, row: dict, put) -> None:
    """The own-decision and chance columns, vote by vote from the records."""
    chance, found, own, round_ids, told_own = [], [], [], [], []
    decisions = failed = 0
    for index, record in enumerate(records):
        for number, rnd in enumerate(record.rounds):
            target = rnd.display.index(rnd.storyteller_card)
            for seat, name in enumerate(player_names(record)):
                if name != player:
                    continue
                actions = {f.action for f in rnd.faults if f.seat == seat}
                if seat == rnd.storyteller:
                    decisions += 1
                    failed += "tell" in actions
                    if "tell" not in actions:
                        told_own.append((rnd.outcome == "some_found", index))
                    continue
                decisions += 2
                failed += len(actions & {"submit", "vote"})
                shown = len(rnd.display) - rnd.card_owner.count(seat)
                chance.append(1 / shown)
                found.append(rnd.votes[seat] == target)
                own.append("vote" not in actions)
                round_ids.append(index * 10_000 + number)
    chance_, found_, own_ = np.array(chance), np.array(found, float), np.array(own, bool)
    row["decisions"] = decisions
    row["own_decision_share"] = 1 - failed / decisions if decisions else np.nan
    mean_chance = chance_.mean() if len(chance_) else np.nan
    row["listener_chance"] = mean_chance
    row["listener_kappa"] = (row["listener_accuracy"] - mean_chance) / (1 - mean_chance)
    put("listener_accuracy_own", clustered_rate_interval(found_[own_],
                                                         np.array(round_ids)[own_]))
    own_chance = chance_[own_].mean() if own_.any() else np.nan
    row["listener_kappa_own"] = (row["listener_accuracy_own"] - own_chance) / (1 - own_chance)
    some = np.array([value for value, _ in told_own], float)
    put("some_found_rate_own", clustered_rate_interval(
        some, np.array([game for _, game in told_own])))


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for column in a.columns:
        if a[column].dtype.kind in "fi":
            assert np.allclose(a[column].to_numpy(float), b[column].to_numpy(float),
                               rtol=1e-9, atol=1e-12, equal_nan=True), column
        else:
            assert a[column].tolist() == b[column].tolist(), column


def test_agent_table_from_sums_is_the_table_from_samples(mixed) -> None:  # noqa: F811
    five = [r for r in mixed if r.n_players == 5]
    _same(agent_table(five), _oracle(five))


def test_sums_add_up_in_any_batching_and_survive_json(mixed) -> None:  # noqa: F811
    whole = GameStats()
    for batch in record_batches(mixed, batch_games=len(mixed)):
        whole.add(batch_stats(batch))
    pieces = GameStats()
    for batch in record_batches(mixed, batch_games=2):
        pieces.add(GameStats.from_json(json.loads(json.dumps(batch_stats(batch).to_json()))))
    _same(agent_frame(whole), agent_frame(pieces))
    assert pieces.games == len(mixed) and pieces.rounds_total == sum(len(r.rounds)
                                                                     for r in mixed)


def _faulty_records() -> list:
    """Six games of five seats, two of them the same player (``off``, an agent that raises
    IndexError now and then), one ``bad`` whose every answer is illegal from game 2 on."""
    from dixit_lab.core.agent import make_agent
    from dixit_lab.core.cards import load_deck
    from dixit_lab.core.rules import get_rules
    from dixit_lab.engine.game import play_game
    from tests.broken_agents import IllegalEveryMove, OffByOne

    records = []
    for game in range(6):
        bad = IllegalEveryMove() if game >= 2 else make_agent("random")
        agents = [make_agent("random"), OffByOne(), bad, OffByOne(), make_agent("random")]
        for agent, spec in zip(agents, ["random", "off", "bad", "off", "random"], strict=True):
            agent.spec = spec
        records.append(play_game(agents, get_rules("classic", max_rounds=5),
                                 load_deck("dreams"), game, on_illegal="fallback",
                                 meta={"game": game, "players": ["r", "off", "bad", "off",
                                                                 "r2"]}))
    return records


def test_each_players_first_fault_is_its_first_in_the_games_in_any_batching() -> None:
    from dixit_lab.text_rule import shown_message

    records = _faulty_records()
    names = records[0].meta["players"]
    expected: dict[str, dict] = {}
    for record in records:  # game by game, round by round: the first fault of each name
        for number, rnd in enumerate(record.rounds):
            for fault in rnd.faults:
                expected.setdefault(names[fault.seat], {
                    "game": record.meta["game"], "round": number, "seat": fault.seat,
                    "action": fault.action, "kind": fault.kind,
                    "message": shown_message(fault.message)})
    assert set(expected) == {"off", "bad"} and expected["bad"]["game"] == 2
    for size in (len(records), 1, 4):
        for order in (1, -1):  # chunks' sums added in any order
            stats = GameStats()
            for batch in list(record_batches(records, batch_games=size))[::order]:
                stats.add(GameStats.from_json(json.loads(json.dumps(
                    batch_stats(batch).to_json()))))
            found = {name: p.first_fault for name, p in stats.players.items()}
            assert found == {"r": None, "r2": None, **expected}
