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
    Recording,
    chunk_player,
    get_recorder,
    recorder_columns,
    recording,
)
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.trust import AgentInfo
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
    assert AgentInfo.from_json({**info.to_json(), "recorder": 7}).recorder is None


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
    with pytest.raises(KeyError, match="unknown recorder 'nope'"):
        get_recorder("nope")


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
