"""Tests of the spec-string parser shared by the agent and embedder registries."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dixit_lab.plugins.spec import SpecError, check_value, format_spec, format_value, parse_spec


@pytest.mark.parametrize(("text", "expected"), [
    ("conse", ("conse", {})),
    ("conse()", ("conse", {})),
    ("  conse ( top_k = 5 ) ", ("conse", {"top_k": 5})),
    ("clip(model=ViT-B-32, pretrained=laion2b_s34b_b79k)",
     ("clip", {"model": "ViT-B-32", "pretrained": "laion2b_s34b_b79k"})),
    ('name(key=value, key2="a b", k3=0.5, k4=None, k5=true)',
     ("name", {"key": "value", "key2": "a b", "k3": 0.5, "k4": None, "k5": True})),
    ("x(path=/tmp/ckpt-1.pt, hub=hf-hub:org/model, ver=1.2.3, t=12:30)",
     ("x", {"path": "/tmp/ckpt-1.pt", "hub": "hf-hub:org/model", "ver": "1.2.3",
            "t": "12:30"})),
    ("x(a=-3, b=1e-3, c=+2, d=1_000, e=.5, f=FALSE, g=null, h=none)",
     ("x", {"a": -3, "b": 0.001, "c": 2, "d": 1000, "e": 0.5, "f": False, "g": None,
            "h": None})),
    ("x(s='it''s')", None),
    ("x(s='a, b (c)', t=\"q\\\"uote\")", ("x", {"s": "a, b (c)", "t": 'q"uote'})),
    ('x(n="5", b="true")', ("x", {"n": "5", "b": "true"})),
    ("x(items=[1, two, \"3 4\"], empty=[])", ("x", {"items": [1, "two", "3 4"], "empty": []})),
    ("x(a=1,)", ("x", {"a": 1})),
    ("clip-greedy.v2", ("clip-greedy.v2", {})),
])
def test_parse(text: str, expected: tuple[str, dict] | None) -> None:
    if expected is None:
        with pytest.raises(SpecError):
            parse_spec(text)
    else:
        assert parse_spec(text) == expected


def test_types_are_exact() -> None:
    _, params = parse_spec("x(i=5, f=5.0, b=true)")
    assert type(params["i"]) is int
    assert type(params["f"]) is float
    assert params["b"] is True


@pytest.mark.parametrize(("text", "fragment"), [
    ("conse(5)", "key=value"),
    ("conse(top_k 5)", "expected '='"),
    ("conse(a=1", "missing ')'"),
    ("conse(a=1 b=2)", "expected ',' or ')'"),
    ("conse(a=1, a=2)", "given twice"),
    ("1conse", "expected a name"),
    ('c(a="x)', "unclosed quote"),
    ("c(a=b c)", "quote values"),
    ("c(a=1) trailing", "unexpected text"),
    ("c(a=[1, 2)", "expected ',' or ']'"),
    ("", "expected a name"),
])
def test_errors_say_what_and_where(text: str, fragment: str) -> None:
    with pytest.raises(SpecError, match="position") as info:
        parse_spec(text)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_non_string_is_rejected() -> None:
    with pytest.raises(SpecError):
        parse_spec(5)  # type: ignore[arg-type]


def test_format_spec() -> None:
    assert format_spec("conse") == "conse"
    assert format_spec("x", {"a": 1, "b": "a b", "c": None, "d": True, "e": "5"}) == \
        'x(a=1, b="a b", c=None, d=true, e="5")'
    assert format_value(float("inf")) == "inf"
    with pytest.raises(SpecError):
        format_spec("bad name")
    with pytest.raises(TypeError):
        format_value(object())


_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
_scalars = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
            | st.floats(allow_nan=False) | st.text(max_size=12))
_values = _scalars | st.lists(_scalars, max_size=3)


@given(st.dictionaries(_keys, _values, max_size=5))
def test_format_then_parse_round_trips(params: dict) -> None:
    name, parsed = parse_spec(format_spec("some-name.v1", params))
    assert name == "some-name.v1"
    assert parsed.keys() == params.keys()
    for key, value in params.items():
        assert parsed[key] == value or (isinstance(value, float) and math.isnan(value))
        assert type(parsed[key]) is type(value)



@pytest.mark.parametrize(("annotation", "value", "finite"), [
    (float, math.inf, 0.5), (float, -math.inf, 0.5), (float, math.nan, 0.5),
    (float | None, math.inf, None), (list[float], [0.5, math.inf], [0.5]),
    (Any, math.nan, "nan"), (Any, [1, -math.inf], [1, 2])])
def test_infinite_and_nan_values_are_refused(annotation, value, finite) -> None:
    """A parameter is a finite number: ``inf`` and ``nan`` parse (``temperature=inf``) but no
    agent or embedder is given one (a softmax at temperature inf played uniformly)."""
    with pytest.raises(SpecError, match=r"must be a finite number, got .*(inf|nan)"):
        check_value(annotation, value)
    assert check_value(annotation, finite) == finite
