"""The ``vlm`` and ``llm`` agents against the local stub server: every fault class, retries
with the error fed back, what the model is shown, and a clear error for a deck without
images."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.game import play_game
from dixit_lab.vlm.images import image_ref
from dixit_lab.vlm.store import current_store, exchange_session
from dixit_lab.vlm.stub import WORDS, StubServer

pytest.importorskip("httpx")
RULES = get_rules("classic", max_rounds=2)


@pytest.fixture(scope="module")
def stub():
    with StubServer(slow_seconds=0.5) as server:
        yield server


@pytest.fixture
def store(tmp_path):
    with exchange_session(tmp_path / "exchanges", "auto"):
        yield current_store()


def spec(stub, model, agent="vlm", **options):
    settings = {"model": model, "base_url": stub.base_url, "timeout": 0.25, "backoff": 0.01,
                "retries": 1, "http_retries": 1, **options}
    return f"{agent}(" + ", ".join(f"{k}={v}" for k, v in settings.items()) + ")"


def decisions(store):
    """The stored exchanges of decisions (the checks of the server left out)."""
    entries = [json.loads(line) for path in store.folder.glob("*.jsonl")
               for line in path.read_text(encoding="utf-8").splitlines()]
    return [entry for entry in entries if "probe" not in entry]


def play(agent_spec, seed=1, n=3):
    agents = [make_agent(agent_spec)] + [make_agent("random") for _ in range(n - 1)]
    return play_game(agents, RULES, load_deck("dreams"), seed, on_illegal="fallback"), agents[0]


def seat0_faults(record):
    return Counter(f.kind for rnd in record.rounds for f in rnd.faults if f.seat == 0)


@pytest.mark.parametrize(("model", "kind"), [
    ("garbage", "unparsable"), ("illegal", "illegal"), ("refuse", "refused"),
    ("filter", "refused"), ("error500", "backend"), ("slow", "timeout"),
])
def test_every_failed_decision_is_a_fault_of_its_class(stub, store, model, kind):
    record, agent = play(spec(stub, model, http_retries=0 if model == "slow" else 1))
    decisions = sum(1 if rnd.storyteller == 0 else 2 for rnd in record.rounds)  # tell; or
    # submit and vote
    assert seat0_faults(record) == {kind: decisions}
    messages = [f.message for rnd in record.rounds for f in rnd.faults if f.seat == 0]
    assert all(f"with {model})" in message for message in messages)
    rows = agent.drain_usage()
    assert len(rows) == decisions and {row["fault"] for row in rows} == {kind}
    # a reply that came back is retried with the error fed back; a backend error is not
    expected = 1 if kind in ("backend", "timeout") else 2
    assert {row["exchanges"] for row in rows} == {expected}


def test_good_prose_and_rate_limited_servers_play_without_faults(stub, store):
    for model in ("good", "prose", "flaky"):
        record, _ = play(spec(stub, model))
        assert not seat0_faults(record), model
        told = [rnd.clue for rnd in record.rounds if rnd.storyteller == 0]
        assert told and all(clue in WORDS for clue in told)  # free text from the model


def test_the_error_is_fed_back_before_asking_again(stub, store):
    play(spec(stub, "garbage"))
    entries = decisions(store)
    retries = [e for e in entries if len(e["request"]["messages"]) == 4]
    assert retries
    for entry in retries:
        _, _, reply, again = entry["request"]["messages"]
        assert reply["role"] == "assistant" and reply["content"].startswith("Hmm")
        assert "could not be used" in again["content"] and "no JSON object" in again["content"]


def test_the_model_sees_its_own_view_only(stub, store):
    deck = load_deck("dreams")
    record, _ = play(spec(stub, "good", image_size=64, temperature=0.0, price_in=0.5))
    entries = decisions(store)
    tells = [e["request"] for e in entries
             if e["request"]["response_format"]["json_schema"]["name"] == "dixit_tell"]
    hands = [rnd.storyteller_hand for rnd in record.rounds if rnd.storyteller == 0]
    assert len(tells) == len(hands) == 1
    user = tells[0]["messages"][1]["content"]
    shown = [part["image_url"]["url"] for part in user if part["type"] == "image_url"]
    assert shown == [image_ref(deck[card], 64) for card in hands[0]]
    assert tells[0]["temperature"] == 0.0 and isinstance(tells[0]["seed"], int)
    assert "3 players" in tells[0]["messages"][0]["content"]


def test_the_same_seed_gives_the_same_game_from_recorded_replies(stub, store):
    first, _ = play(spec(stub, "mixed"), seed=5)
    calls = stub.requests
    again, _ = play(spec(stub, "mixed"), seed=5)
    assert again == first and stub.requests == calls  # every reply came from the store


def test_the_agents_pass_the_conformance_check(stub, store):
    from dixit_lab.testing import check_agent

    check_agent(spec(stub, "good", agent="vlm", image_size=32), players=(3, 5), max_rounds=4)
    check_agent(spec(stub, "good", agent="llm", temperature=None, max_tokens=None),
                players=(4,), max_rounds=4)
    sent = [entry["request"] for entry in decisions(store)]
    llm = [request for request in sent if isinstance(request["messages"][1]["content"], str)]
    assert llm and all("temperature" not in r and "max_tokens" not in r for r in llm)


def test_llm_reads_captions_as_text(stub, store):
    record, _ = play(spec(stub, "good", agent="llm", caption="alt_caption"))
    assert not seat0_faults(record)
    entries = decisions(store)
    content = entries[0]["request"]["messages"][1]["content"]
    assert isinstance(content, str) and "Card 1: " in content
    assert load_deck("dreams")[0].alt_caption  # the deck has them


def test_a_deck_without_images_is_named(stub, store):
    agent = make_agent(spec(stub, "good"))
    with pytest.raises(Exception, match="has none"):
        play_game([agent, make_agent("random"), make_agent("random")], RULES,
                  load_deck("numbered-84"), 0, on_illegal="raise")


@pytest.mark.parametrize(("options", "message"), [
    ({"max_tokens": 0}, "max_tokens"), ({"retries": -1}, "retries"),
    ({"image_size": 4}, "image_size"), ({"response_format": "xml"}, "response_format"),
    ({"vote_prompt": "'{nope}'"}, "unknown field"),
])
def test_bad_parameters_are_named(stub, options, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec(stub, "good", **options))


def test_embedding_listeners_hear_a_model_clue(stub, store):
    pytest.importorskip("sentence_transformers", reason="the sentence encoder is not installed")
    import warnings

    agents = [make_agent(spec(stub, "good")), make_agent("literal"), make_agent("literal")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "cannot perceive clue" warning
        record = play_game(agents, get_rules("classic", max_rounds=1), load_deck("dreams"), 2)
    clue = record.rounds[0].clue
    assert clue in WORDS and clue not in agents[1].space.clues  # free text, outside the bank
    row = agents[1].clue_row(clue)
    assert max(row) > min(row)  # embedded on the fly, not "every card equal"


def test_the_body_sent_holds_the_images_the_key_names(stub):
    import base64

    from dixit_lab.vlm.images import data_url

    agent = make_agent(spec(stub, "good", image_size=48, image_detail="low"))
    deck = load_deck("dreams")
    parts = agent.card_parts([deck[3], deck[5]])
    request = {"model": "good", "messages": [{"role": "user", "content": [
        {"type": "text", "text": 'clue "sha256:not-a-ref@48"'}, *parts]}]}
    body = json.loads(agent.wire(request))
    urls = [p["image_url"]["url"] for p in body["messages"][0]["content"]
            if p["type"] == "image_url"]
    assert urls == [data_url(deck[3], 48), data_url(deck[5], 48)]
    assert base64.b64decode(urls[0].split(",", 1)[1])[:2] == b"\xff\xd8"  # a JPEG
    assert body["messages"][0]["content"][0]["text"] == 'clue "sha256:not-a-ref@48"'
    kept = [p for p in request["messages"][0]["content"] if p["type"] == "image_url"]
    assert all(p["image_url"]["url"].startswith("sha256:") for p in kept)  # keyed form kept
    assert all(p["image_url"]["detail"] == "low" for p in kept)
