"""The text rule: what a clue or a name may hold."""

from __future__ import annotations

import pytest

from dixit_lab.text_rule import MESSAGE_CHARS, safe_message, shown_message, text_problem


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


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"), ("two\nlines\r", "two\\nlines\\r"),
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"), ("bad \ud800", "bad \\ud800"),
    ("nel\x85 ls\u2028", "nel\\x85 ls\\u2028"), ("bell\x07 nul\x00", "bell\\x07 nul\\x00"),
    ("夢 👨‍👩‍👧 a\u00a0b é", "夢 👨‍👩‍👧 a\u00a0b é"),  # ordinary text of any script kept
])
def test_a_shown_message_escapes_what_the_rule_refuses(text, shown):
    assert shown_message(text) == shown
    assert shown_message(shown) == shown and text_problem(shown) is None


def test_a_shown_message_is_cut_to_its_length():
    long = shown_message("x" * 10_000)
    assert len(long) == MESSAGE_CHARS and long.endswith("…")
    assert shown_message(long) == long
    assert len(shown_message("\x1b" * 1000)) == MESSAGE_CHARS  # cut after escaping
    assert shown_message("abc", 2) == "a…"
