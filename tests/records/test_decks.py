"""Every reader of a results folder uses the deck the games were played with (config.yaml's
``deck_played``), never the bundled deck a record's deck name happens to match; a deck
folder edited since is refused in one line."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml
from PIL import Image

from dixit_lab.cli.main import main
from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.errors import ConfigError
from dixit_lab.records.batches import file_batches
from dixit_lab.records.decks import by_name, folder_deck, folder_decks
from dixit_lab.records.format import read_jsonl
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab_agents.random_agent import RandomAgent
from tests.deck_support import image_deck, new_process


class IdTeller(RandomAgent):
    """A random player whose predicted find rate is read from the deck it is given: card
    ``mine-NN`` predicts NN/100, any other card -1 (what the readers hand it is then seen)."""

    def begin_game(self, context):
        super().begin_game(context)
        self.deck = context.deck

    def predicted_find(self, hand, card, clue_text, round_number):
        card_id = self.deck.cards[card].id
        return int(card_id[5:]) / 100 if card_id.startswith("mine-") else -1.0


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``dixit-lab argv``; an error must be one line."""
    code = main(list(argv))
    captured = capsys.readouterr()
    err = captured.err.strip()
    if code == 2:
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return code, captured.out, err


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A results folder of games played on ./dreams, a folder deck named like the bundled
    deck, with the configs' own working directory."""
    root = tmp_path_factory.mktemp("mine")
    deck = image_deck(root / "dreams")
    data = {"name": "mine", "seed": 3, "deck": str(deck), "games": 4,
            "players": [{"name": "teller", "agent": "tests.records.test_decks:IdTeller"},
                        {"name": "other", "agent": "random", "count": 2}],
            "executor": {"kind": "local"}}
    folder = root / "out"
    run_experiment(parse_config(data), folder, show_progress=False)
    records = list(read_jsonl(folder))
    assert {record.deck for record in records} == {"dreams"}  # the bundled deck's name
    shown = {c for r in records for rnd in r.rounds for c in (*rnd.display,
                                                              rnd.storyteller_card)}
    assert max(shown) >= len(load_deck("dreams"))  # cards the bundled deck does not have
    return folder, Deck.from_folder(deck), records


def test_the_lookup_is_the_recorded_deck_and_by_name_without_a_folder(played, tmp_path):
    folder, deck, _ = played
    assert folder_deck(folder).fingerprint == deck.fingerprint
    assert folder_decks(folder)("dreams").fingerprint == deck.fingerprint
    assert folder_decks(folder / "games.jsonl.zst")("dreams").fingerprint == deck.fingerprint
    assert by_name("dreams").fingerprint == load_deck("dreams").fingerprint != deck.fingerprint
    assert folder_decks(tmp_path) is by_name  # a games file alone: its decks by name
    assert by_name("no-such-deck") is None


def test_the_checks_of_a_games_file_bound_its_cards_by_the_folder_deck(played):
    folder, _, _ = played
    games = folder / "games.jsonl.zst"
    assert sum(b.games for b in file_batches(games, decks=folder_decks(folder))) == 4
    with pytest.raises(ConfigError, match="contradict their own scores, seats or cards"):
        list(file_batches(games))  # by name: the bundled dreams, whose 84 cards are too few


def _ids(deck: Deck, cards) -> list[str]:
    return [deck.cards[c].id for c in cards]


def test_the_round_table_names_the_folder_decks_cards(played, capsys, tmp_path):
    folder, deck, records = played
    expected = [deck.cards[rnd.storyteller_card].id for r in records for rnd in r.rounds]

    def tellers() -> list[str]:
        rows = pd.read_parquet(folder / "rounds.parquet")
        rows = rows[rows.role == "storyteller"].sort_values(["game", "round"])
        return rows.storyteller_card.astype(str).tolist()

    assert tellers() == expected  # as the run wrote it
    code, _, err = cli(capsys, "report", str(folder))  # and rebuilt from the games file
    assert code == 0, err
    assert tellers() == expected


def test_find_rates_ask_the_storyteller_with_the_folder_deck(played, capsys):
    folder, deck, records = played
    predicted = [int(deck.cards[rnd.storyteller_card].id[5:]) / 100
                 for r in records for rnd in r.rounds if r.agents[rnd.storyteller] != "random"]
    assert predicted
    for rebuilt in (False, True):
        if rebuilt:
            assert cli(capsys, "report", str(folder))[0] == 0
        agents = pd.read_csv(folder / "agents.csv").set_index("player")
        assert agents.loc["teller", "predicted_find_rate"] == pytest.approx(
            sum(predicted) / len(predicted))


def test_show_names_the_folder_decks_cards(played, capsys):
    folder, deck, records = played
    code, out, err = cli(capsys, "show", str(folder), "--game", "0")
    assert code == 0, err
    first = records[0].rounds[0]
    assert all(card_id in out for card_id in _ids(deck, first.display))
    assert "dreams-0" not in out


def test_the_bench_export_names_the_folder_decks_cards(played, capsys, tmp_path):
    folder, deck, records = played
    out = tmp_path / "bench.jsonl"
    code, _, err = cli(capsys, "export-bench", str(folder), "--out", str(out))
    assert code == 0, err
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    first = records[0].rounds[0]
    assert items[0]["candidates"] == _ids(deck, first.display)
    assert all(card.startswith("mine-") for item in items for card in item["candidates"])


def test_the_viewer_shows_the_folder_decks_cards_and_images(played):
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    pytest.importorskip("httpx", reason="fastapi's TestClient needs httpx")
    from fastapi.testclient import TestClient

    from dixit_lab.web.view_app import ResultsIndex, view_app

    folder, deck, records = played
    client = TestClient(view_app(ResultsIndex.open(folder), ["testserver"]))
    game = client.get("/api/runs/0/games/0").json()
    first = game["rounds"][0]
    assert [card["id"] for card in first["display"]] == _ids(deck, records[0].rounds[0].display)
    image = client.get(first["display"][0]["image"])
    assert image.status_code == 200
    assert image.content == deck.cards[records[0].rounds[0].display[0]].image.read_bytes()


def test_a_deck_folder_edited_since_is_refused_in_one_line(played, tmp_path, monkeypatch,
                                                           capsys):
    folder, _, _ = played
    copy = tmp_path / "copy"  # the results of a deck of the same cards, elsewhere
    shutil.copytree(folder, copy)
    deck = image_deck(tmp_path / "dreams")
    header = yaml.safe_load((copy / "config.yaml").read_text(encoding="utf-8"))
    header["deck_played"]["spec"] = str(deck)
    (copy / "config.yaml").write_text(yaml.safe_dump(header), encoding="utf-8")
    new_process(monkeypatch)
    assert folder_deck(copy).fingerprint == header["deck_played"]["fingerprint"]
    Image.new("RGB", (8, 8), (1, 2, 3)).save(deck / "images" / "0.png")  # then edited
    new_process(monkeypatch)
    changed = f"{copy / 'config.yaml'}: the deck {deck} has changed since these games"
    for argv in (["show", str(copy), "--game", "0"], ["report", str(copy)],
                 ["export-bench", str(copy), "--out", str(tmp_path / "b.jsonl")]):
        code, _, err = cli(capsys, *argv)
        assert code == 2 and changed in err, (argv, err)
    with pytest.raises(ConfigError, match="has changed since"):
        folder_decks(copy / "games.jsonl.zst")
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    from dixit_lab.web.view_app import ResultsIndex

    with pytest.raises(ConfigError, match="has changed since"):
        ResultsIndex.open(copy)
