"""Model games in a tournament: played concurrently with the records of a sequential run,
recorded in the results folder, replayed offline with the server stopped, resumed from what
was recorded, and stopped with one clear error when the endpoint cannot serve."""

from __future__ import annotations

import json
import shutil
import socket

import pandas as pd
import pytest

from dixit_lab.cli.main import main
from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.seeding import deal_seed
from dixit_lab.engine.game import play_game
from dixit_lab.run.deal_secret import folder_secret
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import game_specs, run_experiment
from dixit_lab.run.tournament import GameFailed
from dixit_lab.vlm.store import exchange_session
from dixit_lab.vlm.stub import StubServer
from tests.games_files import games_path, games_text

pytest.importorskip("httpx")


def config(base_url, model="mixed", games=4, deck="dreams", **extra):
    return parse_config(config_data(base_url, model, games, deck, **extra))


def config_data(base_url, model="mixed", games=4, deck="dreams", **extra):
    options = f"base_url={base_url}, timeout=0.3, backoff=0.01, http_retries=1, retries=1"
    return {
        "name": "vlm-test", "seed": 11, "deck": deck, "games": games,
        "rules": {"preset": "classic", "options": {"max_rounds": 3}},
        "players": [{"name": "seer", "agent": f"vlm(model={model}, {options}, price_in=2.0)"},
                    {"name": "reader", "agent": f"llm(model={model}, {options})"},
                    {"name": "dice", "agent": "random"}],
        "executor": {"kind": "local"}, **extra}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A tournament against a misbehaving server, which is stopped once it is recorded."""
    folder = tmp_path_factory.mktemp("vlm") / "run"
    with StubServer(slow_seconds=0.6) as server:
        experiment = config(server.base_url)
        run_experiment(experiment, folder, show_progress=False)
        calls = server.requests
    return folder, experiment, calls


def test_concurrent_games_have_the_records_of_sequential_play(recorded):
    folder, experiment, _ = recorded
    lines = games_text(folder).splitlines()
    deck = load_deck("dreams")
    seats = experiment.seats()
    secret = folder_secret(folder)  # model seats are untrusted: the deals mix the run's secret
    assert secret is not None
    for spec, line in zip(game_specs(experiment), lines, strict=True):
        # play_game, one game at a time, each decision in turn: the recorded replies
        agents = [make_agent(seats[s][1]) for s in spec.seats]
        meta = {"game": spec.index, "deal": spec.deal,
                "players": [seats[s][0] for s in spec.seats]}
        with exchange_session(folder / "exchanges", "replay"):
            record = play_game(agents, experiment.rule_set(), deck,
                               deal_seed(experiment.seed, spec.deal, secret),
                               on_illegal="fallback",
                               meta=meta)
        assert record.to_json() == line


def test_the_folder_replays_identically_offline(recorded, capsys):
    folder, _, _ = recorded
    assert replay_folder(folder, executor="local", show_progress=False) == (4, None)
    assert main(["replay", str(folder), "--executor", "local", "--quiet"]) == 0
    assert "identical: 4 games" in capsys.readouterr().out


def test_every_fault_is_classified_and_usage_reaches_agents_csv(recorded):
    folder, _, calls = recorded
    assert '"kind":' in games_text(folder)
    agents = pd.read_csv(folder / "agents.csv").set_index("player")
    kinds = [c for c in agents.columns if c.startswith("faults_")]
    assert (agents[kinds].sum(axis=1) == agents["faults"]).all()  # every fault has a class
    assert agents.loc["seer", "faults"] + agents.loc["reader", "faults"] > 0
    assert agents.loc["dice", "faults"] == 0
    for player in ("seer", "reader"):
        row = agents.loc[player]
        assert row["model_decisions"] > 0 and row["model_exchanges"] >= row["model_decisions"]
        assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
        assert row["latency_s_per_decision"] > 0
    assert agents.loc["seer", "cost_usd"] == pytest.approx(
        agents.loc["seer", "prompt_tokens"] * 2.0 / 1e6)
    assert pd.isna(agents.loc["reader", "cost_usd"])  # no price given
    lines = [json.loads(line) for path in (folder / "exchanges").glob("*.jsonl")
             for line in path.read_text().splitlines()]
    stored = sum(1 for line in lines if "probe" not in line)  # the server's checks apart
    assert agents.loc[["seer", "reader"], "model_exchanges"].sum() == stored <= calls


def test_a_resumed_run_reuses_recorded_replies(recorded, tmp_path):
    folder, experiment, _ = recorded
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    games_path(copy).unlink()  # the games are lost, the exchanges are not
    run_experiment(experiment, copy, show_progress=False, exchanges="replay")
    assert games_text(copy) == games_text(folder)


def test_a_replay_without_the_exchanges_says_what_is_missing(recorded, tmp_path):
    folder, _, _ = recorded
    copy = tmp_path / "bare"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "exchanges")
    with pytest.raises(GameFailed, match="was not recorded"):
        replay_folder(copy, executor="local", show_progress=False)


def test_an_unreachable_endpoint_or_a_deck_without_images_stops_the_run(tmp_path, capsys):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    with pytest.raises(GameFailed, match="cannot connect"):
        run_experiment(config(dead, games=1), tmp_path / "dead", show_progress=False)
    with StubServer() as server, pytest.raises(GameFailed, match="has none"):
        run_experiment(config(server.base_url, model="good", games=1, deck="numbered-84"),
                       tmp_path / "numbered", show_progress=False)


def test_requests_are_concurrent_up_to_the_bound():
    from dixit_lab.run.tournament import TableSetup, schedule_games
    from dixit_lab.vlm.driver import play_remote_chunk

    with StubServer(latency=0.05) as server:
        spec = f"llm(model=good, base_url={server.base_url}, concurrency=3)"
        setup = TableSetup(seed=1, rules=experiment_rules(), deck="dreams",
                           names=("a", "b", "c", "d"), specs=(spec,) * 4,
                           on_illegal="fallback")
        with exchange_session(None, "record"):
            lines = play_remote_chunk(setup, schedule_games("rotation", 4, 4, 4, 1))
        assert [index for index, _ in lines] == [0, 1, 2, 3]
        assert server.max_in_flight == 3  # used, and never exceeded


def experiment_rules():
    from dixit_lab.core.rules import get_rules

    return get_rules("classic", max_rounds=2)


def test_the_cli_switches_choose_the_mode(tmp_path, monkeypatch):
    import yaml

    config = tmp_path / "vlm.yaml"
    data = config_data("$DIXIT_TEST_VLM_URL", games=2)  # the server may move: same specs
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    folder = tmp_path / "run"
    run = ["run", str(config), "--out", str(folder), "--quiet"]
    with StubServer(slow_seconds=0.6) as server:
        monkeypatch.setenv("DIXIT_TEST_VLM_URL", server.base_url)
        assert main(run) == 0
    recorded = games_text(folder)
    games_path(folder).unlink()
    monkeypatch.delenv("DIXIT_TEST_VLM_URL")  # no server, no address: replies from the store
    assert main([*run, "--replay-only"]) == 0
    assert games_text(folder) == recorded
    games_path(folder).unlink()
    with StubServer(slow_seconds=0.6) as server:  # elsewhere now; everything asked again
        monkeypatch.setenv("DIXIT_TEST_VLM_URL", server.base_url)
        assert main([*run, "--record-only"]) == 0
        assert server.requests > 0
    assert games_text(folder) == recorded  # the stub is deterministic


def test_an_isolated_player_sits_at_a_model_table(tmp_path):
    with StubServer() as server:
        data = config_data(server.base_url, model="good", games=2)
        data["deal_secret"] = "d1ce" * 8  # both runs have model seats: one secret for both
        data["players"][2] = {"name": "dice", "agent": "random", "isolation": "process",
                              "decision_timeout": 10}
        run_experiment(parse_config(data), tmp_path / "iso", show_progress=False,
                       write_outputs=False)
        isolated = games_text(tmp_path / "iso")
        data["players"][2] = {"name": "dice", "agent": "random"}
        run_experiment(parse_config(data), tmp_path / "plain", show_progress=False,
                       write_outputs=False)
    assert isolated == games_text(tmp_path / "plain")


def test_the_dixitworld_arena_config_plays_against_the_stub_and_replays_offline(tmp_path):
    """experiments/dixitworld_arena.yaml as shipped, its models replaced by the stub: 4 games
    of 12 rounds from 4-card hands kept all game, the prompts saying DixitWorld's scoring, and
    game 2 is DixitWorld's second phase (the same deal, the hands reversed), in which P1
    (qwen_1, model A) tells first, holding P3's hand, as in every game."""
    from pathlib import Path

    import yaml

    from dixit_lab.records.format import GameRecord

    path = Path(__file__).resolve().parents[2] / "experiments" / "dixitworld_arena.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    folder = tmp_path / "arena"
    with StubServer() as server:
        for player in data["players"]:
            player["params"].update(model="good", base_url=server.base_url, timeout=10)
        run_experiment(parse_config(data, str(path)), folder, show_progress=False,
                       write_outputs=False)
    records = [GameRecord.from_json(line) for line in games_text(folder).splitlines()]
    qwen, gemma = ["qwen_1", "qwen_2"], ["gemma_1", "gemma_2"]
    assert [record.meta["players"] for record in records] == [
        [*qwen, *gemma], ["qwen_2", *gemma, "qwen_1"], [*gemma, *qwen], ["gemma_2", *qwen,
                                                                          "gemma_1"]]
    for record in records:
        assert record.rules == "dixitworld" and record.rule_options["fixed_hands"] is True
        assert len(record.rounds) == 12 and record.end_reason == "max_rounds"
        assert not [fault for rnd in record.rounds for fault in rnd.faults]
        hands = {rnd.storyteller: rnd.storyteller_hand for rnd in record.rounds}
        assert all(len(hand) == 4 for hand in hands.values())
        assert all(rnd.storyteller_hand == hands[rnd.storyteller] for rnd in record.rounds)
    first = {rnd.storyteller: rnd.storyteller_hand for rnd in records[0].rounds}
    reversed_ = {rnd.storyteller: rnd.storyteller_hand for rnd in records[2].rounds}
    assert first == reversed_  # the seats' hands are dealt alike; the players moved by two
    for record in records:  # DixitWorld's storyteller_index: P1, P2, P3, P4 in turn
        assert record.rule_options["first_storyteller"] == "first_player"
        assert [record.meta["players"][rnd.storyteller] for rnd in record.rounds] == [
            *qwen, *gemma] * 3
    dealt = {records[0].meta["players"][seat]: hand for seat, hand in first.items()}
    assert records[2].rounds[0].storyteller_hand == dealt["gemma_1"]  # P1 holds P3's hand
    entries = [json.loads(line) for segment in (folder / "exchanges").glob("*.jsonl")
               for line in segment.read_text(encoding="utf-8").splitlines()]
    systems = {entry["request"]["messages"][0]["content"] for entry in entries
               if "probe" not in entry}
    assert systems and all("2 (3 each instead when all of them find it)" in text
                           and "at most 1 such point per round" in text
                           and "The game lasts 12 rounds." in text for text in systems)
    assert replay_folder(folder, executor="local", show_progress=False) == (4, None)


def test_the_dixitworld_arena_as_run_config_plays_as_dixitworlds_code_runs(tmp_path):
    """experiments/dixitworld_arena_as_run.yaml against the stub: every game a fresh deal (a
    DixitWorld phase 2 is dealt again), P1 (qwen_1) telling first in every game, no bonus, and
    a model that votes for its own card (it is not told which is its own) has that vote taken
    as a miss, not a fault."""
    import json
    from pathlib import Path

    import yaml

    from dixit_lab.records.format import GameRecord

    path = Path(__file__).resolve().parents[2] / "experiments" / "dixitworld_arena_as_run.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["games"] = 8
    folder = tmp_path / "arena"
    with StubServer() as server:
        for player in data["players"]:
            player["params"] = {**player["params"], "model": "good",
                                "base_url": server.base_url, "timeout": 10}
        run_experiment(parse_config(data, str(path)), folder, show_progress=False,
                       write_outputs=False)
    records = [GameRecord.from_json(line) for line in games_text(folder).splitlines()]
    hands = [frozenset(rnd.storyteller_hand for rnd in record.rounds) for record in records]
    assert len(set(hands)) == len(records)  # a fresh deal every game
    own_votes = 0
    for record in records:
        assert record.rules == "dixitworld_as_run" and len(record.rounds) == 12
        assert [record.meta["players"][rnd.storyteller] for rnd in record.rounds] == [
            "qwen_1", "qwen_2", "gemma_1", "gemma_2"] * 3  # as DixitWorld's, whatever the seat
        assert record.rule_options["own_card_votes"] is True
        assert record.rule_options["vote_bonus_points"] == 0
        for rnd in record.rounds:
            assert not rnd.faults
            own_votes += sum(1 for seat, vote in enumerate(rnd.votes)
                             if vote is not None and rnd.card_owner[vote] == seat)
            teller = rnd.card_owner.index(rnd.storyteller)
            finders = sum(vote == teller for vote in rnd.votes if vote is not None)
            listener = {0: 2, 3: 3}.get(finders)  # none found: 2 each; all found: 3 each
            expected = [listener if listener is not None else 3 * (vote == teller)
                        for vote in rnd.votes]
            expected[rnd.storyteller] = 3 if listener is None else 0
            assert list(rnd.points) == expected  # DixitWorld's scoring, no bonus
    assert own_votes > 0
    entries = [json.loads(line) for segment in (folder / "exchanges").glob("*.jsonl")
               for line in segment.read_text(encoding="utf-8").splitlines()]
    requests = [entry["request"]["messages"] for entry in entries
                if "probe" not in entry]  # the checks of the server left out
    systems = {messages[0]["content"] for messages in requests}
    votes = [messages[1]["content"][0]["text"] for messages in requests
             if "Vote for the card" in messages[1]["content"][0]["text"]]
    assert votes and not [text for text in votes if "yours" in text or "your own" in text]
    assert all("nobody may vote" not in text and "for each vote" not in text
               and "may also vote for their own card" in text for text in systems)
    assert replay_folder(folder, executor="local", show_progress=False) == (8, None)
