"""The recording seam: agents name their recorder, a run's recording travels in its table
setup, and the process that plays a chunk opens it (no environment variable carries it)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from dixit_lab.core.agent import get_agent_class, make_agent, register_agent
from dixit_lab.core.recording import (
    RECORDERS,
    Recorder,
    RecorderError,
    Recording,
    chunk_player,
    get_recorder,
    recorder_columns,
    recording,
)
from dixit_lab.core.rules import get_rules
from dixit_lab.errors import UserError
from dixit_lab.isolation.trust import AgentInfo
from dixit_lab.run.executors import chunked, run_chunks
from dixit_lab.run.tournament import TableSetup, play_chunk, schedule_games
from dixit_lab_agents.random_agent import RandomAgent

GOLDEN_VLM = Path(__file__).resolve().parent.parent / "golden_vlm" / "tournament"
_opened: list[tuple[str, str | None, dict[str, Any] | None]] = []  # the probe's open sessions


@RECORDERS.register("test-probe")
class ProbeRecorder(Recorder):
    """Notes each session it is opened for, in memory and as a file named by the process."""

    @contextlib.contextmanager
    def _session(self, folder: Path, mode: str | None, budget: Any) -> Iterator[None]:
        _opened.append((str(folder), mode, budget))
        (folder / f"opened-{os.getpid()}-{len(_opened)}").touch()
        try:
            yield
        finally:
            _opened.pop()

    def session(self, folder: Path, mode: Any, budget: Any
                ) -> contextlib.AbstractContextManager[None]:
        return self._session(folder, mode, budget)


@register_agent("test-recorded")
class RecordedAgent(RandomAgent):
    """A random agent whose answers need its recorder open (as a model's or a person's)."""

    recorder: ClassVar[str | None] = "test-probe"

    def begin_game(self, context: Any) -> None:
        if not _opened:
            raise RuntimeError("played outside its recorder's session")
        super().begin_game(context)


def test_the_built_in_agents_name_the_built_in_recorders():
    assert {"exchanges", "decisions"} <= set(RECORDERS.names())
    assert get_agent_class("human").recorder == "decisions"
    assert get_agent_class("vlm").recorder == get_agent_class("llm").recorder == "exchanges"
    assert get_agent_class("random").recorder is None
    assert get_recorder("exchanges").plays_chunks and not get_recorder("decisions").plays_chunks
    info = AgentInfo.of(make_agent("human"))
    assert info.recorder == "decisions" and info.person and not info.remote
    assert AgentInfo.from_json(info.to_json()) == info  # as an isolated child tells it
    for bad in (7, "", "x" * 101, ["decisions"]):  # it would play with nothing recorded
        with pytest.raises(ValueError, match="the agent's recorder is .* it must be a "
                                             "recorder's name"):
            AgentInfo.from_json({**info.to_json(), "recorder": bad})


def test_an_agent_class_whose_recorder_is_not_a_name_is_refused():
    class Numbered(RandomAgent):
        recorder: ClassVar = 7  # type: ignore[assignment]

    with pytest.raises(UserError, match=r"^Numbered's recorder is 7 \(int\): it must be a "
                                        r"recorder's name"):
        numbered = Numbered()
        numbered.spec = "numbered"
        AgentInfo.of(numbered)


def test_a_recording_opens_each_named_recorder_once_and_closes_it(tmp_path):
    plan = Recording.of(tmp_path, ["test-probe", None, "test-probe"], "replay",
                        {"max_cost_usd": 1.5})
    assert plan.recorders == ("test-probe",) and plan.budget == (("max_cost_usd", 1.5),)
    with recording(plan):
        assert _opened == [(str(tmp_path), "replay", {"max_cost_usd": 1.5})]
    assert _opened == []
    with recording(None), recording(Recording.of(tmp_path, [])):
        assert _opened == []
    with pytest.raises(ValueError, match="record mode must be one of"):
        Recording.of(tmp_path, ["test-probe"], "sometimes")
    with pytest.raises(UserError, match="unknown recorder 'nope'"):
        get_recorder("nope")


@RECORDERS.register("test-fails")
class FailingRecorder(Recorder):
    """Its session fails where ``failing`` says: "call", "open", "close" or "user"."""

    failing = ""

    @contextlib.contextmanager
    def _session(self) -> Iterator[None]:
        if self.failing == "open":
            raise OSError("the store is locked")
        yield
        if self.failing == "close":
            raise RuntimeError("the store would not close")
        if self.failing == "user":
            raise UserError("exchanges/0.jsonl: No space left on device")

    def session(self, folder: Path, mode: Any, budget: Any
                ) -> contextlib.AbstractContextManager[None]:
        if self.failing == "call":
            raise ValueError("no session for this folder")
        return self._session()


@pytest.mark.parametrize(("where", "message"), [
    ("call", "recorder 'test-fails' could not open its session in {}: ValueError: no "
             "session for this folder"),
    ("open", "recorder 'test-fails' could not open its session in {}: OSError: the store "
             "is locked"),
    ("close", "recorder 'test-fails' failed as its session closed in {}: RuntimeError: the "
              "store would not close"),
])
def test_a_session_that_fails_is_a_recorder_error_naming_it(tmp_path, monkeypatch, where,
                                                            message):
    monkeypatch.setattr(FailingRecorder, "failing", where)
    with pytest.raises(RecorderError) as raised, recording(Recording.of(tmp_path,
                                                                        ["test-fails"])):
        pass
    assert str(raised.value) == message.format(tmp_path)


def test_what_a_session_does_not_cause_passes_through_it(tmp_path, monkeypatch):
    plan = Recording.of(tmp_path, ["test-fails", "test-probe"])
    with pytest.raises(KeyError, match="the game's own"), recording(plan):
        raise KeyError("the game's own")  # not the recorder's fault: not renamed
    monkeypatch.setattr(FailingRecorder, "failing", "user")
    with pytest.raises(UserError) as raised, recording(plan):
        pass
    assert not isinstance(raised.value, RecorderError)  # already one line naming its file
    assert _opened == []  # the probe closed all the same


def test_a_recorder_that_cannot_be_made_is_named(monkeypatch):
    class Unmakeable(Recorder):
        def __init__(self) -> None:
            raise RuntimeError("no store")

    monkeypatch.setitem(RECORDERS._classes, "test-unmakeable", Unmakeable)
    get_recorder.cache_clear()
    with pytest.raises(RecorderError, match=r"recorder 'test-unmakeable' \(.*Unmakeable\) "
                                            r"could not be made: RuntimeError: no store"):
        get_recorder("test-unmakeable")


def test_chunk_player_is_a_recorder_that_plays_chunks():
    assert chunk_player(["test-probe", None]) is None
    assert chunk_player(["test-probe", "exchanges"]) is get_recorder("exchanges")


def test_every_process_that_plays_a_chunk_opens_the_setup_recording(tmp_path):
    setup = TableSetup(seed=9, rules=get_rules("classic"), deck="numbered-84",
                       names=("a", "b", "c", "d"), specs=("test-recorded", "random") * 2,
                       on_illegal="raise", engine="reference")
    specs = schedule_games("rotation", 4, 4, 8, seed=9)
    with pytest.raises(Exception, match="outside its recorder's session"):
        play_chunk(setup, specs[:1])  # no recording: the agent cannot play
    assert setup.recorders() == ("test-probe",)
    recorded = dataclasses.replace(setup, recording=Recording.of(tmp_path, setup.recorders()))
    environment = dict(os.environ)
    lines = dict(line for chunk in run_chunks(recorded, chunked(specs, 2), "process", 2)
                 for line in chunk)
    assert len(lines) == 8 and dict(os.environ) == environment
    here = dict(line for chunk in run_chunks(recorded, chunked(specs, 3), "local")
                for line in chunk)
    assert lines == here  # where a chunk is played changes no record
    pids = {path.name.split("-")[1] for path in tmp_path.glob("opened-*")}
    assert str(os.getpid()) in pids and len(pids) >= 2  # the warm-up here, and the workers


def test_the_report_asks_every_recorder_for_its_columns(tmp_path):
    assert recorder_columns(tmp_path) == []
    [usage] = recorder_columns(GOLDEN_VLM)  # the model agents' usage rows
    assert "player" in usage and "prompt_tokens" in usage and len(usage) > 0
