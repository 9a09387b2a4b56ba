"""The play server's JSON API: every phase, illegal moves, tokens, secure defaults, and the
games landing in the results folder so that ``replay`` reproduces them."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")

from fastapi.testclient import TestClient

from dixit_lab.embeddings.encoder import sentence_encoder_problem
from dixit_lab.records.format import read_jsonl
from dixit_lab.run.experiment import ConfigError, parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import run_experiment
from dixit_lab.web.decisions import DECISIONS_FILE
from dixit_lab.web.moves import CLUE_LIMIT
from dixit_lab.web.play_app import play_app
from dixit_lab.web.results import PlayFolder
from dixit_lab.web.server import BODY_LIMIT
from tests.web_support import config_data, legal_move, play_seat, start_table

# a person's free-text clues reach the listeners through the sentence encoder (torch): the
# web extra installs it; fastapi alone (the dev extra has httpx) does not
pytestmark = pytest.mark.skipif(
    sentence_encoder_problem() is not None,
    reason=f"people's clues need the sentence encoder: {(sentence_encoder_problem() or ('',))[0]}"
           " (pip install -e '.[web]')")


def client_for(table):
    return TestClient(play_app(table, ["testserver"]))


def wait_for_phase(client, token, phase):
    view = client.get(f"/api/play/{token}").json()
    while view["phase"] != phase:
        assert view["phase"] == "wait", f"expected {phase}, got {view['phase']}"
        view = client.get(f"/api/play/{token}", params={"after": view["version"]}).json()
    return view


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One whole game: the person against literal, softmax and random, through the API."""
    folder = tmp_path_factory.mktemp("played")
    table, thread = start_table(folder, config_data())
    views = play_seat(client_for(table), table.humans[0].token)
    thread.join(timeout=60)
    return folder, views, table


def test_a_whole_game_goes_through_every_phase(played):
    _, views, _ = played
    phases = {view["phase"] for view in views}
    assert phases == {"tell", "submit", "vote", "wait", "over"}
    tell = next(view for view in views if view["phase"] == "tell")
    assert len(tell["hand"]) == 6 and tell["storyteller"] == tell["seat"]
    assert all(card["image"] == f"/cards/{card['card']}" for card in tell["hand"])
    vote = next(view for view in views if view["phase"] == "vote")
    assert len(vote["display"]) == 4 and len(vote["own_positions"]) == 1
    assert vote["clue"] and len(vote["hand"]) == 5
    over = views[-1]
    assert len(over["history"]) == 4 and over["finished"][0]["final_scores"] == over["scores"]
    assert any(view["waiting_for"] for view in views), "the agents' thinking is never shown"


def test_the_game_lands_in_the_results_folder(played):
    folder, views, _ = played
    for name in ("config.yaml", "games.jsonl", DECISIONS_FILE, "agents.csv", "report.md",
                 "summary.json"):
        assert (folder / name).is_file(), name
    assert list((folder / "rounds.parquet").glob("part-*.parquet"))
    (record,) = read_jsonl(folder)
    assert record.agents[0] == "human" and record.meta["players"][0] == "you"
    assert list(record.final_scores) == views[-1]["scores"]
    assert not any(round_.faults for round_ in record.rounds)
    decisions = [json.loads(line) for line in
                 (folder / DECISIONS_FILE).read_text(encoding="utf-8").splitlines()]
    assert [d["action"] for d in decisions].count("tell") == 1
    assert len(decisions) == 1 + 2 * 3  # one tell, then a submit and a vote in 3 rounds


def test_replay_reproduces_the_human_game_and_notices_a_changed_decision(played, tmp_path):
    folder, _, _ = played
    compared, difference = replay_folder(folder, executor="local", show_progress=False)
    assert (compared, difference) == (1, None)
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in folder.iterdir():
        if path.is_file():
            (copy / path.name).write_bytes(path.read_bytes())
    lines = (copy / DECISIONS_FILE).read_text(encoding="utf-8").splitlines()
    vote = next(i for i, line in enumerate(lines) if '"action":"vote"' in line)
    entry = json.loads(lines[vote])
    entry["answer"] = 99  # an illegal vote: the replay falls back and differs
    lines[vote] = json.dumps(entry)
    (copy / DECISIONS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, difference = replay_folder(copy, executor="local", show_progress=False)
    assert difference is not None and difference.game == 0


def test_illegal_moves_get_4xx_naming_the_rule(tmp_path):
    data = config_data([{"name": "you", "agent": "human"}, {"name": "literal", "agent": "literal"},
                        {"name": "random", "agent": "random"}], max_rounds=2)
    table, thread = start_table(tmp_path, data)
    client = client_for(table)
    token = table.humans[0].token
    url = f"/api/play/{token}"
    try:
        view = wait_for_phase(client, token, "tell")
        hand = [card["card"] for card in view["hand"]]
        outside = next(card for card in range(84) if card not in hand)
        cases = [
            ({"tell": {"card": outside, "clue": "x"}}, 422, "own-hand"),
            ({"tell": {"card": hand[0], "clue": "   "}}, 422, "clue-empty"),
            ({"tell": {"card": hand[0], "clue": "a" * (CLUE_LIMIT + 1)}}, 422, "clue-length"),
            ({"tell": {"card": hand[0], "clue": "two\nlines"}}, 422, "clue-characters"),
            ({"tell": {"card": True, "clue": "x"}}, 400, "malformed"),
            ({"vote": 0}, 409, "turn"),
            ({"tell": {"card": hand[0]}}, 400, "malformed"),
            ({"shout": 1}, 400, "malformed"),
        ]
        for body, status, rule in cases:
            response = client.post(url, json=body)
            assert (response.status_code, response.json()["rule"]) == (status, rule), body
        assert client.post(url, content=b"{not json").status_code == 400
        assert client.post(url, content=b"[" + b"1," * BODY_LIMIT + b"1]").status_code == 413
        chunks = (b"1" * 1000 for _ in range(5))  # no Content-Length: counted as it comes
        response = client.post(url, content=chunks)
        assert (response.status_code, response.json()["rule"]) == (413, "body-size")
        view = client.post(url, json=legal_move(view)).json()
        assert client.post(url, json=legal_move({**view, "phase": "tell"})).json()["rule"] \
            == "turn"

        view = wait_for_phase(client, token, "submit")
        assert view["n_cards"] == 2  # three players: two cards each
        hand = [card["card"] for card in view["hand"]]
        for body, rule in (({"submit": hand[:1]}, "card-count"),
                           ({"submit": [hand[0], hand[0]]}, "distinct-cards"),
                           ({"submit": [hand[0], outside]}, "own-hand")):
            response = client.post(url, json=body)
            assert (response.status_code, response.json()["rule"]) == (422, rule), body
        client.post(url, json={"submit": hand[:2]})

        view = wait_for_phase(client, token, "vote")
        own = view["own_positions"]
        assert len(own) == 2 and len(view["display"]) == 5
        assert view["barred_votes"] == own  # the page is told what it may not vote for
        assert client.post(url, json={"vote": own[0]}).json()["rule"] == "own-card"
        assert client.post(url, json={"vote": 5}).json()["rule"] == "position"
        assert client.post(url, json={"vote": "1"}).status_code == 400
        assert client.post(url, json=legal_move(view)).status_code == 200
    finally:
        table.stop()
        thread.join(timeout=30)


def test_a_person_may_vote_for_their_own_card_where_the_rules_allow_it(tmp_path):
    """Under own_card_votes the page is told so (own_card_votes in the state) and the move is
    taken, recorded as a vote on the person's card; the rule books' page refuses it."""
    data = config_data([{"name": "ann", "agent": "human"},
                        {"name": "literal", "agent": "literal"},
                        {"name": "random", "agent": "random"},
                        {"name": "dice", "agent": "random"}], max_rounds=2)
    data["rules"]["options"]["own_card_votes"] = True
    table, thread = start_table(tmp_path, data)
    client = client_for(table)
    token = table.humans[0].token
    url = f"/api/play/{token}"
    try:
        view = wait_for_phase(client, token, "tell")
        assert view["own_card_votes"] is True
        client.post(url, json=legal_move(view))
        view = wait_for_phase(client, token, "submit")
        client.post(url, json=legal_move(view))
        view = wait_for_phase(client, token, "vote")
        own = view["own_positions"][0]
        view = client.post(url, json={"vote": own}).json()
        while view["phase"] != "over":
            view = client.get(url, params={"after": view["version"]}).json()
        assert view["history"][-1]["votes"][0] == own
    finally:
        table.stop()
        thread.join(timeout=30)


def test_a_token_sees_only_its_own_seat(tmp_path):
    data = config_data([{"name": "ann", "agent": "human"}, {"name": "bob", "agent": "human"},
                        {"name": "literal", "agent": "literal"},
                        {"name": "random", "agent": "random"}], max_rounds=2)
    table, thread = start_table(tmp_path, data)
    client = client_for(table)
    ann, bob = (human.token for human in table.humans)
    try:
        missing = client.get("/api/play/not-a-token")
        assert missing.status_code == 404 and missing.json()["rule"] == "not-found"
        assert client.post("/api/play/not-a-token", json={"vote": 0}).status_code == 404
        assert client.get("/play/not-a-token").status_code == 404
        assert client.get(f"/play/{ann}").status_code == 200
        # ann tells; bob waits and then submits
        view = wait_for_phase(client, ann, "tell")
        assert client.post(f"/api/play/{bob}", json=legal_move(view)).json()["rule"] == "turn"
        client.post(f"/api/play/{ann}", json=legal_move(view))
        bob_view = wait_for_phase(client, bob, "submit")
        ann_view = client.get(f"/api/play/{ann}").json()
        bob_hand = {card["card"] for card in bob_view["hand"]}
        ann_cards = {card["card"] for card in ann_view["hand"] + ann_view["played"]}
        assert not bob_hand & ann_cards
        text = json.dumps(ann_view)
        assert not any(f'"/cards/{card}"' in text for card in bob_hand)
        assert bob_view["clue"] == ann_view["clue"]
        assert ann_view["display"] == [] and ann_view["history"] == []
        client.post(f"/api/play/{bob}", json=legal_move(bob_view))
        bob_vote = wait_for_phase(client, bob, "vote")
        ann_view = client.get(f"/api/play/{ann}").json()
        # the storyteller sees the display laid out, and which card is hers, no owner
        assert ann_view["phase"] == "wait" and ann_view["display"] == bob_vote["display"]
        told = ann_view["played"][0]["card"]
        assert [card["card"] for card in ann_view["display"]].index(told) \
            == ann_view["own_positions"][0]
        assert ann_view["history"] == [] and ann_view["last_round"] is None
        assert len(bob_vote["own_positions"]) == 1
    finally:
        table.stop()
        thread.join(timeout=30)


def test_secure_defaults(played):
    _, _, table = played
    client = client_for(table)
    page = client.get(f"/play/{table.humans[0].token}")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-content-type-options"] == "nosniff"
    refused = client.get("/api/play/x", headers={"host": "evil.example"})
    assert refused.status_code == 400 and refused.json()["rule"] == "host"
    assert refused.headers["x-frame-options"] == "DENY"  # errors carry the headers too
    for url in ("/static/..%2Fplay_app.py", "/static/secret.txt", "/cards/-1", "/cards/84",
                "/cards/..%2F..%2Fcards.csv"):
        assert client.get(url).status_code in (400, 404), url
    image = client.get("/cards/0")
    assert image.status_code == 200 and image.headers["content-type"] == "image/webp"
    assert client.get("/static/play.js").headers["content-type"].startswith("text/javascript")


def test_run_refuses_a_config_with_a_person(tmp_path):
    config = parse_config(config_data(), "test config")
    with pytest.raises(ConfigError, match="dixit-lab play"):
        run_experiment(config, tmp_path, show_progress=False)


def test_a_stopped_run_keeps_its_finished_games(tmp_path):
    data = config_data(games=2, max_rounds=1)
    table, thread = start_table(tmp_path, data)
    client = client_for(table)
    token = table.humans[0].token
    view = client.get(f"/api/play/{token}").json()
    while not view["finished"]:
        move = view["phase"] != "wait"
        view = (client.post(f"/api/play/{token}", json=legal_move(view)) if move else
                client.get(f"/api/play/{token}", params={"after": view["version"]})).json()
    table.stop()
    thread.join(timeout=30)
    config = parse_config(data, "test config")
    again = PlayFolder(config, tmp_path)
    assert [spec.index for spec in again.missing()] == [1]
    assert set(again.decisions) == {0}


def test_an_isolated_agent_sits_at_a_people_table_and_the_game_replays(tmp_path):
    data = config_data([{"name": "you", "agent": "human"},
                        {"name": "boxed", "agent": "random", "isolation": "process",
                         "decision_timeout": 30},
                        {"name": "random", "agent": "random"}], max_rounds=2)
    table, thread = start_table(tmp_path, data)
    play_seat(client_for(table), table.humans[0].token)
    thread.join(timeout=60)
    (record,) = read_jsonl(tmp_path)
    assert not any(round_.faults for round_ in record.rounds)
    assert replay_folder(tmp_path, executor="local", show_progress=False) == (1, None)
