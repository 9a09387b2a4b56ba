"""A league entry: ratings anchored to the pool agree across leagues dealt from different
secrets and order a strong entrant above a weak one; a member entered again gets its own
strength; the budget and the interval stop it; an entry already rated plays nothing; an
interrupted one resumes to the same record; the secret is published and the blocks replay;
outside code is seated in a sandbox."""

from __future__ import annotations

import json
import textwrap

import pytest

from dixit_lab.errors import ConfigError, UserError
from dixit_lab.isolation.sandbox import sandbox_problem
from dixit_lab.league import entry as entry_module
from dixit_lab.league.entry import (
    LeagueOptions,
    enter,
    opponent_sets,
    parse_entrant,
    same_member,
)
from dixit_lab.league.pool import load_pool
from dixit_lab.run.replay import replay_folder

SECRETS = ("0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210")
STRONG = "ambiguity(target=0.4)"
WEAK = "softmax(temperature=0.5)"


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def pool():
    return load_pool()


def test_two_leagues_with_different_secrets_agree_and_order_strong_above_weak(
        tmp_path, pool):
    options = LeagueOptions(target_width=0.5, deals=5)
    ratings = {}
    for league, secret in enumerate(SECRETS):
        for name, spec in (("strong", STRONG), ("weak", WEAK)):
            ratings[league, name] = enter(tmp_path / str(league), name, spec, pool, options,
                                          deal_secret=secret, say=_quiet)
    for name in ("strong", "weak"):
        first, second = ratings[0, name], ratings[1, name]
        assert first.ci_low < second.ci_high and second.ci_low < first.ci_high, name
        assert first.blocks != second.blocks  # other deals, other games
    for league in (0, 1):
        assert ratings[league, "weak"].ci_high < ratings[league, "strong"].ci_low
        assert ratings[league, "strong"].stopped == "interval"
        assert ratings[league, "strong"].width <= 0.5


def test_a_member_entered_again_meets_the_others_and_gets_its_strength(tmp_path, pool):
    assert same_member(pool, "softmax(temperature=0.3)") == "softmax-0.3"
    assert same_member(pool, "softmax(temperature=0.4)") is None
    sets = opponent_sets(pool, "literal")
    assert len(sets) == 4 and all("literal" not in chosen for chosen in sets)
    assert len(opponent_sets(pool, STRONG)) == 10  # every 3 of the 5
    record = enter(tmp_path, "again", "literal", pool, LeagueOptions(target_width=0.4,
                                                                       deals=5),
                   deal_secret=SECRETS[0], say=_quiet)
    assert record.ci_low < pool.strengths["literal"] < record.ci_high


def test_the_budget_stops_it_and_a_rated_entrant_plays_nothing(tmp_path, pool):
    lines: list[str] = []
    options = LeagueOptions(target_width=0.01, max_games=40, deals=2)
    record = enter(tmp_path, "e", WEAK, pool, options, say=lines.append)
    assert (record.status, record.stopped, record.games) == ("done", "max_games", 40)
    assert len(record.blocks) == 5 and len(lines) == 5
    again = enter(tmp_path, "e", WEAK, pool, options, say=lines.append)
    assert again == record
    assert lines[-1] == "e: already rated (40 games), nothing to play"
    assert len(list((tmp_path / "entrants" / "e" / "blocks").iterdir())) == 5
    with pytest.raises(UserError, match="was entered as softmax.*under another name"):
        enter(tmp_path, "e", STRONG, pool, options, say=_quiet)
    with pytest.raises(UserError, match="the name of a member of the reference pool"):
        enter(tmp_path, "literal", STRONG, pool, options, say=_quiet)


def test_an_interrupted_entry_resumes_to_the_same_record(tmp_path, pool, monkeypatch):
    options = LeagueOptions(target_width=0.01, max_games=48, deals=2)
    whole = enter(tmp_path / "whole", "e", WEAK, pool, options, deal_secret=SECRETS[0],
                  say=_quiet)
    real = entry_module.play_block
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(entry_module, "play_block", interrupted)
    with pytest.raises(KeyboardInterrupt):
        enter(tmp_path / "cut", "e", WEAK, pool, options, deal_secret=SECRETS[0],
              say=_quiet)
    kept = json.loads((tmp_path / "cut" / "entrants" / "e" / "entrant.json").read_text())
    assert kept["status"] == "playing" and len(kept["blocks"]) == 2
    monkeypatch.setattr(entry_module, "play_block", real)
    resumed = enter(tmp_path / "cut", "e", WEAK, pool, options, say=_quiet)
    for field in ("strength", "ci_low", "ci_high", "games", "stopped", "deal_secret"):
        assert getattr(resumed, field) == getattr(whole, field), field
    assert [b["opponents"] for b in resumed.blocks] == [b["opponents"] for b in whole.blocks]


def test_the_secret_is_published_when_done_and_a_block_replays(tmp_path, pool):
    record = enter(tmp_path, "e", WEAK, pool, LeagueOptions(max_games=16, deals=2),
                   say=_quiet)
    folder = tmp_path / "entrants" / "e"
    assert record.deal_secret == (folder / "deal_secret").read_text().strip()
    assert record.deal_secret == (folder / "blocks" / "001" / "deal_secret").read_text().strip()
    assert oct((folder / "deal_secret").stat().st_mode & 0o777) == "0o600"
    compared, difference = replay_folder(folder / "blocks" / "001", executor="local",
                                         show_progress=False)
    assert (compared, difference) == (8, None)
    assert record.provenance["dixit_lab_code"] and record.provenance["deck_fingerprint"] == \
        pool.deck_fingerprint


def test_outside_code_is_seated_in_a_sandbox_or_refused(tmp_path, pool):
    code = tmp_path / "mine.py"
    code.write_text(textwrap.dedent("""
        from dixit_lab_agents.literal import LiteralAgent

        class Mine(LiteralAgent):
            pass
    """))
    spec = f"{code}:Mine"
    options = LeagueOptions(max_games=8, deals=2)
    problem = sandbox_problem()
    if problem is not None:
        with pytest.raises(UserError, match="a league seats in a sandbox"):
            enter(tmp_path / "l", "mine", spec, pool, options, say=_quiet)
        return
    record = enter(tmp_path / "l", "mine", spec, pool, options, say=_quiet)
    assert record.isolation == "sandbox" and record.games == 8
    config = (tmp_path / "l" / "entrants" / "mine" / "blocks" / "000" / "config.yaml")
    assert "isolation: sandbox" in config.read_text()
    assert record.provenance["agent_code"][0]["path"] == str(code)


def test_entrants_are_named_or_refused_in_one_line():
    assert parse_entrant("strong=ambiguity(target=0.4)") == ("strong", STRONG)
    assert parse_entrant("literal") == ("literal", "literal")
    with pytest.raises(UserError, match="name it, NAME=SPEC"):
        parse_entrant("softmax(temperature=0.5)")
    with pytest.raises(UserError):
        parse_entrant("x=softmax(temperature=")


def test_a_damaged_record_and_other_options_are_one_line(tmp_path, pool):
    options = LeagueOptions(max_games=16, deals=2)
    enter(tmp_path, "e", WEAK, pool, options, say=_quiet)
    path = tmp_path / "entrants" / "e" / "entrant.json"
    kept = json.loads(path.read_text())
    for field, value in (("strength", "high"), ("blocks", 5), ("games", None)):
        path.write_text(json.dumps({**kept, field: value}))
        with pytest.raises(ConfigError, match=f"is not an entrant's record \\({field} is"):
            enter(tmp_path, "e", WEAK, pool, options, say=_quiet)
    path.write_text(json.dumps({**kept, "status": "playing"}))
    with pytest.raises(UserError, match="was started with other options \\(max_games 16 -> "
                                        "400\\)"):
        enter(tmp_path, "e", WEAK, pool, LeagueOptions(max_games=400, deals=2), say=_quiet)


def test_max_games_rounds_up_to_whole_deals(tmp_path, pool):
    record = enter(tmp_path, "e", WEAK, pool, LeagueOptions(max_games=10, deals=2),
                   say=_quiet)
    assert (record.games, record.stopped) == (12, "max_games")


def test_outside_code_out_of_a_sandbox_is_warned(tmp_path, pool, capsys):
    code = tmp_path / "mine.py"
    code.write_text("from dixit_lab_agents.random_agent import RandomAgent\n\n"
                    "class Mine(RandomAgent):\n    pass\n")
    enter(tmp_path / "l", "mine", f"{code}:Mine", pool,
          LeagueOptions(max_games=4, deals=1, isolation="process"), say=_quiet)
    error = capsys.readouterr().err
    assert "plays outside code with isolation: process" in error
    assert "its deals are not sealed" in error
