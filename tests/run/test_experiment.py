"""Experiment configs: validation errors name the file and field; sweeps expand."""

from __future__ import annotations

import pytest
import yaml

from dixit_lab.run.experiment import ConfigError, expand_sweep, load_config, parse_config

BASE = {
    "name": "t",
    "seed": 3,
    "rules": "classic",
    "deck": "dreams",
    "players": ["literal", {"name": "amb", "agent": "ambiguity", "params": {"target": 0.3}},
                {"name": "soft", "agent": "softmax", "count": 2}],
    "games": 8,
}


def test_a_valid_config_and_its_derived_values():
    config = parse_config(BASE)
    assert config.table_size == 4
    assert config.seats() == [("literal", "literal"), ("amb", "ambiguity(target=0.3)"),
                              ("soft", "softmax"), ("soft", "softmax")]
    assert config.rule_set().name == "classic"
    resolved = config.resolved()
    assert resolved["players"][1]["spec"] == "ambiguity(target=0.3)"
    assert resolved["rules"]["resolved"]["hand_size"] == 6


def test_a_tune_section_is_written_as_before_its_kind_and_values():
    """config.yaml of a run whose tune section searches a float grid has the fields it had
    (a folder written before ``kind`` and ``values`` still resumes)."""
    tune = {"parameter": "players.1.params.target", "low": 0.1, "high": 0.9, "player": "amb"}
    written = parse_config({**BASE, "tune": tune}).resolved()["tune"]
    assert set(written) == {"parameter", "low", "high", "points", "player", "metric",
                            "games_per_round", "max_games", "alpha", "confirm_games"}
    listed = parse_config({**BASE, "tune": {**{k: v for k, v in tune.items() if k not in (
        "low", "high")}, "values": [0.2, 0.4]}}).resolved()["tune"]
    assert listed["values"] == [0.2, 0.4] and listed["low"] is None


def test_shipped_configs_are_valid():
    from pathlib import Path

    from dixit_lab.embeddings.encoder import sentence_encoder_problem

    for path in sorted(Path("experiments").glob("*.yaml")):
        try:
            config = load_config(path)
        except ConfigError as error:  # people or models with listeners who cannot hear them
            assert sentence_encoder_problem() is not None, str(error)  # (no sentence encoder)
            assert "write free-text clues" in str(error) and "dixit-lab[" in str(error)
            continue
        assert config.games > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"games": 0}, "games: Input should be greater than or equal to 1"),
        ({"colour": "red"}, "colour: unknown field; allowed fields here: name, description"),
        ({"rules": {"preset": "classic", "optionz": {}}}, "rules.optionz: unknown field"),
        ({"rules": {"preset": "odyssey"}}, "rules: unknown rule preset 'odyssey'"),
        ({"rules": {"preset": "classic", "options": {"bonus": 1}}}, "unknown rule option"),
        ({"players": ["literl"]}, "players.0.agent: unknown agent 'literl'"),
        ({"players": [{"agent": "ambiguity", "params": {"target": 2}}]},
         "players.0.agent: .*target must be in"),
        ({"players": [{"agent": "literal", "count": 7}]}, "allows 3 to 6 players, got 7"),
        ({"schedule": {"kind": "swiss"}}, "schedule.kind: Input should be 'rotation'"),
        ({"schedule": {"kind": "rotation", "table_size": 3}}, "seats the whole pool"),
        ({"schedule": {"kind": "sampled", "table_size": 3},
          "rules": {"preset": "classic", "options": {"first_storyteller": "first_player"}}},
         "rules: first_storyteller: first_player needs the first player at every table"),
        ({"deck": "tarot"}, "deck: unknown deck 'tarot'"),
        ({"executor": {"kind": "cluster"}}, "executor.kind"),
        ({"max_fault_share": -0.1}, "my.yaml: max_fault_share: Input should be greater than or "
                                    "equal to 0"),
        ({"max_fault_share": 1.5}, "my.yaml: max_fault_share: Input should be less than or "
                                   "equal to 1"),
        ({"max_fault_share": "often"}, "my.yaml: max_fault_share: Input should be a valid "
                                       "number"),
        ({"players": [{"agent": "softmax", "params": {"temperature": float("inf")}}]},
         "players.0.agent: agent 'softmax': parameter temperature must be a finite number, "
         "got inf"),
        ({"players": [{"agent": "softmax(noise=inf)"}]}, "players.0.agent: .*parameter noise "
         "must be a finite number"),
        ({"players": [{"agent": "literal", "isolation": "process",
                       "decision_timeout": float("inf")}]},
         "players.0.decision_timeout: Input should be a finite number"),
    ],
)
def test_errors_name_the_field(change, message):
    with pytest.raises(ConfigError, match=message):
        parse_config({**BASE, **change}, "my.yaml")


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**BASE, "games": -1}))
    with pytest.raises(ConfigError, match=r"bad.yaml: games:"):
        load_config(path)
    path.write_text("name: [unclosed")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")


def test_two_players_may_not_share_a_name():
    data = {**BASE, "players": [{"name": "x", "agent": "literal"},
                                {"name": "x", "agent": "random"}, "softmax"]}
    with pytest.raises(ConfigError, match="players.1.name: 'x' already names"):
        parse_config(data)


def test_sweep_expands_a_grid_over_paths():
    data = {**BASE, "sweep": {"players.1.params.target": [0.2, 0.8],
                              "rules.preset": ["classic", "quest"],
                              "rules.lone_finder_points": [4]}}
    points = list(expand_sweep(data, "s.yaml"))
    assert [p[0] for p in points] == [0, 1, 2, 3]
    settings = [p[1] for p in points]
    assert settings[1] == {"players.1.params.target": 0.2, "rules.preset": "quest",
                           "rules.lone_finder_points": 4}
    configs = [p[2] for p in points]
    assert configs[3].seats()[1][1] == "ambiguity(target=0.8)"
    assert configs[3].rule_set().name == "quest"
    assert all(c.rule_set().lone_finder_points == 4 for c in configs)
    assert all(c.seed == 3 for c in configs)


def test_sweep_errors_name_the_point():
    data = {**BASE, "sweep": {"players.1.params.target": [0.5, 7]}}
    with pytest.raises(ConfigError, match=r"sweep point 1: players.1.params.target=7"):
        list(expand_sweep(data, "s.yaml"))
    data = {**BASE, "sweep": {"players.2.params.temperature": [0.5, float("inf")]}}
    with pytest.raises(ConfigError, match=r"sweep point 1: players.2.params.temperature=inf\)"
                                          r": players.2.agent: .*must be a finite number"):
        list(expand_sweep(data, "s.yaml"))
    with pytest.raises(ConfigError, match="index 9 is out of range"):
        list(expand_sweep({**BASE, "sweep": {"players.9.params.target": [0.5]}}))


def test_max_fault_share_takes_0_to_1_and_config_yaml_omits_its_default():
    from dixit_lab.run.experiment import MAX_FAULT_SHARE

    assert parse_config(BASE).max_fault_share == MAX_FAULT_SHARE == 0.05
    assert "max_fault_share" not in parse_config(BASE).resolved()  # config.yaml as before
    for value in (0, 0.3, 1):
        config = parse_config({**BASE, "max_fault_share": value})
        assert config.max_fault_share == value == config.resolved()["max_fault_share"]


@pytest.mark.parametrize("storyteller", ["ambiguity(target=0.4)", "pragmatic"])
def test_a_model_storyteller_where_its_listener_model_cannot_follow_is_refused(storyteller):
    """Three cards per listener (decoys_three_players: 3): the rules allow it, the model
    storytellers' listener model does not. Before, the reference engine played the games
    with the storyteller faulting and ended in a traceback of the report's predictions; the
    batched engine stopped mid-run. Now one line before anything is played."""
    data = {"name": "three", "seed": 1, "deck": "dreams", "games": 4,
            "rules": {"preset": "classic", "options": {"decoys_three_players": 3}},
            "players": ["literal", "softmax", storyteller]}
    with pytest.raises(ConfigError, match=r"players\.2\.agent: .* cannot play here: its "
                                          r"listener model follows tables where each "
                                          r"listener puts 1 or 2 cards on the table; these "
                                          r"rules have 3 at 3 players"):
        parse_config(data)
    data["rules"]["options"]["decoys_three_players"] = 2
    parse_config(data)
