"""``dixit-lab play`` and ``dixit-lab view`` on the command line: the one command a person
runs, and one-line errors for a user's mistakes."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest
import yaml

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the test talks to the server with httpx")

from dixit_lab.cli.main import main  # noqa: E402
from dixit_lab.records.format import read_jsonl  # noqa: E402
from tests.web_support import config_data, legal_move  # noqa: E402


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
