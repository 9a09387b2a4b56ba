"""Reading model replies: strict JSON, JSON in prose, and every problem's fault class."""

from __future__ import annotations

import json

import pytest

from dixit_lab.vlm.parse import ReplyProblem, read_reply


def reply(content, **extra):
    return {"message": {"content": content, **extra}, "finish_reason": "stop"}


def test_strict_json_is_read():
    assert read_reply(reply('{"card": 3, "clue": "  a  long  way "}'), "tell", [1, 2, 3]) == {
        "card": 3, "clue": "a long way"}
    assert read_reply(reply('{"card": 2}'), "vote", [1, 2]) == {"card": 2}
    assert read_reply(reply('{"cards": [1, "3"]}'), "submit", [1, 2, 3], 2) == {
        "cards": [1, 3]}


def test_json_inside_prose_or_a_code_fence_is_read():
    fenced = 'Here it is:\n```json\n{"card": 1}\n```\nbye'
    assert read_reply(reply(fenced), "vote", [1, 2]) == {"card": 1}
    prose = 'I pick {"card": 2.0} because {it is} nice'
    assert read_reply(reply(prose), "vote", [1, 2]) == {"card": 2}


@pytest.mark.parametrize(("content", "action", "labels", "n", "kind"), [
    ("no json here", "vote", [1, 2], 1, "unparsable"),
    ("", "vote", [1, 2], 1, "unparsable"),
    ('{"card": "two"}', "vote", [1, 2], 1, "unparsable"),
    ('{"vote": 1}', "vote", [1, 2], 1, "unparsable"),
    ('{"card": 3}', "vote", [1, 2], 1, "illegal"),
    ('{"card": 1, "clue": "   "}', "tell", [1, 2], 1, "illegal"),
    ('{"card": 1}', "tell", [1, 2], 1, "unparsable"),
    ('{"cards": [1, 1]}', "submit", [1, 2], 2, "illegal"),
    ('{"cards": [1]}', "submit", [1, 2], 2, "illegal"),
    ('{"cards": [1, 9]}', "submit", [1, 2], 2, "illegal"),
    ("I'm sorry, I cannot take part in games.", "vote", [1, 2], 1, "refused"),
])
def test_problems_are_classified(content, action, labels, n, kind):
    with pytest.raises(ReplyProblem) as caught:
        read_reply(reply(content), action, labels, n)
    assert caught.value.kind == kind


def test_a_reasoning_scratchpad_is_skipped_and_a_long_clue_is_illegal():
    thinking = '<think>maybe {"card": 1} or 2</think>\n{"card": 2}'
    assert read_reply(reply(thinking), "vote", [1, 2]) == {"card": 2}
    essay = json.dumps({"card": 1, "clue": "word " * 100})
    with pytest.raises(ReplyProblem, match="at most") as caught:
        read_reply(reply(essay), "tell", [1])
    assert caught.value.kind == "illegal"


def test_a_reply_cut_at_max_tokens_says_so():
    with pytest.raises(ReplyProblem, match="cut off at max_tokens"):
        read_reply({"message": {"content": '{"card": '}, "finish_reason": "length"}, "vote", [1])


def test_refusal_field_and_content_filter_are_refusals():
    with pytest.raises(ReplyProblem, match="refused") as caught:
        read_reply(reply(None, refusal="no"), "vote", [1])
    assert caught.value.kind == "refused"
    with pytest.raises(ReplyProblem) as caught:
        read_reply({"message": {"content": '{"card": 1}'}, "finish_reason": "content_filter"},
                   "vote", [1])
    assert caught.value.kind == "refused"
