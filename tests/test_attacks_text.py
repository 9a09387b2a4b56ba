"""Attacks with text that breaks files (issue 26, item 1): lone surrogates, line and paragraph
separators and control characters in people's clues and names, models' clues, agents' clues
and messages, configs, clue banks and decks' captions. Each is refused where it enters, with
one line naming where, or recorded so that every line splitter reads the file right; never a
lost game, a run that cannot finish or a folder that `replay` calls edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from dixit_lab.cli.main import main
from dixit_lab.core.cards import Deck, DeckError, data_root
from dixit_lab.core.clues import ClueBank, ClueBankError
from dixit_lab.run.experiment import ConfigError, parse_config
from dixit_lab.run.replay import replay_folder
from dixit_lab.run.runner import FaultShareError, run_experiment
from tests.games_files import games_text

BASE = {"name": "text", "seed": 3, "deck": "numbered-60", "players": ["random"] * 3,
        "games": 4, "executor": {"kind": "local"}}
#: what breaks files or readers: a lone surrogate (not Unicode: no UTF-8 for it), the line and
#: paragraph separators that str.splitlines() splits on, other control characters, and a
#: format character (a right-to-left override, which makes a clue read backwards)
BAD = {"surrogate": "\ud800", "line separator": "\u2028", "paragraph separator": "\u2029",
       "next line": "\x85", "newline": "\n", "carriage return": "\r", "nul": "\x00",
       "escape": "\x1b", "rtl override": "\u202e"}


def bad(kind: str) -> str:
    return f"dark{BAD[kind]}moon"


def one_line_error(capsys, *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- the rule, used by the web -------------------------------------------------------------

@pytest.mark.parametrize("kind", list(BAD))
def test_a_persons_clue_that_would_break_the_files_is_refused(kind):
    from dixit_lab.web.moves import IllegalMove, check_clue

    with pytest.raises(IllegalMove) as refused:
        check_clue(bad(kind))
    assert refused.value.rule == "clue-characters" and refused.value.status == 422
    assert check_clue("  a dark moon  ") == "a dark moon"  # ordinary text still passes


def test_the_web_the_models_and_the_engine_share_one_rule():
    from dixit_lab import text_rule
    from dixit_lab.vlm import parse
    from dixit_lab.web import moves

    for kind in BAD:
        assert text_rule.text_problem(bad(kind)), kind
    assert text_rule.text_problem("le cœur à l'envers — 夢 🌙") is None
    assert moves.text_problem is text_rule.text_problem  # one function in one place
    assert parse.text_problem is text_rule.text_problem


def test_a_persons_clue_with_a_lone_surrogate_is_refused_and_the_game_goes_on(tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from dixit_lab.web.play_app import play_app
    from tests.web_support import config_data, legal_move, start_table

    data = config_data([{"name": "you", "agent": "human"}, {"name": "a", "agent": "random"},
                        {"name": "b", "agent": "random"}], max_rounds=1)
    table, thread = start_table(tmp_path, data)
    client = TestClient(play_app(table, ["testserver"]))
    url = f"/api/play/{table.humans[0].token}"
    try:
        view = client.get(url).json()
        told = False
        while view["phase"] != "over":
            if view["phase"] == "wait":
                view = client.get(url, params={"after": view["version"]}).json()
                continue
            if view["phase"] == "tell":  # the body holds "\ud800": valid JSON, not Unicode
                body = json.dumps({"tell": {"card": view["hand"][0]["card"],
                                            "clue": "moon \ud800"}})
                response = client.post(url, content=body.encode("ascii"))
                # refused before the move is read: the body is not Unicode text
                # (docs/humans.md; a line separator in a clue is a 422 clue-characters)
                assert response.status_code == 400, response.text
                assert response.json()["rule"] == "malformed"
                assert client.get(url).status_code == 200  # every view still answers
                told = True
            response = client.post(url, json=legal_move(view))
            assert response.status_code == 200, response.text
            view = response.json()
    finally:
        table.stop()
        thread.join(timeout=30)
    if not told:
        pytest.skip("the person was not the storyteller in this short game")
    assert replay_folder(tmp_path, executor="local", show_progress=False) == (1, None)


# -- configs: names ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(BAD))
def test_a_player_name_that_would_break_the_files_is_refused(tmp_path, kind):
    data = {**BASE, "players": [{"name": bad(kind), "agent": "random"}, "random", "random"]}
    with pytest.raises(ConfigError, match=r"c\.yaml: players\.0\.name: "):
        parse_config(data, "c.yaml")


def test_an_experiment_name_with_a_line_separator_is_refused():
    with pytest.raises(ConfigError, match=r"c\.yaml: name: "):
        parse_config({**BASE, "name": "exp\u2028one"}, "c.yaml")


def test_a_lone_surrogate_anywhere_in_a_config_is_refused_naming_the_field(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    text = yaml.safe_dump({**BASE, "description": "x"}).replace("description: x",
                                                                'description: "a \\ud800"')
    path.write_text(text, encoding="utf-8")
    err = one_line_error(capsys, "run", str(path), "--out", str(tmp_path / "out"), "--quiet")
    assert f"{path}: description: " in err and "surrogate" in err
    assert not (tmp_path / "out").exists()


# -- agents' clues and messages: faults, recorded so that any splitter reads them ----------

BAD_AGENT = '''
from dixit_lab.core.agent import Clue
from dixit_lab_agents.random_agent import RandomAgent


class BadText(RandomAgent):
    """Tells a clue holding the text under attack; raises with it in the message when it
    votes in round 1."""

    def tell(self, view):
        card = super().tell(view).card
        return Clue(card, "moon" + TEXT)

    def vote(self, view):
        if view.round == 1:
            raise ValueError("cannot decide" + TEXT)
        return super().vote(view)
'''


@pytest.mark.parametrize("kind", ["surrogate", "line separator", "paragraph separator",
                                  "next line", "nul"])
def test_an_agents_bad_clue_is_a_fault_and_the_folder_replays(tmp_path, kind):
    source = tmp_path / "bad_text.py"
    source.write_text(BAD_AGENT.replace("TEXT", repr(BAD[kind])), encoding="utf-8")
    data = {**BASE, "engine": "reference", "rules": {"preset": "classic",
                                                    "options": {"max_rounds": 3}},
            "players": [{"name": "bad", "agent": f"{source}:BadText"}, "random", "random"]}
    folder = tmp_path / "out"
    with pytest.raises(FaultShareError, match="bad had"):  # loud, once every game is saved
        run_experiment(parse_config(data), folder, show_progress=False)
    text = games_text(folder)
    assert len(text.splitlines()) == 4 == text.count("\n")  # any splitter: one line a game
    faults = [fault for line in text.split("\n") if line
              for rnd in json.loads(line)["rounds"] for fault in rnd.get("faults", [])]
    tells = [f for f in faults if f["action"] == "tell"]
    assert tells and all(f["kind"] == "illegal" for f in tells)
    assert any(f["action"] == "vote" and f["kind"] == "raised" for f in faults)
    assert "moon" + BAD[kind] not in text  # the bad clue was replaced, never recorded
    assert replay_folder(folder, executor="local", show_progress=False) == (4, None)


HOSTILE_MESSAGE = '''
from dixit_lab_agents.random_agent import RandomAgent


class Loud(RandomAgent):
    """Every vote raises with a message that would clear a terminal, retitle it, read
    backwards, break lines and fill screens."""

    def vote(self, view):
        raise RuntimeError("\\x1b[2J\\x1b]0;pwned\\x07 evil\\u202etxt.exe\\nline\\u2028"
                           + "x" * 100_000)
'''


def test_an_agents_hostile_fault_message_is_shown_escaped_and_cut(tmp_path, capsys):
    source = tmp_path / "loud.py"
    source.write_text(HOSTILE_MESSAGE, encoding="utf-8")
    data = {**BASE, "engine": "reference", "rules": {"preset": "classic",
                                                    "options": {"max_rounds": 3}},
            "players": [{"name": "loud", "agent": f"{source}:Loud"}, "random", "random"]}
    config = tmp_path / "loud.yaml"
    config.write_text(yaml.safe_dump(data))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    captured = capsys.readouterr()
    line = next(line for line in captured.out.splitlines() if line.startswith("faults: loud"))
    shown = "\\x1b[2J\\x1b]0;pwned\\x07 evil\\u202etxt.exe\\nline\\u2028xxx"
    assert shown in line and line.endswith("x…") and len(line) < 500
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert shown in report
    for text in (captured.out, captured.err, report):
        assert not any(char in text for char in "\x1b\x07\u202e\u2028"), "raw on the terminal"
    assert "x" * 1000 not in captured.out + report  # cut, however long the message


def test_a_record_is_one_line_for_every_splitter():
    from dixit_lab.records.format import Fault, GameRecord, RoundRecord

    message = "x\u2028y\u2029z\x85w\nv\rq\x0bk\x0cl\x1cm\x1dn\x1eo"
    rnd = RoundRecord(0, "clue", 1, (1, 2, 3), (0, 1, 2), (None, 0, 0), (0, 3, 3), (0, 3, 3),
                      (Fault(1, "a", "vote", message, "raised"),), (1, 4, 5))
    record = GameRecord(1, (0,), "classic", {}, ("a", "b", "c"), "d", (rnd,), (0, 3, 3),
                        (1, 2), "max_rounds", {"game": 0, "players": ["p\u2028", "q", "r"]})
    line = record.to_json()
    assert line.splitlines() == [line]
    assert "\u2028" not in line and "\u2029" not in line and "\x85" not in line
    assert GameRecord.from_json(line) == record


# -- models' clues -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(BAD))
def test_a_models_clue_that_would_break_the_files_is_an_illegal_reply(kind):
    """A model's clue is read leniently (its whitespace, line breaks included, collapsed to a
    space), then held to the rule: what is left that breaks it is an illegal reply."""
    from dixit_lab.vlm.parse import ReplyProblem, read_reply

    content = json.dumps({"card": 2, "clue": bad(kind)})  # escaped: valid JSON
    if BAD[kind].isspace():
        assert read_reply({"message": {"content": content}}, "tell", [1, 2, 3]) == \
            {"card": 2, "clue": "dark moon"}
        return
    with pytest.raises(ReplyProblem) as problem:
        read_reply({"message": {"content": content}}, "tell", [1, 2, 3])
    assert problem.value.kind == "illegal"


def _play_a_model_whose_clues_are(tmp_path, monkeypatch, clue: str, *, escaped: bool):
    """Two short games of a stub model whose every clue is ``clue`` (its JSON escaped or the
    text itself): the results folder and its records."""
    from dixit_lab.vlm import stub

    original = stub._completion

    def clues(request, behaviour, digest, *rest):
        reply = original(request, behaviour, digest, *rest)
        message = reply["choices"][0]["message"]
        answer = json.loads(message["content"])
        if "clue" in answer:
            answer["clue"] = clue
            message["content"] = json.dumps(answer, ensure_ascii=escaped)
        return reply

    monkeypatch.setattr(stub, "_completion", clues)
    options = "timeout=5, backoff=0.01, http_retries=1, retries=1"
    with stub.StubServer() as server:
        data = {**BASE, "deck": "dreams", "games": 2,
                "rules": {"preset": "classic", "options": {"max_rounds": 3}},
                "players": [{"name": "model", "agent": f"llm(model=good, base_url="
                                                       f"{server.base_url}, {options})"},
                            "random", "random"]}
        folder = tmp_path / "out"
        run_experiment(parse_config(data), folder, show_progress=False)
    return folder, [json.loads(line) for line in games_text(folder).split("\n") if line]


def test_a_model_that_answers_a_lone_surrogate_costs_a_fault_not_the_run(tmp_path,
                                                                          monkeypatch):
    pytest.importorskip("httpx")
    # "\ud800" escaped in the reply: valid JSON
    folder, records = _play_a_model_whose_clues_are(tmp_path, monkeypatch, "moon \ud800",
                                                    escaped=True)
    tells = [f for r in records for rnd in r["rounds"] for f in rnd.get("faults", [])
             if f["action"] == "tell"]
    assert tells and {f["kind"] for f in tells} == {"illegal"}
    assert replay_folder(folder, executor="local", show_progress=False) == (2, None)



@pytest.mark.parametrize("kind", ["surrogate", "line separator", "next line"])
def test_a_models_raw_bad_text_is_stored_and_replayed(tmp_path, monkeypatch, kind):
    """The reply's JSON holds the character itself (a lone surrogate as JSON's own escape):
    the exchange store keeps it (its lines are one line for every splitter, a surrogate
    escaped), the clue is an illegal fault, and the folder replays offline."""
    pytest.importorskip("httpx")
    folder, records = _play_a_model_whose_clues_are(tmp_path, monkeypatch, bad(kind),
                                                    escaped=False)  # the text itself
    faults = [f for r in records for rnd in r["rounds"] for f in rnd.get("faults", [])]
    assert {f["kind"] for f in faults} <= {"illegal"}, faults  # a line break: a space
    assert kind != "surrogate" or any(f["action"] == "tell" for f in faults)
    segments = list((folder / "exchanges").glob("*.jsonl"))
    assert segments
    for segment in segments:
        text = segment.read_text(encoding="utf-8")
        assert len(text.splitlines()) == text.count("\n")
    assert replay_folder(folder, executor="local", show_progress=False) == (2, None)

# -- clue banks and decks' captions --------------------------------------------------------

@pytest.mark.parametrize("kind", ["line separator", "paragraph separator", "next line", "nul",
                                  "escape", "rtl override"])
def test_a_clue_bank_line_that_would_break_the_files_is_refused_naming_it(tmp_path, kind):
    txt = tmp_path / "bank.txt"
    txt.write_text(f"moon\nsun\n{bad(kind)}\nstar\n", encoding="utf-8")
    with pytest.raises(ClueBankError, match=rf"{txt}, line 3: "):
        ClueBank.load(txt)
    csv_path = tmp_path / "bank.csv"
    csv_path.write_text(f'text,kind\nmoon,a\n"{bad(kind)}",b\nstar,c\n', encoding="utf-8")
    with pytest.raises(ClueBankError, match=rf"{csv_path}, line 3: "):
        ClueBank.load(csv_path)


def test_a_clue_bank_in_memory_with_a_lone_surrogate_is_refused():
    with pytest.raises(ClueBankError, match="surrogate"):
        ClueBank.from_texts(["moon", "dark \ud800"])


@pytest.mark.parametrize("column", ["caption", "alt_caption", "id"])
@pytest.mark.parametrize("kind", ["line separator", "nul", "rtl override"])
def test_a_deck_caption_that_would_break_the_files_is_refused_naming_it(tmp_path, column,
                                                                         kind):
    folder = tmp_path / "deck"
    (folder / "images").mkdir(parents=True)
    source = data_root() / "decks" / "dreams" / "images"
    rows = []
    for number in (1, 2, 3):
        shutil.copy(source / f"dreams-00{number}.webp", folder / "images" / f"{number}.webp")
        cells = {"id": f"c{number}", "caption": "a cat", "alt_caption": "a dog"}
        if number == 2:
            cells[column] = bad(kind)
        rows.append(f'"{cells["id"]}",images/{number}.webp,"{cells["caption"]}",'
                    f'"{cells["alt_caption"]}"\n')
    csv_path: Path = folder / "cards.csv"
    csv_path.write_text("id,file,caption,alt_caption\n" + "".join(rows), encoding="utf-8")
    with pytest.raises(DeckError, match=rf"{csv_path}, line 3: {column}"):
        Deck.from_folder(folder)
