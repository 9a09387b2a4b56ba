"""What the tables need is loaded while other processes play the games: the plotting library
and, for a long run, the compiled OpenSkill walk; only for executors whose workers are forked
processes of their own (a thread started before a fork could leave a child a held lock)."""

from __future__ import annotations

import sys

import pytest

from dixit_lab.report import outputs
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment

CONFIG = {"name": "prepare", "seed": 3, "games": 40, "deck": "dreams",
          "players": ["literal", "random", "softmax", "random"]}


def test_the_thread_loads_the_plots_and_the_walk() -> None:
    pytest.importorskip("numba")
    outputs.prepare_outputs(1_000_000).join(timeout=120)
    assert "matplotlib.backends.backend_agg" in sys.modules
    assert "dixit_lab.ratings.openskill_kernel" in sys.modules


def test_a_failure_while_loading_is_let_go(monkeypatch) -> None:
    from dixit_lab.ratings import openskill

    def broken(games: int) -> None:
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(openskill, "prepare_walk", broken)
    thread = outputs.prepare_outputs(10)
    thread.join(timeout=60)
    assert not thread.is_alive()


@pytest.mark.parametrize(("executor", "started"), [
    ({"kind": "process", "workers": 2, "chunk_size": 10}, 1),
    ({"kind": "local", "chunk_size": 10}, 0),
    ({"kind": "process", "workers": 1, "chunk_size": 10}, 0),
])
def test_the_runner_loads_them_only_beside_forked_workers(tmp_path, monkeypatch, executor,
                                                          started) -> None:
    calls = []
    monkeypatch.setattr(outputs, "prepare_outputs", lambda games: calls.append(games) or calls)
    run_experiment(parse_config({**CONFIG, "executor": executor}), tmp_path / "run",
                   show_progress=False)
    assert calls == [40] * started
    assert (tmp_path / "run" / "report.md").is_file()
