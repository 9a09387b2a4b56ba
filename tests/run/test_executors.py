"""The process executor: a pool broken by a dead worker is one :class:`WorkerLost`, whichever
call meets the broken pool first."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

from dixit_lab.core.rules import get_rules
from dixit_lab.run.executors import WorkerLost, chunked, run_chunks
from dixit_lab.run.tournament import TableSetup, schedule_games

SETUP = TableSetup(seed=9, rules=get_rules("classic"), deck="numbered-84",
                   names=("a", "b", "c", "d"), specs=("random",) * 4, on_illegal="raise",
                   engine="reference")


def test_a_pool_that_breaks_at_submit_is_a_lost_worker(monkeypatch):
    """A worker that dies between two results breaks the pool for the next ``submit`` too
    (CI saw that race end a run in a ``BrokenProcessPool`` traceback)."""
    submit = ProcessPoolExecutor.submit
    calls = []

    def breaks_after_four(self, *args, **kwargs):
        calls.append(1)
        if len(calls) > 4:
            raise BrokenProcessPool("A child process terminated abruptly")
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaks_after_four)
    specs = schedule_games("rotation", 4, 4, 16, seed=9)
    with pytest.raises(WorkerLost, match=r"a worker process died while games \d+-\d+"):
        list(run_chunks(SETUP, chunked(specs, 2), "process", 2))
