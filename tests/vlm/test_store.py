"""The exchange store: content-addressed, appended by each process, modes, torn lines."""

from __future__ import annotations

import os

import pytest

from dixit_lab.vlm.store import (
    ExchangeStore,
    current_store,
    exchange_key,
    exchange_session,
    run_budget,
)


def test_the_key_is_canonical_and_content_addressed():
    a = {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.5}
    b = {"temperature": 0.5, "messages": [{"content": "x", "role": "user"}], "model": "m"}
    assert exchange_key(a) == exchange_key(b)
    assert exchange_key(a) != exchange_key({**a, "temperature": 0.6})


def test_outcomes_survive_a_new_process_and_a_torn_line(tmp_path):
    store = ExchangeStore(tmp_path / "ex")
    store.put("k1", {"model": "m"}, {"message": {"content": "1"}})
    store.put("k2", {"model": "m"}, {"error": {"kind": "backend", "message": "500"}})
    segments = list((tmp_path / "ex").glob("*.jsonl"))
    assert len(segments) == 1
    with segments[0].open("a", encoding="utf-8") as handle:
        handle.write('{"key": "k3", "outc')  # a process killed mid-line
    again = ExchangeStore(tmp_path / "ex")
    assert len(again) == 2
    assert again.get("k1") == {"message": {"content": "1"}}
    assert again.get("k2")["error"]["kind"] == "backend"


def test_record_mode_never_reuses_and_a_later_segment_wins(tmp_path):
    ExchangeStore(tmp_path).put("k", {}, {"message": {"content": "old"}})
    recorder = ExchangeStore(tmp_path, "record")
    assert recorder.get("k") is None
    recorder.put("k", {}, {"message": {"content": "new"}})
    assert ExchangeStore(tmp_path).get("k") == {"message": {"content": "new"}}


def test_sessions_set_and_restore_the_store_and_touch_no_environment(tmp_path):
    environment = dict(os.environ)
    with exchange_session(tmp_path, "replay", {"max_tokens_total": 10}):
        store = current_store()
        assert store.folder == tmp_path and store.mode == "replay"
        assert current_store() is store
        assert run_budget() == {"max_tokens_total": 10}
        assert dict(os.environ) == environment  # no variable carries the store
        with exchange_session(None):  # nested: the folder and the mode are kept
            assert current_store() is store and run_budget() is None
        assert run_budget() == {"max_tokens_total": 10}
    assert current_store().folder is None and current_store().mode == "auto"
    assert run_budget() is None
    with pytest.raises(ValueError, match="exchange mode"), exchange_session(tmp_path, "bad"):
        pass
