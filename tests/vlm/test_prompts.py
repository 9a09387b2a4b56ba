"""Prompt templates: filled from the rules in force, overridable, checked for bad fields."""

from __future__ import annotations

import pytest

from dixit_lab.core.rules import get_rules
from dixit_lab.vlm.prompts import Templates, answer_schema, table_fields


def test_table_fields_follow_the_rules():
    rules = get_rules("quest", lone_finder_points=4)
    quest = table_fields(rules, 3, 0)
    assert quest["hand_size"] == rules.hand_size_for(3) and quest["me"] == 1
    assert "at most 3" in quest["cap_text"]
    assert "4 each" in quest["lone_finder_text"]
    assert "30 points" in quest["end_text"]
    classic = table_fields(get_rules("classic"), 3, 2)
    assert classic["hand_size"] == 7 and classic["per_player_text"] == "2 cards"
    assert classic["displayed"] == 5 and classic["me"] == 3
    assert classic["cap_text"] == classic["lone_finder_text"] == classic["end_text"] == ""
    system = Templates().system.format_map({**quest, "answer_format": "{}"})
    assert "at most 3" in system and "3 players" in system


VOTE_FIELDS = {"round": 1, "storyteller": 2, "clue": "echo", "display_count": 4,
               "own_text": "Card 3 is yours.", "answer_format": "{}"}


def test_the_prompt_says_the_vote_and_bonus_rules_in_force():
    """A model is never told a rule the game does not play: the rule books' prompt forbids a
    vote on one's own card and pays the bonus; DixitWorld as its code runs allows that vote
    and pays no bonus, and its prompt says so (and says no bonus at all)."""
    templates = Templates()

    def prompts(rules):
        fields = {**table_fields(rules, 4, 0), **VOTE_FIELDS}
        return templates.system.format_map(fields), templates.vote.format_map(fields)

    system, vote = prompts(get_rules("classic"))
    assert "nobody may vote for their own card" in system
    assert "also scores 1 point for each vote on their own card." in system
    assert "you may not vote for your own" in vote
    system, vote = prompts(get_rules("dixitworld_as_run"))
    assert "may not vote" not in system + vote and "nobody may" not in system
    assert "a player may also vote for their own card" in system
    assert "you may also vote for your own" in vote
    assert "for each vote" not in system and "such point" not in system  # no bonus at all
    system, _ = prompts(get_rules("dixitworld"))
    assert "at most 1 such point per round" in system and "nobody may vote" in system
    system, _ = prompts(get_rules("classic", own_card_votes=True))
    assert "1 point for each other player's vote on their own card" in system
    system, _ = prompts(get_rules("classic", vote_bonus_cap=0))
    assert "for each vote" not in system


def test_overrides_from_strings_files_and_yaml(tmp_path):
    (tmp_path / "vote.txt").write_text("Vote on {clue}! {answer_format}", encoding="utf-8")
    (tmp_path / "p.yaml").write_text("tell: 'Tell for {hand_count} cards'\n", encoding="utf-8")
    templates = Templates.load(str(tmp_path / "p.yaml"), vote=f"@{tmp_path / 'vote.txt'}",
                               system="Dixit at {n_players}")
    assert templates.tell == "Tell for {hand_count} cards"
    assert templates.vote.startswith("Vote on {clue}")
    assert templates.system == "Dixit at {n_players}"
    assert templates.submit == Templates().submit


@pytest.mark.parametrize(("strings", "message"), [
    ({"vote": "{hand_count}"}, "unknown field"),
    ({"system": "{clue}"}, "unknown field"),
    ({"tell": "{oops"}, "literal braces"),
    ({"tell": "@/no/such/file.txt"}, "does not exist"),
])
def test_bad_templates_are_named(strings, message):
    with pytest.raises(ValueError, match=message):
        Templates.load(None, **strings)


def test_answer_schema_lists_the_allowed_cards():
    name, schema, shown = answer_schema("vote", [1, 3])
    assert name == "dixit_vote"
    assert schema["properties"]["card"]["enum"] == [1, 3]
    assert schema["additionalProperties"] is False
    _, two, shown = answer_schema("submit", [1, 2, 3], 2)
    assert two["required"] == ["cards"] and "number 2" in shown
    _, tell, _ = answer_schema("tell", [1, 2])
    assert tell["required"] == ["card", "clue"]
