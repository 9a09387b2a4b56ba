"""A run's parts become the folder's files: the records concatenated (compressed frames
read back as the plain lines), the round-table parts moved, the sums added; a part whose
summary is lost is summarised again from its records; scattered parts take the slow path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dixit_lab.atomic import file_sha256
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.parts import finished_beside, merge_parts, save_part
from dixit_lab.run.runner import run_experiment
from tests.games_files import games_text


def _same_table(a, b) -> None:
    """The same CSV up to the order floating-point sums were added in."""
    x, y = pd.read_csv(a), pd.read_csv(b)
    assert list(x.columns) == list(y.columns) and len(x) == len(y)
    for column in x.columns:
        if x[column].dtype.kind in "fi":
            assert np.allclose(x[column], y[column], rtol=1e-9, atol=1e-12, equal_nan=True)
        else:
            assert x[column].tolist() == y[column].tolist()


CONFIG = {"name": "parts", "seed": 9, "games": 12, "deck": "dreams",
          "players": ["literal", "random", "softmax", "random"],
          "executor": {"kind": "local", "chunk_size": 5}}


def test_plain_and_compressed_records_and_tables_agree(tmp_path) -> None:
    folders = {}
    for records in ("jsonl.zst", "jsonl"):
        folders[records] = tmp_path / records
        run_experiment(parse_config({**CONFIG, "records": records}), folders[records],
                       show_progress=False)
    zst, plain = folders["jsonl.zst"], folders["jsonl"]
    assert (zst / "games.jsonl.zst").is_file() and not (zst / "games.jsonl").exists()
    assert games_text(zst) == (plain / "games.jsonl").read_text()
    assert (zst / "games.jsonl.zst").stat().st_size < (plain / "games.jsonl").stat().st_size / 3
    assert len(list((zst / "rounds.parquet").glob("part-*.parquet"))) == 3  # chunks of 5
    assert (zst / "agents.csv").read_text() == (plain / "agents.csv").read_text()
    assert pd.read_parquet(zst / "rounds.parquet").equals(pd.read_parquet(plain / "rounds.parquet"))


def test_a_lost_summary_or_scattered_parts_give_the_same_tables(tmp_path) -> None:
    whole = tmp_path / "whole"
    run_experiment(parse_config(CONFIG), whole, show_progress=False)
    # an interrupted run: one chunk's sums lost; its records are the truth
    broken = tmp_path / "broken"
    config = parse_config(CONFIG)
    run_experiment(config, broken, show_progress=False, write_outputs=False)
    parts = broken / "parts"
    parts.mkdir()
    lines = games_text(broken).splitlines()
    for path in broken.glob("games.jsonl*"):
        path.unlink()
    for first in (0, 5, 10):
        save_part(parts, list(enumerate(lines))[first:first + 5], "jsonl.zst")
    (parts / "stats-0000005-0000009.json").unlink()
    run_experiment(config, broken, show_progress=False)
    _same_table(broken / "agents.csv", whole / "agents.csv")
    # scattered: parts that do not tile the games (the slow, line-by-line merge)
    scattered = tmp_path / "scattered"
    run_experiment(config, scattered, show_progress=False, write_outputs=False)
    for path in scattered.glob("games.jsonl*"):
        path.unlink()
    (scattered / "parts").mkdir()
    save_part(scattered / "parts", [(i, lines[i]) for i in (0, 2, 4, 6, 8, 10)], "jsonl")
    run_experiment(config, scattered, show_progress=False)
    assert games_text(scattered) == games_text(whole)
    _same_table(scattered / "agents.csv", whole / "agents.csv")
    _same_table(scattered / "ratings.csv", whole / "ratings.csv")
    assert not (scattered / "parts").exists()


def _merged_but_unfinished(tmp_path):
    """A run's folder whose parts are merged (sums added, round table moved) but whose games
    file is not written yet: the MergedParts whose finish writes it."""
    folder = tmp_path / "run"
    config = parse_config(CONFIG)
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    lines = games_text(folder).splitlines()
    for path in [*folder.glob("games.jsonl*"), folder / "manifest.json"]:
        path.unlink()
    (folder / "parts").mkdir()
    for first in (0, 5, 10):
        save_part(folder / "parts", list(enumerate(lines))[first:first + 5], "jsonl.zst")
    merged = merge_parts(folder, 12, "jsonl.zst")
    assert merged is not None and not (folder / "games.jsonl.zst").exists()
    return folder, merged, lines


def test_the_games_file_is_finished_beside_the_tables_with_its_digest(tmp_path) -> None:
    folder, merged, lines = _merged_but_unfinished(tmp_path)
    assert merged.stats.games == 12
    with finished_beside(merged):
        pass
    assert games_text(folder).splitlines() == lines
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sha256"] == file_sha256(folder / "games.jsonl.zst")  # hashed on the way
    assert manifest["games"] == 12 and not (folder / "parts").exists()


def test_a_ctrl_c_in_the_tables_still_leaves_a_whole_games_file(tmp_path) -> None:
    folder, merged, lines = _merged_but_unfinished(tmp_path)
    with pytest.raises(KeyboardInterrupt), finished_beside(merged):
        raise KeyboardInterrupt
    assert games_text(folder).splitlines() == lines and (folder / "manifest.json").is_file()


def test_a_failure_to_write_the_games_file_is_raised_after_the_tables(tmp_path) -> None:
    folder, merged, _ = _merged_but_unfinished(tmp_path)
    merged.sources[1].unlink()  # a part lost under the run's feet
    done = []
    with pytest.raises(FileNotFoundError, match="games-0000005"), finished_beside(merged):
        done.append("tables")
    assert done == ["tables"]
    assert not (folder / "games.jsonl.zst").exists()  # never a partial games file
    assert not (folder / "manifest.json").exists() and (folder / "parts").is_dir()
    assert not list(folder.glob(".games*"))  # nor its temporary file
