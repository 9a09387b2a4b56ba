"""The stub server as docs/vlm.md's dry run documents it: ``python -m dixit_lab.vlm.stub``
prints its address, a config's ``llm(model=good, base_url=...)`` seat plays through it with
its own decisions, and Ctrl-C stops it."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys

import pytest
import yaml

from dixit_lab.cli.main import main

pytest.importorskip("httpx")


def test_the_documented_dry_run_plays_against_the_stub_command(tmp_path, capsys):
    server = subprocess.Popen([sys.executable, "-m", "dixit_lab.vlm.stub", "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert line.startswith("serving http://127.0.0.1:") and line.rstrip().endswith("/v1")
        base_url = line.split()[1]
        config = tmp_path / "dry.yaml"
        config.write_text(yaml.safe_dump({
            "name": "dry", "seed": 3, "deck": "dreams", "games": 2,
            "rules": {"preset": "classic", "options": {"max_rounds": 3}},
            "players": [{"name": "model", "agent": f"llm(model=good, base_url={base_url})"},
                        {"name": "a", "agent": "random"}, {"name": "b", "agent": "random"}],
            "executor": {"kind": "local"}}), encoding="utf-8")
        assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
        with (tmp_path / "out" / "agents.csv").open(encoding="utf-8") as table:
            model = next(row for row in csv.DictReader(table) if row["player"] == "model")
        # every decision the stub's reply, none replaced by the engine
        assert float(model["own_decision_share"]) == 1.0
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=10) == 0
