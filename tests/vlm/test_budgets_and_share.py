"""Budgets (vlm/ledger: a seat's max_tokens_total / max_cost_usd, a run's model_budget) stop
the model's seat cleanly with faults of kind ``budget`` and the results kept, never an
overspend; a run whose model seat made most decisions by fallback fails (min_model_share);
SIGTERM stops the game threads' requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml

from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import FaultShareError, run_experiment
from dixit_lab.vlm.stub import StubServer

pytest.importorskip("httpx")


def data(stub, model="good", games=2, options="", timeout=2, **extra):
    return {
        "name": "budget", "seed": 5, "deck": "dreams", "games": games,
        "rules": {"preset": "classic", "options": {"max_rounds": 3}},
        "players": [{"name": "m", "agent": f"llm(model={model}, base_url={stub.base_url}, "
                                           f"timeout={timeout}, backoff=0.01, retries=0, "
                                           f"http_retries=1{options})"},
                    {"name": "a", "agent": "random"}, {"name": "b", "agent": "random"}],
        "executor": {"kind": "local"}, **extra}


def charged(folder):
    return sum(entry.get("charged", {}).get("tokens", 0)
               for path in (folder / "exchanges").glob("*.jsonl")
               for entry in map(json.loads, path.read_text().splitlines()))


@pytest.mark.parametrize(("options", "extra"), [
    (", max_tokens_total=3000", {}),
    (", price_in=1000.0, max_cost_usd=2.0", {}),
    ("", {"model_budget": {"max_tokens_total": 3000}}),
])
def test_a_budget_stops_the_seat_with_budget_faults_and_keeps_the_results(tmp_path, options,
                                                                          extra):
    with StubServer() as stub:
        run_experiment(parse_config(data(stub, options=options, min_model_share=0, **extra)),
                       tmp_path / "run", show_progress=False)
    row = pd.read_csv(tmp_path / "run" / "agents.csv").set_index("player").loc["m"]
    assert row["faults_budget"] > 0 and row["faults"] == row["faults_budget"]
    assert 0 < row["own_decision_share"] < 1  # it played until the budget was reached
    if "max_tokens_total" in options + json.dumps(extra):
        assert charged(tmp_path / "run") <= 3000  # reserved before sending: no overspend


def test_a_model_seat_of_fallbacks_fails_the_run_and_keeps_the_results(tmp_path):
    with StubServer() as stub:
        with pytest.raises(FaultShareError, match=r"m made 0 of \d+ decisions itself"):
            run_experiment(parse_config(data(stub, model="error500", games=1)),
                           tmp_path / "run", show_progress=False)
        row = pd.read_csv(tmp_path / "run" / "agents.csv").set_index("player").loc["m"]
        assert row["own_decision_share"] == 0 and row["faults_backend"] == row["decisions"]
        assert (tmp_path / "run" / "report.md").is_file()
        run_experiment(parse_config(data(stub, model="error500", games=1, min_model_share=0)),
                       tmp_path / "accepted", show_progress=False)


def test_the_terminal_says_how_many_decisions_the_model_made(tmp_path):
    with StubServer() as stub:
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(data(stub, model="error500", games=1)))
        done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "run", str(config),
                               "--out", str(tmp_path / "run"), "--quiet"],
                              capture_output=True, text=True)
    assert done.returncode == 2
    assert "model seat m: 0 of" in done.stdout and "min_model_share" in done.stderr


def test_sigterm_stops_the_requests_of_the_game_threads(tmp_path):
    with StubServer(slow_seconds=1.0) as stub:
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(data(stub, model="slow", games=4, timeout=5)))
        process = subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "run", str(config),
                                    "--out", str(tmp_path / "run"), "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while stub.requests < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stub.requests >= 3, "the run did not start asking"
        os.kill(process.pid, signal.SIGTERM)
        sent = time.monotonic()
        _, err = process.communicate(timeout=30)
        ended = time.monotonic() - sent
        after = stub.requests
        time.sleep(2.5)  # a game thread still running would send its next request by now
        assert stub.requests == after
    assert process.returncode == 130 and ended < 10, err


def _model_run(tmp_path, stub, games, rounds, concurrency):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(data(stub, model="slow", games=games, timeout=5,
                                          options=f", concurrency={concurrency}",
                                          rules={"preset": "classic",
                                                 "options": {"max_rounds": rounds}})))
    command = [sys.executable, "-m", "dixit_lab.cli", "run", str(config), "--out",
               str(tmp_path / "run"), "--quiet"]
    return command, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_starts_no_request_and_ends_those_in_flight_at_once(tmp_path, signum):
    """Ctrl-C or SIGTERM while a chunk's games wait on a slow server (1.5 s a reply, two at a
    time): no request starts after the signal, and the command ends within a second or two
    (it used to send 23 more requests and take 19.7 s)."""
    with StubServer(slow_seconds=1.5) as stub:
        _, process = _model_run(tmp_path, stub, games=200, rounds=3, concurrency=2)
        deadline = time.monotonic() + 60
        while stub.requests < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stub.requests >= 4, "the run did not start asking"
        os.kill(process.pid, signum)
        sent, at_signal = time.monotonic(), stub.requests
        _, err = process.communicate(timeout=60)
        ended = time.monotonic() - sent
        time.sleep(2)
        # a request on its way when the signal came may still reach the server: at most the
        # seat's concurrency of them
        assert stub.requests - at_signal <= 2, (stub.requests, at_signal)
    assert process.returncode == 130 and "Traceback" not in err, err
    assert ended < 3, ended
    assert "interrupted: 0 of 200 games are saved" in err, err


def test_the_games_a_stopped_chunk_finished_are_saved_and_resumed(tmp_path):
    """The games of a chunk that had ended when the stop came are saved (a model chunk is 25
    games in flight at once: minutes of spending), and the same command plays only the rest;
    the folder then replays byte for byte from its exchanges."""
    with StubServer(slow_seconds=0.05) as stub:
        command, process = _model_run(tmp_path, stub, games=50, rounds=1, concurrency=4)
        deadline = time.monotonic() + 60
        while stub.requests < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        saved = int(err.split("interrupted: ")[1].split(" of 50")[0])
        assert 0 < saved < 50, err
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr
        assert f"50 games ({50 - saved} played this run" in rerun.stdout, rerun.stdout
    replay = subprocess.run([sys.executable, "-m", "dixit_lab.cli", "replay",
                             str(tmp_path / "run"), "--executor", "local", "--quiet"],
                            capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0 and "identical: 50 games" in replay.stdout, (
        replay.stdout + replay.stderr)
