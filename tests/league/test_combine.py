"""Leagues pooled: one rating over every entry's games, narrower than each; refused in one line
when a folder is no league, when the same name is another agent, or when the output is one of
the sources."""

from __future__ import annotations

import json

import pytest

from dixit_lab.errors import ConfigError
from dixit_lab.league.combine import combine
from dixit_lab.league.entry import LeagueOptions, enter
from dixit_lab.league.leaderboard import open_league

WEAK = "softmax(temperature=0.5)"
OPTIONS = LeagueOptions(max_games=80, deals=2)


def _league(folder, secret, spec=WEAK):
    pool = open_league(folder)
    return enter(folder, "weak", spec, pool, OPTIONS, deal_secret=secret, say=lambda _: None)


def test_two_leagues_pool_into_one_narrower_rating(tmp_path):
    first = _league(tmp_path / "a", "11" * 16)
    second = _league(tmp_path / "b", "33" * 16)
    (pooled,) = combine(tmp_path / "both", [tmp_path / "a", tmp_path / "b"])
    assert pooled.games == first.games + second.games == 160
    assert pooled.stopped == "pooled"
    assert pooled.width < min(first.width, second.width)
    assert first.strength != second.strength  # other deals (with a design this balanced,
    # the strength follows the entrant's total wins alone: "22" * 16 won as often as "11")
    assert min(first.strength, second.strength) - 0.01 <= pooled.strength <= max(
        first.strength, second.strength) + 0.01
    sources = pooled.provenance["pooled_from"]
    assert [s["deal_secret"] for s in sources] == ["11" * 16, "33" * 16]
    kept = json.loads((tmp_path / "both" / "entrants" / "weak" / "entrant.json").read_text())
    assert kept["games"] == 160
    assert "| weak | entrant |" in (tmp_path / "both" / "leaderboard.md").read_text()


def test_what_cannot_pool_is_refused_in_one_line(tmp_path):
    _league(tmp_path / "a", "11" * 16)
    _league(tmp_path / "b", "22" * 16, spec="softmax(temperature=0.6)")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match="plain is not a league folder"):
        combine(tmp_path / "out", [tmp_path / "a", tmp_path / "plain"])
    with pytest.raises(ConfigError, match="is softmax\\(temperature=0.5\\) in .* and "
                                          "softmax\\(temperature=0.6\\) in .*rename one"):
        combine(tmp_path / "out", [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(ConfigError, match="is one of the leagues to combine"):
        combine(tmp_path / "a", [tmp_path / "a"])


def test_the_command_pools_and_refuses_entering_at_once(tmp_path, capsys):
    from dixit_lab.cli.main import main

    _league(tmp_path / "a", "11" * 16)
    _league(tmp_path / "b", "33" * 16)
    assert main(["league", str(tmp_path / "out"), "--combine", str(tmp_path / "a"),
                 str(tmp_path / "b")]) == 0
    assert "weak: " in capsys.readouterr().out
    assert main(["league", str(tmp_path / "out2"), "--combine", str(tmp_path / "a"),
                 "--enter", "x=literal"]) == 2
    assert "enter agents apart" in capsys.readouterr().err
