"""The results folder matches its guide, docs/results.md: every file a run writes and every
column of rounds.parquet (with its type) is described there."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from dixit_lab.cli.main import main

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "results.md").read_text("utf-8")


def _documented_columns() -> dict[str, str]:
    section = GUIDE.split("### `rounds.parquet`")[1].split("\n### ")[0]
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, flags=re.M))


def test_every_file_and_rounds_column_is_in_the_guide(tmp_path, capsys) -> None:
    config = {"name": "guide", "seed": 4, "rules": "classic", "deck": "dreams",
              "players": ["ambiguity", "literal", "random"], "games": 4,
              "executor": {"kind": "local"}}
    path = tmp_path / "guide.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    for file in out.rglob("*"):
        if file.is_file():
            name = file.relative_to(out)
            if name.parts[0] == "rounds.parquet":  # a dataset folder: its part files
                assert "`rounds.parquet/part-<first>-<last>.parquet`" in GUIDE
                continue
            assert f"`{name}`" in GUIDE, f"{file.name} is not in docs/results.md"
    for key in yaml.safe_load((out / "config.yaml").read_text()):  # what played the games
        assert f"`{key}`" in GUIDE, f"config.yaml's {key} is not in docs/results.md"
    rounds = pd.read_parquet(out / "rounds.parquet")
    documented = _documented_columns()
    assert set(documented) == set(rounds.columns)
    for column, kind in documented.items():
        dtype = str(rounds[column].dtype)
        expected = {"int64": ("int64",), "Int64 (nullable)": ("Int64",),
                    "boolean (nullable)": ("boolean",), "category": ("category",),
                    "category (nullable)": ("category",)}
        assert dtype in expected[kind.strip()], (column, dtype, kind)
    agents = pd.read_csv(out / "agents.csv")
    for column in agents.columns:
        base = column.removesuffix("_ci_low").removesuffix("_ci_high")
        assert f"`{base}`" in GUIDE, f"agents.csv column {column} is not in docs/results.md"


def test_every_file_of_a_sweep_and_a_tune_folder_is_in_the_guide(tmp_path, capsys) -> None:
    config = {"name": "guide-sweep", "seed": 4, "rules": "classic", "deck": "dreams",
              "players": [{"name": "teller", "agent": "ambiguity", "params": {"target": 0.3}},
                          "literal", "random"], "games": 4, "executor": {"kind": "local"}}
    sweep = {**config, "sweep": {"players.0.params.target": [0.3, 0.6]}}
    tune = {**config, "tune": {"parameter": "players.0.params.target", "low": 0.2, "high": 0.8,
                               "points": 2, "player": "teller", "games_per_round": 4,
                               "max_games": 8, "confirm_games": 4}}
    for name, data in (("sweep", sweep), ("tune", tune)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        out = tmp_path / name
        command = ["run", str(path), "--quiet"] if name == "sweep" else ["tune", str(path)]
        assert main([*command, "--out", str(out)]) == 0
        for file in out.rglob("*"):
            relative = file.relative_to(out)
            if file.is_file() and relative.parts[0] != "points":  # the points: the test above
                shown = re.sub(r"^plots/sweep_\w+\.png$", "plots/sweep_<metric>.png",
                               str(relative))
                assert f"`{shown}`" in GUIDE, f"{name}: {relative} is not in docs/results.md"
