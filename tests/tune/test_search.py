"""dixit-lab tune: the search drops candidates found worse, the confirmation replays the
contenders against each other on fresh deals, and candidates the games cannot separate are
named as tied, not as a winner."""

from __future__ import annotations

import csv
import json

import pytest
from PIL import Image

from dixit_lab.cli.main import main
from dixit_lab.core.agent import Agent, Clue
from dixit_lab.run.experiment import ConfigError
from dixit_lab.tune.report import CSV_COLUMNS
from dixit_lab.tune.search import _paired_p, grid_values, search_leader, tune

DATA = {
    "name": "tune-test",
    "seed": 3,
    "rules": "classic",
    "deck": "dreams",
    "players": [{"name": "teller", "agent": "ambiguity", "params": {"target": 0.5}},
                {"name": "softmax", "agent": "softmax", "count": 4}],
    "games": 10,
    "executor": {"kind": "local"},
    "tune": {"parameter": "players.0.params.target", "low": 0.1, "high": 0.9, "points": 3,
             "player": "teller", "games_per_round": 40, "max_games": 600},
}


def test_tune_finds_that_middling_ambiguity_beats_the_extremes(tmp_path):
    candidates = tune(DATA, "t.yaml", tmp_path, log=lambda _: None)
    by_value = {round(c.value, 2): c for c in candidates}
    assert by_value[0.5].alive
    assert by_value[0.5].mean > by_value[0.9].mean
    assert not by_value[0.9].alive  # an obvious clue is found by everyone: dropped early
    assert len(by_value[0.9].samples) <= len(by_value[0.5].samples)
    # the search stops once one candidate is left, well before its budget
    assert sum(len(c.samples) for c in candidates) < DATA["tune"]["max_games"]
    summary = json.loads((tmp_path / "tune.json").read_text())
    assert summary["best_value"] == 0.5 and summary["verdict"] == "best"
    assert summary["still_in_race"] == [0.5]
    with Image.open(tmp_path / "tune.png") as png:
        assert png.text["Title"] == "best value: 0.5"
    rows = read_rows(tmp_path)
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [row["value"] for row in rows] == ["0.1", "0.5", "0.9"]
    assert [row["verdict"] for row in rows] == ["dropped", "best", "dropped"]
    assert rows[1]["p_versus_leader"] == ""  # the leader's own row
    for row in rows:
        assert all(len(row[k].split(".")[-1]) <= 4 for k in ("mean", "ci_low", "ci_high"))
        mean, half = float(row["mean"]), float(row["half_width_95"])
        assert float(row["ci_low"]) == pytest.approx(mean - half, abs=2e-4)
        assert float(row["ci_high"]) == pytest.approx(mean + half, abs=2e-4)


def test_grid_values_are_the_decimals_a_person_writes() -> None:
    assert grid_values(0.1, 0.9, 9) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert [str(v) for v in grid_values(0.1, 0.9, 9)][2] == "0.3"  # not 0.30000000000000004


def test_an_integer_grid_rounds_halves_up_and_keeps_each_integer_once() -> None:
    from dixit_lab.tune.candidates import integer_grid

    assert integer_grid(0, 5, 3) == [0, 3, 5]  # 0, 2.5, 5
    assert integer_grid(1, 4, 9) == [1, 2, 3, 4]
    assert integer_grid(0, 1000, 3) == [0, 500, 1000]


def test_tune_errors(tmp_path):
    with pytest.raises(ConfigError, match="no 'tune' section"):
        tune({k: v for k, v in DATA.items() if k != "tune"}, "t.yaml", tmp_path)
    bad = {**DATA, "tune": {**DATA["tune"], "metric": "happiness"}}
    with pytest.raises(ConfigError, match="unknown metric 'happiness'"):
        tune(bad, "t.yaml", tmp_path)
    bad = {**DATA, "tune": {**DATA["tune"], "player": "nobody"}}
    with pytest.raises(ConfigError, match="no player named 'nobody'"):
        tune(bad, "t.yaml", tmp_path)


def test_cli_tune(tmp_path, capsys):
    import yaml

    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({**DATA, "tune": {**DATA["tune"], "max_games": 120}}))
    assert main(["tune", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    verdict = json.loads((tmp_path / "out" / "tune.json").read_text())["verdict"]
    assert ("best value: " if verdict == "best" else "tied: ") in out
    assert "95% interval half-width" in out and "tune.json" in out


def test_cli_tune_writes_into_the_configs_results_folder(tmp_path, capsys, monkeypatch):
    import yaml

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({**DATA, "tune": {**DATA["tune"], "max_games": 120}}))
    assert main(["tune", str(path)]) == 0
    assert (tmp_path / "results" / "tune-test" / "tune.csv").is_file()
    assert "results/tune-test/tune.csv" in capsys.readouterr().out


def read_rows(folder):
    with (folder / "tune.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_the_contenders_play_each_other_on_fresh_deals(tmp_path):
    """Three close targets and a small budget leave several contenders: the confirmation
    plays each on the same fresh deals and reports every pair's difference with its interval;
    the csv gives each contender's confirmed mean and its difference from the confirmation's
    leader (blank on the leader's row)."""
    data = {**DATA, "tune": {**DATA["tune"], "low": 0.4, "high": 0.6, "max_games": 120,
                             "confirm_games": 30}}
    candidates = tune(data, "t.yaml", tmp_path, log=lambda _: None)
    summary = json.loads((tmp_path / "tune.json").read_text())
    confirmed = summary["confirmed"]
    contenders = [c for c in candidates if c.confirm_by_deal]
    assert len(contenders) >= 2 and confirmed["seed"] != DATA["seed"]
    assert confirmed["deals"] == 30 and confirmed["games"] == 30 * len(contenders)
    assert all(len(c.confirm_by_deal) == 30 for c in contenders)
    assert len(confirmed["differences"]) == len(contenders) * (len(contenders) - 1) // 2
    for difference in confirmed["differences"]:
        low, high = difference["ci"]
        assert low <= difference["difference"] <= high and difference["deals"] == 30
        if difference["separated"]:  # Holm at alpha / 2 is stricter than the 95% interval
            assert not low < 0 < high
    for entry in confirmed["contenders"]:
        assert entry["ci"][0] < entry["mean"] < entry["ci"][1] and entry["games"] == 30
    rows = {row["value"]: row for row in read_rows(tmp_path)}
    leader = f"{confirmed['leader_value']:g}"
    assert rows[leader]["confirm_versus_leader"] == "" and rows[leader]["confirm_mean"] != ""
    for c in contenders:
        row = rows[f"{c.value:g}"]
        assert int(row["confirm_games"]) == 30
        if row["value"] != leader:
            assert float(row["confirm_versus_leader_low"]) <= float(
                row["confirm_versus_leader"]) <= float(row["confirm_versus_leader_high"])
    in_race = [c.value for c in candidates if c.alive]
    assert summary["still_in_race"] == in_race
    assert summary["verdict"] == ("best" if len(in_race) == 1 else "tied")
    assert (summary["best_value"] is None) == (len(in_race) > 1)


def test_p_versus_leader_is_the_p_value_against_the_leader_at_the_end(tmp_path):
    candidates = tune(DATA, "t.yaml", tmp_path, log=lambda _: None)
    leader = search_leader(candidates)
    rows = {row["value"]: row for row in read_rows(tmp_path)}
    for c in candidates:
        cell = rows[f"{c.value:g}"]["p_versus_leader"]
        if c is leader:
            assert cell == ""
        else:
            assert float(cell) == pytest.approx(_paired_p(c, leader)[1], abs=1e-4)


class Salted(Agent):
    """Uniformly random legal choices whose draws are shifted by ``salt`` (mod 1): every salt
    plays the same distribution, each its own games."""

    shifted = True

    def __init__(self, salt: float = 0.0) -> None:
        self.salt = salt

    def begin_game(self, context):
        super().begin_game(context)
        self._draws = context.uniforms

    def _pick(self, n):
        u = self._draws.next() + (self.salt if self.shifted else 0.0)
        return int((u % 1.0) * n)

    def tell(self, view):
        from dixit_lab_agents.random_agent import WORDS

        return Clue(view.hand[self._pick(len(view.hand))], WORDS[self._pick(len(WORDS))])

    def submit(self, view):
        hand = list(view.hand)
        return [hand.pop(self._pick(len(hand))) for _ in range(view.n_cards)]

    def vote(self, view):
        allowed = [i for i in range(len(view.display)) if i not in view.own_positions]
        return allowed[self._pick(len(allowed))]


class Idle(Salted):
    """Takes a ``salt`` and ignores it: every value plays the very same games."""

    shifted = False


@pytest.mark.parametrize(("agent", "listeners", "deck", "deals"), [
    ("Idle", "random", "numbered-84", 20),
    # softmax listeners read the card and the clue, so each salt plays other games
    ("Salted", "softmax", "dreams", 10)])
def test_nine_equal_candidates_are_named_as_tied(tmp_path, capsys, agent, listeners, deck,
                                                  deals):
    """A parameter that changes nothing (Idle: the same games; Salted: other games of the same
    distribution): the search drops none, the confirmation separates none, and every output
    names all nine as tied, with no best value."""
    import yaml

    data = {"name": "tied", "seed": 5, "rules": "classic", "deck": deck,
            "players": [{"name": "teller", "agent": f"tests.tune.test_search:{agent}",
                         "params": {"salt": 0.0}},
                        {"name": "reader", "agent": listeners, "count": 3}],
            "games": 10, "executor": {"kind": "local"},
            "tune": {"parameter": "players.0.params.salt", "low": 0.0, "high": 0.8,
                     "points": 9, "player": "teller", "games_per_round": deals,
                     "max_games": 9 * 3 * deals, "confirm_games": deals}}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["tune", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    values = [f"{v:g}" for v in grid_values(0.0, 0.8, 9)]
    assert f"tied: {', '.join(values)} cannot be separated" in out and "best value" not in out
    summary = json.loads((tmp_path / "out" / "tune.json").read_text())
    assert summary["verdict"] == "tied" and summary["best_value"] is None
    assert summary["still_in_race"] == grid_values(0.0, 0.8, 9)
    assert summary["games_played"] == 9 * 3 * deals  # three looks, nobody dropped
    confirmed = summary["confirmed"]
    assert len(confirmed["differences"]) == 36
    assert not any(d["separated"] for d in confirmed["differences"])
    rows = read_rows(tmp_path / "out")
    assert [row["verdict"] for row in rows] == ["tied"] * 9
    assert all(row["alive"] == "True" and row["dropped_after_look"] == "" for row in rows)
    if agent == "Idle":  # the same games: every difference is exactly 0
        assert {d["difference"] for d in confirmed["differences"]} == {0.0}
        assert {row["p_versus_leader"] for row in rows} == {"", "1.0000"}
    else:  # other games: the candidates' means differ, by chance only
        assert len({row["mean"] for row in rows}) > 1
    with Image.open(tmp_path / "out" / "tune.png") as png:
        assert png.text["Title"] == f"tied, cannot be separated: {', '.join(values)}"


def test_equal_candidates_are_rarely_dropped():
    """Nine candidates with the same mean, ten looks: paired Holm at alpha / looks drops one
    in few runs (the unpaired, uncorrected overlap rule dropped one in about a third)."""
    import numpy as np

    from dixit_lab.tune.search import Candidate, _eliminate

    rng = np.random.default_rng(11)
    runs, dropped = 40, 0
    for _ in range(runs):
        candidates = [Candidate(float(v)) for v in range(9)]
        for look in range(10):
            deal_luck = rng.normal(0, 1.0, 50)
            for c in candidates:
                if c.alive:
                    c.by_deal.update({look * 50 + i: float(x) for i, x in
                                      enumerate(deal_luck + rng.normal(0, 1.0, 50))})
            _eliminate([c for c in candidates if c.alive], 0.05, 10, look + 1)
        dropped += any(not c.alive for c in candidates)
    assert dropped / runs <= 0.1


def test_a_clearly_worse_candidate_is_dropped():
    import numpy as np

    from dixit_lab.tune.search import Candidate, _eliminate

    rng = np.random.default_rng(2)
    good, bad = Candidate(1.0), Candidate(2.0)
    luck = rng.normal(0, 2.0, 100)
    good.by_deal = dict(enumerate(luck + 0.5 + rng.normal(0, 0.3, 100)))
    bad.by_deal = dict(enumerate(luck + rng.normal(0, 0.3, 100)))
    _eliminate([good, bad], 0.05, 10, 1)
    assert good.alive and not bad.alive and bad.dropped_after == 1 and bad.p_value < 0.005


class Ranked(Idle):
    """An integer parameter (``rank``), ignored: every rank plays the very same games."""

    def __init__(self, rank: int = 1) -> None:
        super().__init__(0.0)
        self.rank = rank


QUICK = {"name": "kinds", "seed": 5, "rules": "classic", "deck": "numbered-84",
         "players": [{"name": "teller", "agent": "tests.tune.test_search:Ranked",
                      "params": {"rank": 1}},
                     {"name": "reader", "agent": "random", "count": 3}],
         "games": 10, "executor": {"kind": "local"}}


def test_an_int_parameter_is_searched_over_integers_each_once(tmp_path):
    """``kind: int``: the grid's values rounded to integers, a value met twice kept once (9
    points from 1 to 4 are 1, 2, 3, 4), and the agent gets ints (it refused 1.0)."""
    said: list[str] = []
    data = {**QUICK, "tune": {"parameter": "players.0.params.rank", "kind": "int", "low": 1,
                              "high": 4, "points": 9, "player": "teller",
                              "games_per_round": 10, "max_games": 80, "confirm_games": 10}}
    candidates = tune(data, "t.yaml", tmp_path, log=said.append)
    assert [c.value for c in candidates] == [1, 2, 3, 4]
    assert all(type(c.value) is int for c in candidates)
    assert said[0] == ("tune: players.0.params.rank takes 4 integers from 1 to 4 (9 points "
                       "rounded, each once): 1, 2, 3, 4")
    assert [row["value"] for row in read_rows(tmp_path)] == ["1", "2", "3", "4"]
    summary = json.loads((tmp_path / "tune.json").read_text())
    assert summary["still_in_race"] == [1, 2, 3, 4] and summary["verdict"] == "tied"


def test_an_int_parameter_without_kind_int_is_named(tmp_path):
    data = {**QUICK, "tune": {"parameter": "players.0.params.rank", "low": 1, "high": 4,
                              "points": 4, "player": "teller"}}
    with pytest.raises(ConfigError, match=r"^t.yaml: tune: players.0.params.rank takes "
                                          r"integers \(1.0 is refused\): add kind: int to "
                                          r"tune, or list the candidates in values$"):
        tune(data, "t.yaml", tmp_path, log=lambda _: None)
    assert not (tmp_path / "tune.csv").exists()


def test_a_categorical_parameter_is_searched_over_its_values(tmp_path, capsys):
    """``values``: the candidates as listed, here two agents for the teller's seat; every
    output names them as given."""
    import yaml

    teller = "tests.tune.test_search:Idle"
    data = {**QUICK, "players": [{"name": "teller", "agent": "random"}, *QUICK["players"][1:]],
            "tune": {"parameter": "players.0.agent", "values": ["random", teller],
                     "player": "teller", "games_per_round": 10, "max_games": 40,
                     "confirm_games": 10}}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["tune", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "tune.json").read_text())
    in_race = summary["still_in_race"]
    assert set(in_race) <= {"random", teller} and in_race
    assert [row["value"] for row in read_rows(tmp_path / "out")] == ["random", teller]
    if summary["verdict"] == "tied":
        assert f"tied: random, {teller} cannot be separated" in out
        title = f"tied, cannot be separated: random, {teller}"
    else:
        assert f"best value: {in_race[0]}: " in out
        title = f"best value: {in_race[0]}"
    with Image.open(tmp_path / "out" / "tune.png") as png:
        assert png.text["Title"] == title


@pytest.mark.parametrize(("grid", "message"), [
    ({"values": [0.5, 0.5, 0.5]}, r"tune.values: 0.5 is given twice"),
    ({"values": [1, 2.0, 2]}, r"tune.values: 2.0 and 2 are the same candidate"),
    ({"low": 0.5, "high": 0.5000000000001, "points": 3},
     r"tune: low 0.5 and high 0.5000000000001 are too close for 3 points: the grid gives 0.5 "
     r"twice"),
    ({"values": [0.5]}, r"tune.values: List should have at least 2 items"),
    ({"values": [0.5, float("inf")]}, r"tune.values: .*must be a finite number, got inf"),
    ({"low": 0.1, "high": float("inf")}, r"tune.high: Input should be a finite number"),
    ({"low": float("nan"), "high": 0.9}, r"tune.low: Input should be a finite number"),
    ({"values": [0.1, 0.9], "low": 0.1}, r"tune: values lists the candidates: leave out low"),
    ({"values": [0.1, [0.9]]}, r"tune.values: .*a candidate is one value"),
    ({"points": 3}, r"tune: give low and high \(a grid of points\), or values"),
    ({"kind": "int", "low": 0.5, "high": 3}, r"tune: kind int needs integers for low and "
                                             r"high, got 0.5"),
])
def test_candidates_that_are_not_distinct_finite_values_are_refused(tmp_path, grid, message):
    """One line naming the field, before any game: identical candidates were each played and
    reported tied with themselves; an infinite one was played."""
    settings = {k: v for k, v in DATA["tune"].items() if k not in ("low", "high", "points")}
    data = {**DATA, "tune": {**settings, **grid}}
    with pytest.raises(ConfigError, match=message) as info:
        tune(data, "t.yaml", tmp_path, log=lambda _: None)
    assert len(str(info.value).splitlines()) == 1 and str(info.value).startswith("t.yaml: ")
    assert not (tmp_path / "tune.csv").exists()
