"""Attacks of a careless or hostile user (issue 14): each asserts a correct result or a
one-line error naming the file, field or line: never a traceback, a hang or a silently
different number."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from dixit_lab.cli.main import main
from dixit_lab.core import cards as cards_module
from dixit_lab.core.cards import Deck, DeckError, data_root, load_deck
from dixit_lab.core.clues import ClueBank, ClueBankError
from dixit_lab.records.integrity import FolderLock
from dixit_lab.run.experiment import ConfigError, expand_sweep, load_config, parse_config
from dixit_lab.run.runner import run_experiment
from tests.games_files import games_path, games_text, has_games, replace_games

BASE = {"name": "attack", "seed": 3, "deck": "numbered-60", "players": ["random"] * 3,
        "games": 6, "executor": {"kind": "local"}}


def write_config(tmp_path: Path, data: object, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def cli(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and stderr of ``dixit-lab argv``; a user error must be one line."""
    code = main(list(argv))
    err = capsys.readouterr().err.strip()
    if code == 2:
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return code, err


def finished_run(tmp_path: Path, **changes: object) -> Path:
    folder = tmp_path / "done"
    run_experiment(parse_config({**BASE, **changes}), folder, show_progress=False,
                   write_outputs=False)
    return folder


# -- silently wrong ----------------------------------------------------------------------

def reversed_dreams(where: Path) -> Path:
    """A folder named ``dreams`` holding the bundled dreams cards in reverse order."""
    source = data_root() / "decks" / "dreams"
    folder = where / "dreams"
    shutil.copytree(source / "images", folder / "images")
    lines = (source / "cards.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "cards.csv").write_text(lines[0] + "".join(reversed(lines[1:])),
                                      encoding="utf-8")
    return folder


def test_a_folder_named_like_a_bundled_deck_is_perceived_by_its_content(tmp_path):
    from dixit_lab.core.agent import make_agent
    from dixit_lab.core.rules import get_rules
    from dixit_lab.core.seeding import game_seed
    from dixit_lab.engine.game import play_game

    deck = Deck.from_folder(reversed_dreams(tmp_path))
    assert deck.name == "dreams" and deck.fingerprint != load_deck("dreams").fingerprint
    agents = [make_agent("literal") for _ in range(3)]
    play_game(agents, get_rules("classic", max_rounds=1), deck, game_seed(0, 0))
    space = agents[0].space
    assert [c.id for c in space.deck.cards] == [c.id for c in deck.cards]
    bundled = load_deck("dreams")
    first = bundled.index_of(deck.cards[0].id)
    assert (space.card_vectors[0] == agents[0].space.card_vectors[0]).all()
    from dixit_lab.embeddings import get_space

    assert (get_space("conse", bundled).card_vectors[first] == space.card_vectors[0]).all()


def test_fit_listener_identifies_a_folder_deck_by_its_content(tmp_path, monkeypatch, capsys):
    decks = tmp_path / "decks"
    reversed_dreams(decks)  # decks/dreams: not the bundled dreams
    shutil.copytree(decks / "dreams", decks / "good")  # the same cards under another name
    monkeypatch.chdir(tmp_path)  # relative deck paths
    folders = {}
    for deck in ("dreams", "decks/dreams", "decks/good"):
        folders[deck] = tmp_path / deck.replace("/", "-")
        data = {**BASE, "deck": deck, "players": ["random"] * 4}
        run_experiment(parse_config(data), folders[deck], show_progress=False,
                       write_outputs=False)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setattr(cards_module, "_DECK_CACHE", {})  # as in a new process
    coefficients = {}
    for deck, folder in folders.items():
        code, err = cli(capsys, "fit-listener", str(folder), "--out", f"{folder.name}.json")
        assert code == 0, err
        coefficients[deck] = json.loads(Path(f"{folder.name}.json").read_text())["coef"]
    assert coefficients["decks/dreams"] == coefficients["decks/good"]
    assert coefficients["decks/dreams"] != coefficients["dreams"]


def test_a_top_level_clue_bank_is_refused_not_ignored():
    with pytest.raises(ConfigError, match="clues: .*not used by any agent"):
        parse_config({**BASE, "clues": "mine"}, "c.yaml")
    assert parse_config({**BASE, "clues": "default"}).clues == "default"


def tamper_with(path: Path, tamper: str) -> None:
    """Edit a games.jsonl as a careless hand or a broken copy would."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if tamper == "duplicate":
        lines.insert(2, lines[1])
    elif tamper == "delete":
        del lines[3]
    elif tamper == "delete the last":
        del lines[-1]
    elif tamper == "edit":
        record = json.loads(lines[2])
        record["final_scores"][0] += 5
        lines[2] = json.dumps(record) + "\n"
    elif tamper == "truncate inside meta":
        lines[4] = lines[4][: lines[4].index('"meta"') + 9] + "\n"
    else:
        assert tamper == "truncate"
        lines[4] = lines[4][:200] + "\n"
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("tamper", ["duplicate", "delete", "edit", "truncate inside meta"])
def test_report_refuses_a_tampered_games_file(tmp_path, capsys, tamper):
    folder = finished_run(tmp_path)
    path = replace_games(folder, games_text(folder))  # a plain games.jsonl, to edit by hand
    tamper_with(path, tamper)
    code, err = cli(capsys, "report", str(folder))
    assert code == 2 and f"{path}, line" in err
    assert not (folder / "agents.csv").exists()


@pytest.mark.parametrize("tamper, message", [
    ("duplicate", r"line 3: game 1 again \(first on line 2\)"),
    ("delete", r"line 4: game 4 where game 3 was expected"),
    ("truncate", r"line 5: not a whole game record \(not valid JSON from character 200"),
    ("delete the last", r"6 games, but the experiment has 7: game 6 is missing"),
])
def test_replay_of_a_tampered_games_file_names_the_game(tmp_path, capsys, tamper, message):
    folder = finished_run(tmp_path, games=7)
    path = replace_games(folder, games_text(folder))  # a plain games.jsonl, to edit by hand
    tamper_with(path, tamper)
    code, err = cli(capsys, "replay", str(folder), "--executor", "local", "--quiet")
    assert code == 2 and str(path) in err
    assert re.search(message, err), err


def test_resume_refuses_a_part_of_another_experiment(tmp_path):
    other = finished_run(tmp_path, seed=4)
    folder = tmp_path / "resumed"
    config = parse_config(BASE)
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    games_path(folder).unlink()
    (folder / "parts").mkdir()
    (folder / "parts" / "000000-000005.jsonl").write_text(games_text(other))
    with pytest.raises(ConfigError, match=r"line 1: game 0 .*another seed"):
        run_experiment(config, folder, show_progress=False, write_outputs=False)


def test_resume_refuses_a_record_truncated_inside_meta(tmp_path):
    folder = finished_run(tmp_path)
    lines = games_text(folder).splitlines()
    lines[-1] = lines[-1][: lines[-1].rindex('"deal"')]
    replace_games(folder, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"line 6: game 5 is truncated"):
        run_experiment(parse_config(BASE), folder, show_progress=False, write_outputs=False)


def test_two_runs_into_one_folder_cannot_mix(tmp_path):
    folder = tmp_path / "busy"
    folder.mkdir()
    command = [sys.executable, "-m", "dixit_lab.cli", "run", str(write_config(tmp_path, BASE)),
               "--out", str(folder), "--quiet"]
    with FolderLock(folder):  # held by "another run" (this process)
        second = subprocess.run(command, capture_output=True, text=True)
    assert second.returncode == 2 and "is in use by another run" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    assert not has_games(folder) and not (folder / ".lock").exists()
    assert subprocess.run(command, capture_output=True).returncode == 0


def test_a_clue_csv_with_an_unbalanced_quote_is_refused(tmp_path):
    path = tmp_path / "bank.csv"
    path.write_text('text\nfirst\n"second\nthird\nfourth\n', encoding="utf-8")
    with pytest.raises(ClueBankError, match=r"line 3: malformed CSV .*unbalanced quote"):
        ClueBank.load(path)
    path.write_text('text\nfirst\n"second\nthird\nfourth\nfifth\nend",x\n',
                    encoding="utf-8")
    with pytest.raises(ClueBankError, match=r"line 3: .*runs over lines 3-7"):
        ClueBank.load(path)


# -- tracebacks ----------------------------------------------------------------------------

@pytest.mark.parametrize("out", ["file", "/dev/null"])
def test_run_out_on_a_file_is_one_line(tmp_path, capsys, out):
    target = tmp_path / "x.txt" if out == "file" else Path(out)
    if out == "file":
        target.write_text("x")
    code, err = cli(capsys, "run", str(write_config(tmp_path, BASE)), "--out", str(target),
                    "--quiet")
    assert code == 2 and f"{target} is a file" in err


def test_simulate_out_on_a_folder_is_refused_before_playing(tmp_path, capsys):
    code, err = cli(capsys, "simulate", "--games", "3", "--deck", "numbered-60", "--out",
                    str(tmp_path))
    assert code == 2 and "is a folder" in err


def test_a_sweep_over_the_params_of_a_shorthand_player(tmp_path):
    data = {**BASE, "deck": "dreams", "players": ["random", "random", "softmax"],
            "sweep": {"players.2.params.temperature": [0.5, 2.0]}}
    points = list(expand_sweep(data, "s.yaml"))
    assert [p[2].seats()[2][1] for p in points] == ["softmax(temperature=0.5)",
                                                   "softmax(temperature=2.0)"]
    with pytest.raises(ConfigError, match="index x is out of range"):
        list(expand_sweep({**BASE, "sweep": {"players.x.agent": ["random"]}}, "s.yaml"))
    with pytest.raises(ConfigError, match="not a mapping or a list"):
        list(expand_sweep({**BASE, "sweep": {"name.x": [1]}}, "s.yaml"))


@pytest.mark.parametrize("broken", ["config.yaml", "summary.json"])
def test_report_with_a_broken_folder_file_is_one_line(tmp_path, capsys, broken):
    folder = finished_run(tmp_path)
    (folder / broken).write_text("{: [unbalanced", encoding="utf-8")
    code, err = cli(capsys, "report", str(folder))
    assert code == 2 and str(folder / broken) in err


def test_fit_listener_out_on_a_folder_is_refused_first(tmp_path, capsys):
    folder = finished_run(tmp_path)
    code, err = cli(capsys, "fit-listener", str(folder), "--out", str(tmp_path))
    assert code == 2 and "--out" in err and "is a folder" in err


# -- hangs ---------------------------------------------------------------------------------

def test_a_yaml_bomb_in_agent_params_is_refused_quickly(tmp_path):
    bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 9):
        bomb.append(f"{chr(97 + level)}: &{chr(97 + level)} " + "[" +
                    ",".join([f"*{chr(96 + level)}"] * 9) + "]")
    text = ("name: bomb\ngames: 2\ndeck: numbered-60\nplayers:\n  - random\n  - random\n"
            "  - agent: random\n    params:\n" + "".join(f"      {b}\n" for b in bomb))
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="YAML aliases"):
        load_config(path)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("change, message", [
    ({"games": 100_000_000_000}, "games: Input should be less than or equal"),
    ({"deck": "numbered-100000000"}, "deck: a numbered deck has at most"),
    ({"sweep": {"seed": list(range(100)), "games": list(range(1, 1001))}},
     "the grid has 100,000 points"),
])
def test_huge_requests_are_bounded_with_a_clear_error(tmp_path, capsys, change, message):
    start = time.perf_counter()
    code, err = cli(capsys, "run", str(write_config(tmp_path, {**BASE, **change})),
                    "--out", str(tmp_path / "out"), "--quiet")
    assert code == 2 and message in err
    assert time.perf_counter() - start < 10 and not (tmp_path / "out").exists()


# -- imprecise errors ----------------------------------------------------------------------

def test_a_config_that_is_not_utf8_is_named(tmp_path, capsys):
    path = tmp_path / "latin.yaml"
    path.write_bytes(yaml.safe_dump(BASE).encode() + "description: caf\xe9\n".encode("latin-1"))
    code, err = cli(capsys, "run", str(path), "--quiet")
    assert code == 2 and f"{path}: not UTF-8" in err


def small_folder_deck(where: Path, csv_text: str | bytes) -> Path:
    folder = where / "deck"
    (folder / "images").mkdir(parents=True)
    source = data_root() / "decks" / "dreams" / "images"
    for number in (1, 2, 3):
        shutil.copy(source / f"dreams-00{number}.webp", folder / "images" / f"{number}.webp")
    data = csv_text.encode("utf-8") if isinstance(csv_text, str) else csv_text
    (folder / "cards.csv").write_bytes(data)
    return folder


def test_cards_csv_with_a_byte_order_mark_or_not_utf8(tmp_path):
    rows = "id,file,caption\n" + "".join(f"c{i},images/{i}.webp,caf\xe9\n" for i in (1, 2, 3))
    assert len(Deck.from_folder(small_folder_deck(tmp_path / "a", "\ufeff" + rows))) == 3
    folder = small_folder_deck(tmp_path / "b", rows.encode("latin-1"))
    with pytest.raises(DeckError, match=rf"{folder / 'cards.csv'}: not UTF-8"):
        Deck.from_folder(folder)


def test_a_truncated_image_names_its_card(tmp_path):
    rows = "id,file\n" + "".join(f"c{i},images/{i}.webp\n" for i in (1, 2, 3))
    folder = small_folder_deck(tmp_path, rows)
    image = folder / "images" / "2.webp"
    image.write_bytes(image.read_bytes()[: image.stat().st_size // 2])
    with pytest.raises(DeckError, match="card 'c2': cannot read image"):
        Deck.from_folder(folder)


@pytest.mark.parametrize("option", ["--workers", "--chunk-size"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_workers_and_chunk_size_must_be_positive(tmp_path, capsys, option, value):
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(write_config(tmp_path, BASE)), option, value])
    assert exit_.value.code == 2 and "must be 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("params, message", [
    ({"embedder": "conse(nope=1)"}, "embedder 'conse' has no parameter 'nope'"),
    ({"clues": "no-such-bank"}, "no-such-bank"),
    ({"model": str(Path("missing-model.json"))}, "missing-model"),
])
def test_perception_parameters_are_checked_before_the_folder(tmp_path, capsys, params,
                                                             message):
    agent = "calibrated" if "model" in params else "literal"
    data = {**BASE, "deck": "dreams",
            "players": ["random", "random", {"agent": agent, "params": params}]}
    code, err = cli(capsys, "run", str(write_config(tmp_path, data)), "--out",
                    str(tmp_path / "out"), "--quiet")
    assert code == 2 and "c.yaml: players.2.agent" in err and message in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["a file", "under a file", "a full disk"])
def test_a_cache_that_cannot_hold_vectors_warns_first_and_keeps_them(tmp_path, monkeypatch,
                                                                    where):
    import warnings

    from dixit_lab.embeddings import cache as cache_module
    from dixit_lab.embeddings import cached_embed_cards, cached_embed_texts
    from tests.embeddings.test_cache import CountingEmbedder

    monkeypatch.setattr(cache_module, "_UNUSABLE", set(), raising=False)  # none warned yet
    cards = Deck.from_folder(small_folder_deck(tmp_path, "id,file\n" + "".join(
        f"c{i},images/{i}.webp\n" for i in (1, 2, 3)))).cards
    texts = ["moon", "an old key", "falling"]
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(tmp_path / "good"))
    expected = cached_embed_cards(CountingEmbedder(), cards), \
        cached_embed_texts(CountingEmbedder(), texts)
    (tmp_path / "file").write_text("not a folder")
    bad = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "sub" / "cache",
           "a full disk": tmp_path / "full"}[where]
    monkeypatch.setenv("DIXIT_LAB_CACHE", str(bad))
    if where == "a full disk":
        def store(*args, **kwargs):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(cache_module.EmbeddingCache, "store", store)
    embedder = CountingEmbedder()
    warned_at_work: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compute = embedder.embed_images

        def embed_images(chunk):
            warned_at_work.append(len(caught))
            return compute(chunk)

        embedder.embed_images = embed_images  # type: ignore[method-assign]
        got = cached_embed_cards(embedder, cards), cached_embed_texts(embedder, texts)
    assert len(caught) == 1, [str(w.message) for w in caught]  # once, not per batch
    message = str(caught[0].message)
    assert f"$DIXIT_LAB_CACHE={bad} cannot hold embeddings" in message
    reason = "No space left" if where == "a full disk" else f"{tmp_path / 'file'} is a file"
    assert reason in message and "kept in memory" in message
    if where != "a full disk":
        assert warned_at_work == [1]  # found before the vectors were computed
    for a, b in zip(got, expected, strict=True):  # the vectors a cached run gets
        assert (a == b).all()


def test_results_files_follow_the_umask_and_names_cannot_break_the_report(tmp_path):
    config = {**BASE, "games": 6, "executor": {"kind": "local"},
              "players": [{"name": "a|b <i>x</i>", "agent": "random"}, "random", "random"]}
    old = os.umask(0o022)
    try:
        run_experiment(parse_config(config), tmp_path / "out", show_progress=False)
    finally:
        os.umask(old)
    parts = sorted((tmp_path / "out" / "rounds.parquet").iterdir())
    for name in ("games.jsonl.zst", "agents.csv", "report.md", "config.yaml", parts[0]):
        assert (tmp_path / "out" / name).stat().st_mode & 0o777 == 0o644, name
    report = (tmp_path / "out" / "report.md").read_text()
    assert "<i>" not in report
    header_pipes, checked = None, 0
    for line in report.splitlines():  # every row of a table has its header's columns
        if not line.startswith("|"):
            header_pipes = None
            continue
        pipes = line.replace("\\|", "").count("|")
        if header_pipes is None:
            header_pipes = pipes
        assert pipes == header_pipes, line
        checked += line.startswith("| a\\|b")
    assert checked >= 2  # the players' and the ratings' tables


# -- compressed records and a run's parts --------------------------------------------------

@pytest.mark.parametrize("manifest", [True, False])
def test_a_cut_short_compressed_games_file_is_refused_naming_it(tmp_path, capsys, manifest):
    folder = finished_run(tmp_path)
    if not manifest:  # a folder written before manifests: the Zstandard frame tells
        (folder / "manifest.json").unlink()
    path = folder / "games.jsonl.zst"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])  # a copy that stopped early
    code, err = cli(capsys, "report", str(folder))
    expected = "differs from what the run recorded" if manifest else "not a whole Zstandard file"
    assert code == 2 and f"{path}: " in err and expected in err, err
    assert not (folder / "agents.csv").exists()


def test_the_sums_of_an_interrupted_run_are_recomputed_not_trusted(tmp_path):
    from dixit_lab.run.parts import save_part

    config = parse_config({**BASE, "games": 12})
    clean = tmp_path / "clean"
    run_experiment(config, clean, show_progress=False)
    folder = tmp_path / "tampered"
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    lines = games_text(folder).splitlines()
    games_path(folder).unlink()
    (folder / "parts").mkdir()
    for first in (0, 6):  # the parts an interrupted run left
        save_part(folder / "parts", list(enumerate(lines))[first:first + 6], "jsonl.zst")
    stats = folder / "parts" / "stats-0000000-0000005.json"
    data = json.loads(stats.read_text())
    data["players"]["random"]["counts"]["faults"] = 99.0  # an edit, or a stray file
    stats.write_text(json.dumps(data))
    run_experiment(config, folder, show_progress=False)
    assert (folder / "agents.csv").read_text() == (clean / "agents.csv").read_text()


def test_an_agent_that_sees_images_on_a_deck_without_is_refused_before_the_folder(tmp_path,
                                                                                   capsys):
    config = {**BASE, "players": ["random", "softmax", "random"]}  # numbered-60: no images
    out = tmp_path / "out"
    code, err = cli(capsys, "run", str(write_config(tmp_path, config)), "--out", str(out))
    assert code == 2 and "players.1.agent: softmax perceives card images" in err
    assert not out.exists()
