"""The config reader: YAML 1.2 core scalars, refusing a key written twice and what YAML 1.1
would read otherwise, naming the line."""

from __future__ import annotations

import math

import pytest

from dixit_lab.errors import ConfigError
from dixit_lab.run.config_yaml import load_yaml


@pytest.mark.parametrize("text, value", [
    ("12", 12), ("-5", -5), ("+3", 3), ("0", 0), ("0o12", 10), ("0x1F", 31),
    ("1.5", 1.5), ("1e-3", 0.001), ("012.5", 12.5), (".inf", math.inf), ("-.inf", -math.inf),
    ("true", True), ("False", False), ("null", None), ("~", None), ("", None),
    ("2024-01-01", "2024-01-01"), ("n", "n"), ("'012'", "012"), ('"yes"', "yes"),
    ("yes_man", "yes_man"),
])
def test_scalars_read_as_yaml_1_2(text, value):
    assert load_yaml(f"a: {text}", "c.yaml") == {"a": value}


@pytest.mark.parametrize("text, says", [
    ("012", "the octal number 10 in YAML 1.1 but 12 in YAML 1.2"),
    ("09", "not a number in YAML 1.1 but 9 in YAML 1.2"),
    ("1:30", "a base-60 number"), ("yes", "the boolean true"), ("Off", "the boolean false"),
    ("1_000", "the number 1000"), ("0b101", "a binary number"),
])
def test_yaml_1_1_only_scalars_are_refused_naming_the_line(text, says):
    with pytest.raises(ConfigError, match=rf"c\.yaml, line 2: 'b: {text}': {text} is {says}"):
        load_yaml(f"a: 1\nb: {text}\n", "c.yaml")


def test_a_key_twice_is_refused_but_a_merge_may_be_overridden():
    with pytest.raises(ConfigError, match=r"line 4: 'x' again \(first on line 2\)"):
        load_yaml("top:\n  x: 1\n  y: 2\n  x: 3\n", "c.yaml")
    merged = load_yaml("base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  x: 5\n", "c.yaml")
    assert merged["child"] == {"x": 5, "y": 2}


def test_suggestions_come_from_the_closest_name():
    from dixit_lab.suggest import did_you_mean

    assert did_you_mean("sofmax", ["softmax", "random"]) == " (did you mean 'softmax'?)"
    assert did_you_mean("zzz", ["softmax", "random"]) == ""
