"""A run's deal secret: untrusted runs deal from it (and replay, resume), trusted runs from the
seed alone as ever, a config may pin it."""

from __future__ import annotations

import json

import pytest

from dixit_lab.core.seeding import deal_seed, game_seed
from dixit_lab.records.manifest import MANIFEST_NAME
from dixit_lab.run.deal_secret import SECRET_FILE, folder_secret, run_secret, untrusted_seats
from dixit_lab.run.experiment import ConfigError, parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import run_experiment
from tests.games_files import games_text

BASE = {"name": "secret", "seed": 5, "deck": "numbered-60", "games": 4,
        "rules": {"preset": "classic", "options": {"max_rounds": 3}},
        "executor": {"kind": "local"}, "records": "jsonl"}
UNTRUSTED = [{"agent": "random", "isolation": "process"}, "random", "random"]


def records(folder):
    return [json.loads(line) for line in games_text(folder).splitlines()]


def test_a_trusted_run_deals_from_the_seed_alone_as_before(tmp_path):
    config = parse_config({**BASE, "players": ["random"] * 3})
    assert untrusted_seats(config) == []
    run_experiment(config, tmp_path / "run", show_progress=False, write_outputs=False)
    assert not (tmp_path / "run" / SECRET_FILE).exists()
    assert [r["spawn_key"] for r in records(tmp_path / "run")] == [[0], [1], [2], [3]]
    assert "deal_secret" not in (tmp_path / "run" / "config.yaml").read_text()


def test_an_untrusted_run_keeps_a_secret_that_replays_and_resumes(tmp_path):
    config = parse_config({**BASE, "players": UNTRUSTED})
    assert untrusted_seats(config) == ["random"]
    folder = tmp_path / "run"
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    secret = folder_secret(folder)
    assert secret is not None and len(secret) == 16
    assert (folder / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    first = records(folder)
    assert all(r["spawn_key"] == list(deal_seed(5, r["meta"]["deal"], secret).spawn_key)
               for r in first)
    assert replay_folder(folder, executor="local", show_progress=False)[1] is None
    # a run cut short resumes with the same secret: the same games, byte for byte
    lines = games_text(folder).splitlines()
    (folder / "games.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (folder / MANIFEST_NAME).unlink()  # (a run cut short has not written its manifest)
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    assert records(folder) == first and folder_secret(folder) == secret
    # another run of the same config deals otherwise: a new secret
    run_experiment(config, tmp_path / "other", show_progress=False, write_outputs=False)
    assert [r["rounds"] for r in records(tmp_path / "other")] != [r["rounds"] for r in first]


def test_a_pinned_secret_reproduces_anywhere_and_a_folder_keeps_its_own(tmp_path):
    pinned = {**BASE, "players": UNTRUSTED, "deal_secret": "ab" * 16}
    for name in ("a", "b"):
        run_experiment(parse_config(pinned), tmp_path / name, show_progress=False,
                       write_outputs=False)
    assert games_text(tmp_path / "a") == games_text(tmp_path / "b")
    assert folder_secret(tmp_path / "a") == bytes.fromhex("ab" * 16)
    assert "abab" not in (tmp_path / "a" / "config.yaml").read_text()  # kept apart
    other = parse_config({**pinned, "deal_secret": "cd" * 16})
    with pytest.raises(ConfigError, match="another deal_secret"):
        run_secret(other, tmp_path / "a")
    with pytest.raises(ConfigError, match="deal_secret"):
        parse_config({**pinned, "deal_secret": "not hex"})


def test_the_secret_words_are_a_one_way_function_of_the_deal():
    secret = bytes(range(16))
    a, b = deal_seed(5, 0, secret), deal_seed(5, 1, secret)
    assert a.spawn_key[0] == 0 and len(a.spawn_key) == 5 and a.spawn_key[1:] != b.spawn_key[1:]
    assert deal_seed(5, 0, None).spawn_key == game_seed(5, 0).spawn_key
    assert deal_seed(5, 0, secret).spawn_key != deal_seed(5, 0, bytes(16)).spawn_key


def test_a_results_folder_is_private_while_a_run_goes(tmp_path):
    from dixit_lab.records.integrity import FolderLock

    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with FolderLock(folder):
        assert folder.stat().st_mode & 0o777 == 0o700
    assert folder.stat().st_mode & 0o777 == 0o755
