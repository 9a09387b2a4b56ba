"""The text rule: what a clue or a name may hold."""

from __future__ import annotations

import pytest

from dixit_lab.text_rule import safe_message, text_problem


@pytest.mark.parametrize("text", ["moon", "le cœur à l'envers", "夢の中で", "🌙 and 👨‍👩‍👧",
                                  "a\u00a0non-breaking space", "ZWNJ in می\u200cخواهم"])
def test_ordinary_text_of_any_script_passes(text):
    assert text_problem(text) is None


@pytest.mark.parametrize("char, kind", [
    ("\ud800", "a lone surrogate"), ("\u2028", "a line separator"),
    ("\u2029", "a paragraph separator"), ("\x85", "a line break"), ("\n", "a line break"),
    ("\r", "a line break"), ("\x0b", "a line break"), ("\x1c", "a line break"),
    ("\x00", "a control character"), ("\x7f", "a control character"),
    ("\u202e", "a format character"), ("\ufeff", "a format character"),
])
def test_what_breaks_a_line_or_a_file_is_named_with_its_place(char, kind):
    problem = text_problem(f"ab{char}c")
    assert problem is not None and problem.startswith(kind) and "at character 3" in problem


def test_every_character_splitlines_splits_on_is_refused():
    for code in range(0x110000):
        char = chr(code)
        if len(f"a{char}b".splitlines()) > 1:
            assert text_problem(char), hex(code)


def test_a_boundary_may_allow_what_it_normalises_and_messages_are_made_safe():
    assert text_problem("two\nlines", allow="\n") is None
    assert text_problem(3) == "not text but int"
    assert safe_message("bad \ud800 byte") == "bad \\ud800 byte"
    assert safe_message("fine é") == "fine é"
