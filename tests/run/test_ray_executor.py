"""The Ray executor: the same bytes as the process pool, one setup upload, worker reuse,
re-run chunks of dead workers, and a clear error without Ray."""

from __future__ import annotations

import logging
import os
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.optional import import_or_skip

ray = import_or_skip("ray")

from dixit_lab.cli.main import main  # noqa: E402
from dixit_lab.core.rules import get_rules  # noqa: E402
from dixit_lab.run.executors import chunked, run_chunks  # noqa: E402
from dixit_lab.run.experiment import parse_config  # noqa: E402
from dixit_lab.run.ray_executor import RayNotInstalled, run_chunks_ray  # noqa: E402
from dixit_lab.run.runner import run_experiment, run_sweep  # noqa: E402
from dixit_lab.run.tournament import GameFailed, TableSetup, play_chunk, schedule_games  # noqa: E402
from tests.games_files import games_text  # noqa: E402
from tests.run.test_runner import CONFIG as RUNNER_CONFIG  # noqa: E402

CONFIG = {**RUNNER_CONFIG, "name": "ray-test"}  # the runner tests' table

SETUP = TableSetup(seed=9, rules=get_rules("classic"), deck="dreams",
                   names=("a", "b", "c", "d"), specs=("literal", "softmax", "random", "random"),
                   on_illegal="raise", engine="reference")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray instance for the module (starting one takes several seconds); the
    executor uses the connection it finds and leaves it open."""
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False,
                 logging_level=logging.ERROR)
    yield
    if started:
        ray.shutdown()


def test_a_tournament_gives_the_bytes_of_the_process_pool(tmp_path):
    config = parse_config(CONFIG)
    kwargs = {"show_progress": False, "write_outputs": False}
    pool = run_experiment(config, tmp_path / "pool", executor="process", workers=2, **kwargs)
    on_ray = run_experiment(config, tmp_path / "ray", executor="ray", workers=2, **kwargs)
    assert on_ray.played == pool.played == 40
    text = games_text(tmp_path / "pool")
    assert text == games_text(tmp_path / "ray")
    assert not (tmp_path / "ray" / "parts").exists()


def test_a_sweep_gives_the_bytes_of_the_process_pool(tmp_path):
    data = {**CONFIG, "games": 16, "executor": {"kind": "ray", "chunk_size": 4},
            "sweep": {"players.2.params.target": [0.2, 0.6]}}
    run_sweep(data, "sweep.yaml", tmp_path / "ray", show_progress=False)
    run_sweep(data, "sweep.yaml", tmp_path / "pool", executor="process", workers=2,
              show_progress=False)
    for point in ("000", "001"):
        ray_bytes = games_text(tmp_path / "ray" / "points" / point)
        assert ray_bytes == games_text(tmp_path / "pool" / "points" / point)
        assert len(ray_bytes.splitlines()) == 16
    assert ray.is_initialized()  # the session it found is left open


def test_the_setup_is_uploaded_once_and_workers_reuse_agents_and_spaces(monkeypatch):
    puts = []
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda value, **kw: puts.append(value) or real_put(value, **kw))

    def probe(setup, chunk):  # pickled by value into the workers
        from dixit_lab.embeddings import space
        from dixit_lab.run.tournament import _POOL, TableSetup, play_chunk

        assert isinstance(setup, TableSetup)  # Ray resolved the reference in the worker
        play_chunk(setup, chunk)
        return (os.getpid(), sorted(id(a) for a in _POOL.instances.values()),
                sorted(id(s) for s in space._SPACES.values()))

    specs = schedule_games("rotation", 4, 4, 24, seed=9)
    seen = defaultdict(list)
    for pid, agents, spaces in run_chunks_ray(SETUP, chunked(specs, 2), task=probe):
        seen[pid].append((agents, spaces))
    assert puts == [SETUP]
    assert sum(len(v) for v in seen.values()) == 12
    repeated = [v for v in seen.values() if len(v) > 1]
    assert repeated, "a worker should have played several chunks"
    for reports in repeated:  # the same agent and space objects for every chunk of a worker
        assert all(r == reports[0] for r in reports)
        assert reports[0][0] and reports[0][1]


def test_the_chunk_of_a_killed_worker_is_rerun_and_every_game_comes_once(tmp_path):
    marker = tmp_path / "died"

    def dies_once(setup, chunk):
        from dixit_lab.run.tournament import play_chunk

        if chunk[0].index == 6 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-run, without a word
        return play_chunk(setup, chunk)

    specs = schedule_games("rotation", 4, 4, 30, seed=9)
    chunks = chunked(specs, 3)
    results = list(run_chunks_ray(SETUP, chunks, task=dies_once))
    assert marker.exists(), "the worker should have died"
    assert len(results) == len(chunks)
    indices = [index for chunk in results for index, _ in chunk]
    assert sorted(indices) == list(range(30))  # every game exactly once
    assert dict(line for chunk in results for line in chunk) == dict(play_chunk(SETUP, specs))


def test_a_chunk_whose_worker_keeps_dying_fails_with_its_games_named():
    def always_dies(setup, chunk):
        os._exit(1)

    specs = schedule_games("rotation", 4, 4, 4, seed=9)
    with pytest.raises(RuntimeError, match=r"chunk of games 0-3 failed after 0 retries"):
        list(run_chunks_ray(SETUP, chunked(specs, 4), task=always_dies, max_retries=0))


def test_a_failing_game_is_named_as_by_the_process_pool():
    setup = TableSetup(seed=9, rules=get_rules("classic"), deck="numbered-84",
                       names=("a", "b", "c", "d"), specs=("literal",) * 4, on_illegal="raise",
                       engine="reference")
    specs = schedule_games("rotation", 4, 4, 1, seed=9)
    with pytest.raises(GameFailed, match=r"^game 0 \(players \['a', 'b', 'c', 'd'\]\).*has none"):
        list(run_chunks(setup, [specs], "ray"))


def test_the_config_takes_a_ray_executor_and_an_address():
    config = parse_config({**CONFIG, "executor": {"kind": "ray", "address": "head:6379"}})
    assert config.executor.kind == "ray" and config.executor.address == "head:6379"


def test_without_ray_the_error_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    specs = schedule_games("rotation", 4, 4, 4, seed=9)
    with pytest.raises(RayNotInstalled, match=r"pip install 'dixit-lab\[ray\]'"):
        list(run_chunks(SETUP, chunked(specs, 2), "ray"))
    path = Path(tmp_path / "c.yaml")
    path.write_text(f"name: c\nplayers: [random, random, random]\ngames: 3\nout: {tmp_path}/o\n")
    assert main(["run", str(path), "--executor", "ray", "--quiet"]) == 2
    assert "pip install 'dixit-lab[ray]'" in capsys.readouterr().err


def test_an_address_where_no_cluster_listens_fails_fast():
    from dixit_lab.run.ray_executor import _check_reachable

    with pytest.raises(RuntimeError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:9"):
        _check_reachable("127.0.0.1:9", timeout=2)
    _check_reachable("auto")  # left to Ray


def test_tune_runs_on_ray_with_the_same_samples_as_locally(tmp_path):
    from dixit_lab.tune.search import tune

    data = {**CONFIG, "games": 10,
            "players": [{"name": "teller", "agent": "ambiguity", "params": {"target": 0.5}},
                        {"name": "s", "agent": "softmax", "count": 3}],
            "executor": {"kind": "ray"},
            "tune": {"parameter": "players.0.params.target", "low": 0.2, "high": 0.8,
                     "points": 2, "player": "teller", "games_per_round": 10,
                     "max_games": 40}}
    on_ray = tune(data, "t.yaml", tmp_path / "ray", log=lambda _: None)
    local = tune({**data, "executor": {"kind": "local"}}, "t.yaml", tmp_path / "local",
                 log=lambda _: None)
    assert [sorted(c.samples) for c in on_ray] == [sorted(c.samples) for c in local]
    assert all(c.samples for c in on_ray)
