"""The manifest of a games file: written with the file's count, size and digest; a file that
differs from it is refused naming it; an old folder falls back to config.yaml's count."""

from __future__ import annotations

import pytest

from dixit_lab.atomic import file_sha256
from dixit_lab.errors import ConfigError
from dixit_lab.records.manifest import (
    check_game_count,
    check_games_file,
    expected_games,
    remove_manifest,
    write_manifest,
)


def test_a_file_like_its_manifest_passes_and_any_change_is_refused(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("a\nb\n")
    write_manifest(tmp_path, path, 2)
    assert check_games_file(path)["games"] == 2 and expected_games(path) == 2
    recorded = file_sha256(path)[:16]
    for text, observed in (("a\n", "2 bytes (recorded 4)"), ("a\nb\nc\n", "6 bytes (recorded 4)"),
                           ("a\nc\n", "4 bytes as recorded, but")):
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            check_games_file(path)
        message = str(info.value)
        # what was observed, not a guess at what happened to the file
        assert message.startswith(f"{path}: differs from what the run recorded in "
                                  f"manifest.json: {observed}"), message
        assert f"sha256 {file_sha256(path)[:16]}... (recorded {recorded}...)" in message
        assert not any(guess in message for guess in ("cut short", "added to", "altered"))
    write_manifest(tmp_path, path, 3)
    for games in (2, 4):
        with pytest.raises(ConfigError) as info:
            check_game_count(path, games)
        assert f"{games} games where manifest.json records 3" in str(info.value)
        assert not any(guess in str(info.value) for guess in ("cut short", "added to"))


def test_a_missing_or_broken_manifest(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("a\n")
    assert check_games_file(path) is None and expected_games(path) is None
    (tmp_path / "config.yaml").write_text("experiment: {games: 4}\n")
    assert expected_games(path) == 4  # an old folder: the experiment's count
    with pytest.raises(ConfigError, match="the experiment in config.yaml has 4"):
        check_game_count(path, 1)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ConfigError, match="manifest.json: not a manifest"):
        check_games_file(path)
    remove_manifest(tmp_path)
    write_manifest(tmp_path, path, 1)
    path.rename(tmp_path / "games.jsonl.zst.bak")
    other = tmp_path / "games.jsonl.zst"
    other.write_text("x")
    with pytest.raises(ConfigError, match="describes games.jsonl, which is missing"):
        check_games_file(other)
